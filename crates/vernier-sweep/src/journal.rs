//! The run journal: JSON Lines, one line per event of the run, appended and flushed as it
//! happens. Everything else (run file, reports) is derived from it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use vernier_meter::Measurement;

use crate::config::{CellKey, SweepConfig, Workload};
use crate::environment::Environment;
use crate::error::SweepError;
use crate::lag::LagHistogram;

/// Version of the journal line format.
pub const SWEEP_JOURNAL_VERSION: u32 = 1;

/// One line of the journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SweepJournalLine {
    /// First line: what was run, where, with what.
    Header(Box<Header>),
    /// A resumed run continues here.
    Resumed(Box<Resumed>),
    /// Corpus length chosen for a prompt length.
    Calibration(Calibration),
    /// One request attempt, warm-up or measured, successful or not.
    Attempt(Box<Attempt>),
    /// A repetition finished: its attempts count.
    RepDone(RepDone),
    /// Server counters and scheduler delay around a cell's measured repetitions.
    CellWindow(Box<CellWindow>),
    /// A capacity search (`--target`) tried every load it needed.
    SearchDone(SearchDone),
    /// The server refused a field; the run goes on without it.
    FieldDropped(FieldDropped),
    /// A cell left out: it cannot fit the server's context.
    CellSkipped(CellSkipped),
    /// The server asked again who it is at the end of the work.
    IdentityChecked(IdentityChecked),
    /// A shard (`--shard I/N`) reached its start instant, with its clock against the server's.
    ShardStart(Box<crate::shard::ShardStart>),
    /// A merged run (`sweep merge`): the shards it was built from.
    Merged(Box<crate::shard::MergedFrom>),
}

/// The server's identity read again at the end of a run's work and compared with the one
/// recorded at its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct IdentityChecked {
    /// What changed (empty when nothing did).
    pub changes: Vec<String>,
    /// Wall clock.
    pub unix_ms: u64,
}

impl IdentityChecked {
    /// The check at `unix_ms` with what changed.
    pub fn new(changes: Vec<String>, unix_ms: u64) -> Self {
        Self { changes, unix_ms }
    }
}

/// A cell the run does not measure, `context_exceeded`: the server cannot take its prompt and
/// output (known before sending from the server's context, or from its length error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CellSkipped {
    /// The cell.
    pub cell: CellKey,
    /// Why, with the server's own message when it refused a request.
    pub reason: String,
    /// Wall clock.
    pub unix_ms: u64,
}

/// A field the server refused, dropped for the rest of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldDropped {
    /// The field (`cache_salt`, `ignore_eos`, `min_tokens`, `return_token_ids`,
    /// `continuous_usage_stats`, `cache_prompt`, or `max_tokens`, then sent as
    /// `max_completion_tokens`).
    pub field: String,
    /// What the run no longer guarantees.
    pub guarantee_lost: String,
    /// The server's refusal, on one line.
    pub server_said: String,
    /// Wall clock.
    pub unix_ms: u64,
}

/// A wait on a rate limit before the next try.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RateLimitWait {
    /// `server_asked` (`Retry-After` and the like) or `backoff` (the server said nothing).
    pub cause: String,
    /// How long the client waited, ms.
    pub waited_ms: f64,
    /// What the server asked for, ms, when it said.
    pub asked_ms: Option<f64>,
}

/// The end of a capacity search.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchDone {
    /// Wall clock when the search ended.
    pub unix_ms: u64,
}

/// Wall-clock instants of one request, in nanoseconds since the Unix epoch, so a run can be
/// lined up with the server's own logs. They come from the monotonic clock, anchored to the
/// wall clock once per run, so differences between them are exact durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Timeline {
    /// Which clock stamped the events: `kernel_rx` (the kernel's receive time of the read
    /// that completed each) or `userspace` (the instant our task read them).
    pub clock: TimelineClock,
    /// The request's first byte written to the socket.
    pub request_sent_unix_ns: u64,
    /// Response headers read.
    pub headers_unix_ns: u64,
    /// The first token-bearing event.
    pub first_token_unix_ns: Option<u64>,
    /// The last token-bearing event.
    pub last_token_unix_ns: Option<u64>,
    /// Open loop: when the schedule said to send the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_unix_ns: Option<u64>,
}

