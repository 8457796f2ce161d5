//! The at-a-glance table: one row per dimension, A and B side by side, the ratio or
//! difference with its interval, and who is ahead (only where the interval says so).
//!
//! The rule for `ahead`, on every row: `A` or `B` only where a 95% interval excludes no
//! difference (a ratio interval wholly on one side of 1, a difference interval wholly on one
//! side of 0); `—` where the interval holds no difference, and `—` where there is no interval
//! at all, whatever the point estimates say (two runs of one server differ by noise). A
//! speed or cost ratio within [`TIE_WITHIN`] of 1 is a tie too, whatever its interval: two
//! runs of one server on one machine drift by that much (heat, other tenants, the order they
//! ran in), which an interval over one run's requests cannot see.

use vernier_hardsuite::ResultsFile;
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

/// A ratio A/B this close to 1 names no side ahead: the drift between two runs on one machine.
pub(crate) const TIE_WITHIN: f64 = 0.05;

/// Who is ahead on a ratio A/B with its interval: A when the whole interval lies on A's
/// better side of 1, B when it lies wholly on B's, `—` when it holds 1, there is none, or the
/// ratio is within [`TIE_WITHIN`] of 1.
fn ahead_on_ratio_interval(
    ratio: f64,
    interval: Option<&Interval>,
    higher_is_better: bool,
) -> String {
    let Some(interval) = interval else {
        return "—".to_owned();
    };
    if (ratio - 1.0).abs() < TIE_WITHIN || !ratio.is_finite() {
        return "—".to_owned();
    }
    let (a_better, b_better) = if higher_is_better {
        (interval.low > 1.0, interval.high < 1.0)
    } else {
        (interval.high < 1.0, interval.low > 1.0)
    };
    match (a_better, b_better) {
        (true, false) => "A",
        (false, true) => "B",
        _ => "—",
    }
    .to_owned()
}

/// Who is ahead on a speed ratio: by its interval alone.
fn ahead_on_ratio(row: &CellRatio) -> String {
    ahead_on_ratio_interval(
        row.ratio,
        row.interval.as_ref(),
        row.metric.higher_is_better(),
    )
}

/// Who is ahead on a difference A − B (higher better) with its interval: A when it lies
/// wholly above 0, B when wholly below, `—` otherwise or without one.
fn ahead_on_difference(interval: Option<&Interval>) -> String {
    match interval {
        Some(interval) if interval.low > 0.0 => "A",
        Some(interval) if interval.high < 0.0 => "B",
        _ => "—",
    }
    .to_owned()
}

/// A cost row (lower is better): both figures, the ratio A/B, its interval where one could
/// be given, and who is ahead by that interval alone.
fn cost_row(
    dimension: String,
    (a, b): (Option<f64>, Option<f64>),
    unit: &str,
    interval: Option<&Interval>,
    confounded_by: Option<String>,
) -> GlanceRow {
    let text = |value: Option<f64>| {
        value.map_or_else(|| "—".to_owned(), |v| format!("{}{unit}", figure(v)))
    };
    let comparable = matches!((a, b), (Some(_), Some(y)) if y > 0.0);
    let interval = interval.filter(|_| comparable);
    GlanceRow {
        dimension,
        a: text(a),
        b: text(b),
        comparison: match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => times(a / b),
            _ => "—".to_owned(),
        },
        interval: interval_text(interval, 1.0, "×"),
        ahead: match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => ahead_on_ratio_interval(a / b, interval, false),
            _ => "—".to_owned(),
        },
        confounded_by,
    }
}

