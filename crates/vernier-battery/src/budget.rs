//! What a solved task costs, and the pass rate at every budget from one run.
//!
//! Generation does not depend on `max_tokens`: a try that finished within `b` tokens would have
//! finished the same way with budget `b`. So one run at a large budget gives the pass rate at
//! every smaller one: the share of scored samples that passed using at most `b` tokens (or at
//! most `t` seconds of their own stream). Beyond the run's own budget nothing is known, and the
//! curve stops there.

use serde::{Deserialize, Serialize};
use vernier_hardsuite::{ResultsFile, SampleResult};
use vernier_stats::Interval;
use vernier_tasks::OutcomeKind;

/// What one side paid per solved task in one suite.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SolveCost {
    /// Scored samples (main run).
    pub n_scored: u64,
    /// Of them, passed.
    pub n_pass: u64,
    /// Completion tokens of every scored sample over the passes: what one answer cost in
    /// tokens, failures included.
    pub tokens_per_solved: Option<f64>,
    /// Seconds of every scored sample's own try (sent → last event) over the passes: the
    /// measured wall-clock cost of one answer, failures included.
    pub seconds_per_solved: Option<f64>,
    /// Median completion tokens of the passing samples.
    pub median_tokens_solved: Option<f64>,
}

/// One step of a pass-rate curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CurvePoint {
    /// The budget (tokens) or the time allowed per task (seconds).
    pub x: f64,
    /// Share of scored samples passed within `x`.
    pub pass_rate: f64,
}

/// Pass rate against a budget (tokens, or seconds per task) for one side of one suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Curve {
    /// Steps, by increasing `x`: one at every pass's own cost, and one at `limit`.
    pub points: Vec<CurvePoint>,
    /// Where the run's own budget ends the curve (the smallest budget its samples had; for
    /// seconds, the longest try).
    pub limit: f64,
    /// Scored samples.
    pub n_scored: u64,
}

impl Curve {
    /// The pass rate at `x` (a step function; `None` beyond `limit`).
    pub fn at(&self, x: f64) -> Option<f64> {
        if x > self.limit {
            return None;
        }
        Some(
            self.points
                .iter()
                .take_while(|point| point.x <= x)
                .last()
                .map_or(0.0, |point| point.pass_rate),
        )
    }
}

/// Which side leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Leader {
    /// Side A.
    A,
    /// Side B.
    B,
}

/// Where the lead changes hands.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Crossover {
    /// The smallest budget at which the new leader leads.
    pub at: f64,
    /// Who led below it.
    pub before: Leader,
    /// Who leads from it on.
    pub after: Leader,
}

/// Whether a main-run sample counts in a pass rate.
fn is_scored(sample: &SampleResult) -> bool {
    !matches!(
        sample.outcome,
        OutcomeKind::Infra | OutcomeKind::ContextExceeded | OutcomeKind::Unsupported
    )
}

/// Scored samples of the main run (the ones a pass rate counts).
fn scored(results: &ResultsFile) -> impl Iterator<Item = &SampleResult> {
    results
        .tasks
        .iter()
        .flat_map(|task| &task.samples)
        .filter(|sample| is_scored(sample))
}

/// What a solved task cost this run.
pub fn solve_cost(results: &ResultsFile) -> SolveCost {
    let samples: Vec<_> = scored(results).collect();
    let n_scored = samples.len() as u64;
    let passes: Vec<_> = samples
        .iter()
        .filter(|sample| sample.outcome == OutcomeKind::Pass)
        .collect();
    let n_pass = passes.len() as u64;
    let per_solved = |total: f64| (n_pass > 0).then(|| total / n_pass as f64);
    let tokens: Option<f64> = samples
        .iter()
        .map(|sample| sample.completion_tokens.map(|t| t as f64))
        .sum();
    let seconds: Option<f64> = samples.iter().map(|sample| sample.seconds).sum();
    let solved_tokens: Vec<f64> = passes
        .iter()
        .filter_map(|sample| sample.completion_tokens.map(|t| t as f64))
        .collect();
    SolveCost {
        n_scored,
        n_pass,
        tokens_per_solved: tokens.and_then(per_solved),
        seconds_per_solved: seconds.and_then(per_solved),
        median_tokens_solved: vernier_stats::median(&solved_tokens).ok(),
    }
}

/// Pass rate against the token budget.
pub fn token_curve(results: &ResultsFile) -> Curve {
    let limit = scored(results)
        .map(|sample| f64::from(sample.budget_tokens))
        .fold(f64::INFINITY, f64::min);
    curve(results, limit, |sample| {
        sample.completion_tokens.map(|t| t as f64)
    })
}