/// The clock a [`Timeline`] was stamped with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TimelineClock {
    /// The instant the client's task read each event (`std::time::Instant`).
    Userspace,
    /// The kernel's receive time (`SO_TIMESTAMPNS`) of the socket read that completed each
    /// token event.
    KernelRx,
}

/// The server's own queue sampled from `/metrics` while a cell ran.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QueueSamples {
    /// Samples taken.
    pub n_samples: u32,
    /// Median of the requests running.
    pub running_median: f64,
    /// Most requests running at once.
    pub running_max: f64,
    /// Median of the requests waiting.
    pub waiting_median: f64,
    /// Most requests waiting at once.
    pub waiting_max: f64,
}

/// The journal's first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Header {
    /// [`SWEEP_JOURNAL_VERSION`].
    pub journal_version: u32,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The command line as typed.
    pub command_line: Vec<String>,
    /// The resolved configuration.
    pub config: SweepConfig,
    /// Server, client machine and tool.
    pub environment: Environment,
    /// Set-up warnings a reader must see (a busy check or watchdog that cannot work).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A resume marker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Resumed {
    /// Wall clock of the resume.
    pub unix_ms: u64,
    /// The command line of the resumed run.
    pub command_line: Vec<String>,
    /// The environment seen at resume time.
    pub environment: Environment,
    /// Set-up warnings at resume time, as in [`Header::warnings`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Operational settings typed beside `--resume` that differ from the journal's
    /// (`--allow-busy true (the journal's run: false)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_settings: Vec<String>,
}

/// Result of calibrating one workload to one prompt length.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Calibration {
    /// Prompt text kind.
    pub workload: Workload,
    /// Wanted prompt tokens.
    pub prompt_tokens_target: u32,
    /// Corpus units chosen.
    pub n_units: usize,
    /// Prompt tokens the server counted for the chosen length (with a sample nonce).
    pub prompt_tokens_actual: u64,
    /// `tokenize_chat` or `probe_requests`.
    pub method: String,
    /// How many counts were asked of the server.
    pub n_probes: u32,
}

/// Warm-up or measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RepPhase {
    /// Discarded.
    Warmup,
    /// Counted.
    Measured,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// A complete stream was measured.
    Ok,
    /// The request failed for reasons outside the measurement (HTTP error, drop, timeout).
    Infra,
}

/// One request attempt.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Attempt {
    /// The cell.
    pub cell: CellKey,
    /// Warm-up or measured.
    pub phase: RepPhase,
    /// Repetition number within the phase (0-based).
    pub rep: u32,
    /// Stream number within the repetition (0..concurrency).
    pub stream: u32,
    /// Attempt number (0 is the first try).
    pub attempt: u32,
    /// Outcome.
    pub status: Status,
    /// The error of an infra attempt, with its cause chain.
    pub error: Option<String>,
    /// The nonce that opened the prompt (also the `cache_salt`).
    pub nonce: Option<String>,
    /// Prompt tokens the server reported.
    pub prompt_tokens_actual: Option<u64>,
    /// Prompt tokens the server served from its prefix cache.
    pub cached_prompt_tokens: Option<u64>,
    /// Completion tokens counted by the meter.
    pub completion_tokens: Option<u64>,
    /// Finish reason.
    pub finish_reason: Option<String>,
    /// `cached_prompt_tokens > 0`: the prefix cache was not defeated.
    pub cache_hit: bool,
    /// Completion tokens differ from the requested output length.
    pub length_mismatch: bool,
    /// Everything the meter measured.
    pub measurement: Option<Measurement>,
    /// Speculative-decoding counts the server reported for this request, where it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_decode: Option<RequestSpecDecode>,
    /// Per-event delay between arrival and our processing.
    pub client_lag: LagHistogram,
    /// Wall clock when the attempt ended.
    pub unix_ms: u64,
    /// Steady load: the request's place among those its stream slot sent (0-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<u32>,
    /// The request's instants on the wall clock (absent in older journals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// A rate-limited attempt: the wait before the next try.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<RateLimitWait>,
    /// The server's own timing of this request, where the response carries it (llama.cpp's
    /// final-chunk `timings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_timings: Option<ServerTimings>,
    /// With `--capture`: the file (below the output folder) that holds this response byte for
    /// byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
    /// The shard (`--shard I/N`) that sent the request, by number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
}

