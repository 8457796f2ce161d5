//! The store's tables and pages: a list as a terminal table or CSV, one run, a board and a
//! history as Markdown, and the board's and history's self-contained HTML pages.

use std::fmt::Write as _;

use vernier_plot::{Better, HistoryChart, Point, ScatterChart, Series, escape};

use crate::board::Board;
use crate::history::History;
use crate::record::RunRecord;

fn interval(interval: Option<(f64, f64)>) -> String {
    interval.map_or_else(
        || "—".to_owned(),
        |(low, high)| format!("{}–{}", vernier_cli::figure(low), vernier_cli::figure(high)),
    )
}

/// The list as a table for a terminal: id, kind, start, model, server, verdict, folder.
pub fn list_table(runs: &[RunRecord]) -> String {
    let rows: Vec<[String; 7]> = runs
        .iter()
        .map(|run| {
            [
                run.id.clone(),
                run.kind.clone(),
                run.started(),
                run.model.clone(),
                format!("{} {}", run.server_kind, run.server_version)
                    .trim()
                    .to_owned(),
                run.verdict.clone(),
                if run.folder_present {
                    run.folder.clone()
                } else {
                    format!("{} (gone)", run.folder)
                },
            ]
        })
        .collect();
    let header = [
        "id", "kind", "started", "model", "server", "verdict", "folder",
    ];
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    let line = |cells: Vec<&str>, text: &mut String| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        let _ = writeln!(text, "{}", padded.join("  ").trim_end());
    };
    line(header.to_vec(), &mut text);
    for row in &rows {
        line(row.iter().map(String::as_str).collect(), &mut text);
    }
    text
}

fn csv_cell(cell: &str) -> String {
    if cell.contains([',', '"', '\n']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_owned()
    }
}

/// The list as CSV (RFC 4180 quoting), one row per run.
pub fn list_csv(runs: &[RunRecord]) -> String {
    let mut text = String::from(
        "id,kind,started_unix_ms,ended_unix_ms,target,server_kind,server_version,model,weights,gpu,driver,machine,verdict,folder,folder_present\n",
    );
    for run in runs {
        let cells = [
            run.id.clone(),
            run.kind.clone(),
            run.started_unix_ms.to_string(),
            run.ended_unix_ms.to_string(),
            run.target.clone(),
            run.server_kind.clone(),
            run.server_version.clone(),
            run.model.clone(),
            run.weights.clone(),
            run.gpu.clone(),
            run.driver.clone(),
            run.machine.clone(),
            run.verdict.clone(),
            run.folder.clone(),
            run.folder_present.to_string(),
        ];
        let cells: Vec<String> = cells.iter().map(|cell| csv_cell(cell)).collect();
        let _ = writeln!(text, "{}", cells.join(","));
    }
    text
}

/// One run: who, when, verdict, folder, figures, scores, settings.
pub fn show(run: &RunRecord) -> String {
    let mut text = format!("# Run {}\n\n", run.id);
    for (name, value) in [
        ("kind", run.kind.clone()),
        ("started", run.started()),
        ("folder", run.folder.clone()),
        (
            "folder there",
            if run.folder_present {
                "yes"
            } else {
                "no: gone"
            }
            .to_owned(),
        ),
        ("target", run.target.clone()),
        (
            "server",
            format!("{} {}", run.server_kind, run.server_version),
        ),
        ("model", run.model.clone()),
        ("weights", run.weights.clone()),
        ("GPU", format!("{} {}", run.gpu, run.driver)),
        ("machine", run.machine.clone()),
        ("verdict", run.verdict.clone()),
        ("why", run.verdict_reasons.clone()),
    ] {
        if !value.trim().is_empty() {
            let _ = writeln!(text, "- {name}: {}", value.trim());
        }
    }
    if !run.figures.is_empty() {
        text.push_str(
            "\n## Figures\n\n| figure | value | unit | 95% interval |\n| --- | --- | --- | --- |\n",
        );
        for figure in &run.figures {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} |",
                figure.name.replace('|', "\\|"),
                vernier_cli::figure(figure.value),
                figure.unit,
                interval(figure.interval)
            );
        }
    }
    if !run.scores.is_empty() {
        text.push_str("\n## Scores\n\n| dimension | passed | scored |\n| --- | --- | --- |\n");
        for score in &run.scores {
            let _ = writeln!(
                text,
                "| {} | {} | {} |",
                score.dimension, score.passed, score.scored
            );
        }
    }
    if !run.settings.is_empty() {
        text.push_str("\n## Settings\n\n");
        for (name, value) in &run.settings {
            let _ = writeln!(text, "- {name} = {value}");
        }
    }
    text
}