pub(super) fn confound(versus: &Versus, dimension: &str) -> Option<String> {
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

fn quality_rows(
    versus: &Versus,
    (side_a, side_b): (&Side, &Side),
    suite: &SuiteVersus,
    out: &mut Vec<GlanceRow>,
) {
    let name = suite.part.as_str();
    let batched = suite.part == crate::config::Part::SuiteBatched.name();
    // The batched run adds what an answer costs under load; its pass rates repeat the suite's.
    for row in suite.quality.iter().filter(|_| !batched) {
        let ahead = ahead_on_difference(row.interval.as_ref());
        out.push(GlanceRow {
            dimension: format!(
                "pass rate, {name}: {} ({} items)",
                row.category, row.n_items
            ),
            a: format!("{:.1}%", row.a * 100.0),
            b: format!("{:.1}%", row.b * 100.0),
            comparison: format!("{:+.1} pts", row.difference * 100.0),
            interval: interval_text(row.interval.as_ref(), 100.0, " pts"),
            ahead,
            confounded_by: confound(versus, &format!("quality: {name}")),
        });
    }
    // The intervals resample the tasks both runs hold, as the costs themselves count them.
    let runs = side_a
        .suite(name)
        .zip(side_b.suite(name))
        .map(|(a, b)| super::paired::common_tasks(a, b));
    let interval = |ratio: fn(&ResultsFile, &ResultsFile) -> Option<Interval>| {
        runs.as_ref().and_then(|(a, b)| ratio(a, b))
    };
    out.push(cost_row(
        format!("tokens per solved task, {name}"),
        (
            suite.cost_a.tokens_per_solved,
            suite.cost_b.tokens_per_solved,
        ),
        "",
        interval(crate::budget::tokens_per_solved_ratio).as_ref(),
        confound(versus, &format!("quality: {name}")),
    ));
    out.push(cost_row(
        format!(
            "{}, {name}",
            if batched {
                "seconds per solved task (per stream, at the batched concurrency)"
            } else {
                "seconds per solved task (one stream)"
            }
        ),
        (
            suite.cost_a.seconds_per_solved,
            suite.cost_b.seconds_per_solved,
        ),
        " s",
        interval(crate::budget::seconds_per_solved_ratio).as_ref(),
        confound(versus, &format!("quality: {name}")),
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

/// A row where lower is better and there is no interval: the ratio A/B, and no side named
/// ahead (without an interval, a difference may be noise).
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
        ahead: "—".to_owned(),
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

/// Swap cost, each direction both sides measured: single switches in the seeds, so no
/// interval and no side named.
fn swap_rows(a: &Side, b: &Side, out: &mut Vec<GlanceRow>) {
    for swap_a in &a.swaps {
        let Some(swap_b) = b
            .swaps
            .iter()
            .find(|swap| swap.from == swap_a.from && swap.to == swap_a.to)
        else {
            continue;
        };
        out.push(lower_is_better_row(
            format!(
                "swap {} → {}: to first token, s (medians of {} and {})",
                swap_a.from, swap_a.to, swap_a.n, swap_b.n
            ),
            (swap_a.median_s, swap_b.median_s),
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
    swap_rows(a, b, &mut out);
    speed_rows(versus, &mut out);
    if let Some(row) = acceptance_row(a, b) {
        out.push(row);
    }
    energy_rows(versus, a, b, &mut out);
    let longest = |side: &Side| {
        side.suite(crate::config::Part::Context.name())
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
            // One probe per side, no interval: the figures speak, no side is named.
            ahead: "—".to_owned(),
            confounded_by: None,
        });
    }
    for suite in &versus.suites {
        quality_rows(versus, (a, b), suite, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use vernier_stats::SplitMix64;
    use vernier_tasks::OutcomeKind;

    use super::*;
    use crate::budget::{seconds_per_solved_ratio, solve_cost};

    /// A suite run of `tasks` tasks of three samples each: each passes with `pass`
    /// (thousandths) and takes 1 to 9 seconds (uniform) times `scale`. Built on the hard
    /// suite's fixture journal's first task.
    fn run(rng: &mut SplitMix64, tasks: usize, pass: u64, scale: f64) -> ResultsFile {
        let journal = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../vernier-hardsuite/tests/it/fixtures/journal.jsonl");
        let mut results = ResultsFile::load(&journal).expect("the fixture journal");
        let template = results.tasks[0].clone();
        let sample = template.samples[0].clone();
        results.tasks = (0..tasks)
            .map(|index| {
                let mut task = template.clone();
                task.id = format!("task-{index}");
                task.rerun.clear();
                task.samples = (0..3)
                    .map(|number| {
                        let mut drawn = sample.clone();
                        drawn.sample = number;
                        drawn.outcome = if rng.chance(pass, 1_000) {
                            OutcomeKind::Pass
                        } else {
                            OutcomeKind::Wrong
                        };
                        drawn.seconds = Some(scale * (1.0 + 8.0 * rng.next_f64()));
                        drawn
                    })
                    .collect();
                task
            })
            .collect();
        results
    }

    fn seconds_row(a: &ResultsFile, b: &ResultsFile) -> GlanceRow {
        let (cost_a, cost_b) = (solve_cost(a), solve_cost(b));
        cost_row(
            "seconds per solved task (one stream), suite".to_owned(),
            (cost_a.seconds_per_solved, cost_b.seconds_per_solved),
            " s",
            seconds_per_solved_ratio(a, b).as_ref(),
            None,
        )
    }

    #[test]
    fn without_an_interval_no_side_is_ahead() {
        let row = cost_row("cost".to_owned(), (Some(2.0), Some(3.0)), " s", None, None);
        assert_eq!((row.ahead.as_str(), row.interval.as_str()), ("—", "—"));
        assert_eq!(row.comparison, "0.67×");
        let row = lower_is_better_row("energy".to_owned(), (0.1, 0.3), figure, None);
        assert_eq!(row.ahead, "—");
        assert_eq!(ahead_on_ratio_interval(2.0, None, true), "—");
        assert_eq!(ahead_on_difference(None), "—");
    }

    #[test]
    fn an_interval_holding_no_difference_names_no_side() {
        let ratio = Interval::new(0.9, 1.1, 0.95);
        assert_eq!(ahead_on_ratio_interval(1.0, Some(&ratio), true), "—");
        assert_eq!(ahead_on_ratio_interval(1.0, Some(&ratio), false), "—");
        let difference = Interval::new(-0.02, 0.03, 0.95);
        assert_eq!(ahead_on_difference(Some(&difference)), "—");
    }

    #[test]
    fn a_ratio_within_the_drift_of_one_machine_is_a_tie_whatever_its_interval() {
        // Two runs of one simulator: TTFT 7.08 ms against 6.75 ms, interval clear of 1.
        let ratio = Interval::new(1.01, 1.10, 0.95);
        assert_eq!(ahead_on_ratio_interval(1.049, Some(&ratio), false), "—");
        assert_eq!(
            ahead_on_ratio_interval(1.2, Some(&Interval::new(1.1, 1.3, 0.95)), false),
            "B"
        );
    }

    #[test]
    fn an_interval_clear_of_no_difference_names_the_better_side() {
        let below = Interval::new(0.5, 0.8, 0.95);
        let above = Interval::new(1.2, 1.5, 0.95);
        // A/B below 1: where higher is better B leads; where lower is better (a cost) A does.
        assert_eq!(ahead_on_ratio_interval(0.65, Some(&below), true), "B");
        assert_eq!(ahead_on_ratio_interval(0.65, Some(&below), false), "A");
        assert_eq!(ahead_on_ratio_interval(1.35, Some(&above), true), "A");
        assert_eq!(ahead_on_ratio_interval(1.35, Some(&above), false), "B");
        assert_eq!(
            ahead_on_difference(Some(&Interval::new(0.05, 0.2, 0.95))),
            "A"
        );
        assert_eq!(
            ahead_on_difference(Some(&Interval::new(-0.2, -0.05, 0.95))),
            "B"
        );
    }

    #[test]
    fn seconds_per_solved_of_one_run_against_itself_names_no_side() {
        let a = run(&mut SplitMix64::new(1), 30, 600, 1.0);
        let row = seconds_row(&a, &a.clone());
        assert_eq!(row.ahead, "—", "{row:?}");
        assert_eq!(row.interval, "[1.00×, 1.00×]", "{row:?}");
    }

    #[test]
    fn seconds_per_solved_of_two_runs_of_one_server_rarely_names_a_side() {
        let mut named = 0;
        for seed in 0..20 {
            let mut rng = SplitMix64::new(seed);
            let (a, b) = (run(&mut rng, 30, 600, 1.0), run(&mut rng, 30, 600, 1.0));
            let row = seconds_row(&a, &b);
            assert_ne!(row.interval, "—", "30 tasks give an interval: {row:?}");
            named += usize::from(row.ahead != "—");
        }
        // A 95% interval names a side in about 1 of 20 such pairs.
        assert!(named <= 3, "{named} of 20 A/A pairs named a side");
    }

    #[test]
    fn seconds_per_solved_three_times_slower_names_the_faster_side() {
        let mut rng = SplitMix64::new(5);
        let (a, b) = (run(&mut rng, 30, 600, 1.0), run(&mut rng, 30, 600, 3.0));
        assert_eq!(seconds_row(&a, &b).ahead, "A");
        assert_eq!(seconds_row(&b, &a).ahead, "B");
    }

    #[test]
    fn too_few_tasks_give_no_interval_and_no_side() {
        let mut rng = SplitMix64::new(9);
        let (a, b) = (run(&mut rng, 5, 600, 1.0), run(&mut rng, 5, 600, 3.0));
        let row = seconds_row(&a, &b);
        assert_eq!((row.ahead.as_str(), row.interval.as_str()), ("—", "—"));
    }
}
