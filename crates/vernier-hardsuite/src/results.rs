//! The results file (`results.json`): per-task outcomes and per-category scores, derived from
//! the journal. Its schema is documented in `docs/hardsuite.md`.

mod validity;
pub use validity::validity;

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use vernier_stats::{
    Interval, clustered_mean_se, median, normal_interval, paired_difference_half_width, wilson,
};
use vernier_tasks::{Category, Draw, OutcomeKind};

use crate::error::HardsuiteError;
use crate::journal::{
    AttemptPhase, AttemptRecord, LoadedHardsuiteJournal, RunHeader, Sampling,
    read_hardsuite_journal,
};
use crate::task_results::{CONFIDENCE, SampleResult, TaskResult, final_sample};

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

/// `MODEL on SERVER, DATE`: what a chart's subtitle says of its run.
pub(crate) fn run_line(
    model: &str,
    base_url: &str,
    simulated: bool,
    started_unix_ms: u64,
) -> String {
    let server = if simulated {
        "the bundled simulator (scripted answers)"
    } else {
        base_url
    };
    let mut line = format!("{model} on {server}");
    if started_unix_ms > 0 {
        line.push_str(", ");
        line.push_str(&vernier_run::utc_minute(started_unix_ms));
    }
    line
}

impl ResultsFile {
    /// Derives the results from a journal's header and attempts.
    pub fn from_journal(header: &RunHeader, attempts: &[AttemptRecord]) -> Self {
        let mut by_key: HashMap<(&str, u32, AttemptPhase), Vec<&AttemptRecord>> = HashMap::new();
        let mut categories: HashMap<&str, Category> = HashMap::new();
        for attempt in attempts {
            by_key
                .entry((attempt.task_id.as_str(), attempt.sample, attempt.phase))
                .or_default()
                .push(attempt);
            categories.insert(attempt.task_id.as_str(), attempt.category);
        }
        let mut tasks = Vec::new();
        for id in &header.task_ids {
            let Some(category) = categories.get(id.as_str()).copied() else {
                continue;
            };
            let collect = |phase: AttemptPhase| -> Vec<SampleResult> {
                (0..header.samples)
                    .filter_map(|sample| {
                        by_key
                            .get(&(id.as_str(), sample, phase))
                            .and_then(|tries| final_sample(sample, tries))
                    })
                    .collect()
            };
            tasks.push(TaskResult {
                id: id.clone(),
                category,
                samples: collect(AttemptPhase::Main),
                rerun: collect(AttemptPhase::Rerun),
                instance: header.instances.iter().find(|i| i.family == *id).cloned(),
            });
        }
        let n_infra_tries = attempts.iter().filter(|a| !a.is_scored()).count();
        let clustered = header.samples > 1;
        let main = scoreboard(&tasks, None, clustered, |task| task.samples.clone());
        let after_rerun = header
            .rerun_budget
            .map(|budget| scoreboard(&tasks, Some(budget), clustered, merged_with_rerun));
        let n_tasks = tasks.len() as f64;
        let context = crate::context_report::ContextReport::of(header, &tasks);
        let dataset = crate::dataset_report::DatasetReport::of(header, &tasks);
        Self {
            schema_version: RESULTS_SCHEMA_VERSION,
            suite: header.suite.clone(),
            model: header.model.clone(),
            base_url: header.base_url.clone(),
            simulated: header.simulated,
            self_checked: header.self_checked,
            grader_image: header.grader_image.clone(),
            sampling: header.sampling,
            samples: header.samples,
            n_infra_tries,
            tasks,
            main,
            after_rerun,
            difference_half_width_points: difference_half_width_points(n_tasks),
            draw: header.effective_draw(),
            extra_body: header.extra_body.clone(),
            rate_limit_waits: RateLimitWaits::of(attempts),
            audit: None,
            context,
            started_unix_ms: header.started_unix_ms,
            ran_alone: RanAlone::of(attempts),
            shared_cache: SharedCache::of(header, attempts),
            identity_changes: Vec::new(),
            dataset,
            dataset_record: header.dataset.as_deref().cloned(),
            validity: vernier_run::Verdict::default(),
            gpu: header.gpu.as_deref().cloned(),
            energy: None,
            weights: header.weights.as_deref().cloned(),
        }
        .with_validity()
    }

    /// The run a chart comes from, in one line: the model, the server, the start (UTC).
    pub fn chart_subtitle(&self) -> String {
        run_line(
            &self.model,
            &self.base_url,
            self.simulated,
            self.started_unix_ms,
        )
    }

