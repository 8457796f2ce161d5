//! `hardsuite compare`: two runs of the same tasks, paired task by task.
//!
//! With one paired sample per task, the items are independent and the statistics are the
//! classic ones for paired proportions (Newcombe, `McNemar`). With more than one, a task's
//! samples are not independent: every statistic works on per-task means instead (Miller 2024,
//! "Adding Error Bars to Evals", arXiv:2411.00640).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;
use std::path::{Path, PathBuf};

pub use vernier_stats::ClusteredDifference;
use vernier_stats::{
    Interval, clustered_paired_difference, mcnemar_exact, mcnemar_mid_p, median,
    min_detectable_difference, newcombe_independent, newcombe_paired, paired_bootstrap_diff,
    paired_sample_size_for_power,
};
use vernier_tasks::{Category, OutcomeKind};

use crate::error::HardsuiteError;
use crate::report::{round_count, thousands};
use crate::results::{ResultsFile, difference_half_width_points};
use crate::task_results::{CONFIDENCE, SampleResult};

mod differences;
pub use differences::{instance_differences, setting_differences};

/// Power at which [`Comparison::min_detectable_difference`] is computed.
pub const POWER: f64 = 0.8;

/// How [`compare_files`] compares and what it writes besides the comparison it returns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompareOptions {
    /// Also write the comparison as Markdown to this file.
    pub markdown: Option<PathBuf>,
    /// Also write the comparison as JSON to this file (schema in `docs/hardsuite.md`).
    pub json: Option<PathBuf>,
    /// Bootstrap resamples for the cross-check (default 10 000).
    pub resamples: usize,
    /// Bootstrap seed (default 2026).
    pub seed: u64,
    /// Compare runs drawn from different instances as independent samples (no pairing by
    /// task id); without it such runs are refused.
    pub unpaired: bool,
    /// Differences, in points, to plan the items per arm for (default
    /// [`PLANNED_DIFFERENCES`]).
    pub detect_points: Vec<f64>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            markdown: None,
            json: None,
            resamples: 10_000,
            seed: 2026,
            unpaired: false,
            detect_points: PLANNED_DIFFERENCES.to_vec(),
        }
    }
}

/// Loads two runs (each a `results.json` or a `journal.jsonl`), compares them with
/// [`compare`], and writes the Markdown and JSON forms where `options` asks for them.
pub fn compare_files(
    a: &Path,
    b: &Path,
    options: &CompareOptions,
) -> Result<Comparison, HardsuiteError> {
    let a = ResultsFile::load(a)?;
    let b = ResultsFile::load(b)?;
    let comparison = compare_with(&a, &b, options)?;
    if let Some(path) = &options.markdown {
        std::fs::write(path, render_comparison_markdown(&comparison))
            .map_err(|source| HardsuiteError::io("write", path, source))?;
    }
    if let Some(path) = &options.json {
        let mut text = serde_json::to_string_pretty(&comparison)
            .map_err(|error| HardsuiteError::io("encode", path, error.into()))?;
        text.push('\n');
        std::fs::write(path, text).map_err(|source| HardsuiteError::io("write", path, source))?;
    }
    Ok(comparison)
}

/// One task, side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TaskComparison {
    /// Task id.
    pub id: String,
    /// Category.
    pub category: Category,
    /// A's outcome of each sample.
    pub a: Vec<OutcomeKind>,
    /// B's outcome of each sample.
    pub b: Vec<OutcomeKind>,
    /// A's completion tokens of each sample.
    pub a_tokens: Vec<Option<u64>>,
    /// B's completion tokens of each sample.
    pub b_tokens: Vec<Option<u64>>,
}

