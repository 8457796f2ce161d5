//! The types of `results.json` (schema in `docs/hardsuite.md`): the file, its scoreboards and
//! scores, and what it records of the run beside them (rate-limit waits, attempts that ran
//! alone, the shared KV cache, the evidence audit). How they are derived from the journal is
//! the parent's (`results`).

use serde::{Deserialize, Serialize};
use vernier_stats::{Interval, clustered_mean_se, normal_interval};
use vernier_tasks::Draw;

use crate::journal::{AttemptRecord, RunHeader, Sampling};
use crate::task_results::{CONFIDENCE, TaskResult};

/// Version of the `results.json` schema.
pub const RESULTS_SCHEMA_VERSION: u32 = 1;

/// Share of items on which two runs are assumed to disagree when the reports state the width
/// of a difference's interval (Connor 1987: half-width = z·√(ψ/n)); 15% gives the ±14 points
/// quoted for 28 items. With several samples per task, n is the number of tasks: averaging a
/// task's samples cannot make its difference vary more than one sample's, so the bound holds.
pub const ASSUMED_DISCORDANCE: f64 = 0.15;

/// Pass counts of one category (or of all tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Score {
    /// `math`, `code`, `tools` or `total`.
    pub name: String,
    /// Tasks.
    pub n_tasks: usize,
    /// Scored samples (the denominator).
    pub n_scored: u64,
    /// Passed.
    pub n_pass: u64,
    /// Wrong answers.
    pub n_wrong: u64,
    /// Cut off by the budget (not wrong: never finished).
    pub n_cut_off: u64,
    /// Finished with nothing to grade.
    pub n_no_answer: u64,
    /// More than one call on a one-call task.
    pub n_extra_calls: u64,
    /// Samples that failed on infrastructure every try (not scored).
    pub n_unscored: u64,
    /// Samples the server refused for their length (not scored: not the model's failure).
    #[serde(default)]
    pub n_context_exceeded: u64,
    /// Samples the server refused for their images (it cannot see; not scored).
    #[serde(default)]
    pub n_unsupported: u64,
    /// Wilson interval on `n_pass / n_scored`, with one sample per task (absent when nothing
    /// was scored, and with several samples per task, whose samples are not independent).
    pub wilson: Option<Interval>,
    /// With several samples per task: the pass rate as the mean over tasks of each task's pass
    /// fraction, with task-clustered errors (absent with one sample per task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_clustered: Option<ClusteredRate>,
}

impl Score {
    /// The pass rate the reports show: the task-clustered mean with several samples per task,
    /// else `n_pass / n_scored` (absent when nothing was scored).
    pub fn pass_rate(&self) -> Option<f64> {
        match &self.task_clustered {
            Some(clustered) => Some(clustered.mean),
            None if self.n_scored > 0 => Some(self.n_pass as f64 / self.n_scored as f64),
            None => None,
        }
    }

    /// The interval the reports show: task-clustered with several samples per task, else
    /// Wilson.
    pub fn interval(&self) -> Option<Interval> {
        match &self.task_clustered {
            Some(clustered) => clustered.interval,
            None => self.wilson,
        }
    }
}

/// A pass rate over tasks sampled K > 1 times, with errors clustered by task (Miller 2024,
/// "Adding Error Bars to Evals", arXiv:2411.00640): each task's scored samples are averaged
/// first, so a task weighs the same whatever its number of scored samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClusteredRate {
    /// Mean over tasks of each task's pass fraction.
    pub mean: f64,
    /// Standard error of `mean`: the sample standard deviation (n − 1) of the per-task
    /// fractions over √(tasks) (absent with fewer than two tasks).
    pub se: Option<f64>,
    /// Tasks with at least one scored sample (the clusters).
    pub n_tasks: usize,
    /// Normal interval mean ± z·se at [`CONFIDENCE`], clamped to [0, 1] (absent without `se`).
    pub interval: Option<Interval>,
}

