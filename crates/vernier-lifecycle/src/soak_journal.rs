//! The soak journal: one JSON line per event that matters (a slice, a launch, a finished
//! request, a death), written before the next request goes out; and the death record.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::process::StopReport;
use crate::soak_config::SoakConfig;

/// Version of the soak journal's line format.
pub const SOAK_JOURNAL_VERSION: u32 = 1;

/// One line of the soak journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "the settings line is written once per journal; the others stay small"
)]
pub enum SoakJournalLine {
    /// The first line: the settings.
    Header {
        /// Journal format version.
        journal_version: u32,
        /// Wall clock, milliseconds since the epoch.
        started_unix_ms: u64,
        /// The command line, word by word.
        command_line: Vec<String>,
        /// The settings.
        config: SoakConfig,
    },
    /// The run was continued.
    Resumed {
        /// Wall clock.
        unix_ms: u64,
        /// The command line that continued it.
        command_line: Vec<String>,
        /// Operational settings that changed.
        changed_settings: Vec<String>,
    },
    /// A slice of an arm started.
    SliceStart {
        /// The arm's name.
        arm: String,
        /// 0-based round.
        round: usize,
        /// Wall clock.
        unix_ms: u64,
        /// Seconds of load this slice is to hold.
        planned_s: f64,
    },
    /// A server was launched.
    Launched {
        /// The arm.
        arm: String,
        /// Wall clock.
        unix_ms: u64,
        /// Its process group.
        pgid: u32,
        /// Its log.
        log: String,
        /// `start` or `relaunch`.
        reason: String,
    },
    /// The server answered a request (or did not, within `--ready-timeout`).
    Ready {
        /// The arm.
        arm: String,
        /// Wall clock.
        unix_ms: u64,
        /// Whether it answered.
        ready: bool,
        /// Seconds from the launch (or the death) until it answered or the wait gave up.
        after_s: f64,
        /// Why not, when not.
        error: Option<String>,
        /// The model it answered as.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// A request ended.
    Request(RequestLine),
    /// Load held so far in the current slice (every few seconds, so a resume loses little).
    Progress {
        /// The arm.
        arm: String,
        /// 0-based round.
        round: usize,
        /// Seconds of load held in this slice.
        loaded_s: f64,
    },
    /// A request failed while the server stayed up (it answered `/health`): not a death.
    RequestError {
        /// The arm.
        arm: String,
        /// Wall clock.
        unix_ms: u64,
        /// The request.
        request: u64,
        /// How it failed.
        error: String,
    },
    /// Every request stalled, but the generation counter moved: busy, not hung.
    Busy {
        /// The arm.
        arm: String,
        /// Wall clock.
        unix_ms: u64,
        /// Seconds since the last token on any request.
        stalled_s: f64,
        /// The counter's two reads.
        before: f64,
        /// Second read.
        after: f64,
    },
    /// The server died.
    Death(Box<DeathRecord>),
    /// A launched server was stopped.
    Stopped {
        /// The arm.
        arm: String,
        /// How.
        stop: StopReport,
    },
    /// A slice ended.
    SliceEnd {
        /// The arm.
        arm: String,
        /// 0-based round.
        round: usize,
        /// Seconds of load held in this slice.
        loaded_s: f64,
        /// `duration`, `interrupted`, or why the soak could not go on.
        reason: String,
    },
}

/// One finished (or failed) request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestLine {
    /// The arm.
    pub arm: String,
    /// The request's number in this run.
    pub request: u64,
    /// When it was sent, milliseconds since the epoch.
    pub started_unix_ms: u64,
    /// Seconds it took.
    pub duration_s: f64,
    /// Tokens generated.
    pub tokens: u64,
    /// `server usage` (the server's count) or `events` (token-bearing events counted).
    pub token_source: String,
    /// The finish reason, when it finished.
    pub finish_reason: Option<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

/// How a death showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeathKind {
    /// Connections were refused.
    Refused,
    /// Streams were cut mid-way (reset or closed early).
    Reset,
    /// The launched process exited.
    Exit {
        /// The exit status as the system says it.
        status: String,
        /// The signal that ended it (directly, or 128 + N from the shell), if any.
        signal: Option<i32>,
    },
    /// `/health` stopped answering, or answered a server error (vLLM's 503 once its engine
    /// core died).
    Down,
    /// The server stayed up but failed every request, several in a row with none finishing
    /// (as vLLM answers 500 once its engine core has died).
    Errors {
        /// Failed requests in a row.
        in_a_row: u32,
        /// The last one's error.
        error: String,
    },
    /// No token on any request in flight, and the generation counter stood still.
    Hung {
        /// Seconds with no token.
        stalled_s: f64,
        /// What the counter said.
        counter: String,
    },
}

