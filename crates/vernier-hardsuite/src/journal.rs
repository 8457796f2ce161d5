//! The run journal: one JSON line per attempt, appended and flushed before the worker sends its
//! next request. It is the source of truth; results and reports are derived from it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vernier_tasks::{Category, ContextPlan, Draw, Instance, OutcomeKind};

use crate::error::HardsuiteError;

/// Version of the journal line format.
pub const HARDSUITE_JOURNAL_VERSION: u32 = 1;

/// Sampling parameters sent with every request (`None`: not sent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Sampling {
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `top_k`.
    pub top_k: Option<i64>,
    /// `presence_penalty`.
    pub presence_penalty: Option<f64>,
}

impl Sampling {
    /// The seed run's sampling: `temperature` 0.6, `top_p` 0.95.
    pub fn seed_default() -> Self {
        Self {
            temperature: Some(0.6),
            top_p: Some(0.95),
            top_k: None,
            presence_penalty: None,
        }
    }

    /// Qwen's "thinking, general" preset: `temperature` 1.0, `top_k` 20, presence penalty 1.5.
    pub fn qwen_thinking() -> Self {
        Self {
            temperature: Some(1.0),
            top_p: None,
            top_k: Some(20),
            presence_penalty: Some(1.5),
        }
    }
}

impl std::fmt::Display for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(value) = self.temperature {
            parts.push(format!("temperature {value}"));
        }
        if let Some(value) = self.top_p {
            parts.push(format!("top_p {value}"));
        }
        if let Some(value) = self.top_k {
            parts.push(format!("top_k {value}"));
        }
        if let Some(value) = self.presence_penalty {
            parts.push(format!("presence_penalty {value}"));
        }
        if parts.is_empty() {
            f.write_str("server defaults")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// The per-category budget flags of a run (`None`: the suite's budget).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BudgetFlags {
    /// `--budget-math`.
    pub math: Option<u32>,
    /// `--budget-code`.
    pub code: Option<u32>,
    /// `--budget-tools`.
    pub tools: Option<u32>,
    /// `--budget-context`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u32>,
    /// `--budget-vision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<u32>,
    /// `--budget-instructions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u32>,
    /// `--budget-structured`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<u32>,
    /// `--budget-calls`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u32>,
    /// `--budget-video`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<u32>,
    /// `--budget-dataset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<u32>,
}

impl BudgetFlags {
    /// The flag for a category.
    pub fn for_category(&self, category: Category) -> Option<u32> {
        match category {
            Category::MATH => self.math,
            Category::CODE => self.code,
            Category::TOOLS => self.tools,
            Category::CONTEXT => self.context,
            Category::VISION => self.vision,
            Category::INSTRUCTIONS => self.instructions,
            Category::STRUCTURED => self.structured,
            Category::CALLS => self.calls,
            Category::VIDEO => self.video,
            Category::DATASET => self.dataset,
            _ => None,
        }
    }
}

/// How video tasks send their clips.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum VideoAs {
    /// One `video_url` part per clip, a `data:video/mp4;base64,` URL (vLLM, `SGLang`).
    #[default]
    Video,
    /// Each clip as its frames sampled at 2 per second, `image_url` parts each after a text
    /// part with its time, for servers without video input.
    Frames,
}

impl VideoAs {
    /// Whether this is the default (clips sent as videos).
    pub fn is_default(&self) -> bool {
        *self == Self::Video
    }

    /// The `--video-as` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Video => "video",
            Self::Frames => "frames",
        }
    }
}