/// Pass rate against the seconds a task may take (its own try, sent → last event).
pub fn seconds_curve(results: &ResultsFile) -> Curve {
    let limit = scored(results)
        .filter_map(|sample| sample.seconds)
        .fold(0.0, f64::max);
    curve(results, limit, |sample| sample.seconds)
}

fn curve(results: &ResultsFile, limit: f64, cost: impl Fn(&SampleResult) -> Option<f64>) -> Curve {
    let samples: Vec<_> = scored(results).collect();
    let costs: Vec<f64> = samples
        .iter()
        .filter(|sample| sample.outcome == OutcomeKind::Pass)
        .map(|sample| cost(sample).unwrap_or(limit))
        .collect();
    steps(costs, samples.len() as u64, limit)
}

/// The pass-rate curve of `n_scored` samples whose passes cost `costs` (passes beyond `limit`
/// are dropped).
fn steps(mut costs: Vec<f64>, n_scored: u64, limit: f64) -> Curve {
    costs.retain(|x| *x <= limit);
    costs.sort_by(f64::total_cmp);
    let mut points: Vec<CurvePoint> = Vec::new();
    for (index, x) in costs.iter().enumerate() {
        let pass_rate = (index + 1) as f64 / n_scored as f64;
        match points.last_mut() {
            Some(last) if last.x.total_cmp(x).is_eq() => last.pass_rate = pass_rate,
            _ => points.push(CurvePoint { x: *x, pass_rate }),
        }
    }
    if limit.is_finite() && points.last().is_none_or(|last| last.x < limit) {
        let at_limit = points.last().map_or(0.0, |last| last.pass_rate);
        points.push(CurvePoint {
            x: limit,
            pass_rate: at_limit,
        });
    }
    Curve {
        points,
        limit: if limit.is_finite() { limit } else { 0.0 },
        n_scored,
    }
}

/// The confidence of the intervals that decide a lead.
const CONFIDENCE: f64 = 0.95;

/// The Wilson interval of a curve's pass rate at `x`: the passes are the rate times the
/// scored samples, rounded (the rate was passes over samples). `None` beyond the curve's
/// budget or with no scored sample.
fn rate_interval(curve: &Curve, x: f64) -> Option<Interval> {
    let rate = curve.at(x)?;
    let n = curve.n_scored;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a share of 0 to 1 times a count, rounded: a whole number from 0 to the count"
    )]
    let passes = ((rate * n as f64).round().max(0.0) as u64).min(n);
    vernier_stats::wilson(passes, n, CONFIDENCE).ok()
}

/// Who leads at `x` beyond noise: the side whose 95% Wilson interval of the pass rate lies
/// wholly above the other's. `None` (a tie) where the intervals overlap or either curve is
/// unknown at `x`.
fn leader_at(a: &Curve, b: &Curve, x: f64) -> Option<Leader> {
    let (a, b) = (rate_interval(a, x)?, rate_interval(b, x)?);
    if a.low > b.high {
        Some(Leader::A)
    } else if b.low > a.high {
        Some(Leader::B)
    } else {
        None
    }
}

/// Where the lead changes hands between `a` and `b`, over the budgets both curves cover.
///
/// The rule: at a budget, a side leads only when the 95% Wilson interval of its pass rate
/// (Wilson 1927; passes = rate × scored samples) lies wholly above the other side's; where the
/// two intervals overlap the budget is a tie, whatever the point estimates. Two 95% intervals
/// apart is a stricter test than a 95% interval of the difference (for equal sizes about a
/// two-sided level of 0.6%), on purpose: the test is made at every budget of the curve, and
/// repeated samples of one task are not independent, so a pointwise 5% test would find
/// crossovers between two runs of one server. A tie never ends a lead and never starts a
/// crossover: a crossover is the first budget at which the other side leads beyond noise,
/// after one side has led beyond noise at a smaller budget.
pub fn crossovers(a: &Curve, b: &Curve) -> Vec<Crossover> {
    let limit = a.limit.min(b.limit);
    let mut xs: Vec<f64> = a
        .points
        .iter()
        .chain(&b.points)
        .map(|point| point.x)
        .filter(|x| *x <= limit)
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let mut found = Vec::new();
    let mut leader: Option<Leader> = None;
    for x in xs {
        let Some(now) = leader_at(a, b, x) else {
            continue;
        };
        if let Some(before) = leader
            && before != now
        {
            found.push(Crossover {
                at: x,
                before,
                after: now,
            });
        }
        leader = Some(now);
    }
    found
}