/// The board as Markdown.
pub fn board_markdown(board: &Board) -> String {
    let mut text = String::from("# Board\n\n");
    let names: Vec<&str> = board.candidates.iter().map(|c| c.name.as_str()).collect();
    let _ = writeln!(text, "Candidates: {}.\n", names.join(", "));
    for candidate in board.candidates.iter().filter(|c| !c.verdicts.is_empty()) {
        let _ = writeln!(
            text,
            "- {}: not every run is valid ({})",
            candidate.name,
            candidate.verdicts.join("; ")
        );
    }
    if let Some(front) = &board.front {
        let _ = writeln!(
            text,
            "\n## Pareto front: {} against {}\n\nOn the front: {}.\n",
            front.quality,
            front.speed,
            front.on_front.join(", ")
        );
    }
    for dimension in &board.dimensions {
        let _ = writeln!(
            text,
            "\n## {} ({}, {} is better)\n\n| rank | candidate | value | 95% interval | run |\n| --- | --- | --- | --- | --- |",
            dimension.name.replace('|', "\\|"),
            dimension.unit,
            if dimension.higher_is_better {
                "more"
            } else {
                "less"
            }
        );
        if !dimension.confounded_by.is_empty() {
            let _ = writeln!(
                text,
                "\n_Confounded_: the runs behind this row differ in {}.\n",
                dimension.confounded_by.join(", ")
            );
        }
        for entry in &dimension.entries {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {} |",
                entry.rank,
                entry.candidate,
                vernier_cli::figure(entry.value),
                interval(entry.interval),
                entry.run
            );
        }
        text.push('\n');
        for pair in &dimension.pairs {
            let p = pair
                .p_holm
                .map_or_else(String::new, |p| format!(" (Holm-adjusted p = {p:.3})"));
            let _ = writeln!(
                text,
                "- {}: difference {} [{}]{p}",
                pair.says,
                vernier_cli::figure(pair.difference),
                interval(pair.interval)
            );
        }
    }
    if !board.differing_settings.is_empty() {
        text.push_str("\n## Settings that differ (rows may be confounded by them)\n\n");
        for line in &board.differing_settings {
            let _ = writeln!(text, "- {line}");
        }
    }
    text
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><link rel=\"icon\" href=\"data:,\"><style>body{{font-family:'DejaVu Sans',sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left}}.flag{{color:#d62728;font-weight:bold}}</style></head><body>\n{body}\n</body></html>\n",
        escape(title)
    )
}

/// `candidate`'s interval on the dimension `name`.
fn interval_on(board: &Board, name: &str, candidate: &str) -> Option<(f64, f64)> {
    board
        .dimensions
        .iter()
        .find(|dimension| dimension.name == name)?
        .entries
        .iter()
        .find(|entry| entry.candidate == candidate)?
        .interval
}

