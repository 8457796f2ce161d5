//! One configuration's loads pooled over several sweeps of the same cells (a tune's rounds):
//! the target checked over every counted request of a load at once, the output throughput of
//! every repetition's window, and each request's decode rate and TTFT.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::capacity_target::Target;
use crate::config::{CellKey, Workload};
use crate::counted::counted_attempts;
use crate::journal::{Attempt, LoadedSweepJournal};
use crate::offered_load::{TargetCheck, check_target, load_of, window_output_rates};

/// One load of one workload, prompt and output length, pooled over the journals given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoadPoint {
    /// The workload.
    pub workload: Workload,
    /// The prompt length asked for, in the server's tokens.
    pub prompt_tokens_target: u32,
    /// The output length asked for.
    pub output_tokens: u32,
    /// The load: concurrent streams, or requests per second for an open-loop cell.
    pub load: f64,
    /// `concurrency` or `rate`.
    pub load_kind: String,
    /// Counted requests over every journal.
    pub requests: usize,
    /// The journals (rounds) that measured this load.
    pub journals: usize,
    /// The target checked over every counted request at once (with a target).
    pub target: Option<TargetCheck>,
    /// Output tokens per second of each repetition's window, every journal's.
    pub window_output_tokens_per_s: Vec<f64>,
    /// Each request's decode rate (tokens per second, the server's count).
    pub decode_tokens_per_s: Vec<f64>,
    /// Each request's TTFT, ms.
    pub ttft_ms: Vec<f64>,
}

impl LoadPoint {
    /// The median output throughput over the windows, with its 95% interval (two windows or
    /// more), as the run file states a cell's.
    pub fn goodput(&self) -> Option<(f64, Option<(f64, f64)>)> {
        median_with_interval(&self.window_output_tokens_per_s)
    }

    /// The median decode rate per request, with its 95% interval.
    pub fn decode(&self) -> Option<(f64, Option<(f64, f64)>)> {
        median_with_interval(&self.decode_tokens_per_s)
    }

    /// Whether this point is the same workload, prompt and output length as `other`.
    pub fn same_shape(&self, other: &Self) -> bool {
        self.workload == other.workload
            && self.prompt_tokens_target == other.prompt_tokens_target
            && self.output_tokens == other.output_tokens
    }
}

/// Every load the journals measured, each pooled over them (a load one journal lacks is
/// pooled over the others, and says how many), ordered by workload, prompt, output and load.
/// A journal without a header is skipped.
pub fn pooled_load_points(
    journals: &[&LoadedSweepJournal],
    target: Option<&Target>,
) -> Vec<LoadPoint> {
    let mut pooled: BTreeMap<CellKey, (Vec<&Attempt>, Vec<f64>, usize)> = BTreeMap::new();
    for journal in journals {
        let Some(header) = journal.header() else {
            continue;
        };
        for (cell, attempts) in counted_attempts(journal) {
            let windows = window_output_rates(header.config.load, &attempts);
            let entry = pooled.entry(cell).or_default();
            entry.0.extend(attempts);
            entry.1.extend(windows);
            entry.2 += 1;
        }
    }
    pooled
        .into_iter()
        .map(|(cell, (attempts, windows, journals))| LoadPoint {
            workload: cell.workload,
            prompt_tokens_target: cell.prompt_tokens_target,
            output_tokens: cell.output_tokens,
            load: load_of(&cell),
            load_kind: if cell.rate_per_s().is_some() {
                "rate"
            } else {
                "concurrency"
            }
            .to_owned(),
            requests: attempts.len(),
            journals,
            target: target.map(|target| check_target(target, &attempts)),
            window_output_tokens_per_s: windows,
            decode_tokens_per_s: attempts
                .iter()
                .filter_map(|a| a.measurement.as_ref()?.decode_tokens_per_s)
                .collect(),
            ttft_ms: attempts
                .iter()
                .filter_map(|a| a.measurement.as_ref()?.ttft_ms)
                .collect(),
        })
        .collect()
}

/// The capacity among points of one shape (any order): the largest load that met the target
/// below the first load that missed it, with the index of its point; `None` when the smallest
/// load already missed or no point was checked.
pub fn capacity_point(points: &[&LoadPoint]) -> Option<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].load.total_cmp(&points[b].load));
    let mut best = None;
    for index in order {
        match &points[index].target {
            Some(check) if check.met => best = Some(index),
            _ => break,
        }
    }
    best
}

fn median_with_interval(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let median = vernier_stats::median(values).ok()?;
    let interval = crate::interval::median_interval(values).map(|i| (i.low, i.high));
    Some((median, interval))
}