/// Resamples for the interval of a cost ratio.
const RESAMPLES: usize = 2_000;
/// Seed of those resamples: the same runs give the same interval.
const SEED: u64 = 0x5EED_C057;
/// Fewer tasks than this and a resampled interval is not given.
const MIN_TASKS: usize = 10;

/// One task's cost on both sides: (A's cost summed over its scored samples, A's passes),
/// then B's.
type TaskCost = ((f64, u64), (f64, u64));

/// The 95% percentile-bootstrap interval (Efron and Tibshirani 1993, ch. 13) of
/// (ΣA cost / ΣA passes) / (ΣB cost / ΣB passes), resampling whole tasks with both sides
/// kept together (the same task is harder or easier for both; its samples are not
/// independent). `None` with fewer than [`MIN_TASKS`] tasks, or when a resample leaves a side
/// without a pass or B without cost (the ratio is then undefined, and so is the interval).
fn ratio_interval(tasks: &[TaskCost]) -> Option<Interval> {
    if tasks.len() < MIN_TASKS {
        return None;
    }
    let indices: Vec<f64> = (0..tasks.len()).map(|index| index as f64).collect();
    let statistic = |drawn: &[f64]| {
        let (mut cost_a, mut pass_a, mut cost_b, mut pass_b) = (0.0, 0_u64, 0.0, 0_u64);
        for &index in drawn {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "an index below the task count, stored exactly as a float"
            )]
            let ((a, passes_a), (b, passes_b)) = tasks[index as usize];
            cost_a += a;
            pass_a += passes_a;
            cost_b += b;
            pass_b += passes_b;
        }
        if pass_a == 0 || pass_b == 0 || cost_b <= 0.0 {
            return f64::NAN;
        }
        (cost_a / pass_a as f64) / (cost_b / pass_b as f64)
    };
    vernier_stats::bootstrap_percentile(&indices, statistic, RESAMPLES, CONFIDENCE, SEED).ok()
}

/// Per task id, the summed cost of its scored samples and its passes; `None` when a scored
/// sample lacks its cost.
fn task_costs<'a>(
    results: &'a ResultsFile,
    cost: &impl Fn(&SampleResult) -> Option<f64>,
) -> Option<std::collections::BTreeMap<&'a str, (f64, u64)>> {
    let mut tasks = std::collections::BTreeMap::new();
    for task in &results.tasks {
        let entry: &mut (f64, u64) = tasks.entry(task.id.as_str()).or_default();
        for sample in task.samples.iter().filter(|sample| is_scored(sample)) {
            entry.0 += cost(sample)?;
            entry.1 += u64::from(sample.outcome == OutcomeKind::Pass);
        }
    }
    Some(tasks)
}

fn cost_ratio_interval(
    a: &ResultsFile,
    b: &ResultsFile,
    cost: impl Fn(&SampleResult) -> Option<f64>,
) -> Option<Interval> {
    let (costs_a, costs_b) = (task_costs(a, &cost)?, task_costs(b, &cost)?);
    let paired: Vec<TaskCost> = costs_a
        .iter()
        .filter_map(|(id, a)| costs_b.get(id).map(|b| (*a, *b)))
        .collect();
    ratio_interval(&paired)
}

/// The 95% interval of A's tokens per solved task over B's ([`SolveCost::tokens_per_solved`]),
/// over the tasks both runs hold: a percentile bootstrap over tasks, both sides resampled
/// together. `None` where it cannot be given (fewer than 10 tasks, a sample without its
/// count, a resample without a pass).
pub(crate) fn tokens_per_solved_ratio(a: &ResultsFile, b: &ResultsFile) -> Option<Interval> {
    cost_ratio_interval(a, b, |sample| sample.completion_tokens.map(|t| t as f64))
}