    /// Derives the results from a journal read back, with what its identity checks found.
    pub fn from_loaded(loaded: &LoadedHardsuiteJournal) -> Self {
        let mut results = Self::from_journal(&loaded.header, &loaded.attempts);
        results
            .identity_changes
            .clone_from(&loaded.identity_changes);
        let (covered, tokens) = loaded.gpu_covered;
        results.energy = vernier_gpu::WorkEnergy::of(&loaded.gpu_windows, tokens)
            .map(|energy| energy.covering(covered, loaded.attempts.len() as u64));
        results.with_validity()
    }

    /// These results with their verdict worked out again ([`crate::suite_validity`]).
    #[must_use]
    pub fn with_validity(mut self) -> Self {
        self.validity = validity::validity(&self);
        self
    }

    /// Reads a run: its folder (its `results.json`, else its `journal.jsonl`), a `results.json`,
    /// or a `journal.jsonl` (any file whose first non-blank line is a journal header).
    pub fn load(path: &Path) -> Result<Self, HardsuiteError> {
        // A run folder names its results, or its journal when the run has none yet.
        let in_folder = vernier_run::run_file_in(path, "results.json");
        let path = if in_folder.exists() {
            in_folder.as_path()
        } else if path.is_dir() {
            &path.join("journal.jsonl")
        } else {
            path
        };
        let text = std::fs::read_to_string(path)
            .map_err(|source| HardsuiteError::io("read", path, source))?;
        let is_journal = path.extension().is_some_and(|e| e == "jsonl")
            || text
                .lines()
                .find(|line| !line.trim().is_empty())
                .is_some_and(|line| {
                    line.contains("\"type\":\"header\"") || line.contains("\"type\": \"header\"")
                });
        if is_journal {
            return Ok(Self::from_loaded(&read_hardsuite_journal(path)?));
        }
        let results: Self = serde_json::from_str(&text).map_err(|error| HardsuiteError::Parse {
            path: path.to_owned(),
            line: error.line(),
            message: error.to_string(),
        })?;
        if results.schema_version != RESULTS_SCHEMA_VERSION {
            return Err(HardsuiteError::Parse {
                path: path.to_owned(),
                line: 1,
                message: format!(
                    "schema version {} (this hardsuite reads version {RESULTS_SCHEMA_VERSION})",
                    results.schema_version
                ),
            });
        }
        Ok(results)
    }

    /// Writes the file as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<(), HardsuiteError> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|error| HardsuiteError::io("encode", path, error.into()))?;
        text.push('\n');
        vernier_run::write_atomically(path, text.as_bytes())
            .map_err(|source| HardsuiteError::io("write", path, source))
    }

    /// The task with this id.
    pub fn task(&self, id: &str) -> Option<&TaskResult> {
        self.tasks.iter().find(|task| task.id == id)
    }
}

/// Half-width in points of a 95% interval on a paired difference over `n_items` independent
/// items (tasks, when each task's samples are averaged first), at the assumed discordance:
/// 1.96·√(ψ/n)·100 ([`vernier_stats::paired_difference_half_width`]); NaN when there is no
/// item (written as `null` in `results.json`).
pub fn difference_half_width_points(n_items: f64) -> f64 {
    paired_difference_half_width(n_items, ASSUMED_DISCORDANCE, CONFIDENCE)
        .map_or(f64::NAN, |half_width| half_width * 100.0)
}

/// Main samples with each cut-off replaced by its scored re-run, when there is one.
fn merged_with_rerun(task: &TaskResult) -> Vec<SampleResult> {
    task.samples
        .iter()
        .map(|main| {
            task.rerun
                .iter()
                .find(|rerun| rerun.sample == main.sample && rerun.outcome != OutcomeKind::Infra)
                .unwrap_or(main)
                .clone()
        })
        .collect()
}