/// The paired comparison of run A with run B (differences are A − B).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Comparison {
    /// A's model.
    pub a_model: String,
    /// B's model.
    pub b_model: String,
    /// Tasks both runs hold, in A's order.
    pub tasks: Vec<TaskComparison>,
    /// Task ids only A holds (left out of every statistic).
    pub only_in_a: Vec<String>,
    /// Task ids only B holds (left out of every statistic).
    pub only_in_b: Vec<String>,
    /// Paired items: (task, sample) scored on both sides.
    pub n_items: u64,
    /// Tasks with at least one paired item.
    pub n_tasks: usize,
    /// Most paired items of any one task (1 with one sample per task).
    pub max_samples_per_task: usize,
    /// Items both solved.
    pub both: u64,
    /// Items only A solved.
    pub only_a: u64,
    /// Items only B solved.
    pub only_b: u64,
    /// Items neither solved.
    pub neither: u64,
    /// Task ids where A solved an item B did not.
    pub solved_only_by_a: Vec<String>,
    /// Task ids where B solved an item A did not.
    pub solved_only_by_b: Vec<String>,
    /// A's pass rate: the mean over paired tasks of A's pass fraction on the task's paired
    /// items (with one item per task, the share of items A passed).
    pub pass_rate_a: f64,
    /// B's pass rate, likewise.
    pub pass_rate_b: f64,
    /// `pass_rate_a − pass_rate_b`.
    pub difference: f64,
    /// Newcombe's interval for paired proportions (method 10); only with one paired item per
    /// task, as it needs independent pairs.
    pub newcombe: Option<Interval>,
    /// Exact (conditional) `McNemar` p-value, two-sided; only with one paired item per task.
    pub mcnemar_exact_p: Option<f64>,
    /// Mid-p `McNemar` p-value, two-sided; only with one paired item per task.
    pub mcnemar_mid_p: Option<f64>,
    /// The task-clustered paired interval on the difference, when some task has more than
    /// one paired item (in place of Newcombe and `McNemar`).
    pub task_clustered: Option<ClusteredDifference>,
    /// Paired percentile bootstrap over tasks of the difference in mean pass rate (cross-check).
    pub bootstrap: Option<Interval>,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// Bootstrap seed.
    pub seed: u64,
    /// Median completion tokens of A's passing samples.
    pub median_tokens_solved_a: Option<f64>,
    /// Median completion tokens of B's passing samples.
    pub median_tokens_solved_b: Option<f64>,
    /// Median completion tokens of A on items both solved.
    pub median_tokens_both_solved_a: Option<f64>,
    /// Median completion tokens of B on items both solved.
    pub median_tokens_both_solved_b: Option<f64>,
    /// Smallest difference (a proportion) a two-sided 5% test detects with 80% power on this
    /// many tasks, at the pooled pass rate (independent-arms formula: conservative for pairs,
    /// and for several samples per task, averaged per task).
    pub min_detectable_difference: f64,
    /// Half-width in points of a 95% interval on a difference over this many tasks (at 15%
    /// discordance; averaging several samples per task can only narrow it).
    pub difference_half_width_points: f64,
    /// Compared as independent samples (`--unpaired`): the paired statistics are `null`.
    pub unpaired: bool,
    /// How the two runs' instances differ (empty for the same draw and parameters).
    pub instance_differences: Vec<String>,
    /// Every other difference in how the two runs were made: budgets, sampling, extra body,
    /// samples, re-run budget, suite, self-check.
    pub setting_differences: Vec<String>,
    /// With `unpaired`: Newcombe's interval for two independent proportions (method 10) on
    /// each run's own scored samples.
    pub newcombe_independent: Option<Interval>,
    /// Share of paired items on which the runs disagree (only A or only B solved it).
    pub discordance: Option<f64>,
    /// Items per arm to detect each difference asked for (2 and 5 points unless
    /// `--detect` says) with 80% power (5% two-sided) at the observed discordance (Connor
    /// 1987); empty unpaired, or when the runs disagree on too few items to plan from.
    pub items_for_power: Vec<(f64, u64)>,
}

/// Differences, in points, for which [`Comparison::items_for_power`] plans.
pub const PLANNED_DIFFERENCES: [f64; 2] = [2.0, 5.0];

fn scored(samples: &[SampleResult]) -> HashMap<u32, &SampleResult> {
    samples
        .iter()
        .filter(|sample| sample.outcome.is_scored())
        .map(|sample| (sample.sample, sample))
        .collect()
}

fn stats_error(what: &'static str) -> impl FnOnce(vernier_stats::StatsError) -> HardsuiteError {
    move |source| HardsuiteError::Stats { what, source }
}

/// Pairs the runs task by task and sample by sample and computes every statistic: Newcombe's
/// interval and `McNemar` with one paired sample per task; a task-clustered interval on the
/// per-task differences when some task has more (its samples are not independent).
pub fn compare(
    a: &ResultsFile,
    b: &ResultsFile,
    resamples: usize,
    seed: u64,
) -> Result<Comparison, HardsuiteError> {
    let options = CompareOptions {
        resamples,
        seed,
        ..CompareOptions::default()
    };
    compare_with(a, b, &options)
}