impl ClusteredRate {
    /// The task-clustered rate of these per-task sample scores (1 pass, 0 otherwise); `None`
    /// when no task has a scored sample.
    pub fn from_tasks(per_task: &[Vec<f64>]) -> Option<Self> {
        let tasks: Vec<Vec<f64>> = per_task
            .iter()
            .filter(|samples| !samples.is_empty())
            .cloned()
            .collect();
        if let [only] = tasks.as_slice() {
            // One task: its mean, but no spread between tasks to estimate an error from.
            return Some(Self {
                mean: only.iter().sum::<f64>() / only.len() as f64,
                se: None,
                n_tasks: 1,
                interval: None,
            });
        }
        let estimate = clustered_mean_se(&tasks).ok()?;
        Some(Self {
            mean: estimate.mean,
            se: Some(estimate.se),
            n_tasks: estimate.n_clusters,
            interval: normal_interval(estimate.mean, estimate.se, CONFIDENCE, 0.0, 1.0).ok(),
        })
    }
}

/// Scores of one view of the run (the main run, or the main run with re-run results in place
/// of its cut-offs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Scoreboard {
    /// The completion budget of this view: `None` for the main run (per category).
    pub rerun_budget: Option<u32>,
    /// All tasks.
    pub total: Score,
    /// Per category, in math, code, tools order (only those present).
    pub categories: Vec<Score>,
    /// Median completion tokens of the passing samples.
    pub median_tokens_solved: Option<f64>,
    /// Task ids with a sample that ended inside its reasoning.
    pub ended_in_reasoning: Vec<String>,
    /// Task ids with a sample that hit the budget.
    pub hit_budget: Vec<String>,
}

/// `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResultsFile {
    /// [`RESULTS_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Suite name.
    pub suite: String,
    /// Model id.
    pub model: String,
    /// Server base URL.
    pub base_url: String,
    /// The in-process simulator answered with scripted replies.
    pub simulated: bool,
    /// The self-check passed before the run.
    pub self_checked: bool,
    /// Grader image digest.
    pub grader_image: Option<String>,
    /// Sampling sent.
    pub sampling: Sampling,
    /// Samples per task.
    pub samples: u32,
    /// Tries that failed on infrastructure and were retried (never scored).
    pub n_infra_tries: usize,
    /// Per task, in suite order.
    pub tasks: Vec<TaskResult>,
    /// Scores of the main run.
    pub main: Scoreboard,
    /// Scores with the re-run's results in place of the main run's cut-offs.
    pub after_rerun: Option<Scoreboard>,
    /// Half-width, in points, of a 95% interval on the difference between two runs of this
    /// many tasks (see [`ASSUMED_DISCORDANCE`]; with one sample per task, tasks are items).
    pub difference_half_width_points: f64,
    /// Level and seed of the run's instances (absent for a suite file; files written before
    /// levels existed read as level 2, seed 0 for the bundled suite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw: Option<Draw>,
    /// The JSON object merged into every request (absent in older files: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<serde_json::Value>,
    /// Waits on rate limits (`429`/`503`) over the run; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_waits: Option<RateLimitWaits>,
    /// The run's self-audit from the replies kept beside its journal; absent without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<Audit>,
    /// The long-context view (a run with context tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<crate::context_report::ContextReport>,
    /// When the run started, milliseconds since the epoch (0 in files written before it was
    /// recorded).
    #[serde(default)]
    pub started_unix_ms: u64,
    /// Attempts that ran alone after the server failed a try for shared capacity; absent when
    /// none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_alone: Option<RanAlone>,
    /// The KV cache the server's requests share and the waits for room in it, when the run
    /// kept its requests in flight within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_cache: Option<SharedCache>,
    /// What changed in the server between the run's start and its end (another model listed,
    /// server kind or `/version`); absent when nothing did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identity_changes: Vec<String>,
    /// The dataset view (a run of `--dataset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<crate::dataset_report::DatasetReport>,
    /// The dataset run's record (file digest, drawn ids), for pairing in `compare`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_record: Option<crate::dataset_run::DatasetRecord>,
    /// The run's verdict with each reason ([`crate::suite_validity`]).
    #[serde(default)]
    pub validity: vernier_run::Verdict,
    /// The server's GPUs, or why none was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<vernier_gpu::GpuRecord>,
    /// What the GPUs did over the run's sessions, with joules per output token of every try's
    /// completion tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<vernier_gpu::WorkEnergy>,
    /// What the server states it loaded, with the served-name check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<vernier_run::LoadedWeights>,
}