/// `clustered`: several samples per task, scored with task-clustered errors.
fn scoreboard(
    tasks: &[TaskResult],
    rerun_budget: Option<u32>,
    clustered: bool,
    samples_of: impl Fn(&TaskResult) -> Vec<SampleResult>,
) -> Scoreboard {
    let per_task: Vec<(&TaskResult, Vec<SampleResult>)> =
        tasks.iter().map(|task| (task, samples_of(task))).collect();
    let mut categories = Vec::new();
    for category in Category::ALL {
        let members: Vec<_> = per_task
            .iter()
            .filter(|(task, _)| task.category == category)
            .collect();
        if !members.is_empty() {
            categories.push(score(category.as_str(), &members, clustered));
        }
    }
    let all: Vec<_> = per_task.iter().collect();
    let total = score("total", &all, clustered);
    let solved_tokens: Vec<f64> = per_task
        .iter()
        .flat_map(|(_, samples)| samples.iter())
        .filter(|sample| sample.outcome == OutcomeKind::Pass)
        .filter_map(|sample| sample.completion_tokens.map(|tokens| tokens as f64))
        .collect();
    let ids_where = |flag: fn(&SampleResult) -> bool| -> Vec<String> {
        per_task
            .iter()
            .filter(|(_, samples)| samples.iter().any(flag))
            .map(|(task, _)| task.id.clone())
            .collect()
    };
    Scoreboard {
        rerun_budget,
        total,
        categories,
        median_tokens_solved: median(&solved_tokens).ok(),
        ended_in_reasoning: ids_where(|sample| sample.ended_in_reasoning),
        hit_budget: ids_where(|sample| sample.hit_budget),
    }
}

fn score(name: &str, members: &[&(&TaskResult, Vec<SampleResult>)], clustered: bool) -> Score {
    let mut score = Score {
        name: name.to_owned(),
        n_tasks: members.len(),
        n_scored: 0,
        n_pass: 0,
        n_wrong: 0,
        n_cut_off: 0,
        n_no_answer: 0,
        n_extra_calls: 0,
        n_unscored: 0,
        n_context_exceeded: 0,
        n_unsupported: 0,
        wilson: None,
        task_clustered: None,
    };
    let mut per_task = Vec::with_capacity(members.len());
    for (_, samples) in members {
        let mut task_scores = Vec::with_capacity(samples.len());
        for sample in samples {
            match sample.outcome {
                OutcomeKind::Pass => score.n_pass += 1,
                OutcomeKind::Wrong => score.n_wrong += 1,
                OutcomeKind::CutOff => score.n_cut_off += 1,
                OutcomeKind::NoAnswer => score.n_no_answer += 1,
                OutcomeKind::ExtraCalls => score.n_extra_calls += 1,
                OutcomeKind::ContextExceeded => {
                    score.n_context_exceeded += 1;
                    continue;
                }
                OutcomeKind::Unsupported => {
                    score.n_unsupported += 1;
                    continue;
                }
                _ => {
                    score.n_unscored += 1;
                    continue;
                }
            }
            score.n_scored += 1;
            task_scores.push(if sample.outcome == OutcomeKind::Pass {
                1.0
            } else {
                0.0
            });
        }
        per_task.push(task_scores);
    }
    if clustered {
        score.task_clustered = ClusteredRate::from_tasks(&per_task);
    } else {
        score.wilson = wilson(score.n_pass, score.n_scored, CONFIDENCE).ok();
    }
    score
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(clippy::float_cmp, reason = "the clamp gives exactly 1.0")]
    fn clustered_rate_is_clamped_to_the_unit_interval() {
        // By hand (Miller 2024, per-task means first): task means 1, 1, 1, 1/2; mean 7/8;
        // deviations 1/8 (three times) and −3/8, squares sum to 3/64 + 9/64 = 3/16; variance
        // (n − 1 = 3) 1/16, sd 1/4, se 1/4 / √4 = 1/8. Upper bound 7/8 + 1.96/8 > 1 → 1.
        let rate = ClusteredRate::from_tasks(&[
            vec![1.0, 1.0],
            vec![1.0, 1.0],
            vec![1.0, 1.0],
            vec![1.0, 0.0],
        ])
        .expect("four tasks");
        assert_eq!((rate.mean, rate.se, rate.n_tasks), (0.875, Some(0.125), 4));
        let interval = rate.interval.expect("four tasks");
        // 0.875 − 1.9599639845400536 · 0.125 = 0.6300045019324934 (python3, by hand).
        assert!((interval.low - 0.630_004_501_932_493_4).abs() < 1e-15);
        assert_eq!(interval.high, 1.0);
    }

    #[test]
    fn clustered_rate_skips_unscored_tasks_and_needs_two_for_an_error() {
        let one = ClusteredRate::from_tasks(&[vec![], vec![1.0, 0.0, 0.0, 1.0]]).expect("one");
        assert_eq!((one.mean, one.se, one.n_tasks), (0.5, None, 1));
        assert_eq!(one.interval, None);
        assert_eq!(ClusteredRate::from_tasks(&[vec![], vec![]]), None);
    }
}
