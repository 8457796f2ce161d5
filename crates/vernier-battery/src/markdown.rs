//! `versus.md`: the at-a-glance table first, then each dimension in full.

use std::fmt::Write as _;

use vernier_cli::figure;

use crate::versus::glance::{leader, times};
use crate::versus::{GlanceRow, SuiteVersus, Versus};

/// Escapes a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The at-a-glance table as Markdown rows.
pub(crate) fn glance_table(out: &mut String, rows: &[GlanceRow]) {
    let _ = writeln!(out, "| dimension | A | B | A vs B | 95% interval | ahead |");
    let _ = writeln!(out, "|---|---:|---:|---:|---|:---:|");
    for row in rows {
        let dimension = match &row.confounded_by {
            Some(what) => format!("{} ⚠ confounded: {what}", row.dimension),
            None => row.dimension.clone(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&dimension),
            cell(&row.a),
            cell(&row.b),
            cell(&row.comparison),
            cell(&row.interval),
            cell(&row.ahead)
        );
    }
}

/// The head-to-head as Markdown.
pub fn versus_markdown(versus: &Versus) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {} (A) against {} (B)\n",
        versus.a.model, versus.b.model
    );
    for (name, side) in [("A", &versus.a), ("B", &versus.b)] {
        let _ = writeln!(
            out,
            "- **{name}**: `{}` — {} at {} — **{}**",
            side.label,
            side.model,
            side.target,
            side.validity.line()
        );
    }
    let _ = writeln!(out);
    if versus.settings.is_empty() {
        let _ = writeln!(out, "Settings: the same on both sides.\n");
    } else {
        let _ = writeln!(out, "## Settings that differ\n");
        for setting in &versus.settings {
            if setting.confounds.is_empty() {
                let _ = writeln!(out, "- {}", setting.what);
            } else {
                let _ = writeln!(
                    out,
                    "- {} — **confounds** {}",
                    setting.what,
                    setting.confounds.join(", ")
                );
            }
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "## At a glance\n");
    let _ = writeln!(
        out,
        "Ratios are A over B (medians; 95% percentile-bootstrap interval, each side resampled on its own); quality differences are A − B in points with the paired interval. \"ahead\" names a side only where the interval excludes no difference (`(?)`: no interval, the point estimate alone).\n"
    );
    glance_table(&mut out, &versus.glance);
    let _ = writeln!(out);
    for missing in &versus.not_compared {
        let _ = writeln!(out, "- not compared: {missing}");
    }
    if !versus.not_compared.is_empty() {
        let _ = writeln!(out);
    }
    speed_sections(&mut out, versus);
    for suite in &versus.suites {
        suite_section(&mut out, suite);
    }
    out
}

fn speed_sections(out: &mut String, versus: &Versus) {
    if versus.speed.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Speed, cell by cell\n");
    let _ = writeln!(
        out,
        "| workload | prompt | output | streams | figure | A | B | A/B | 95% interval | n A/B |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---|---:|---:|---:|---|---:|");
    for row in &versus.speed {
        let interval = row.interval.map_or_else(
            || "—".to_owned(),
            |i| format!("[{:.2}, {:.2}]", i.low, i.high),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {}/{} |",
            row.workload,
            row.prompt_tokens,
            row.output_tokens,
            row.concurrency,
            row.metric.label(),
            figure(row.a),
            figure(row.b),
            times(row.ratio),
            interval,
            row.n_a,
            row.n_b
        );
    }
    let _ = writeln!(out);
    for trend in &versus.prefill {
        let points: Vec<String> = trend
            .points
            .iter()
            .map(|(length, ratio)| format!("{} at {length} tok", times(*ratio)))
            .collect();
        let flat = trend.flattens_at.map_or_else(
            || "it does not flatten over these lengths".to_owned(),
            |at| format!("it flattens from {at} tokens"),
        );
        let _ = writeln!(
            out,
            "Prefill lead, {} at one stream: {}; {flat}.\n",
            trend.workload,
            points.join(", ")
        );
    }
    for batching in &versus.batching {
        let _ = writeln!(
            out,
            "Decode lead, {} at {} tokens: {} at one stream, {} per stream at {} streams.",
            batching.workload,
            batching.prompt_tokens,
            times(batching.single),
            times(batching.batched),
            batching.concurrency
        );
    }
    if !versus.batching.is_empty() {
        let _ = writeln!(out);
    }
}

fn suite_section(out: &mut String, suite: &SuiteVersus) {
    let name = suite.part.as_str();
    let _ = writeln!(out, "## Quality: {name}\n");
    let _ = writeln!(
        out,
        "| category | A | B | A − B | 95% interval | method | items | items for ±2 pts |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---|---|---:|---:|");
    for row in &suite.quality {
        let interval = row.interval.map_or_else(
            || "—".to_owned(),
            |i| format!("[{:+.1}, {:+.1}] pts", i.low * 100.0, i.high * 100.0),
        );
        let _ = writeln!(
            out,
            "| {} | {:.1}% | {:.1}% | {:+.1} pts | {} | {} | {} | {} |",
            row.category,
            row.a * 100.0,
            row.b * 100.0,
            row.difference * 100.0,
            interval,
            row.method,
            row.n_items,
            row.items_for_two_points
                .map_or_else(|| "—".to_owned(), |n| n.to_string())
        );
    }
    let _ = writeln!(out);
    let text = |value: Option<f64>| value.map_or_else(|| "—".to_owned(), figure);
    let _ = writeln!(
        out,
        "What an answer costs (every scored try's tokens and its own seconds, sent → last event, over the tasks solved): A {} tokens and {} s per solved task ({} of {} solved); B {} tokens and {} s ({} of {}).\n",
        text(suite.cost_a.tokens_per_solved),
        text(suite.cost_a.seconds_per_solved),
        suite.cost_a.n_pass,
        suite.cost_a.n_scored,
        text(suite.cost_b.tokens_per_solved),
        text(suite.cost_b.seconds_per_solved),
        suite.cost_b.n_pass,
        suite.cost_b.n_scored,
    );
    for (what, crossovers, unit) in [
        ("token budget", &suite.token_crossovers, "tokens"),
        ("seconds per task", &suite.seconds_crossovers, "s"),
    ] {
        if crossovers.is_empty() {
            let _ = writeln!(
                out,
                "Pass rate against {what}: the lead never changes hands up to the smaller of the two runs' limits."
            );
        } else {
            for crossover in crossovers {
                let _ = writeln!(
                    out,
                    "Pass rate against {what}: {} leads below {} {unit}, {} from it on.",
                    leader(crossover.before),
                    figure(crossover.at),
                    leader(crossover.after)
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "\n(One run gives every smaller budget: a try that finished within b tokens would have finished the same way with budget b.)\n"
    );
}