/// The first line of a journal: everything needed to continue or re-derive the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunHeader {
    /// [`HARDSUITE_JOURNAL_VERSION`].
    pub journal_version: u32,
    /// Suite name (`hardsuite` for the bundled one).
    pub suite: String,
    /// The suite file, for user-defined suites.
    pub suite_path: Option<PathBuf>,
    /// Task ids run, in suite order.
    pub task_ids: Vec<String>,
    /// Model id sent.
    pub model: String,
    /// Server base URL (the simulator's when `simulated`).
    pub base_url: String,
    /// The in-process simulator answered with scripted replies.
    pub simulated: bool,
    /// Sampling sent.
    pub sampling: Sampling,
    /// The JSON object merged into every request.
    pub extra_body: Option<serde_json::Value>,
    /// Budget flags given (`None`: the suite's own budget).
    pub budget_flags: BudgetFlags,
    /// Samples per task.
    pub samples: u32,
    /// Budget of the cut-off re-run, if asked for.
    pub rerun_budget: Option<u32>,
    /// Whether the self-check ran and passed before the first request.
    pub self_checked: bool,
    /// Grader image digest, when code tasks were graded.
    pub grader_image: Option<String>,
    /// The command line that started the run.
    pub command_line: Vec<String>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The server measured: the model, the server's kind and `/version` (absent in journals
    /// written before it was recorded); a resumed run must find the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<vernier_run::ServerFingerprint>,
    /// The server's GPUs, or why none was read (absent in journals written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Box<vernier_gpu::GpuRecord>>,
    /// What the server states it loaded, with the served-name check (absent in journals
    /// written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<Box<vernier_run::LoadedWeights>>,
    /// Level and seed the bundled suite was drawn at (absent for a suite file, and in
    /// journals written before levels existed, whose bundled suite is level 2, seed 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw: Option<Draw>,
    /// Every task's family, level, seed, parameters and redraws, in suite order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<Instance>,
    /// The long-context suite's plan as run (its lengths after those that cannot fit were
    /// dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextPlan>,
    /// The vision suite's seed (`--suite vision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision_seed: Option<u64>,
    /// The instruction suite's seed (`--suite instructions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_seed: Option<u64>,
    /// The structured-output suite's seed (`--suite structured`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_seed: Option<u64>,
    /// The tool-call suite's seed (`--suite calls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_seed: Option<u64>,
    /// The video suite's seed (`--suite video`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_seed: Option<u64>,
    /// The probe's seed (`--suite probe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_seed: Option<u64>,
    /// How video tasks sent their clips (`--video-as`; absent: as videos).
    #[serde(default, skip_serializing_if = "VideoAs::is_default")]
    pub video_as: VideoAs,
    /// The server's context, where it says (prompt plus answer tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_limit: Option<RecordedLimit>,
    /// Default lengths left out before anything was sent, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_dropped: Vec<DroppedLength>,
    /// The KV cache the server's requests share, where it says (llama.cpp), when more than one
    /// request was in flight at once: the requests in flight were kept within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_capacity: Option<RecordedCapacity>,
    /// A dataset run: the selection, the file's digest, the records left out and the drawn ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Box<crate::dataset_run::DatasetRecord>>,
}

/// The KV cache a server's requests share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedCapacity {
    /// Cells (prompt plus generated tokens) all requests in flight hold together.
    pub tokens: u64,
    /// Requests the server runs at once.
    pub slots: u64,
}

/// A server's context length and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedLimit {
    /// Prompt plus completion tokens the server takes.
    pub tokens: u64,
    /// `max_model_len`, `n_ctx` or `context_length`.
    pub source: String,
}

/// A length of the plan left out before anything was sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DroppedLength {
    /// Target prompt tokens.
    pub tokens: u32,
    /// Why, in words.
    pub reason: String,
}

/// What a long-context try sent and what the server counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextTry {
    /// Target total prompt tokens.
    pub target_tokens: u32,
    /// The cell's needle depth in percent (`None`: the multi-needle task).
    pub depth_pct: Option<u8>,
    /// Needles asked for.
    pub n_asked: usize,
    /// `prose` or `code`.
    pub haystack: String,
    /// Haystack length in corpus units.
    pub n_units: usize,
    /// The opening nonce of this request.
    pub nonce: String,
    /// The server's count before sending (`/tokenize`), when it has one.
    pub counted_tokens: Option<u64>,
    /// How the prompt was sized: `tokenize_chat` (the server counted every request) or
    /// `usage_ratio` (units per token learnt from earlier requests' `usage.prompt_tokens`).
    pub count_method: String,
    /// Prompt tokens over the time to the first token, tokens per second.
    pub prefill_tokens_per_s: Option<f64>,
    /// Where each needle landed, percent of the haystack, in the spec's needle order.
    pub needle_depths: Vec<f64>,
}

impl RunHeader {
    /// The draw of the run: the recorded one, else level 2 / seed 0 for the bundled suite of
    /// a journal written before levels existed, else `None` (a suite file).
    pub fn effective_draw(&self) -> Option<Draw> {
        self.draw.or_else(|| {
            (self.suite_path.is_none() && self.suite == "hardsuite").then_some(Draw::BUNDLED)
        })
    }
}

