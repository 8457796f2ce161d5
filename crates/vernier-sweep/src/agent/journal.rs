//! The journal of an agent run or a replay (`journal.jsonl`): a start line with the
//! configuration, the server, model and machine, then one line per turn or record, appended and
//! synced before the session's next request goes out, so an interrupted run loses nothing
//! measured and resumes from its last line.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::config::{AgentConfig, ReplayConfig};
use super::conversation::{CallMade, Opening, Sizing};
use super::exchange::CachedSource;
use crate::environment::Environment;
use crate::error::SweepError;

/// The agent journal's format version.
pub const AGENT_JOURNAL_VERSION: u32 = 1;

/// Which pass of an agent run a turn belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Pass {
    /// The sessions with the prefix cache allowed (the run itself).
    Cached,
    /// The same sessions with the cache defeated (`--baseline-no-cache`).
    Baseline,
    /// One step of the capacity search (cache allowed).
    Capacity,
}

impl Pass {
    /// The name used in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Cached => "cache allowed",
            Self::Baseline => "cache defeated",
            Self::Capacity => "capacity step",
        }
    }
}

/// How a turn (or a replayed request) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TurnStatus {
    /// Answered within its budget.
    Ok,
    /// Answered, and stopped by the token budget: "cut off", not a failure of the model.
    CutOff,
    /// The server failed it every try: an infrastructure failure.
    Infra,
    /// The server cannot take a prompt this long: the session ends there.
    TooLong,
}

impl TurnStatus {
    /// Whether the turn was answered (its timings count).
    pub const fn answered(self) -> bool {
        matches!(self, Self::Ok | Self::CutOff)
    }
}

/// One turn of one session, as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TurnRecord {
    /// The pass.
    pub pass: Pass,
    /// Sessions running at once in this pass.
    pub sessions: u32,
    /// The session (from 0).
    pub session: u32,
    /// The turn (from 1).
    pub turn: u32,
    /// What opened the turn.
    pub opening: Opening,
    /// How it ended.
    pub status: TurnStatus,
    /// The last failure's message, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tries made.
    pub tries: u32,
    /// Prompt tokens, as the server counted them.
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens the server said it took from its prefix cache.
    pub cached_tokens: Option<u64>,
    /// Where `cached_tokens` came from.
    pub cached_source: CachedSource,
    /// What a perfect cache would hold of this prompt: the tokens the server computed for
    /// this session before (the last turn's prompt and answer), or for a first turn the
    /// shared system prompt and tools when another session sent them before.
    pub ideal_cached_tokens: Option<u64>,
    /// Completion tokens.
    pub completion_tokens: Option<u64>,
    /// Of them, reasoning tokens (not sent back in the conversation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Which source the completion count came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_source: Option<String>,
    /// The server's finish reason.
    pub finish_reason: Option<String>,
    /// Request sent → first token-bearing event, ms.
    pub ttft_ms: Option<f64>,
    /// Request sent → first content or tool call (after reasoning), ms.
    pub ttfc_ms: Option<f64>,
    /// Uncached prompt tokens / TTFT: the prefill rate of what the cache did not hold.
    pub prefill_uncached_tokens_per_s: Option<f64>,
    /// Decode rate, in the server's tokens.
    pub decode_tokens_per_s: Option<f64>,
    /// Median inter-token latency, ms.
    pub itl_median_ms: Option<f64>,
    /// Request sent → end of stream, ms.
    pub end_to_end_ms: Option<f64>,
    /// Tools offered with the turn.
    pub tools_offered: u32,
    /// Tool calls the model made.
    pub calls: Vec<CallMade>,
    /// The answer's text (kept whole: the next turn sends it back, and a resumed run rebuilds
    /// the conversation from it).
    pub content: String,
    /// The pause before this turn, ms.
    pub think_ms: f64,
    /// When the request's first byte went out, ns since the Unix epoch.
    pub sent_unix_ns: Option<u64>,
    /// When its stream ended, ns since the Unix epoch.
    pub end_unix_ns: Option<u64>,
    /// The kept response, relative to the output folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
}

/// One replayed trace record, as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReplayRecord {
    /// The record's place in the trace (from 0).
    pub index: usize,
    /// The trace's session, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// When it was due, ms after the replay's start (the recorded offset over the time scale).
    pub scheduled_ms: f64,
    /// How long after that its first byte went out, ms.
    pub late_ms: Option<f64>,
    /// Input tokens the trace recorded.
    pub trace_input_tokens: u32,
    /// Output tokens the trace recorded (asked as the budget).
    pub trace_output_tokens: u32,
    /// Of the input, tokens in blocks whose hashes an earlier record already sent (in the
    /// trace's tokens): what a perfect cache would hold.
    pub ideal_cached_tokens: u64,
    /// How it ended.
    pub status: TurnStatus,
    /// The last failure's message, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tries made.
    pub tries: u32,
    /// Prompt tokens, as the server counted them.
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens the server took from its cache.
    pub cached_tokens: Option<u64>,
    /// Where `cached_tokens` came from.
    pub cached_source: CachedSource,
    /// Completion tokens.
    pub completion_tokens: Option<u64>,
    /// Request sent → first token-bearing event, ms.
    pub ttft_ms: Option<f64>,
    /// Decode rate, in the server's tokens.
    pub decode_tokens_per_s: Option<f64>,
    /// Median inter-token latency, ms.
    pub itl_median_ms: Option<f64>,
    /// When its first byte went out, ns since the Unix epoch.
    pub sent_unix_ns: Option<u64>,
    /// The kept response, relative to the output folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
}