/// One body frame of a captured response: when it was read, and its bytes (as text when they
/// are valid UTF-8, else as hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CapturedFrame {
    /// Nanoseconds after the request's first byte was written.
    pub offset_ns: u64,
    /// The bytes as text, when they are valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The bytes as lowercase hex, otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
}

impl CapturedFrame {
    /// A frame read `offset_ns` after the send.
    pub fn new(offset_ns: u64, bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Self {
                offset_ns,
                text: Some(text.to_owned()),
                hex: None,
            },
            Err(_) => Self {
                offset_ns,
                text: None,
                hex: Some(bytes.iter().fold(String::new(), |mut hex, b| {
                    use std::fmt::Write as _;
                    let _ = write!(hex, "{b:02x}");
                    hex
                })),
            },
        }
    }

    /// The frame's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        if let Some(text) = &self.text {
            return text.as_bytes().to_vec();
        }
        let hex = self.hex.as_deref().unwrap_or_default().as_bytes();
        hex.chunks(2)
            .filter_map(|pair| {
                std::str::from_utf8(pair)
                    .ok()
                    .and_then(|pair| u8::from_str_radix(pair, 16).ok())
            })
            .collect()
    }
}

/// A measured response kept byte for byte (`sweep --capture N`), replayable by the client's
/// tests: the request, the status, the headers and every body frame with its arrival.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StreamCapture {
    /// The cell.
    pub cell: CellKey,
    /// Measured repetition.
    pub rep: u32,
    /// Stream within the repetition.
    pub stream: u32,
    /// Try number.
    pub attempt: u32,
    /// The request body as sent.
    pub request: serde_json::Value,
    /// The response status.
    pub status: u16,
    /// The response headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body frames, in order.
    pub frames: Vec<CapturedFrame>,
}

/// The server's own per-request timing (llama.cpp's `timings`), kept beside ours so every run
/// on such a server cross-checks the ruler.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerTimings {
    /// Prompt tokens the server evaluated (cached ones left out).
    pub prompt_n: Option<u64>,
    /// Milliseconds it spent on them.
    pub prompt_ms: Option<f64>,
    /// Tokens it generated.
    pub predicted_n: Option<u64>,
    /// Milliseconds it spent generating.
    pub predicted_ms: Option<f64>,
    /// Its generated tokens per second.
    pub predicted_per_second: Option<f64>,
    /// Its prompt tokens per second.
    pub prompt_per_second: Option<f64>,
}

impl ServerTimings {
    /// The figures of a `timings` object, when it has any.
    #[cfg(feature = "engine")]
    pub(crate) fn from_timings(timings: &vernier_openai::Timings) -> Option<Self> {
        let kept = Self {
            prompt_n: timings.prompt_n,
            prompt_ms: timings.prompt_ms,
            predicted_n: timings.predicted_n,
            predicted_ms: timings.predicted_ms,
            predicted_per_second: timings.predicted_per_second,
            prompt_per_second: timings.prompt_per_second,
        };
        (kept.predicted_per_second.is_some() || kept.prompt_per_second.is_some()).then_some(kept)
    }
}

/// Speculative-decoding counts one request's response reported: llama.cpp's per-request
/// `timings.draft_n` (draft tokens proposed) and `timings.draft_n_accepted`. vLLM reports
/// these only as `/metrics` counters, summed over every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestSpecDecode {
    /// Draft tokens proposed.
    pub draft_tokens: u64,
    /// Draft tokens the target model accepted.
    pub accepted_tokens: u64,
}