/// [`compare`] with every option: runs drawn from different instances are refused
/// ([`HardsuiteError::DifferentInstances`]) unless `options.unpaired`, which compares them
/// as independent samples (Newcombe's interval for independent proportions; the paired
/// statistics are left out).
#[expect(
    clippy::too_many_lines,
    reason = "one linear pass over the paired items, then the statistics"
)]
pub fn compare_with(
    a: &ResultsFile,
    b: &ResultsFile,
    options: &CompareOptions,
) -> Result<Comparison, HardsuiteError> {
    let (resamples, seed, unpaired) = (options.resamples, options.seed, options.unpaired);
    let instance_differences = instance_differences(a, b);
    if !instance_differences.is_empty() && !unpaired {
        return Err(HardsuiteError::DifferentInstances {
            differences: instance_differences.join("; "),
        });
    }
    let b_tasks: HashMap<&str, _> = b
        .tasks
        .iter()
        .map(|task| (task.id.as_str(), task))
        .collect();
    let a_ids: std::collections::HashSet<&str> = a.tasks.iter().map(|t| t.id.as_str()).collect();
    let only_in_b = b
        .tasks
        .iter()
        .filter(|task| !a_ids.contains(task.id.as_str()))
        .map(|task| task.id.clone())
        .collect();
    let mut only_in_a = Vec::new();
    let mut tasks = Vec::new();
    let (mut both, mut only_a, mut only_b, mut neither) = (0_u64, 0_u64, 0_u64, 0_u64);
    let (mut solved_only_by_a, mut solved_only_by_b) = (Vec::new(), Vec::new());
    let (mut task_rates_a, mut task_rates_b) = (Vec::new(), Vec::new());
    let mut task_differences: Vec<Vec<f64>> = Vec::new();
    let (mut tokens_a, mut tokens_b) = (Vec::new(), Vec::new());
    let (mut both_tokens_a, mut both_tokens_b) = (Vec::new(), Vec::new());
    for task_a in &a.tasks {
        let Some(task_b) = b_tasks.get(task_a.id.as_str()) else {
            only_in_a.push(task_a.id.clone());
            continue;
        };
        let (scored_a, scored_b) = (scored(&task_a.samples), scored(&task_b.samples));
        let mut keys: Vec<u32> = scored_a
            .keys()
            .filter(|key| scored_b.contains_key(key))
            .copied()
            .collect();
        keys.sort_unstable();
        let (mut passes_a, mut passes_b) = (0.0, 0.0);
        let mut differences = Vec::with_capacity(keys.len());
        for key in &keys {
            let (sample_a, sample_b) = (scored_a[key], scored_b[key]);
            let (pass_a, pass_b) = (
                sample_a.outcome == OutcomeKind::Pass,
                sample_b.outcome == OutcomeKind::Pass,
            );
            match (pass_a, pass_b) {
                (true, true) => {
                    both += 1;
                    both_tokens_a.extend(sample_a.completion_tokens.map(|t| t as f64));
                    both_tokens_b.extend(sample_b.completion_tokens.map(|t| t as f64));
                }
                (true, false) => {
                    only_a += 1;
                    if solved_only_by_a.last() != Some(&task_a.id) {
                        solved_only_by_a.push(task_a.id.clone());
                    }
                }
                (false, true) => {
                    only_b += 1;
                    if solved_only_by_b.last() != Some(&task_a.id) {
                        solved_only_by_b.push(task_a.id.clone());
                    }
                }
                (false, false) => neither += 1,
            }
            differences.push(f64::from(u8::from(pass_a)) - f64::from(u8::from(pass_b)));
            if pass_a {
                passes_a += 1.0;
                tokens_a.extend(sample_a.completion_tokens.map(|t| t as f64));
            }
            if pass_b {
                passes_b += 1.0;
                tokens_b.extend(sample_b.completion_tokens.map(|t| t as f64));
            }
        }
        if !keys.is_empty() {
            task_rates_a.push(passes_a / keys.len() as f64);
            task_rates_b.push(passes_b / keys.len() as f64);
            task_differences.push(differences);
        }
        tasks.push(TaskComparison {
            id: task_a.id.clone(),
            category: task_a.category,
            a: task_a.samples.iter().map(|s| s.outcome).collect(),
            b: task_b.samples.iter().map(|s| s.outcome).collect(),
            a_tokens: task_a.samples.iter().map(|s| s.completion_tokens).collect(),
            b_tokens: task_b.samples.iter().map(|s| s.completion_tokens).collect(),
        });
    }
    let n_items = both + only_a + only_b + neither;
    if n_items == 0 {
        return Err(HardsuiteError::invalid(
            "these two runs",
            "they share no scored task sample; compare runs of the same suite",
        ));
    }
    let n_tasks = task_differences.len();
    let max_samples_per_task = task_differences.iter().map(Vec::len).max().unwrap_or(0);
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    // With one item per task these are the shares of items passed.
    let (pass_rate_a, pass_rate_b) = (mean(&task_rates_a), mean(&task_rates_b));
    let (newcombe, mcnemar_exact_p, mcnemar_mid_p, task_clustered) = if unpaired {
        (None, None, None, None)
    } else if max_samples_per_task > 1 {
        // A task's samples are not independent: no statistic may treat them as separate pairs.
        (
            None,
            None,
            None,
            clustered_paired_difference(&task_differences, CONFIDENCE).ok(),
        )
    } else {
        (
            Some(
                newcombe_paired(both, only_a, only_b, neither, CONFIDENCE)
                    .map_err(stats_error("Newcombe's paired interval"))?,
            ),
            Some(mcnemar_exact(only_a, only_b).map_err(stats_error("the exact McNemar p-value"))?),
            Some(mcnemar_mid_p(only_a, only_b).map_err(stats_error("the mid-p McNemar p-value"))?),
            None,
        )
    };
    let (mut pass_rate_a, mut pass_rate_b) = (pass_rate_a, pass_rate_b);
    let newcombe_independent = if unpaired {
        let counts = |run: &ResultsFile| {
            run.tasks
                .iter()
                .flat_map(|t| t.samples.iter())
                .filter(|s| s.outcome.is_scored())
                .fold((0_u64, 0_u64), |(pass, n), s| {
                    (pass + u64::from(s.outcome == OutcomeKind::Pass), n + 1)
                })
        };
        let ((xa, na), (xb, nb)) = (counts(a), counts(b));
        pass_rate_a = xa as f64 / na.max(1) as f64;
        pass_rate_b = xb as f64 / nb.max(1) as f64;
        Some(
            newcombe_independent(xa, na, xb, nb, CONFIDENCE).map_err(stats_error(
                "Newcombe's interval for independent proportions",
            ))?,
        )
    } else {
        None
    };
    let bootstrap = paired_bootstrap_diff(
        &task_rates_a,
        &task_rates_b,
        mean,
        resamples,
        CONFIDENCE,
        seed,
    )
    .ok()
    .filter(|_| !unpaired);
    let discordance = (!unpaired && n_items > 0).then(|| (only_a + only_b) as f64 / n_items as f64);
    let items_for_power: Vec<(f64, u64)> = discordance
        .map(|psi| {
            options
                .detect_points
                .iter()
                .filter_map(|points| {
                    paired_sample_size_for_power(points / 100.0, psi, CONFIDENCE, POWER)
                        .ok()
                        .map(|n| (*points, n))
                })
                .collect()
        })
        .unwrap_or_default();
    let pooled = f64::midpoint(pass_rate_a, pass_rate_b).clamp(0.01, 0.99);
    let n_units = n_tasks as u64;
    let min_detectable = min_detectable_difference(n_units, pooled, CONFIDENCE, POWER, None)
        .map_err(stats_error("the minimum detectable difference"))?;
    Ok(Comparison {
        a_model: a.model.clone(),
        b_model: b.model.clone(),
        tasks,
        only_in_a,
        only_in_b,
        n_items,
        n_tasks,
        max_samples_per_task,
        both,
        only_a,
        only_b,
        neither,
        solved_only_by_a,
        solved_only_by_b,
        pass_rate_a,
        pass_rate_b,
        difference: pass_rate_a - pass_rate_b,
        newcombe,
        mcnemar_exact_p,
        mcnemar_mid_p,
        task_clustered,
        bootstrap,
        resamples,
        seed,
        median_tokens_solved_a: median(&tokens_a).ok(),
        median_tokens_solved_b: median(&tokens_b).ok(),
        median_tokens_both_solved_a: median(&both_tokens_a).ok(),
        median_tokens_both_solved_b: median(&both_tokens_b).ok(),
        min_detectable_difference: min_detectable,
        difference_half_width_points: difference_half_width_points(n_tasks as f64),
        unpaired,
        instance_differences,
        setting_differences: setting_differences(a, b),
        newcombe_independent,
        discordance,
        items_for_power,
    })
}