/// The main run, or the re-run of cut-off tasks with a larger budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AttemptPhase {
    /// Every task at its category budget.
    Main,
    /// Cut-off tasks again, at the re-run budget.
    Rerun,
}

impl AttemptPhase {
    /// `main run` or `re-run`, for people.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::Main => "main run",
            Self::Rerun => "re-run",
        }
    }
}

/// One try of one task sample: a request streamed and graded, or an infrastructure failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AttemptRecord {
    /// Task id.
    pub task_id: String,
    /// Task category.
    pub category: Category,
    /// Sample number, from 0.
    pub sample: u32,
    /// Main run or cut-off re-run.
    pub phase: AttemptPhase,
    /// Try number, from 1; tries after the first follow infrastructure failures.
    pub try_number: u32,
    /// `max_tokens` sent.
    pub budget_tokens: u32,
    /// The graded outcome; `infra` is never scored.
    pub outcome: OutcomeKind,
    /// Why, e.g. `expected 581 got 871`, `length`, `stream dropped: ...`.
    pub detail: String,
    /// The extracted answer (for a cut-off: the provisional one).
    pub answer: Option<String>,
    /// `stop`, `length`, `tool_calls`, ...
    pub finish_reason: Option<String>,
    /// Completion tokens, from the best token source.
    pub completion_tokens: Option<u64>,
    /// Which source the count came from (`final_usage`, `event_count`, ...).
    pub token_source: Option<String>,
    /// The count is only a lower bound (events were counted).
    pub token_count_is_lower_bound: bool,
    /// Reasoning tokens, when the server reported them.
    pub reasoning_tokens: Option<u64>,
    /// Characters of final content.
    pub content_chars: usize,
    /// Characters of reasoning.
    pub reasoning_chars: usize,
    /// Tool calls in the reply.
    pub n_tool_calls: usize,
    /// Stopped by the budget with no content and no call: the model never left its reasoning.
    pub ended_in_reasoning: bool,
    /// Stopped by the budget, or used all of it.
    pub hit_budget: bool,
    /// From the request's first byte to the stream's end, milliseconds.
    pub elapsed_ms: Option<f64>,
    /// Time to the first token-bearing event, milliseconds.
    pub ttft_ms: Option<f64>,
    /// Decode rate from token counts.
    pub decode_tokens_per_s: Option<f64>,
    /// Time spent grading, milliseconds.
    pub grade_ms: Option<f64>,
    /// A rate-limited try (`429`/`503`): the wait before the next one. Such a try uses up no
    /// try of `max_tries`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<TryWait>,
    /// A long-context try: what was sent and counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextTry>,
    /// Which clock timed `ttft_ms` and `decode_tokens_per_s`: `kernel_rx` (the kernel's
    /// receive time of each event) or `userspace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// `usage.prompt_tokens` (with media, the image tokens included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens`, when the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Prompt tokens of the images and videos, where the server counts them apart
    /// (`prompt_tokens_details` `image_tokens` plus `video_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_tokens: Option<u64>,
    /// The server's own words when it refused the request (`unsupported`,
    /// `context_exceeded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_message: Option<String>,
    /// Why this try ran with no other request in flight: an earlier try of the attempt was
    /// failed by the server for shared capacity (the requests in flight together outgrew the
    /// KV cache they share) though its prompt fits alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone: Option<String>,
    /// How long the try waited for room in the KV cache the server's requests share, ms
    /// (absent when it did not wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room_wait_ms: Option<f64>,
    /// Requests this run had in flight as the try was sent, itself included (absent for a try
    /// that never reached the server, and in files written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<u32>,
    /// For a dataset question: the extraction rule that read the answer (`answer_is`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// The wait after a rate-limited try.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TryWait {
    /// `server_asked` (`Retry-After` and the like) or `backoff` (the server said nothing).
    pub cause: String,
    /// How long the run waited, ms.
    pub waited_ms: f64,
    /// What the server asked for, ms, when it said.
    pub asked_ms: Option<f64>,
}