impl RequestSpecDecode {
    /// The counts in a `timings` object, when it has both (servers leave them out when
    /// speculative decoding is off).
    #[cfg(any(feature = "engine", test))]
    pub(crate) fn from_timings(timings: &vernier_openai::Timings) -> Option<Self> {
        let count = |name: &str| timings.extra.get(name).and_then(serde_json::Value::as_u64);
        Some(Self {
            draft_tokens: count("draft_n")?,
            accepted_tokens: count("draft_n_accepted")?,
        })
    }
}

/// A finished repetition.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RepDone {
    /// The cell.
    pub cell: CellKey,
    /// Measured repetition number.
    pub rep: u32,
    /// Streams that were measured.
    pub n_ok: u32,
    /// Streams that failed after every retry.
    pub n_failed: u32,
}

/// Counters around one stretch of a cell's measured repetitions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CellWindow {
    /// The cell.
    pub cell: CellKey,
    /// `/metrics` sums before the first measured repetition (empty without `/metrics`).
    pub metrics_before: BTreeMap<String, f64>,
    /// `/metrics` sums after the last.
    pub metrics_after: BTreeMap<String, f64>,
    /// Tokio scheduling delay over the window (yield → polled again).
    pub scheduler_delay: LagHistogram,
    /// Tokio timer overshoot over the window (deadline → woken); empty in older journals.
    #[serde(default)]
    pub timer_overshoot: LagHistogram,
    /// The server's queue during the cell, from `/metrics` (absent without known names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSamples>,
    /// The GPUs sampled over the window (empty when none was read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_samples: Vec<vernier_gpu::GpuSample>,
}

/// Where the journal of a run in the folder `out` lives.
pub fn journal_path(out: &Path) -> std::path::PathBuf {
    out.join("journal.jsonl")
}

/// Appends lines; each line is written with one `write` call and flushed to the kernel before
/// `append` returns, so it survives a crash of this process.
#[derive(Debug)]
#[cfg(feature = "engine")]
pub(crate) struct JournalWriter(vernier_journal::JournalWriter);

#[cfg(feature = "engine")]
impl JournalWriter {
    pub(crate) fn create(path: &Path) -> Result<Self, SweepError> {
        Ok(Self(vernier_journal::JournalWriter::create_new(path)?))
    }

    /// Opens for appending, first cutting a torn last line left by a crash.
    pub(crate) fn reopen(path: &Path) -> Result<Self, SweepError> {
        Ok(Self(vernier_journal::JournalWriter::open_append(path)?))
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }

    pub(crate) fn append(&self, line: &SweepJournalLine) -> Result<(), SweepError> {
        Ok(self.0.append(line)?)
    }

    /// Forces written lines to the disk (at repetition ends).
    pub(crate) fn sync(&self) -> Result<(), SweepError> {
        Ok(self.0.sync()?)
    }
}

/// A journal read back.
#[derive(Debug, Clone)]
pub struct LoadedSweepJournal {
    /// Every complete line, in order.
    pub lines: Vec<SweepJournalLine>,
    /// Bytes up to the end of the last complete line.
    pub valid_len: u64,
    /// True when a torn last line (a crash mid-write) was ignored.
    pub torn_tail: bool,
}

impl LoadedSweepJournal {
    /// The header (first line).
    pub fn header(&self) -> Option<&Header> {
        match self.lines.first() {
            Some(SweepJournalLine::Header(header)) => Some(header),
            _ => None,
        }
    }
}

/// Reads a journal. A last line without its newline is a torn write and is ignored; any other
/// bad line is an error.
pub fn read_sweep_journal(path: &Path) -> Result<LoadedSweepJournal, SweepError> {
    let journal = vernier_journal::read::<SweepJournalLine>(path)?;
    Ok(LoadedSweepJournal {
        valid_len: journal.valid_len,
        torn_tail: journal.torn_tail.is_some(),
        lines: journal.into_values(),
    })
}