fn outcomes(kinds: &[OutcomeKind]) -> String {
    if kinds.is_empty() {
        return "-".to_owned();
    }
    kinds
        .iter()
        .map(|kind| kind.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn token_list(tokens: &[Option<u64>]) -> String {
    if tokens.is_empty() {
        return "-".to_owned();
    }
    tokens
        .iter()
        .map(|t| t.map_or_else(|| "-".to_owned(), thousands))
        .collect::<Vec<_>>()
        .join(",")
}

fn opt_tokens(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| thousands(round_count(v)))
}

fn list(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    }
}

fn points(interval: Interval) -> String {
    format!("{:.1}", interval.scaled(100.0))
}

/// What sets the two runs apart besides the model: unpaired instances, other settings.
fn difference_lines(c: &Comparison) -> Vec<String> {
    let mut lines = Vec::new();
    if c.unpaired {
        lines.push(format!(
            "UNPAIRED: the runs were drawn from different instances ({}); same task ids are \
             different questions, so only the independent comparison below is made",
            c.instance_differences.join("; ")
        ));
    }
    if c.setting_differences.is_empty() {
        lines.push(
            "the two runs were made the same way (budgets, sampling, extra body, samples)"
                .to_owned(),
        );
    } else {
        lines.push(format!(
            "the runs differ in more than the model: {}; the difference below mixes these in",
            c.setting_differences.join("; ")
        ));
    }
    lines
}

