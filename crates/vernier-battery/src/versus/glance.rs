//! The at-a-glance table: one row per dimension, A and B side by side, the ratio or
//! difference with its interval, and who is ahead (only where the interval says so).

use vernier_stats::Interval;
use vernier_sweep::Workload;

use super::schema::{GlanceRow, SuiteVersus, Versus};
use crate::budget::Leader;
use crate::side::Side;
use crate::speed::{CellRatio, Metric};

use vernier_cli::figure;

/// `1.32×`.
pub(crate) fn times(ratio: f64) -> String {
    format!("{ratio:.2}×")
}

fn interval_text(interval: Option<&Interval>, scale: f64, unit: &str) -> String {
    interval.map_or_else(
        || "—".to_owned(),
        |interval| {
            format!(
                "[{:.2}{unit}, {:.2}{unit}]",
                interval.low * scale,
                interval.high * scale
            )
        },
    )
}

/// Who is ahead on a ratio: A when the whole interval favours A, B when it favours B, `—`
/// when it holds 1 (without an interval, the point estimate decides, marked `(?)`).
fn ahead_on_ratio(row: &CellRatio) -> String {
    let better_a = |value: f64| {
        if row.metric.higher_is_better() {
            value > 1.0
        } else {
            value < 1.0
        }
    };
    match row.interval {
        Some(interval) if better_a(interval.low) && better_a(interval.high) => "A".to_owned(),
        Some(interval) if !better_a(interval.low) && !better_a(interval.high) => "B".to_owned(),
        Some(_) => "—".to_owned(),
        None if (row.ratio - 1.0).abs() < f64::EPSILON => "—".to_owned(),
        None if better_a(row.ratio) => "A (?)".to_owned(),
        None => "B (?)".to_owned(),
    }
}

fn confound(versus: &Versus, dimension: &str) -> Option<String> {
    let found: Vec<&str> = versus
        .settings
        .iter()
        .filter(|setting| setting.confounds.iter().any(|c| c == dimension))
        .map(|setting| setting.what.as_str())
        .collect();
    (!found.is_empty()).then(|| found.join("; "))
}

fn speed_row(versus: &Versus, dimension: String, row: &CellRatio) -> GlanceRow {
    GlanceRow {
        dimension,
        a: figure(row.a),
        b: figure(row.b),
        comparison: times(row.ratio),
        interval: interval_text(row.interval.as_ref(), 1.0, "×"),
        ahead: ahead_on_ratio(row),
        confounded_by: confound(versus, "speed"),
    }
}

fn find(
    rows: &[CellRatio],
    metric: Metric,
    workload: Workload,
    concurrency: u32,
    longest: bool,
) -> Option<&CellRatio> {
    let candidates = rows.iter().filter(|row| {
        row.metric == metric && row.workload == workload && row.concurrency == concurrency
    });
    if longest {
        candidates.max_by_key(|row| row.prompt_tokens)
    } else {
        candidates.min_by_key(|row| row.prompt_tokens)
    }
}

fn speed_rows(versus: &Versus, out: &mut Vec<GlanceRow>) {
    let rows = &versus.speed;
    for workload in [Workload::Prose, Workload::Code] {
        if let Some(row) = find(rows, Metric::Decode, workload, 1, false) {
            out.push(speed_row(
                versus,
                format!("decode tok/s, {workload}, one stream"),
                row,
            ));
        }
    }
    if let Some(row) = find(rows, Metric::Ttft, Workload::Prose, 1, false) {
        out.push(speed_row(
            versus,
            format!("TTFT ms, short prompt ({} tok)", row.prompt_tokens),
            row,
        ));
    }
    if let Some(row) = find(rows, Metric::Ttft, Workload::Prose, 1, true) {
        out.push(speed_row(
            versus,
            format!("TTFT ms, long prompt ({} tok)", row.prompt_tokens),
            row,
        ));
    }
    if let Some(row) = find(rows, Metric::Prefill, Workload::Prose, 1, true) {
        out.push(speed_row(
            versus,
            format!("prefill tok/s at {} tok", row.prompt_tokens),
            row,
        ));
    }
    if let Some(batched) = versus
        .batching
        .iter()
        .filter(|b| b.workload == Workload::Prose)
        .min_by_key(|b| b.prompt_tokens)
        && let Some(row) = rows.iter().find(|row| {
            row.metric == Metric::Decode
                && row.workload == Workload::Prose
                && row.concurrency == batched.concurrency
                && row.prompt_tokens == batched.prompt_tokens
        })
    {
        let mut glance = speed_row(
            versus,
            format!(
                "decode tok/s per stream at {} streams (one stream: {})",
                batched.concurrency,
                times(batched.single)
            ),
            row,
        );
        glance.confounded_by = confound(versus, "speed");
        out.push(glance);
    }
}

