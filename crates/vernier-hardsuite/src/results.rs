//! The results file (`results.json`): per-task outcomes and per-category scores, derived from
//! the journal. Its schema is documented in `docs/hardsuite.md`.

mod schema;
mod validity;
use schema::SharedCache;
pub use schema::{
    ASSUMED_DISCORDANCE, Audit, ClusteredRate, EvidenceCount, RESULTS_SCHEMA_VERSION, RanAlone,
    RateLimitWaits, ResultsFile, Score, Scoreboard,
};
pub use validity::validity;

use std::collections::HashMap;
use std::path::Path;

use vernier_stats::{median, paired_difference_half_width, wilson};
use vernier_tasks::{Category, OutcomeKind};

use crate::error::HardsuiteError;
use crate::journal::{
    AttemptPhase, AttemptRecord, LoadedHardsuiteJournal, RunHeader, read_hardsuite_journal,
};
use crate::task_results::{CONFIDENCE, SampleResult, TaskResult, final_sample};

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
    /// Passed over scored per category of the main pass, as a study's part reports them.
    pub fn scores(&self) -> Vec<vernier_run::Score> {
        self.main
            .categories
            .iter()
            .map(|category| {
                vernier_run::Score::new(&category.name, category.n_pass, category.n_scored)
            })
            .collect()
    }

    /// The main pass's pass rate in percent, with its Wilson interval: the headline a study's
    /// part reports.
    pub fn pass_rate_headline(&self) -> vernier_run::Headline {
        let total = &self.main.total;
        let rate = if total.n_scored == 0 {
            0.0
        } else {
            total.n_pass as f64 / total.n_scored as f64 * 100.0
        };
        let headline = vernier_run::Headline::new("pass rate", rate, "%");
        match &total.wilson {
            Some(wilson) => headline.interval(wilson.low * 100.0, wilson.high * 100.0),
            None => headline,
        }
    }

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
    // In report order (each family's place in the registry; any other after, by name).
    let present: std::collections::BTreeSet<Category> =
        tasks.iter().map(|task| task.category).collect();
    for category in present {
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
