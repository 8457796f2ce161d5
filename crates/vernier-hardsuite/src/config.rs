//! What a run is asked to do: [`RunConfig`] (filled in by the command line or by code) and
//! [`RunTarget`] (a new output directory, or a journal to resume).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use vernier_tasks::{ContextPlan, Draw};

use crate::journal::{BudgetFlags, Sampling, VideoAs};

/// The longest request or idle timeout taken: 7 days, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 7 * 24 * 60 * 60;

/// The output directory of a new run when none is named.
pub const DEFAULT_OUT: &str = "hardsuite-out";

/// Sampling presets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SamplingPreset {
    /// `temperature` 0.6, `top_p` 0.95 (the default).
    #[default]
    Default,
    /// Qwen's "thinking, general" preset: `temperature` 1.0, `top_k` 20, `presence_penalty` 1.5.
    QwenThinking,
}

impl SamplingPreset {
    /// The preset's name on the command line: `default`, `qwen-thinking`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::QwenThinking => "qwen-thinking",
        }
    }

    /// The sampling the preset sends.
    pub fn sampling(self) -> Sampling {
        match self {
            Self::Default => Sampling::seed_default(),
            Self::QwenThinking => Sampling::qwen_thinking(),
        }
    }
}

/// Which suite, and which of its tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct SuiteSelection {
    /// A user-defined suite file (.toml or .json) instead of the bundled 28 tasks.
    pub suite: Option<PathBuf>,
    /// Only these task ids.
    pub tasks: Option<Vec<String>>,
    /// Grader image for code tasks (default: the grader's own).
    pub grader_image: Option<String>,
    /// Per-category completion-token budgets (`None`: the suite's budget).
    pub budgets: BudgetFlags,
    /// Level and seed to draw the bundled suite at (`None`: level 2, seed 0, the bundled
    /// 28 tasks). Refused with a suite file.
    pub draw: Option<Draw>,
    /// The bundled long-context suite (`--suite context`) instead, drawn from this plan.
    pub context: Option<ContextSelection>,
    /// The bundled vision suite (`--suite vision`) instead, drawn from this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<u64>,
    /// The instruction-following suite (`--suite instructions`) instead, drawn from this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// The structured-output suite (`--suite structured`) instead, drawn from this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<u64>,
    /// The tool-call suite (`--suite calls`) instead, drawn from this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
    /// The bundled video suite (`--suite video`) instead, drawn from this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<u64>,
    /// The combined probe (`--suite probe`: vision, video, the context suite at short lengths
    /// and the bundled tool tasks) instead, drawn from this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<u64>,
    /// A standard dataset (`--dataset KIND --dataset-file PATH`) instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<crate::dataset_run::DatasetSelection>,
    /// How video tasks send their clips (`--video-as`).
    #[serde(default, skip_serializing_if = "VideoAs::is_default")]
    pub video_as: VideoAs,
}

/// The long-context suite's plan, and whether its lengths were asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextSelection {
    /// Lengths, depths, samples per cell, needles and seed.
    pub plan: ContextPlan,
    /// The lengths were given (`--lengths`): every one is sent, and a server that cannot take
    /// one says so (`context_exceeded`). Otherwise default lengths that cannot fit the
    /// server's context are left out before anything is sent, and the longest that fits is
    /// added.
    pub lengths_given: bool,
}

impl ContextSelection {
    /// The default plan with this seed.
    pub fn with_seed(seed: u64) -> Self {
        let mut plan = ContextPlan::default();
        plan.seed = seed;
        Self {
            plan,
            lengths_given: false,
        }
    }
}

