//! What a battery runs: its parts and their sizes, from a preset and flags.

use serde::{Deserialize, Serialize};
use vernier_sweep::Workload;

/// One part of a battery, each in its own folder with its own files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Time to ready (with `--launch`): the server launched and timed to its first token,
    /// `ready_reps` times, by `lifecycle ready`'s engine.
    Ready,
    /// The speed sweep: prose and code at the preset's prompt lengths, one stream and the
    /// batched concurrency.
    Sweep,
    /// The bundled hard suite (math, code, tools).
    Suite,
    /// The same suite again at the batched concurrency: what an answer costs in seconds while
    /// that many run at once (and a second sample of every task).
    SuiteBatched,
    /// The probe suite: vision, video, short context and tools, two tasks each.
    Probe,
    /// The long-context suite, at every preset length the server's context takes.
    Context,
}

impl Part {
    /// Every part, in run order.
    pub const ALL: [Self; 6] = [
        Self::Ready,
        Self::Sweep,
        Self::Suite,
        Self::SuiteBatched,
        Self::Probe,
        Self::Context,
    ];

    /// `sweep`, `suite`, `probe` or `context`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Sweep => "sweep",
            Self::Suite => "suite",
            Self::SuiteBatched => "suite_batched",
            Self::Probe => "probe",
            Self::Context => "context",
        }
    }

    /// Its kind: the hard suite's parts run the `suite` kind (`suite_batched` too), the
    /// others their own.
    pub fn kind(self) -> &'static str {
        match self {
            Self::SuiteBatched => "suite",
            other => other.name(),
        }
    }

    /// The part's folder inside the battery's.
    pub fn folder(self) -> &'static str {
        self.name()
    }

    /// The part named `name`.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|part| part.name() == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|part| part.name()).collect();
                format!("unknown part {name:?}; the parts are {}", names.join(", "))
            })
    }
}

/// A battery's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// Minutes on a small server: the sweep at two short prompt lengths and the suite's math
    /// and tool tasks (no Docker engine needed).
    Quick,
    /// The first seed's shape: the sweep at the seeds' four prompt lengths (111 to 10,714
    /// tokens), prose and code, one stream and eight; the whole hard suite, at one stream and
    /// at eight; the probe suite; the long-context suite up to the server's context.
    Seed,
}

impl Preset {
    /// `quick` or `seed`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Seed => "seed",
        }
    }

    /// The preset named `name`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.trim() {
            "quick" => Ok(Self::Quick),
            "seed" => Ok(Self::Seed),
            other => Err(format!(
                "unknown preset {other:?}; the presets are quick, seed"
            )),
        }
    }
}

/// What a battery runs. A resume runs the configuration its `battery.json` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BatteryConfig {
    /// The preset the sizes came from.
    pub preset: Preset,
    /// The parts, in run order.
    pub parts: Vec<Part>,
    /// The model (empty: the first the server lists).
    #[serde(default)]
    pub model: Option<String>,
    /// Sweep: prompt kinds.
    pub workloads: Vec<Workload>,
    /// Sweep: prompt lengths in the server's tokens.
    pub prompt_tokens: Vec<u32>,
    /// Sweep: completion tokens per request.
    pub output_tokens: u32,
    /// Sweep: the batched concurrency measured beside one stream.
    pub batched_concurrency: u32,
    /// Sweep: measured repetitions per cell.
    pub reps: u32,
    /// Suite: only the tasks of these categories (`math`, `code`, `tools`); `None`: all.
    #[serde(default)]
    pub suite_categories: Option<Vec<String>>,
    /// Suite: only these task ids (before `suite_categories`); `None`: by category.
    #[serde(default)]
    pub suite_tasks: Option<Vec<String>>,
    /// Suites: one completion-token budget for every task (`None`: each task's own).
    #[serde(default)]
    pub suite_budget: Option<u32>,
    /// Suite: samples per task.
    pub suite_samples: u32,
    /// Suites: tasks in flight at once.
    pub suite_concurrency: usize,
    /// Context suite: target lengths (`None`: the suite's defaults, cut at the server's
    /// context).
    #[serde(default)]
    pub context_lengths: Option<Vec<u32>>,
    /// Seed of the generated suites (probe, context).
    pub seed: u64,
    /// The shell command that starts the server: the `ready` part times it, and the battery
    /// starts it again for the other parts and stops it at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<String>,
    /// The shell command that stops it (default: SIGTERM to its process group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// Launches the `ready` part times.
    #[serde(default = "default_ready_reps")]
    pub ready_reps: u32,
    /// Merged into every request of every part (`--extra-body`), e.g. thinking turned off
    /// through `chat_template_kwargs`.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

fn default_ready_reps() -> u32 {
    3
}