fn quality_rows(versus: &Versus, suite: &SuiteVersus, out: &mut Vec<GlanceRow>) {
    let name = suite.part.name();
    let batched = suite.part == crate::config::Part::SuiteBatched;
    // The batched run adds what an answer costs under load; its pass rates repeat the suite's.
    for row in suite.quality.iter().filter(|_| !batched) {
        let ahead = match row.interval {
            Some(interval) if interval.low > 0.0 => "A",
            Some(interval) if interval.high < 0.0 => "B",
            _ => "—",
        };
        out.push(GlanceRow {
            dimension: format!(
                "pass rate, {name}: {} ({} items)",
                row.category, row.n_items
            ),
            a: format!("{:.1}%", row.a * 100.0),
            b: format!("{:.1}%", row.b * 100.0),
            comparison: format!("{:+.1} pts", row.difference * 100.0),
            interval: interval_text(row.interval.as_ref(), 100.0, " pts"),
            ahead: ahead.to_owned(),
            confounded_by: confound(versus, &format!("quality: {name}")),
        });
    }
    let cost = |label: &str, a: Option<f64>, b: Option<f64>, unit: &str| {
        let text = |value: Option<f64>| {
            value.map_or_else(|| "—".to_owned(), |v| format!("{}{unit}", figure(v)))
        };
        GlanceRow {
            dimension: format!("{label}, {name}"),
            a: text(a),
            b: text(b),
            comparison: match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => times(a / b),
                _ => "—".to_owned(),
            },
            interval: "—".to_owned(),
            ahead: match (a, b) {
                (Some(a), Some(b)) if a < b => "A".to_owned(),
                (Some(a), Some(b)) if b < a => "B".to_owned(),
                (Some(_), None) => "A".to_owned(),
                (None, Some(_)) => "B".to_owned(),
                _ => "—".to_owned(),
            },
            confounded_by: confound(versus, &format!("quality: {name}")),
        }
    };
    out.push(cost(
        "tokens per solved task",
        suite.cost_a.tokens_per_solved,
        suite.cost_b.tokens_per_solved,
        "",
    ));
    out.push(cost(
        if batched {
            "seconds per solved task (per stream, at the batched concurrency)"
        } else {
            "seconds per solved task (one stream)"
        },
        suite.cost_a.seconds_per_solved,
        suite.cost_b.seconds_per_solved,
        " s",
    ));
    if batched {
        return;
    }
    for (what, crossovers, unit) in [
        ("token budget", &suite.token_crossovers, " tokens"),
        ("seconds per task", &suite.seconds_crossovers, " s"),
    ] {
        if crossovers.is_empty() {
            continue;
        }
        let text: Vec<String> = crossovers
            .iter()
            .map(|crossover| {
                format!(
                    "{} leads from {}{unit}",
                    leader(crossover.after),
                    figure(crossover.at)
                )
            })
            .collect();
        out.push(GlanceRow {
            dimension: format!("pass rate against {what}, {name}: crossover"),
            a: "—".to_owned(),
            b: "—".to_owned(),
            comparison: text.join("; "),
            interval: "—".to_owned(),
            ahead: "—".to_owned(),
            confounded_by: confound(versus, &format!("quality: {name}")),
        });
    }
}

/// A sweep's speculative-decoding acceptance: the draft tokens accepted over those proposed,
/// over every cell (from `/metrics` counters, else the responses' own counts).
fn acceptance(side: &Side) -> Option<f64> {
    let run = &side.sweep.as_ref()?.run;
    let (mut drafted, mut accepted) = (0.0, 0.0);
    for cell in &run.cells {
        if let Some(spec) = &cell.spec_decode {
            drafted += spec.draft_tokens;
            accepted += spec.accepted_tokens;
        } else if let Some(spec) = &cell.spec_decode_per_request {
            drafted += spec.draft_tokens as f64;
            accepted += spec.accepted_tokens as f64;
        }
    }
    (drafted > 0.0).then(|| accepted / drafted)
}

fn acceptance_row(a: &Side, b: &Side) -> Option<GlanceRow> {
    let (rate_a, rate_b) = (acceptance(a), acceptance(b));
    if rate_a.is_none() && rate_b.is_none() {
        return None;
    }
    let text = |rate: Option<f64>| {
        rate.map_or_else(
            || "not reported".to_owned(),
            |r| format!("{:.1}%", r * 100.0),
        )
    };
    Some(GlanceRow {
        dimension: "speculative decoding: draft tokens accepted".to_owned(),
        a: text(rate_a),
        b: text(rate_b),
        comparison: match (rate_a, rate_b) {
            (Some(x), Some(y)) => format!("{:+.1} pts", (x - y) * 100.0),
            _ => "—".to_owned(),
        },
        interval: "—".to_owned(),
        ahead: "—".to_owned(),
        confounded_by: None,
    })
}

