//! A tune's reports: `tune.md` (the ranking, the pairs, the fronts, what each server states)
//! and `tune.html` (the same, self-contained, with the fronts drawn by the one plotter);
//! `tune.json` holds the analysis itself.

use std::fmt::Write as _;
use std::path::Path;

use vernier_plot::{Better, Point, ScatterChart, Series, escape};

use super::analysis::load_words;
use super::file::TuneFile;
use super::results::{ConfigResult, Figure, Front, TuneAnalysis};
use crate::error::BatteryError;

/// The Markdown report's file name.
pub const TUNE_REPORT: &str = "tune.md";
/// The page's file name.
pub const TUNE_PAGE: &str = "tune.html";

fn figure(figure: Option<Figure>) -> String {
    figure.map_or_else(
        || "—".to_owned(),
        |f| match f.interval {
            Some((low, high)) => format!("{:.1} [{low:.1}, {high:.1}]", f.value),
            None => format!("{:.1}", f.value),
        },
    )
}

fn pass(result: &ConfigResult) -> String {
    result.pass_rate.map_or_else(
        || "—".to_owned(),
        |p| {
            format!(
                "{}/{} = {:.1}% [{:.1}, {:.1}]",
                p.passed,
                p.scored,
                p.rate * 100.0,
                p.interval.0 * 100.0,
                p.interval.1 * 100.0
            )
        },
    )
}