/// The 95% interval of A's seconds per solved task over B's
/// ([`SolveCost::seconds_per_solved`]), as [`tokens_per_solved_ratio`].
pub(crate) fn seconds_per_solved_ratio(a: &ResultsFile, b: &ResultsFile) -> Option<Interval> {
    cost_ratio_interval(a, b, |sample| sample.seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_stats::SplitMix64;

    fn curve_of(points: &[(f64, f64)], limit: f64, n_scored: u64) -> Curve {
        Curve {
            points: points
                .iter()
                .map(|&(x, pass_rate)| CurvePoint { x, pass_rate })
                .collect(),
            limit,
            n_scored,
        }
    }

    fn curve(points: &[(f64, f64)], limit: f64) -> Curve {
        curve_of(points, limit, 200)
    }

    /// `n` samples of one side: each passes with `pass` (in thousandths), at a cost drawn
    /// uniformly from `low..high`.
    fn drawn(rng: &mut SplitMix64, n: u64, pass: u64, (low, high): (f64, f64)) -> Curve {
        let mut costs = Vec::new();
        for _ in 0..n {
            let cost = low + (high - low) * rng.next_f64();
            if rng.chance(pass, 1_000) {
                costs.push(cost);
            }
        }
        steps(costs, n, 100.0)
    }

    /// The old rule: whoever's point estimate is higher leads.
    fn naive_changes(a: &Curve, b: &Curve) -> usize {
        let mut xs: Vec<f64> = a.points.iter().chain(&b.points).map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        let (mut leader, mut changes) = (None, 0);
        for x in xs {
            let (Some(rate_a), Some(rate_b)) = (a.at(x), b.at(x)) else {
                continue;
            };
            let now = match rate_a.total_cmp(&rate_b) {
                std::cmp::Ordering::Greater => Leader::A,
                std::cmp::Ordering::Less => Leader::B,
                std::cmp::Ordering::Equal => continue,
            };
            changes += usize::from(leader.is_some_and(|before| before != now));
            leader = Some(now);
        }
        changes
    }

    #[test]
    fn a_curve_is_a_step_known_only_up_to_its_budget() {
        let c = curve(&[(100.0, 0.2), (400.0, 0.5), (1_000.0, 0.5)], 1_000.0);
        assert_eq!(c.at(50.0), Some(0.0));
        assert_eq!(c.at(100.0), Some(0.2));
        assert_eq!(c.at(399.0), Some(0.2));
        assert_eq!(c.at(400.0), Some(0.5));
        assert_eq!(c.at(1_000.0), Some(0.5));
        assert_eq!(
            c.at(1_001.0),
            None,
            "beyond the run's own budget nothing is known"
        );
    }

    #[test]
    fn a_change_of_leader_is_one_crossover_at_the_budget_where_it_happens() {
        // Of 200 samples each: A solves quickly but stops at 40%; B starts slower and reaches
        // 80% from 600 tokens.
        let a = curve(&[(100.0, 0.4), (2_000.0, 0.4)], 2_000.0);
        let b = curve(&[(300.0, 0.2), (600.0, 0.8), (2_000.0, 0.8)], 2_000.0);
        let found = crossovers(&a, &b);
        assert_eq!(found.len(), 1, "{found:?}");
        vernier_stats::assert_close(found[0].at, 600.0, 0.0);
        assert_eq!((found[0].before, found[0].after), (Leader::A, Leader::B));
        // The same curves the other way round: the leaders swap, the budget stays.
        let found = crossovers(&b, &a);
        assert_eq!((found[0].before, found[0].after), (Leader::B, Leader::A));
        // A curve never behind the other crosses nothing; nor does a curve with itself.
        assert!(crossovers(&b, &curve(&[(300.0, 0.1), (2_000.0, 0.5)], 2_000.0)).is_empty());
        assert!(crossovers(&a, &a).is_empty());
    }

    #[test]
    fn the_same_change_of_leader_on_ten_samples_is_within_noise() {
        // 4/10 against 2/10, then 4/10 against 8/10: the Wilson intervals overlap at both
        // budgets (4/10: [0.168, 0.687]; 8/10: [0.490, 0.943], as R's
        // `prop.test(c(4, 8), 10, correct = FALSE)$conf.int` gives), so neither side leads.
        let a = curve_of(&[(100.0, 0.4), (2_000.0, 0.4)], 2_000.0, 10);
        let b = curve_of(&[(300.0, 0.2), (600.0, 0.8), (2_000.0, 0.8)], 2_000.0, 10);
        assert!(crossovers(&a, &b).is_empty());
    }

    #[test]
    fn crossovers_are_looked_for_only_where_both_curves_are_known() {
        let a = curve(&[(100.0, 0.5)], 500.0);
        let b = curve(&[(100.0, 0.1), (800.0, 0.9)], 1_000.0);
        assert!(
            crossovers(&a, &b).is_empty(),
            "B's lead at 800 lies beyond A's budget"
        );
    }

    #[test]
    fn a_few_passes_apart_at_the_start_are_a_tie_not_a_crossover() {
        // The A/A: one or two passes of 200 at 0.01 s, the lead flipping each step.
        let a = curve(
            &[(0.010, 0.005), (0.012, 0.015), (0.014, 0.020), (5.0, 0.6)],
            5.0,
        );
        let b = curve(
            &[(0.011, 0.010), (0.013, 0.015), (0.015, 0.025), (5.0, 0.6)],
            5.0,
        );
        assert!(naive_changes(&a, &b) >= 2, "the point estimates do swap");
        assert!(crossovers(&a, &b).is_empty());
    }

    #[test]
    fn two_runs_from_one_distribution_never_cross() {
        let mut swapped = 0;
        for seed in 0..200 {
            let mut rng = SplitMix64::new(seed);
            let a = drawn(&mut rng, 150, 600, (0.01, 8.0));
            let b = drawn(&mut rng, 150, 600, (0.01, 8.0));
            swapped += usize::from(naive_changes(&a, &b) > 0);
            let found = crossovers(&a, &b);
            assert!(found.is_empty(), "seed {seed}: {found:?}");
        }
        assert!(
            swapped > 100,
            "the point estimates swap in most pairs: {swapped}"
        );
    }

    #[test]
    fn a_fast_low_side_against_a_slow_high_side_crosses_once() {
        for seed in 0..20 {
            let mut rng = SplitMix64::new(seed);
            let a = drawn(&mut rng, 200, 400, (0.1, 1.0));
            let b = drawn(&mut rng, 200, 800, (2.0, 10.0));
            let found = crossovers(&a, &b);
            assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
            assert_eq!((found[0].before, found[0].after), (Leader::A, Leader::B));
            assert!((2.0..10.0).contains(&found[0].at), "{found:?}");
        }
    }

    /// `tasks` tasks of three samples each, drawn for both sides: every sample passes with
    /// `pass` (thousandths) and costs a uniform draw from 1 to 9, times the side's scale.
    fn task_costs_drawn(rng: &mut SplitMix64, tasks: usize, scale_b: f64) -> Vec<TaskCost> {
        let mut side = |scale: f64| {
            let (mut cost, mut passes) = (0.0, 0);
            for _ in 0..3 {
                cost += scale * (1.0 + 8.0 * rng.next_f64());
                passes += u64::from(rng.chance(600, 1_000));
            }
            (cost, passes)
        };
        (0..tasks).map(|_| (side(1.0), side(scale_b))).collect()
    }

    #[test]
    fn a_cost_ratio_of_one_run_with_itself_is_exactly_one() {
        let mut rng = SplitMix64::new(7);
        let tasks: Vec<TaskCost> = task_costs_drawn(&mut rng, 30, 1.0)
            .into_iter()
            .map(|(a, _)| (a, a))
            .collect();
        let interval = ratio_interval(&tasks).expect("30 tasks");
        vernier_stats::assert_close(interval.low, 1.0, 1e-12);
        vernier_stats::assert_close(interval.high, 1.0, 1e-12);
    }

    #[test]
    fn a_cost_ratio_of_one_distribution_holds_one_about_as_often_as_stated() {
        let mut missed = 0;
        for seed in 0..100 {
            let mut rng = SplitMix64::new(seed);
            let interval = ratio_interval(&task_costs_drawn(&mut rng, 40, 1.0)).expect("40");
            missed += usize::from(!interval.contains(1.0));
        }
        // 5 misses expected of 100 at 95%; more than 15 would be a badly narrow interval.
        assert!(missed <= 15, "{missed} of 100 intervals missed 1");
    }

    #[test]
    fn a_cost_ratio_of_twice_the_cost_excludes_one() {
        let mut rng = SplitMix64::new(11);
        let interval = ratio_interval(&task_costs_drawn(&mut rng, 40, 2.0)).expect("40 tasks");
        assert!(interval.high < 1.0, "{interval:?}");
        assert!(interval.contains(0.5), "{interval:?}");
    }

    #[test]
    fn a_cost_ratio_needs_enough_tasks_and_a_pass_on_each_side() {
        let mut rng = SplitMix64::new(3);
        assert!(ratio_interval(&task_costs_drawn(&mut rng, MIN_TASKS - 1, 1.0)).is_none());
        let no_pass_for_b: Vec<TaskCost> = (0..20).map(|_| ((3.0, 1), (3.0, 0))).collect();
        assert!(ratio_interval(&no_pass_for_b).is_none());
    }
}
