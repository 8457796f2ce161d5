//! What a tune concludes, as `tune.json` holds it: each configuration's standing, figures,
//! deaths and stated flags, the pairs, the winner and the fronts.

use serde::{Deserialize, Serialize};

use super::stated::StatedFlag;

/// What a server left when it failed to start or died: its exit, the part that ran, and the
/// end of its output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Death {
    /// The exit as the system states it (`exit status: 1`, `signal: 9`), when it exited.
    pub exit: Option<String>,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Seconds from ready to when the tune saw it dead (none when it never became ready).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ready_s: Option<f64>,
    /// The study's part that was running, and what that part said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// What went wrong, in one line.
    pub detail: String,
    /// The server's output file, relative to the tune's folder.
    pub log: String,
    /// The last lines of that output.
    pub log_tail: Vec<String>,
}

/// Where a configuration stands after every round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Standing {
    /// Every round done, and it meets the target (or there is none).
    Meets,
    /// Every round done, and it meets the target at no load (or misses the pass rate).
    Misses,
    /// Every round done, but no sweep part measured it.
    Unmeasured,
    /// Its server died under load in a round.
    Crashed,
    /// Its server exited before it was ready in a round.
    FailedToStart,
}

impl Standing {
    /// The words reports use.
    pub const fn words(self) -> &'static str {
        match self {
            Self::Meets => "meets the target",
            Self::Misses => "misses the target",
            Self::Unmeasured => "no speed measured",
            Self::Crashed => "crashed",
            Self::FailedToStart => "failed to start",
        }
    }
}

/// A figure with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Figure {
    /// The median.
    pub value: f64,
    /// Its 95% interval, with enough samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
}

impl Figure {
    pub(crate) fn of(pair: Option<(f64, Option<(f64, f64)>)>) -> Option<Self> {
        pair.map(|(value, interval)| Self { value, interval })
    }
}

/// One load of a configuration, pooled over its rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoadRow {
    /// The load.
    pub load: f64,
    /// Counted requests over every round.
    pub requests: usize,
    /// Whether the target held over them all (with a speed target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    /// Each target part's value, as `ttft_p90<=100ms: 18.2 ms`.
    pub checks: Vec<String>,
    /// Output tokens per second over the repetitions' windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Figure>,
    /// Decode rate per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode: Option<Figure>,
}

/// One configuration's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConfigResult {
    /// Its name.
    pub name: String,
    /// Its launch command.
    pub command: String,
    /// 1 for the best.
    pub rank: usize,
    /// Where it stands.
    pub standing: Standing,
    /// Rounds it finished.
    pub rounds_done: u32,
    /// Seconds from launch to ready, in each round it became ready.
    pub ready_s: Vec<f64>,
    /// `concurrency` or `rate`.
    pub load_kind: String,
    /// The largest load meeting the speed target below the first that missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<f64>,
    /// The load its figures below are read at: its capacity, or (without a speed target) the
    /// load with the most output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_load: Option<f64>,
    /// Output tokens per second at that load, over every round's windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Figure>,
    /// The windows' output tokens per second themselves (the pairwise tests' samples).
    pub goodput_windows: Vec<f64>,
    /// Decode rate per request at that load (what one user sees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode: Option<Figure>,
    /// Every load, pooled over the rounds.
    pub loads: Vec<LoadRow>,
    /// Passed and scored samples over every suite part and round, with the Wilson interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<PassRate>,
    /// What its server left when it failed to start or died.
    pub deaths: Vec<Death>,
    /// Study parts that did not finish in a round it ran to its end: `round 2: speed: …`.
    pub failed_parts: Vec<String>,
    /// Each flag of its command against what the server states.
    pub stated: Vec<StatedFlag>,
}

/// Passed of scored, with its Wilson 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PassRate {
    /// Passed samples.
    pub passed: u64,
    /// Scored samples.
    pub scored: u64,
    /// passed / scored.
    pub rate: f64,
    /// Wilson 95% interval.
    pub interval: (f64, f64),
}

/// Two configurations' goodput compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Pair {
    /// The better ranked.
    pub a: String,
    /// The other.
    pub b: String,
    /// The figure compared: goodput (the windows' output tokens per second), or the pass
    /// rate where no goodput was measured.
    pub figure: String,
    /// a − b: the Hodges–Lehmann shift of goodput, or the difference of pass rates.
    pub difference: f64,
    /// Its 95% interval (Mann–Whitney for goodput, Newcombe for pass rates), where the
    /// samples allow one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// Two-sided p: Mann–Whitney for goodput (exact without ties, else the normal
    /// approximation), the pooled two-proportion z test for pass rates.
    pub p: f64,
    /// Holm-adjusted across every pair.
    pub p_holm: f64,
    /// `p_holm < 0.05`.
    pub distinguishable: bool,
}

/// A Pareto front: the configurations no other beats on both axes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Front {
    /// The x axis (`decode per request, tokens/s`).
    pub x: String,
    /// The y axis.
    pub y: String,
    /// Each configuration's point: name, x, x interval, y, y interval.
    pub points: Vec<FrontPoint>,
    /// The names on the front.
    pub on_front: Vec<String>,
}

/// One configuration on a front's axes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FrontPoint {
    /// The configuration.
    pub name: String,
    /// Its x.
    pub x: Figure,
    /// Its y.
    pub y: Figure,
}

/// Everything a tune concludes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TuneAnalysis {
    /// The workload, prompt and output length the speed figures are read at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// Every configuration, best first.
    pub configs: Vec<ConfigResult>,
    /// Every pair of configurations with goodput, compared.
    pub pairs: Vec<Pair>,
    /// The best configuration that meets the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// The verdict in one sentence.
    pub verdict: String,
    /// Throughput against per-request speed, and against quality where a suite ran.
    pub fronts: Vec<Front>,
    /// Settings the servers state differently, as `setting: a=1, b=4`.
    pub differing_settings: Vec<String>,
}