/// The requests in flight kept within the KV cache the server's requests share.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SharedCache {
    /// Cells all requests in flight hold together (llama.cpp's `n_ctx`).
    pub tokens: u64,
    /// Requests the server runs at once.
    pub slots: u64,
    /// Tries held back until their prompt and budget fitted beside those in flight.
    pub n_waited: usize,
    /// Seconds they waited in all.
    pub waited_s: f64,
}

impl SharedCache {
    /// From a run's header and attempts; `None` when the run did not plan for a shared cache.
    pub fn of(header: &RunHeader, attempts: &[AttemptRecord]) -> Option<Self> {
        let capacity = header.shared_capacity?;
        let waits: Vec<f64> = attempts.iter().filter_map(|a| a.room_wait_ms).collect();
        Some(Self {
            tokens: capacity.tokens,
            slots: capacity.slots,
            n_waited: waits.len(),
            waited_s: waits.iter().sum::<f64>() / 1e3,
        })
    }
}

/// Attempts that ran with nothing else in flight, because the server failed one of their
/// tries for shared capacity (the requests in flight together outgrew the KV cache they
/// share) though each prompt fits alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RanAlone {
    /// The attempts, as `task #sample`, in journal order.
    pub attempts: Vec<String>,
    /// The first one's reason, in the run's words.
    pub why: String,
}

impl RanAlone {
    /// The attempts of `attempts` that ran alone, `None` when none did.
    pub fn of(attempts: &[AttemptRecord]) -> Option<Self> {
        let mut seen: Vec<String> = Vec::new();
        let mut why = None;
        for attempt in attempts {
            let Some(reason) = &attempt.alone else {
                continue;
            };
            let name = format!("{} #{}", attempt.task_id, attempt.sample);
            if !seen.contains(&name) {
                seen.push(name);
            }
            why.get_or_insert_with(|| reason.clone());
        }
        why.map(|why| Self {
            attempts: seen,
            why,
        })
    }
}

/// Waits on rate limits over a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RateLimitWaits {
    /// Rate-limited answers waited on (none of them used up a try).
    pub n_waits: usize,
    /// Seconds waited in all.
    pub waited_s: f64,
    /// Waits as long as the server asked (the rest backed off).
    pub n_server_asked: usize,
}

impl RateLimitWaits {
    /// The waits journaled in `attempts`, `None` when there are none.
    pub fn of(attempts: &[AttemptRecord]) -> Option<Self> {
        let waits: Vec<&crate::journal::TryWait> =
            attempts.iter().filter_map(|a| a.wait.as_ref()).collect();
        (!waits.is_empty()).then(|| Self {
            n_waits: waits.len(),
            waited_s: waits.iter().map(|w| w.waited_ms).sum::<f64>() / 1e3,
            n_server_asked: waits.iter().filter(|w| w.cause == "server_asked").count(),
        })
    }
}

/// How many task samples of one outcome have their reply on file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvidenceCount {
    /// The outcome (`pass`, `wrong`, `no_answer`, ...).
    pub outcome: String,
    /// Task samples with this outcome.
    pub n_samples: usize,
    /// Of them, those with a reply in `replies.jsonl`.
    pub n_with_reply: usize,
}

/// What the run's own evidence says about the harness: the evidence on file per outcome, and
/// patterns that point at the setup rather than the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Audit {
    /// Per outcome class.
    pub evidence: Vec<EvidenceCount>,
    /// Each pattern seen, as a sentence.
    pub flags: Vec<String>,
    /// What the evidence shows that is no reason for doubt, as sentences (dataset replies
    /// that write "Question:" headings, which no stop sequence cut here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}