/// The board as one self-contained HTML page (inline SVG, nothing fetched).
#[allow(clippy::too_many_lines)] // the page in the order it reads: front, candidates, tables
pub fn board_html(board: &Board) -> String {
    let mut body = String::from("<h1>Board</h1>\n");
    if let Some(front) = &board.front {
        let points: Vec<Point> = front
            .points
            .iter()
            .map(|(name, x, y)| {
                let mut point = Point::at(*x, *y).named(name.clone()).labelled(name.clone());
                if let Some((low, high)) = interval_on(board, &front.speed, name) {
                    point = point.with_x_interval(low, high);
                }
                if let Some((low, high)) = interval_on(board, &front.quality, name) {
                    point = point.with_interval(low, high);
                }
                point
            })
            .collect();
        let better = |name: &str| {
            board
                .dimensions
                .iter()
                .find(|d| d.name == name)
                .map_or(Better::Higher, |d| {
                    if d.higher_is_better {
                        Better::Higher
                    } else {
                        Better::Lower
                    }
                })
        };
        let chart = ScatterChart::new(
            format!("{} against {}", front.quality, front.speed),
            format!("{} candidates", board.candidates.len()),
        )
        .x_title(front.speed.clone())
        .y_title(front.quality.clone())
        .series([Series::new("candidates", points)])
        .front(
            "Pareto front",
            front.on_front.clone(),
            better(&front.speed),
            better(&front.quality),
        )
        .to_svg();
        let _ = write!(
            body,
            "<h2>Pareto front</h2>\n<p>On the front: {}.</p>\n{chart}\n",
            escape(&front.on_front.join(", "))
        );
    }
    body.push_str("<h2>Candidates</h2>\n<ul>\n");
    for candidate in &board.candidates {
        let _ = writeln!(
            body,
            "<li class=\"candidate\">{} ({} runs){}</li>",
            escape(&candidate.name),
            candidate.runs.len(),
            if candidate.verdicts.is_empty() {
                String::new()
            } else {
                format!(": {}", escape(&candidate.verdicts.join("; ")))
            }
        );
    }
    body.push_str("</ul>\n");
    for dimension in &board.dimensions {
        let _ = write!(
            body,
            "<h2>{} ({})</h2>\n<table><tr><th>rank</th><th>candidate</th><th>value</th><th>95% interval</th></tr>\n",
            escape(&dimension.name),
            escape(&dimension.unit)
        );
        for entry in &dimension.entries {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                entry.rank,
                escape(&entry.candidate),
                vernier_cli::figure(entry.value),
                interval(entry.interval)
            );
        }
        body.push_str("</table>\n");
        if !dimension.confounded_by.is_empty() {
            let _ = writeln!(
                body,
                "<p class=\"confounded\">Confounded: the runs behind this row differ in {}.</p>",
                escape(&dimension.confounded_by.join(", "))
            );
        }
        body.push_str("<ul>\n");
        for pair in &dimension.pairs {
            let _ = writeln!(body, "<li>{}</li>", escape(&pair.says));
        }
        body.push_str("</ul>\n");
    }
    if !board.differing_settings.is_empty() {
        body.push_str("<h2>Settings that differ</h2>\n<ul>\n");
        for line in &board.differing_settings {
            let _ = writeln!(body, "<li>{}</li>", escape(line));
        }
        body.push_str("</ul>\n");
    }
    page("Board", &body)
}

/// The history as Markdown.
pub fn history_markdown(history: &History) -> String {
    let mut text = format!(
        "# History of {} on {}\n\n{} runs, {} to {}. The newest run is tested against a prediction interval from the earlier runs at {:.1}% per figure (Bonferroni across figures).\n",
        history.model,
        if history.server_kind.is_empty() {
            "?"
        } else {
            history.server_kind.as_str()
        },
        history.runs.len(),
        history.runs.first().map_or("", |(_, at)| at.as_str()),
        history.runs.last().map_or("", |(_, at)| at.as_str()),
        history.confidence * 100.0
    );
    for figure in &history.figures {
        let _ = writeln!(
            text,
            "\n## {} ({})\n\n| run | started | value | 95% interval |\n| --- | --- | --- | --- |",
            figure.name.replace('|', "\\|"),
            figure.unit
        );
        for point in &figure.points {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} |",
                point.run,
                point.started,
                vernier_cli::figure(point.value),
                interval(point.interval)
            );
        }
        if let Some(expected) = figure.expected {
            let _ = writeln!(
                text,
                "\nExpected for the newest: {}.",
                interval(Some(expected))
            );
        }
        if let Some(flag) = &figure.flag {
            let _ = writeln!(text, "\n**Flagged**: {flag}.");
        }
    }
    if history.flagged().next().is_some() {
        text.push_str("\n## What changed since the run before\n\n");
        if history.changed.is_empty() {
            text.push_str("- nothing the runs record\n");
        }
        for line in &history.changed {
            let _ = writeln!(text, "- {line}");
        }
    }
    text
}

/// The history as one self-contained HTML page: a chart per figure with its band and flags.
pub fn history_html(history: &History) -> String {
    let mut body = format!("<h1>History of {}</h1>\n", escape(&history.model));
    for figure in &history.figures {
        let mut chart = HistoryChart::new(
            figure.name.clone(),
            format!("{} on {}", history.model, history.server_kind),
        )
        .y_title(figure.unit.clone());
        for point in &figure.points {
            chart = chart.run(point.run.clone(), point.value, point.interval);
        }
        if let (Some(flag), Some(last)) = (&figure.flag, figure.points.last()) {
            chart = chart.flag(&last.run, flag.clone());
            let _ = writeln!(
                body,
                "<p class=\"flag\">{}: {}</p>",
                escape(&figure.name),
                escape(flag)
            );
        }
        body.push_str(&chart.to_svg());
        body.push('\n');
    }
    if history.flagged().next().is_some() {
        body.push_str("<h2>What changed since the run before</h2>\n<ul>\n");
        for line in &history.changed {
            let _ = writeln!(body, "<li>{}</li>", escape(line));
        }
        body.push_str("</ul>\n");
    }
    page(&format!("History of {}", history.model), &body)
}