impl AttemptRecord {
    /// Whether this attempt counts (anything but `infra`).
    pub fn is_scored(&self) -> bool {
        self.outcome != OutcomeKind::Infra
    }
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum HardsuiteJournalLine {
    /// The run's settings (first line).
    Header(RunHeader),
    /// One try.
    Attempt(AttemptRecord),
    /// A `--resume` continued the run here.
    Resumed {
        /// Scored attempts kept from before.
        kept_attempts: usize,
        /// Wall-clock time, milliseconds since the Unix epoch.
        at_unix_ms: u64,
    },
    /// The GPUs sampled over one session of the run (a resumed run has one per session).
    GpuWindow {
        /// The samples, in order.
        samples: Vec<vernier_gpu::GpuSample>,
    },
    /// The server asked again who it is once every try had run.
    IdentityChecked {
        /// What changed since the header's `server` (empty when nothing did).
        changes: Vec<String>,
        /// Wall-clock time, milliseconds since the Unix epoch.
        at_unix_ms: u64,
    },
}

/// A journal read back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LoadedHardsuiteJournal {
    /// The header.
    pub header: RunHeader,
    /// Every attempt line, in file order.
    pub attempts: Vec<AttemptRecord>,
    /// How many `resumed` lines there were.
    pub n_resumes: usize,
    /// What the end-of-run identity checks found changed, each once.
    pub identity_changes: Vec<String>,
    /// The GPU windows, one per session that sampled.
    pub gpu_windows: Vec<vernier_gpu::EnergyWindow>,
    /// The tries made in sessions that journalled a GPU window: how many, and their completion
    /// tokens (a session interrupted before its window was written has tries and no energy).
    pub gpu_covered: (u64, u64),
}

/// Reads a journal. A last line without its newline is what a crash leaves (each line is written
/// with its newline in one call), so it is ignored, even when it happens to parse: resuming cuts it
/// off and runs that attempt again, so reading and resuming agree on what was finished.
pub fn read_hardsuite_journal(path: &Path) -> Result<LoadedHardsuiteJournal, HardsuiteError> {
    let journal = vernier_journal::read::<HardsuiteJournalLine>(path)?;
    let lines = journal
        .lines
        .into_iter()
        .map(|line| (line.number, line.value));
    let mut header = None;
    let mut attempts = Vec::new();
    let mut n_resumes = 0;
    let mut identity_changes: Vec<String> = Vec::new();
    let mut gpu_windows = Vec::new();
    // This session's tries and their tokens, and those of sessions with a GPU window.
    let (mut session, mut gpu_covered) = ((0_u64, 0_u64), (0_u64, 0_u64));
    // Where each try was seen: its attempt, its try number and the run segment (a resume
    // starts a new one: journals written before resumes numbered on restarted at 1).
    let mut seen: HashMap<(String, u32, AttemptPhase, u32, usize), usize> = HashMap::new();
    for (number, line) in lines {
        if let HardsuiteJournalLine::Attempt(attempt) = &line {
            let key = (
                attempt.task_id.clone(),
                attempt.sample,
                attempt.phase,
                attempt.try_number,
                n_resumes,
            );
            if let Some(first) = seen.insert(key, number) {
                return Err(HardsuiteError::Parse {
                    path: path.to_owned(),
                    line: number,
                    message: format!(
                        "try {} of task {} #{} ({}) is already on line {first}: a line was copied or edited by hand; remove one of them",
                        attempt.try_number,
                        attempt.task_id,
                        attempt.sample,
                        attempt.phase.describe()
                    ),
                });
            }
        }
        match line {
            HardsuiteJournalLine::Header(found) if header.is_none() => header = Some(found),
            HardsuiteJournalLine::Header(_) => {
                return Err(HardsuiteError::Parse {
                    path: path.to_owned(),
                    line: number,
                    message: "a second header line".to_owned(),
                });
            }
            HardsuiteJournalLine::Attempt(attempt) => {
                session.0 += 1;
                session.1 += attempt.completion_tokens.unwrap_or(0);
                attempts.push(attempt);
            }
            HardsuiteJournalLine::Resumed { .. } => {
                n_resumes += 1;
                session = (0, 0);
            }
            HardsuiteJournalLine::GpuWindow { samples } => {
                if let Some(window) = vernier_gpu::EnergyWindow::from_samples(&samples) {
                    gpu_windows.push(window);
                    gpu_covered.0 += session.0;
                    gpu_covered.1 += session.1;
                }
                session = (0, 0);
            }
            HardsuiteJournalLine::IdentityChecked { changes, .. } => {
                for change in changes {
                    if !identity_changes.contains(&change) {
                        identity_changes.push(change);
                    }
                }
            }
        }
    }
    let header = header.ok_or_else(|| HardsuiteError::Parse {
        path: path.to_owned(),
        line: 1,
        message: "no header line".to_owned(),
    })?;
    if header.journal_version != HARDSUITE_JOURNAL_VERSION {
        return Err(HardsuiteError::Parse {
            path: path.to_owned(),
            line: 1,
            message: format!(
                "journal version {} (this hardsuite reads version {HARDSUITE_JOURNAL_VERSION})",
                header.journal_version
            ),
        });
    }
    Ok(LoadedHardsuiteJournal {
        header,
        attempts,
        n_resumes,
        identity_changes,
        gpu_windows,
        gpu_covered,
    })
}

