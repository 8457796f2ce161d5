//! The types of `versus.json` (`docs/battery.md`): the whole head-to-head, who each side is,
//! the settings that differ, the at-a-glance rows, each suite's quality rows and costs, single
//! stream against batched. How they are worked out is the parent's (`versus`); the at-a-glance
//! rows are `glance`'s.

use serde::Serialize;
use vernier_run::Verdict;
use vernier_stats::Interval;
use vernier_sweep::Workload;

use crate::budget::{Crossover, Curve, SolveCost};
use crate::side::Side;
use crate::speed::{CellRatio, PrefillTrend};

/// Version of `versus.json`'s schema (`docs/battery.md`).
pub const VERSUS_SCHEMA_VERSION: u32 = 1;

/// Who a side is, in the head-to-head.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SideSummary {
    /// The folder's name.
    pub label: String,
    /// Where it was read from.
    pub path: String,
    /// The model.
    pub model: String,
    /// The server (`simulator` for the bundled one).
    pub target: String,
    /// The side's verdict.
    pub validity: Verdict,
}

impl SideSummary {
    pub(super) fn of(side: &Side) -> Self {
        Self {
            label: side.label.clone(),
            path: side.path.display().to_string(),
            model: side.model.clone(),
            target: side.target.clone(),
            validity: side.validity.clone(),
        }
    }
}

/// A setting that differs between the sides, and the rows it confounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SettingDifference {
    /// What differs, with both values.
    pub what: String,
    /// The dimensions it confounds (`speed`, `quality: suite`, …); empty when it is what the
    /// comparison is about (the server, the machine).
    pub confounds: Vec<String>,
}

/// One row of the at-a-glance table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct GlanceRow {
    /// The dimension.
    pub dimension: String,
    /// A's figure, formatted.
    pub a: String,
    /// B's figure, formatted.
    pub b: String,
    /// The ratio (`1.32×`) or difference (`+12.5 pts`), A against B.
    pub comparison: String,
    /// Its 95% interval, formatted (`—` where none).
    pub interval: String,
    /// Who is ahead (`A`, `B`, or `—` when the interval holds no difference).
    pub ahead: String,
    /// A setting difference that confounds the row.
    pub confounded_by: Option<String>,
}

/// Quality of one suite category, both sides, paired by task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct QualityRow {
    /// `all` or the category (`math`, `code`, `tools`, `context`, `vision`, `video`).
    pub category: String,
    /// A's pass rate over the paired items.
    pub a: f64,
    /// B's.
    pub b: f64,
    /// `a − b`, in points of pass rate (0 to 1).
    pub difference: f64,
    /// The 95% interval on the difference and its method.
    pub interval: Option<Interval>,
    /// `newcombe_paired`, `task_clustered`, `bootstrap` or `newcombe_independent`.
    pub method: String,
    /// Paired items.
    pub n_items: u64,
    /// Items per arm a paired comparison needs to detect a 2-point difference (80% power, 5%
    /// two-sided) at the discordance observed (Connor 1987); absent when unpaired or when the
    /// runs disagree on too few items to plan from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items_for_two_points: Option<u64>,
}

/// One suite both sides ran.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SuiteVersus {
    /// Which suite.
    pub part: String,
    /// Overall, then per category.
    pub quality: Vec<QualityRow>,
    /// What a solved task cost A.
    pub cost_a: SolveCost,
    /// What it cost B.
    pub cost_b: SolveCost,
    /// Pass rate against the token budget: A, B.
    pub tokens: (Curve, Curve),
    /// Where the lead changes hands against the token budget.
    pub token_crossovers: Vec<Crossover>,
    /// Pass rate against the seconds a task may take: A, B.
    pub seconds: (Curve, Curve),
    /// Where the lead changes hands against seconds per task.
    pub seconds_crossovers: Vec<Crossover>,
}

/// Single stream against batched: does a lead survive load?
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Batching {
    /// Prompt kind.
    pub workload: Workload,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Decode ratio A/B at one stream.
    pub single: f64,
    /// The batched concurrency.
    pub concurrency: u32,
    /// Decode ratio A/B per stream at that concurrency.
    pub batched: f64,
}

/// The whole head-to-head (`versus.json`).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Versus {
    /// [`VERSUS_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Side A.
    pub a: SideSummary,
    /// Side B.
    pub b: SideSummary,
    /// Settings that differ, each with what it confounds.
    pub settings: Vec<SettingDifference>,
    /// The at-a-glance table.
    pub glance: Vec<GlanceRow>,
    /// Every cell's ratios.
    pub speed: Vec<CellRatio>,
    /// Prefill ratio against prompt length.
    pub prefill: Vec<PrefillTrend>,
    /// Single stream against batched.
    pub batching: Vec<Batching>,
    /// Each suite both ran.
    pub suites: Vec<SuiteVersus>,
    /// Dimensions one side lacks, named.
    pub not_compared: Vec<String>,
}