/// The summary lines shared by the terminal and Markdown forms.
fn summary_lines(c: &Comparison) -> Vec<String> {
    let clustered = c.max_samples_per_task > 1;
    let mut lines = difference_lines(c);
    if clustered {
        lines.push(format!(
            "A = {}: {:.1}%; B = {}: {:.1}% (mean over {} tasks of each task's pass fraction; up \
             to {} paired samples per task, averaged per task first)",
            c.a_model,
            c.pass_rate_a * 100.0,
            c.b_model,
            c.pass_rate_b * 100.0,
            c.n_tasks,
            c.max_samples_per_task
        ));
        lines.push(format!(
            "paired samples: {}; both solved {}, only A {}, only B {}, neither {} (counts only: \
             a task's samples are not independent)",
            c.n_items, c.both, c.only_a, c.only_b, c.neither
        ));
    } else {
        lines.push(format!(
            "A = {}: {}/{} passed ({:.1}%); B = {}: {}/{} passed ({:.1}%)",
            c.a_model,
            c.both + c.only_a,
            c.n_items,
            c.pass_rate_a * 100.0,
            c.b_model,
            c.both + c.only_b,
            c.n_items,
            c.pass_rate_b * 100.0
        ));
        lines.push(format!(
            "paired items: {}; both solved {}, only A {}, only B {}, neither {}",
            c.n_items, c.both, c.only_a, c.only_b, c.neither
        ));
    }
    lines.push(format!("solved only by A: {}", list(&c.solved_only_by_a)));
    lines.push(format!("solved only by B: {}", list(&c.solved_only_by_b)));
    lines.extend(test_lines(c));
    lines.push(c.bootstrap.map_or_else(
        || "paired bootstrap cross-check: not enough tasks".to_owned(),
        |interval| {
            format!(
                "paired bootstrap over tasks (cross-check, {} resamples, seed {}): {} points",
                c.resamples,
                c.seed,
                points(interval)
            )
        },
    ));
    lines.push(format!(
        "median completion tokens per solved item: A {}, B {}; on items both solved: A {}, B {}",
        opt_tokens(c.median_tokens_solved_a),
        opt_tokens(c.median_tokens_solved_b),
        opt_tokens(c.median_tokens_both_solved_a),
        opt_tokens(c.median_tokens_both_solved_b)
    ));
    let units = if clustered { "tasks" } else { "items" };
    lines.push(format!(
        "smallest difference this suite can detect (5% two-sided, 80% power, {} {units}): {:.1} points",
        c.n_tasks,
        c.min_detectable_difference * 100.0
    ));
    lines.extend(power_line(c));
    lines.push(if clustered {
        format!(
            "With {} tasks (samples averaged per task), the 95% interval on a difference is \
             about ±{:.0} points: a gap of one or two tasks is noise, not a win.",
            c.n_tasks, c.difference_half_width_points
        )
    } else {
        format!(
            "With {} items, the 95% interval on a difference is about ±{:.0} points: a gap of one \
             or two tasks is noise, not a win.",
            c.n_items, c.difference_half_width_points
        )
    });
    if !c.only_in_a.is_empty() || !c.only_in_b.is_empty() {
        lines.push(format!(
            "left out (in one run only): A {}; B {}",
            list(&c.only_in_a),
            list(&c.only_in_b)
        ));
    }
    lines
}