/// An open journal; every append is written and flushed before it returns.
#[cfg(feature = "engine")]
#[derive(Debug)]
pub(crate) struct HardsuiteJournalWriter(vernier_journal::JournalWriter);

#[cfg(feature = "engine")]
impl HardsuiteJournalWriter {
    /// Creates the journal at `path`, refusing one that already exists (a second run with the
    /// same `--out` must not empty the first one's journal), or appends to it; appending first
    /// cuts off a partial last line a crash may have left (it was never finished).
    pub(crate) fn open(path: &Path, append: bool) -> Result<Self, HardsuiteError> {
        if append {
            return Ok(Self(vernier_journal::JournalWriter::open_append(path)?));
        }
        match vernier_journal::JournalWriter::create_new(path) {
            Ok(writer) => Ok(Self(writer)),
            Err(vernier_journal::JournalError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists =>
            {
                Err(vernier_run::RunError::JournalExists {
                    out: path
                        .parent()
                        .filter(|parent| !parent.as_os_str().is_empty())
                        .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
                    journal: path.to_owned(),
                }
                .into())
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Appends one line and flushes it.
    pub(crate) fn append(&self, line: &HardsuiteJournalLine) -> Result<(), HardsuiteError> {
        Ok(self.0.append(line)?)
    }
}

#[cfg(all(test, feature = "engine"))]
mod tests {
    use super::*;

    #[test]
    fn a_partial_last_line_is_ignored_and_cut_off_before_appending() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("journal.jsonl");
        let header = r#"{"type":"header","journal_version":1,"suite":"s","suite_path":null,"task_ids":[],"model":"m","base_url":"u","simulated":true,"sampling":{"temperature":null,"top_p":null,"top_k":null,"presence_penalty":null},"extra_body":null,"budget_flags":{"math":null,"code":null,"tools":null},"samples":1,"rerun_budget":null,"self_checked":true,"grader_image":null,"command_line":[],"started_unix_ms":0}"#;
        std::fs::write(&path, format!("{header}\n{{\"type\":\"attem")).expect("write");
        let loaded = read_hardsuite_journal(&path).expect("partial last line tolerated");
        assert!(loaded.attempts.is_empty());
        let writer = HardsuiteJournalWriter::open(&path, true).expect("append");
        writer
            .append(&HardsuiteJournalLine::Resumed {
                kept_attempts: 0,
                at_unix_ms: 1,
            })
            .expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.lines().count(), 2, "{text}");
        assert_eq!(read_hardsuite_journal(&path).expect("read").n_resumes, 1);
        // A broken line in the middle is an error naming the line.
        std::fs::write(&path, format!("{header}\nnot json\n")).expect("write");
        let error = read_hardsuite_journal(&path).expect_err("broken line");
        assert!(error.to_string().contains("line 2"), "{error}");
        // A last line that parses but lacks its newline was never finished: reading ignores it
        // and resuming cuts it off, so the two agree and the attempt runs again.
        std::fs::write(
            &path,
            format!("{header}\n{{\"type\":\"resumed\",\"kept_attempts\":0,\"at_unix_ms\":5}}"),
        )
        .expect("write");
        assert_eq!(read_hardsuite_journal(&path).expect("read").n_resumes, 0);
        drop(HardsuiteJournalWriter::open(&path, true).expect("append"));
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text, format!("{header}\n"));
        // A new journal never empties an existing one.
        let error = HardsuiteJournalWriter::open(&path, false).expect_err("the journal exists");
        assert!(
            matches!(
                error,
                HardsuiteError::Run(vernier_run::RunError::JournalExists { .. })
            ),
            "{error}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            format!("{header}\n")
        );
    }
}