fn ready(result: &ConfigResult) -> String {
    if result.ready_s.is_empty() {
        "—".to_owned()
    } else {
        result
            .ready_s
            .iter()
            .map(|s| format!("{s:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The ranking as rows: rank, name, standing, capacity, goodput, decode, pass rate, ready.
fn ranking_rows(analysis: &TuneAnalysis) -> Vec<[String; 8]> {
    analysis
        .configs
        .iter()
        .map(|r| {
            [
                r.rank.to_string(),
                r.name.clone(),
                r.standing.words().to_owned(),
                r.capacity
                    .map_or_else(|| "—".to_owned(), |c| load_words(c, &r.load_kind)),
                figure(r.goodput),
                figure(r.decode),
                pass(r),
                ready(r),
            ]
        })
        .collect()
}

const RANKING_HEAD: [&str; 8] = [
    "rank",
    "configuration",
    "standing",
    "capacity",
    "goodput, output tokens/s",
    "decode per request, tokens/s",
    "pass rate",
    "ready, s",
];

fn pair_rows(analysis: &TuneAnalysis) -> Vec<[String; 5]> {
    analysis
        .pairs
        .iter()
        .map(|p| {
            [
                format!("{} − {} ({})", p.a, p.b, p.figure),
                format!("{:+.3}", p.difference),
                p.interval
                    .map_or_else(|| "—".to_owned(), |(l, h)| format!("[{l:+.1}, {h:+.1}]")),
                format!("{:.4}", p.p_holm),
                if p.distinguishable {
                    "distinguishable".to_owned()
                } else {
                    "not distinguishable".to_owned()
                },
            ]
        })
        .collect()
}

const PAIR_HEAD: [&str; 5] = [
    "pair (figure)",
    "difference",
    "95% interval",
    "Holm-adjusted p",
    "",
];

/// How a report writes a heading and a table.
trait Writer {
    fn heading(&self, out: &mut String, text: &str, note: &str);
    fn table(&self, out: &mut String, head: &[&str], rows: Vec<Vec<String>>);
}

struct Markdown;

impl Writer for Markdown {
    fn heading(&self, out: &mut String, text: &str, note: &str) {
        let _ = writeln!(out, "## {text}\n\n{note}\n");
    }
    fn table(&self, out: &mut String, head: &[&str], rows: Vec<Vec<String>>) {
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
        for row in rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out.push('\n');
    }
}

struct Html;

impl Writer for Html {
    fn heading(&self, out: &mut String, text: &str, note: &str) {
        let _ = writeln!(out, "<h2>{}</h2>\n<p>{}</p>", escape(text), escape(note));
    }
    fn table(&self, out: &mut String, head: &[&str], rows: Vec<Vec<String>>) {
        out.push_str("<table><tr>");
        for cell in head {
            let _ = write!(out, "<th>{}</th>", escape(cell));
        }
        out.push_str("</tr>\n");
        for row in rows {
            out.push_str("<tr>");
            for cell in row {
                let _ = write!(out, "<td>{}</td>", escape(&cell));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
}

/// The ranking and the pairs, as `writer` writes tables.
fn tables(out: &mut String, analysis: &TuneAnalysis, writer: &dyn Writer) {
    writer.table(
        out,
        &RANKING_HEAD,
        ranking_rows(analysis).into_iter().map(Vec::from).collect(),
    );
    if !analysis.pairs.is_empty() {
        writer.heading(
            out,
            "Pairs",
            "Goodput: the Hodges–Lehmann shift of the repetitions' output tokens/s with the Mann–Whitney interval and p; pass rate (where no speed was measured): the difference with Newcombe's interval and the two-proportion z test's p; Holm across the pairs.",
        );
        writer.table(
            out,
            &PAIR_HEAD,
            pair_rows(analysis).into_iter().map(Vec::from).collect(),
        );
    }
}

/// One configuration's section: its loads, failed parts, stated flags and deaths.
fn config_section(out: &mut String, result: &ConfigResult) {
    let _ = writeln!(out, "### {}\n\n`{}`\n", result.name, result.command);
    for load in &result.loads {
        let _ = writeln!(
            out,
            "- {}: {} requests, goodput {}, decode {}{}{}",
            load_words(load.load, &result.load_kind),
            load.requests,
            figure(load.goodput),
            figure(load.decode),
            match load.met {
                Some(true) => ", target met",
                Some(false) => ", target missed",
                None => "",
            },
            if load.checks.is_empty() {
                String::new()
            } else {
                format!(" ({})", load.checks.join("; "))
            }
        );
    }
    for failed in &result.failed_parts {
        let _ = writeln!(out, "- part {failed}");
    }
    for flag in &result.stated {
        let _ = writeln!(
            out,
            "- `{} {}`: {}{}",
            flag.flag,
            flag.asked,
            flag.verdict,
            match (&flag.setting, &flag.stated) {
                (Some(setting), Some(stated)) => format!(" (`{setting}` = {stated})"),
                _ => String::new(),
            }
        );
    }
    for death in &result.deaths {
        let _ = writeln!(
            out,
            "- **{}**{}; output: `{}`",
            death.detail,
            death
                .part
                .as_ref()
                .map_or_else(String::new, |p| format!(" (part {p})")),
            death.log
        );
        if !death.log_tail.is_empty() {
            let _ = writeln!(out, "\n  ```\n  {}\n  ```", death.log_tail.join("\n  "));
        }
    }
    out.push('\n');
}

/// The Markdown report.
pub fn tune_markdown(file: &TuneFile, analysis: &TuneAnalysis) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Tune: {} configurations, {} rounds\n\n**Verdict:** {}\n",
        file.configs.len(),
        file.rounds,
        analysis.verdict
    );
    if let Some(shape) = &analysis.shape {
        let _ = writeln!(
            out,
            "Speed read at {shape}; configurations ranked by {}, each figure's 95% interval in brackets.\n",
            match file.rank_by {
                super::config::RankBy::Goodput => "goodput",
                super::config::RankBy::Capacity => "capacity",
            }
        );
    }
    tables(&mut out, analysis, &Markdown);
    for front in &analysis.fronts {
        let _ = writeln!(
            out,
            "## Pareto front: {} against {}\n\nOn the front: {}.\n",
            front.y,
            front.x,
            front.on_front.join(", ")
        );
    }
    out.push_str("## Each configuration\n\n");
    for result in &analysis.configs {
        config_section(&mut out, result);
    }
    if !analysis.differing_settings.is_empty() {
        out.push_str("## Settings the servers state differently\n\n");
        for line in &analysis.differing_settings {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
    }
    out.push_str("## Turns\n\n| round | configuration | status | ready, s | launches | port closed |\n|---|---|---|---|---|---|\n");
    for turn in &file.turns {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            turn.round,
            turn.config,
            turn.status.word(),
            turn.ready_s
                .map_or_else(|| "—".to_owned(), |s| format!("{s:.1}")),
            turn.launches,
            turn.port_closed
                .map_or("—", |c| if c { "yes" } else { "no" })
        );
    }
    out
}

fn front_chart(front: &Front) -> String {
    let points: Vec<Point> = front
        .points
        .iter()
        .map(|p| {
            let mut point = Point::at(p.x.value, p.y.value)
                .named(p.name.clone())
                .labelled(p.name.clone());
            if let Some((low, high)) = p.x.interval {
                point = point.with_x_interval(low, high);
            }
            if let Some((low, high)) = p.y.interval {
                point = point.with_interval(low, high);
            }
            point
        })
        .collect();
    ScatterChart::new(
        format!("{} against {}", front.y, front.x),
        format!("{} configurations", front.points.len()),
    )
    .x_title(front.x.clone())
    .y_title(front.y.clone())
    .series([Series::new("configurations", points)])
    .front(
        "Pareto front",
        front.on_front.clone(),
        Better::Higher,
        Better::Higher,
    )
    .to_svg()
}

/// The page: the verdict, the ranking, the pairs, each front drawn.
pub fn tune_html(file: &TuneFile, analysis: &TuneAnalysis) -> String {
    let title = format!("Tune of {} configurations", file.configs.len());
    let mut out = crate::html::page_start(&title);
    let _ = writeln!(
        out,
        "<h1>{}</h1>\n<p class=\"verdict\">{}</p>",
        escape(&title),
        escape(&analysis.verdict)
    );
    tables(&mut out, analysis, &Html);
    for front in &analysis.fronts {
        let _ = writeln!(
            out,
            "<h2>Pareto front: {} against {}</h2>\n<p>On the front: {}.</p>\n<figure>{}</figure>",
            escape(&front.y),
            escape(&front.x),
            escape(&front.on_front.join(", ")),
            front_chart(front)
        );
    }
    out.push_str("<h2>Configurations</h2>\n<ul>\n");
    for result in &analysis.configs {
        let _ = writeln!(
            out,
            "<li class=\"config\"><b>{}</b>: <code>{}</code> — {}</li>",
            escape(&result.name),
            escape(&result.command),
            escape(result.standing.words())
        );
    }
    out.push_str("</ul>\n</body></html>\n");
    out
}

/// Writes `tune.md` and `tune.html` into `out`, each whole or not at all.
pub fn write_reports(file: &TuneFile, out: &Path) -> Result<(), BatteryError> {
    let Some(analysis) = &file.analysis else {
        return Ok(());
    };
    for (name, text) in [
        (TUNE_REPORT, tune_markdown(file, analysis)),
        (TUNE_PAGE, tune_html(file, analysis)),
    ] {
        let path = out.join(name);
        vernier_run::write_atomically(&path, text.as_bytes())
            .map_err(|source| BatteryError::io("write", &path, source))?;
    }
    Ok(())
}