/// The items per arm a larger run needs, at the discordance these two runs show.
fn power_line(c: &Comparison) -> Option<String> {
    let psi = c.discordance?;
    let plans: Vec<String> = c
        .items_for_power
        .iter()
        .map(|(points, n)| format!("{points} points: {} per arm", thousands(*n)))
        .collect();
    Some(if plans.is_empty() {
        format!(
            "the runs disagree on {:.1}% of the items: too few to plan a larger run from",
            psi * 100.0
        )
    } else {
        format!(
            "items to detect a difference with 80% power (5% two-sided) at the observed \
             discordance of {:.1}% (Connor 1987): {}",
            psi * 100.0,
            plans.join(", ")
        )
    })
}

/// The interval on the difference and the test: Newcombe and `McNemar` with one paired item
/// per task, the task-clustered interval with more.
fn test_lines(c: &Comparison) -> Vec<String> {
    let difference = format!("difference A − B: {:+.1} points", c.difference * 100.0);
    if let Some(interval) = c.newcombe_independent {
        return vec![format!(
            "{difference} (on each run's own scored samples: 95% Newcombe interval for \
             independent proportions {} points); no paired test",
            points(interval)
        )];
    }
    if let (Some(newcombe), Some(exact), Some(mid)) =
        (c.newcombe, c.mcnemar_exact_p, c.mcnemar_mid_p)
    {
        return vec![
            format!(
                "{difference}, 95% Newcombe paired interval {} points",
                points(newcombe)
            ),
            format!(
                "exact McNemar p = {exact:.4} (mid-p {mid:.4}) on {} discordant items",
                c.only_a + c.only_b
            ),
        ];
    }
    let interval = c
        .task_clustered
        .and_then(|clustered| clustered.interval.map(|i| (i, clustered.n_tasks)))
        .map_or_else(
            || "no task-clustered interval (fewer than 2 tasks)".to_owned(),
            |(interval, n_tasks)| {
                format!(
                    "95% task-clustered paired interval {} points (mean ± 1.96 standard errors \
                     of the {n_tasks} per-task differences)",
                    points(interval)
                )
            },
        );
    vec![
        format!("{difference}, {interval}"),
        "McNemar and Newcombe: not computed, as they need independent pairs and a task's \
         samples are not; the task-clustered interval and the bootstrap over tasks are the tests \
         here"
            .to_owned(),
    ]
}

/// The comparison as a plain-text table and summary.
pub fn render_comparison(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<24} {:<8} {:<14} {:<14} {:>10} {:>10}",
        "task", "category", "A", "B", "A tokens", "B tokens"
    );
    for task in &c.tasks {
        let _ = writeln!(
            out,
            "{:<24} {:<8} {:<14} {:<14} {:>10} {:>10}",
            task.id,
            task.category.as_str(),
            outcomes(&task.a),
            outcomes(&task.b),
            token_list(&task.a_tokens),
            token_list(&task.b_tokens),
        );
    }
    let _ = writeln!(out);
    for line in summary_lines(c) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The comparison as Markdown.
pub fn render_comparison_markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# hardsuite compare: {} vs {}", c.a_model, c.b_model);
    let _ = writeln!(out);
    for line in summary_lines(c) {
        let _ = writeln!(out, "- {line}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "| task | category | A | B | A tokens | B tokens |");
    let _ = writeln!(out, "| --- | --- | --- | --- | ---: | ---: |");
    for task in &c.tasks {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            task.id,
            task.category.as_str(),
            outcomes(&task.a),
            outcomes(&task.b),
            token_list(&task.a_tokens),
            token_list(&task.b_tokens),
        );
    }
    out
}
