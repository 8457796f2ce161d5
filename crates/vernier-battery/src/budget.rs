//! What a solved task costs, and the pass rate at every budget from one run.
//!
//! Generation does not depend on `max_tokens`: a try that finished within `b` tokens would have
//! finished the same way with budget `b`. So one run at a large budget gives the pass rate at
//! every smaller one: the share of scored samples that passed using at most `b` tokens (or at
//! most `t` seconds of their own stream). Beyond the run's own budget nothing is known, and the
//! curve stops there.

use serde::{Deserialize, Serialize};
use vernier_hardsuite::ResultsFile;
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

/// Scored samples of the main run (the ones a pass rate counts).
fn scored(results: &ResultsFile) -> impl Iterator<Item = &vernier_hardsuite::SampleResult> {
    results
        .tasks
        .iter()
        .flat_map(|task| &task.samples)
        .filter(|sample| {
            !matches!(
                sample.outcome,
                OutcomeKind::Infra | OutcomeKind::ContextExceeded | OutcomeKind::Unsupported
            )
        })
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

fn curve(
    results: &ResultsFile,
    limit: f64,
    cost: impl Fn(&vernier_hardsuite::SampleResult) -> Option<f64>,
) -> Curve {
    let samples: Vec<_> = scored(results).collect();
    let n_scored = samples.len() as u64;
    let mut costs: Vec<f64> = samples
        .iter()
        .filter(|sample| sample.outcome == OutcomeKind::Pass)
        .map(|sample| cost(sample).unwrap_or(limit))
        .filter(|x| *x <= limit)
        .collect();
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

/// Where the lead changes hands between `a` and `b`, over the budgets both curves cover.
/// Ties do not end a lead: the crossover is the first budget at which the other side leads.
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
        let (Some(rate_a), Some(rate_b)) = (a.at(x), b.at(x)) else {
            continue;
        };
        let now = if rate_a > rate_b {
            Some(Leader::A)
        } else if rate_b > rate_a {
            Some(Leader::B)
        } else {
            None
        };
        match (leader, now) {
            (Some(before), Some(after)) if before != after => {
                found.push(Crossover {
                    at: x,
                    before,
                    after,
                });
                leader = Some(after);
            }
            (None, Some(after)) => leader = Some(after),
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(points: &[(f64, f64)], limit: f64) -> Curve {
        Curve {
            points: points
                .iter()
                .map(|&(x, pass_rate)| CurvePoint { x, pass_rate })
                .collect(),
            limit,
            n_scored: 10,
        }
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
        // A solves quickly but stops at 40%; B starts slower and reaches 80% from 600 tokens.
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
    fn crossovers_are_looked_for_only_where_both_curves_are_known() {
        let a = curve(&[(100.0, 0.5)], 500.0);
        let b = curve(&[(100.0, 0.1), (800.0, 0.9)], 1_000.0);
        assert!(
            crossovers(&a, &b).is_empty(),
            "B's lead at 800 lies beyond A's budget"
        );
    }
}