/// A row where lower is better and there is no interval: the ratio A/B, and who is ahead
/// marked `(?)`.
fn lower_is_better_row(
    dimension: String,
    (x, y): (f64, f64),
    text: fn(f64) -> String,
    confounded_by: Option<String>,
) -> GlanceRow {
    GlanceRow {
        dimension,
        a: text(x),
        b: text(y),
        comparison: if y > 0.0 {
            times(x / y)
        } else {
            "—".to_owned()
        },
        interval: "—".to_owned(),
        ahead: match x.total_cmp(&y) {
            std::cmp::Ordering::Less => "A (?)",
            std::cmp::Ordering::Greater => "B (?)",
            std::cmp::Ordering::Equal => "—",
        }
        .to_owned(),
        confounded_by,
    }
}

/// GPU energy per output token in the busiest cell both sweeps measured it in (lower is
/// better; one window per cell, so no interval), and the mean power there.
fn energy_rows(versus: &Versus, a: &Side, b: &Side, out: &mut Vec<GlanceRow>) {
    let (Some(sweep_a), Some(sweep_b)) = (a.sweep.as_ref(), b.sweep.as_ref()) else {
        return;
    };
    let same = |x: &vernier_sweep::CellSummary, y: &vernier_sweep::CellSummary| {
        (
            x.workload,
            x.prompt_tokens_target,
            x.output_tokens,
            x.concurrency,
        ) == (
            y.workload,
            y.prompt_tokens_target,
            y.output_tokens,
            y.concurrency,
        ) && x.rate_per_s.map(f64::to_bits) == y.rate_per_s.map(f64::to_bits)
    };
    let pair = sweep_a
        .run
        .cells
        .iter()
        .filter_map(|cell_a| {
            let per_a = cell_a.gpu.as_ref()?.per_token?;
            let cell_b = sweep_b
                .run
                .cells
                .iter()
                .find(|cell_b| same(cell_a, cell_b))?;
            let per_b = cell_b.gpu.as_ref()?.per_token?;
            Some((cell_a, per_a, per_b))
        })
        .max_by_key(|(cell, ..)| (cell.concurrency, cell.prompt_tokens_target));
    let Some((cell, per_a, per_b)) = pair else {
        return;
    };
    out.push(lower_is_better_row(
        format!(
            "GPU energy, J per output token ({} {}/{} c{})",
            cell.workload, cell.prompt_tokens_target, cell.output_tokens, cell.concurrency
        ),
        (per_a.joules_per_output_token, per_b.joules_per_output_token),
        |joules| format!("{joules:.3}"),
        confound(versus, "speed"),
    ));
}

/// Time to ready, launch to health and to the first token (lower is better; medians, no
/// interval over so few launches).
fn ready_rows(a: &Side, b: &Side, out: &mut Vec<GlanceRow>) {
    let (Some(ready_a), Some(ready_b)) = (a.ready, b.ready) else {
        return;
    };
    for (label, value_a, value_b) in [
        (
            "time to ready: launch → health 200, s",
            ready_a.health_ok_s,
            ready_b.health_ok_s,
        ),
        (
            "time to ready: launch → first token, s",
            ready_a.first_token_s,
            ready_b.first_token_s,
        ),
    ] {
        let (Some(x), Some(y)) = (value_a, value_b) else {
            continue;
        };
        out.push(lower_is_better_row(
            format!(
                "{label} (medians of {} and {} launches)",
                ready_a.n, ready_b.n
            ),
            (x, y),
            figure,
            None,
        ));
    }
}

/// `A` or `B`.
pub(crate) fn leader(leader: Leader) -> &'static str {
    match leader {
        Leader::A => "A",
        Leader::B => "B",
    }
}

/// The rows, in the order a reader asks: can I trust it, how fast, how good, what it costs.
pub(crate) fn glance(versus: &Versus, a: &Side, b: &Side) -> Vec<GlanceRow> {
    let mut out = vec![GlanceRow {
        dimension: "verdict".to_owned(),
        a: a.validity.verdict.to_string(),
        b: b.validity.verdict.to_string(),
        comparison: "—".to_owned(),
        interval: "—".to_owned(),
        ahead: "—".to_owned(),
        confounded_by: None,
    }];
    ready_rows(a, b, &mut out);
    speed_rows(versus, &mut out);
    if let Some(row) = acceptance_row(a, b) {
        out.push(row);
    }
    energy_rows(versus, a, b, &mut out);
    let longest = |side: &Side| {
        side.suites
            .get(&crate::config::Part::Context)
            .and_then(|results| results.context.as_ref())
            .and_then(|context| context.largest_accepted_tokens)
    };
    if let (Some(long_a), Some(long_b)) = (longest(a), longest(b)) {
        out.push(GlanceRow {
            dimension: "longest context accepted, tokens".to_owned(),
            a: long_a.to_string(),
            b: long_b.to_string(),
            comparison: times(long_a as f64 / long_b.max(1) as f64),
            interval: "—".to_owned(),
            ahead: match long_a.cmp(&long_b) {
                std::cmp::Ordering::Greater => "A",
                std::cmp::Ordering::Less => "B",
                std::cmp::Ordering::Equal => "—",
            }
            .to_owned(),
            confounded_by: None,
        });
    }
    for suite in &versus.suites {
        quality_rows(versus, suite, &mut out);
    }
    out
}
