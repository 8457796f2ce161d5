//! Speed side by side: each cell both sweeps measured, paired by workload, prompt length,
//! output length and concurrency; the ratio of medians (A over B) with a bootstrap interval.

use serde::{Deserialize, Serialize};
use vernier_stats::{Interval, SplitMix64};
use vernier_sweep::{CellKey, Workload};

use crate::side::{RequestFigures, SweepSide};

/// Bootstrap resamples for a ratio of medians.
pub const RATIO_RESAMPLES: usize = 2_000;

/// The seed of every ratio's bootstrap (the same data give the same interval).
pub const RATIO_SEED: u64 = 0x5EED_2A71_0000_0001;

/// A figure compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Decode rate, tokens per second (higher is better).
    Decode,
    /// Prefill rate, prompt tokens per second of TTFT (higher is better).
    Prefill,
    /// Time to first token, milliseconds (lower is better).
    Ttft,
}

impl Metric {
    /// The figure's name with its unit.
    pub fn label(self) -> &'static str {
        match self {
            Self::Decode => "decode tok/s",
            Self::Prefill => "prefill tok/s",
            Self::Ttft => "TTFT ms",
        }
    }

    /// True when a larger value is better.
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Self::Ttft)
    }

    fn of(self, request: &RequestFigures) -> Option<f64> {
        match self {
            Self::Decode => request.decode_tokens_per_s,
            Self::Prefill => request.prefill_tokens_per_s,
            Self::Ttft => request.ttft_ms,
        }
        .filter(|value| value.is_finite() && *value > 0.0)
    }
}

/// One metric of one cell, both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CellRatio {
    /// Prompt kind.
    pub workload: Workload,
    /// Prompt tokens asked for.
    pub prompt_tokens: u32,
    /// Completion tokens asked for.
    pub output_tokens: u32,
    /// Streams at once.
    pub concurrency: u32,
    /// The figure.
    pub metric: Metric,
    /// A's median.
    pub a: f64,
    /// B's median.
    pub b: f64,
    /// `a / b`.
    pub ratio: f64,
    /// Percentile-bootstrap 95% interval on the ratio (each side resampled on its own);
    /// `None` with fewer than two requests on a side.
    pub interval: Option<Interval>,
    /// A's measured requests.
    pub n_a: usize,
    /// B's measured requests.
    pub n_b: usize,
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        f64::midpoint(values[n / 2 - 1], values[n / 2])
    }
}

/// The ratio of the medians of `a` and `b` with a percentile-bootstrap interval: each side is
/// resampled with replacement on its own, `resamples` times (Efron and Tibshirani 1993,
/// ch. 13, for two independent samples). `None` when a side is empty.
pub fn ratio_of_medians(
    a: &[f64],
    b: &[f64],
    resamples: usize,
    seed: u64,
) -> Option<(f64, Option<Interval>)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let ratio = median(&mut a.to_vec()) / median(&mut b.to_vec());
    if a.len() < 2 || b.len() < 2 || resamples == 0 {
        return Some((ratio, None));
    }
    let mut rng = SplitMix64::new(seed);
    let mut draw_a = vec![0.0; a.len()];
    let mut draw_b = vec![0.0; b.len()];
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in &mut draw_a {
            *slot = a[rng.index(a.len())];
        }
        for slot in &mut draw_b {
            *slot = b[rng.index(b.len())];
        }
        ratios.push(median(&mut draw_a) / median(&mut draw_b));
    }
    let low = vernier_stats::quantile(&ratios, 0.025).ok()?;
    let high = vernier_stats::quantile(&ratios, 0.975).ok()?;
    Some((ratio, Some(Interval::new(low, high, 0.95))))
}

fn same_cell(a: &CellKey, b: &CellKey) -> bool {
    a.workload == b.workload
        && a.prompt_tokens_target == b.prompt_tokens_target
        && a.output_tokens == b.output_tokens
        && a.concurrency == b.concurrency
        && a.rate_milli_per_s == b.rate_milli_per_s
}

/// Every metric of every cell both sweeps measured, in A's cell order.
pub fn cell_ratios(a: &SweepSide, b: &SweepSide) -> Vec<CellRatio> {
    let mut rows = Vec::new();
    for (key, requests_a) in &a.requests {
        if key.rate_milli_per_s.is_some() {
            continue;
        }
        let Some((_, requests_b)) = b.requests.iter().find(|(other, _)| same_cell(key, other))
        else {
            continue;
        };
        for metric in [Metric::Decode, Metric::Prefill, Metric::Ttft] {
            let values_a: Vec<f64> = requests_a.iter().filter_map(|r| metric.of(r)).collect();
            let values_b: Vec<f64> = requests_b.iter().filter_map(|r| metric.of(r)).collect();
            let Some((ratio, interval)) =
                ratio_of_medians(&values_a, &values_b, RATIO_RESAMPLES, RATIO_SEED)
            else {
                continue;
            };
            rows.push(CellRatio {
                workload: key.workload,
                prompt_tokens: key.prompt_tokens_target,
                output_tokens: key.output_tokens,
                concurrency: key.concurrency,
                metric,
                a: median(&mut values_a.clone()),
                b: median(&mut values_b.clone()),
                ratio,
                interval,
                n_a: values_a.len(),
                n_b: values_b.len(),
            });
        }
    }
    rows
}

/// The prefill ratio against prompt length: how the lead grows, and where it flattens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PrefillTrend {
    /// Prompt kind, at one stream.
    pub workload: Workload,
    /// (prompt tokens, ratio A/B), by increasing length.
    pub points: Vec<(u32, f64)>,
    /// The first length from which the ratio moves less than [`FLAT_WITHIN`] (relative)
    /// to the next: where the lead flattens (`None`: it keeps moving, or too few lengths).
    pub flattens_at: Option<u32>,
}

/// A ratio that moves less than this share between two prompt lengths has flattened.
pub const FLAT_WITHIN: f64 = 0.10;

/// The prefill trend of each workload at one stream.
pub fn prefill_trends(rows: &[CellRatio]) -> Vec<PrefillTrend> {
    let mut trends = Vec::new();
    for workload in [Workload::Prose, Workload::Code] {
        let mut points: Vec<(u32, f64)> = rows
            .iter()
            .filter(|row| {
                row.metric == Metric::Prefill && row.concurrency == 1 && row.workload == workload
            })
            .map(|row| (row.prompt_tokens, row.ratio))
            .collect();
        points.sort_by_key(|(length, _)| *length);
        points.dedup_by_key(|(length, _)| *length);
        if points.is_empty() {
            continue;
        }
        let flattens_at = points
            .windows(2)
            .position(|pair| ((pair[1].1 - pair[0].1) / pair[0].1).abs() < FLAT_WITHIN)
            .filter(|_| points.len() >= 3)
            .map(|index| points[index].0);
        trends.push(PrefillTrend {
            workload,
            points,
            flattens_at,
        });
    }
    trends
}