impl DeathKind {
    /// A short name for tables.
    pub fn short(&self) -> String {
        match self {
            Self::Refused => "connections refused".to_owned(),
            Self::Reset => "streams cut".to_owned(),
            Self::Exit {
                signal: Some(signal),
                ..
            } => format!("killed by signal {signal}"),
            Self::Exit { status, .. } => format!("exited ({status})"),
            Self::Down => "/health down".to_owned(),
            Self::Errors { in_a_row, .. } => format!("{in_a_row} requests in a row failed"),
            Self::Hung { stalled_s, .. } => format!("hung ({stalled_s:.0} s without a token)"),
        }
    }
}

/// A request in flight at a death.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InFlight {
    /// The request's number.
    pub request: u64,
    /// When it was sent, milliseconds since the epoch.
    pub started_unix_ms: u64,
    /// Seconds since it was sent.
    pub age_s: f64,
    /// Tokens generated so far.
    pub tokens: u64,
    /// `server usage` or `events`.
    pub token_source: String,
    /// Seconds since its last token (since it was sent, when none came).
    pub since_last_token_s: f64,
    /// How it ended, when it had already failed.
    pub error: Option<String>,
    /// The settings it was sent with: `max_tokens`, `ignore_eos` and the extra body.
    pub settings: Map<String, Value>,
}

/// The last `/metrics` scrape before a death.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetricsAtDeath {
    /// Seconds between the scrape and the death.
    pub age_s: f64,
    /// Requests running.
    pub running: Option<f64>,
    /// Requests waiting.
    pub waiting: Option<f64>,
    /// KV-cache use (0 to 1), from the first known name present.
    pub kv_cache_usage: Option<f64>,
    /// The generation counter.
    pub generated_tokens: Option<f64>,
    /// The whole scrape, as a file beside the journal.
    pub file: Option<String>,
}

/// A line of a launched server's log that looks like a known fatal marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogMarker {
    /// 1-based line number in the log.
    pub line: usize,
    /// The marker found (`Xid`, `illegal memory access`, ...).
    pub marker: String,
    /// The line.
    pub text: String,
}

/// A launched server's log at its death.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogEvidence {
    /// The log file.
    pub path: String,
    /// Its last lines.
    pub tail: Vec<String>,
    /// Lines anywhere in it that look like known fatal markers.
    pub markers: Vec<LogMarker>,
}

/// A death: when, how, and what the server was doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeathRecord {
    /// The arm.
    pub arm: String,
    /// 1-based death number of the arm.
    pub number: usize,
    /// The instant of the first sign, milliseconds since the epoch.
    pub unix_ms: u64,
    /// Seconds of load the arm had held at the death (over every slice).
    pub loaded_s: f64,
    /// Seconds of load since the server was last (re)launched or came back: its time to death.
    pub since_ready_s: f64,
    /// How it showed.
    pub how: DeathKind,
    /// What was seen, in order (the first failed request, the process, `/health`).
    pub signs: Vec<String>,
    /// Every request in flight at the first sign.
    pub in_flight: Vec<InFlight>,
    /// The concurrency the arm holds.
    pub concurrency: u32,
    /// The last `/metrics` scrape.
    pub metrics: Option<MetricsAtDeath>,
    /// The launched server's log.
    pub log: Option<LogEvidence>,
}