/// How a run is done. The fields that shape the run (suite, tasks, model, sampling, extra body,
/// budgets, samples, re-run budget) are taken from the journal when a run is resumed; given
/// here with a different value, they make the resume fail
/// (`vernier_run::RunError::ConfigMismatch`). Error messages name the fields by their
/// `hardsuite` flags (`--samples`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct RunConfig {
    /// Server base URL, e.g. `http://127.0.0.1:8000` (with or without /v1). `None`: the
    /// in-process simulator answers with scripted replies.
    pub base_url: Option<String>,
    /// Model id; `None`: the first model the server lists.
    pub model: Option<String>,
    /// Environment variable holding the API key (sent as a bearer token).
    pub api_key_env: Option<String>,
    /// Suite and task selection.
    pub suite: SuiteSelection,
    /// Samples per task (`None`: 1).
    pub samples: Option<u32>,
    /// Requests in flight at once (default 3).
    pub concurrency: usize,
    /// Sampling preset (`None`: [`SamplingPreset::Default`]); the fields below override it.
    pub preset: Option<SamplingPreset>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling.
    pub top_k: Option<i64>,
    /// Presence penalty.
    pub presence_penalty: Option<f64>,
    /// A JSON object merged into every request body. It may not set `stop`.
    pub extra_body: Option<serde_json::Value>,
    /// Re-run the tasks that were cut off with this larger budget.
    pub rerun_cut_off: Option<u32>,
    /// Tries per attempt when the server or the grader fails (default 3; never scored).
    pub max_tries: u32,
    /// Seconds one request may take in all (default 3600, at most [`MAX_TIMEOUT_SECS`]).
    pub request_timeout_secs: u64,
    /// Seconds a stream may go without an event before it counts as dropped (default 300, at
    /// most [`MAX_TIMEOUT_SECS`]).
    pub idle_timeout_secs: u64,
    /// Skip the self-check (results are marked unchecked). For debugging the harness only.
    pub skip_self_check: bool,
    /// The most requests per second to start (`None`: no cap).
    pub max_rps: Option<f64>,
    /// The longest the run waits on rate limits in all, seconds (`None`: 900).
    pub max_wait_secs: Option<f64>,
    /// Lower the concurrency while the server answers `429`, and raise it again while it does
    /// not.
    pub adaptive_concurrency: bool,
    /// A PEM file of CA certificates to trust beside the built-in roots.
    pub ca_cert: Option<std::path::PathBuf>,
    /// A DCGM exporter (or Prometheus endpoint with DCGM's names) to read the server's GPUs
    /// from; without it, NVML on this machine when the server runs here.
    pub gpu_metrics_url: Option<String>,
    /// Milliseconds between GPU samples over the run; 0 reads no GPU.
    pub gpu_sample_ms: u64,
    /// Only these GPUs (by index) serve the server; `None`: every GPU read.
    pub gpus: Option<Vec<u32>>,
    /// The command that continues the run when it is part of another tool's (a battery's:
    /// `battery run ... --resume FOLDER`); `None`: `hardsuite run ... --resume JOURNAL`. Not
    /// recorded: it is how this session was started, not what the run measures.
    #[serde(skip)]
    pub resume_command: Option<String>,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            base_url: None,
            model: None,
            api_key_env: None,
            suite: SuiteSelection::default(),
            samples: None,
            concurrency: 3,
            preset: None,
            temperature: None,
            top_p: None,
            top_k: None,
            presence_penalty: None,
            extra_body: None,
            rerun_cut_off: None,
            max_tries: 3,
            request_timeout_secs: 3600,
            idle_timeout_secs: 300,
            skip_self_check: false,
            max_rps: None,
            max_wait_secs: None,
            adaptive_concurrency: false,
            ca_cert: None,
            gpu_metrics_url: None,
            gpu_sample_ms: 500,
            gpus: None,
            resume_command: None,
        }
    }
}

/// Where a run writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunTarget {
    /// A new run in this directory (`journal.jsonl`, `results.json`, `report.md`); a directory
    /// that already holds a journal is refused.
    New {
        /// The output directory.
        out_dir: PathBuf,
    },
    /// Continue the run recorded in `journal`, without redoing finished attempts; the files are
    /// written next to it.
    Resume {
        /// The journal.
        journal: PathBuf,
        /// An output directory the caller named as well: refused unless it is the journal's.
        out_dir: Option<PathBuf>,
    },
}

impl RunTarget {
    /// A new run in `out_dir`.
    pub fn new_run(out_dir: impl Into<PathBuf>) -> Self {
        Self::New {
            out_dir: out_dir.into(),
        }
    }

    /// A resumed run of `journal`.
    pub fn resume(journal: impl Into<PathBuf>) -> Self {
        Self::Resume {
            journal: journal.into(),
            out_dir: None,
        }
    }
}