/// What the run is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Job {
    /// Agent sessions.
    Agent {
        /// The configuration.
        config: Box<AgentConfig>,
        /// Corpus units per text, from the server's counts.
        sizing: Sizing,
        /// The server's count of the shared system prompt and tools alone.
        shared_prefix_tokens: u64,
        /// `"none"` when the server parses no tool calls (vLLM without a tool-call parser
        /// refuses the default `"auto"`): every turn then offers the tools with
        /// `tool_choice: "none"`, so the prompt and prefix are the same and no call is parsed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_choice: Option<String>,
    },
    /// A trace replay.
    Replay {
        /// The configuration.
        config: Box<ReplayConfig>,
        /// Words of synthesised text per server token.
        words_per_token: f64,
    },
}

/// The journal's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StartLine {
    /// [`AGENT_JOURNAL_VERSION`].
    pub version: u32,
    /// What runs.
    pub job: Job,
    /// The run's nonce: it opens every prompt, so no other run shares this one's cache.
    pub nonce: String,
    /// The server, model and machine.
    pub environment: Box<Environment>,
    /// When the run began, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// The command line.
    pub command_line: Vec<String>,
}

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentLine {
    /// The first line.
    Start(Box<StartLine>),
    /// One turn.
    Turn(Box<TurnRecord>),
    /// One replayed record.
    Replayed(Box<ReplayRecord>),
    /// A pass began (its wall clock start, for turns per minute).
    PassStart {
        /// The pass.
        pass: Pass,
        /// Sessions at once.
        sessions: u32,
        /// ns since the Unix epoch.
        at_unix_ns: u64,
    },
    /// The run was continued.
    Resumed {
        /// ms since the Unix epoch.
        at_unix_ms: u64,
        /// The command line of the continuing session.
        command_line: Vec<String>,
    },
    /// The run's work ended (interrupted or not).
    End {
        /// ms since the Unix epoch.
        at_unix_ms: u64,
        /// Whether it was interrupted.
        interrupted: bool,
        /// What changed about the server during the run (empty: nothing).
        #[serde(default)]
        server_changes: Vec<String>,
    },
}

/// Every line of the journal at `path`.
pub(crate) fn read_lines(path: &Path) -> Result<Vec<AgentLine>, SweepError> {
    Ok(vernier_journal::read::<AgentLine>(path)?.into_values())
}

/// The start line of `lines`, refusing another version or a journal without one.
pub(crate) fn start_of<'a>(
    lines: &'a [AgentLine],
    path: &Path,
) -> Result<&'a StartLine, SweepError> {
    match lines.first() {
        Some(AgentLine::Start(start)) if start.version == AGENT_JOURNAL_VERSION => Ok(start),
        Some(AgentLine::Start(start)) => Err(SweepError::invalid(
            "--resume",
            format!(
                "{} is an agent journal of version {}, this sweep reads version {AGENT_JOURNAL_VERSION}; run it again instead",
                path.display(),
                start.version
            ),
        )),
        _ => Err(SweepError::invalid(
            "--resume",
            format!(
                "{} does not start with an agent run's start line: give the journal.jsonl of a `sweep agent` or `sweep replay` run",
                path.display()
            ),
        )),
    }
}

/// Whether the run was interrupted and what changed about the server, from its last `end`
/// line (no `end` line: the run stopped without one, as interrupted).
pub(crate) fn end_of(lines: &[AgentLine]) -> (bool, Vec<String>) {
    lines
        .iter()
        .rev()
        .find_map(|line| match line {
            AgentLine::End {
                interrupted,
                server_changes,
                ..
            } => Some((*interrupted, server_changes.clone())),
            _ => None,
        })
        .unwrap_or((true, Vec::new()))
}

/// The server a journal's run measured: its base URL, or `None` when it was the in-process
/// simulator (a resume without `--base-url` goes back to it).
pub fn recorded_server(journal: &Path) -> Result<Option<String>, SweepError> {
    let lines = read_lines(journal)?;
    let start = start_of(&lines, journal)?;
    let server = &start.environment.server;
    Ok((!server.simulator).then(|| server.base_url.clone()))
}

/// The turns journaled so far, each by its last line (a turn the server failed and a resume
/// sent again is counted once, as it went the second time).
pub(crate) fn turns_of(lines: &[AgentLine]) -> Vec<TurnRecord> {
    let mut by_place: std::collections::BTreeMap<(Pass, u32, u32, u32), TurnRecord> =
        std::collections::BTreeMap::new();
    for line in lines {
        if let AgentLine::Turn(turn) = line {
            by_place.insert(
                (turn.pass, turn.sessions, turn.session, turn.turn),
                (**turn).clone(),
            );
        }
    }
    by_place.into_values().collect()
}