impl BatteryConfig {
    /// The preset's configuration.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Quick => Self {
                preset,
                parts: vec![Part::Sweep, Part::Suite],
                model: None,
                workloads: vec![Workload::Prose, Workload::Code],
                prompt_tokens: vec![111, 1_000],
                output_tokens: 64,
                batched_concurrency: 4,
                reps: 3,
                suite_categories: Some(vec!["math".to_owned(), "tools".to_owned()]),
                suite_tasks: None,
                suite_budget: None,
                suite_samples: 1,
                suite_concurrency: 1,
                context_lengths: None,
                seed: 0,
                launch: None,
                stop: None,
                ready_reps: default_ready_reps(),
                extra_body: serde_json::Map::new(),
            },
            Preset::Seed => Self {
                preset,
                parts: vec![
                    Part::Sweep,
                    Part::Suite,
                    Part::SuiteBatched,
                    Part::Probe,
                    Part::Context,
                ],
                model: None,
                workloads: vec![Workload::Prose, Workload::Code],
                prompt_tokens: vec![111, 364, 5_378, 10_714],
                output_tokens: 256,
                batched_concurrency: 8,
                reps: 5,
                suite_categories: None,
                suite_tasks: None,
                suite_budget: None,
                suite_samples: 1,
                suite_concurrency: 1,
                context_lengths: None,
                seed: 0,
                launch: None,
                stop: None,
                ready_reps: default_ready_reps(),
                extra_body: serde_json::Map::new(),
            },
        }
    }

    /// Sweep concurrencies: one stream, then the batched one.
    pub fn concurrencies(&self) -> Vec<u32> {
        let mut levels = vec![1];
        if self.batched_concurrency > 1 {
            levels.push(self.batched_concurrency);
        }
        levels
    }
}

impl BatteryConfig {
    /// Refuses what cannot be measured, by flag: no part, and a count of zero where every part
    /// needs at least one (checked before the battery's folder is made).
    pub fn check(&self) -> Result<(), vernier_run::RunError> {
        if self.parts.is_empty() {
            return Err(vernier_run::RunError::invalid(
                "--parts",
                "no part chosen: name at least one of ready, sweep, suite, suite_batched, probe, context",
            ));
        }
        let zero = [
            ("--reps", self.reps),
            ("--output-tokens", self.output_tokens),
            ("--concurrency", self.batched_concurrency),
            ("--samples", self.suite_samples),
            ("--suite-budget", self.suite_budget.unwrap_or(1)),
            ("--ready-reps", self.ready_reps),
        ];
        if let Some((flag, _)) = zero.iter().find(|(_, value)| *value == 0) {
            return Err(vernier_run::RunError::invalid(
                *flag,
                "0 measures nothing; give at least 1, or leave the flag out for the preset's",
            ));
        }
        if self.prompt_tokens.contains(&0) {
            return Err(vernier_run::RunError::invalid(
                "--prompt-tokens",
                "a prompt of 0 tokens cannot be sent; give lengths of at least 1 token",
            ));
        }
        Ok(())
    }
}

impl Default for BatteryConfig {
    fn default() -> Self {
        Self::preset(Preset::Seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_and_preset_reads_back_from_its_name_and_a_typo_names_the_choices() {
        for part in Part::ALL {
            assert_eq!(Part::parse(part.name()), Ok(part));
            assert_eq!(part.folder(), part.name());
        }
        assert_eq!(Part::parse(" suite_batched "), Ok(Part::SuiteBatched));
        let error = Part::parse("sweeep").expect_err("a typo");
        assert!(error.contains("unknown part \"sweeep\""), "{error}");
        assert!(error.contains("sweep, suite, suite_batched"), "{error}");
        for preset in [Preset::Quick, Preset::Seed] {
            assert_eq!(Preset::parse(preset.name()), Ok(preset));
        }
        assert!(Preset::parse("fast").is_err());
    }

    #[test]
    fn the_presets_hold_the_seeds_shape_and_the_quick_one() {
        let seed = BatteryConfig::preset(Preset::Seed);
        // The seeds' four prompt lengths (111 to 10,714 tokens), prose and code, 1 and 8 streams.
        assert_eq!(seed.prompt_tokens, [111, 364, 5_378, 10_714]);
        assert_eq!(seed.workloads, [Workload::Prose, Workload::Code]);
        assert_eq!(seed.concurrencies(), [1, 8]);
        assert!(seed.parts.contains(&Part::SuiteBatched));
        let quick = BatteryConfig::preset(Preset::Quick);
        assert_eq!(quick.parts, [Part::Sweep, Part::Suite]);
        assert_eq!(quick.concurrencies(), [1, 4]);
        assert!(quick.extra_body.is_empty());
        let mut single = quick.clone();
        single.batched_concurrency = 1;
        assert_eq!(
            single.concurrencies(),
            [1],
            "no batched level at one stream"
        );
        assert_eq!(BatteryConfig::default(), seed);
    }

    #[test]
    fn a_config_written_without_newer_fields_reads_back_with_their_defaults() {
        let mut json = serde_json::to_value(BatteryConfig::preset(Preset::Quick)).expect("json");
        let object = json.as_object_mut().expect("an object");
        object.remove("ready_reps");
        object.remove("extra_body");
        object.remove("model");
        let read: BatteryConfig = serde_json::from_value(json).expect("reads");
        assert_eq!(read.ready_reps, 3);
        assert!(read.extra_body.is_empty());
        assert_eq!(read.model, None);
    }
}
