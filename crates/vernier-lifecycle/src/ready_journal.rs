//! The ready journal: one JSON line per launch repetition or swap request, as each ends,
//! after a header with the settings; and what a resumed run reads back from it.

use std::path::Path;

use serde::{Deserialize, Serialize};
use vernier_run::ServerFingerprint;

use crate::error::LifecycleError;
use crate::process::StopReport;
use crate::ready_config::ReadyConfig;

/// Version of the ready journal's line format.
pub const READY_JOURNAL_VERSION: u32 = 1;
/// Seconds from the launch instant to each milestone of one start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Milestones {
    /// The port accepts a TCP connection.
    pub tcp_accepting_s: Option<f64>,
    /// The health path gave its first HTTP answer (any status).
    pub health_first_answer_s: Option<f64>,
    /// That first answer's status (llama.cpp answers 503 while loading the model).
    pub health_first_status: Option<u16>,
    /// The health path answered 200.
    pub health_ok_s: Option<f64>,
    /// `/health`, or `/v1/models` when the server has no `/health`.
    pub health_path: String,
    /// The model was listed in `/v1/models`.
    pub model_listed_s: Option<f64>,
    /// The model waited for (as listed).
    pub model: Option<String>,
    /// The first token of the first streamed completion arrived.
    pub first_token_s: Option<f64>,
}

impl Milestones {
    /// Every milestone with its name, in order.
    pub fn named(&self) -> [(&'static str, Option<f64>); 5] {
        [
            ("tcp_accepting_s", self.tcp_accepting_s),
            ("health_first_answer_s", self.health_first_answer_s),
            ("health_ok_s", self.health_ok_s),
            ("model_listed_s", self.model_listed_s),
            ("first_token_s", self.first_token_s),
        ]
    }

    /// Whether every milestone was reached.
    pub fn complete(&self) -> bool {
        self.named().iter().all(|(_, value)| value.is_some())
    }
}

/// One measured request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestFigures {
    /// Time to first token, milliseconds.
    pub ttft_ms: Option<f64>,
    /// Decode rate after the first token.
    pub decode_tokens_per_s: Option<f64>,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// One launch, measured and stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LaunchRep {
    /// 1-based repetition.
    pub rep: u32,
    /// Wall clock at launch.
    pub unix_ms: u64,
    /// The server's log (stdout and stderr).
    pub log: String,
    /// The process group.
    pub pgid: u32,
    /// The milestones reached.
    pub milestones: Milestones,
    /// The first request after ready.
    pub cold: Option<RequestFigures>,
    /// The next `warm_requests`.
    pub warm: Vec<RequestFigures>,
    /// Why the repetition stopped short, if it did.
    pub error: Option<String>,
    /// A signal stopped it.
    pub interrupted: bool,
    /// How the server was stopped.
    pub stop: StopReport,
    /// The server's identity, on the first repetition of the run that reached its first
    /// token (a resumed run is compared with it at the same point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerFingerprint>,
    /// What the server's own log said about its start: the engine's milestones and its KV
    /// cache in tokens.
    #[serde(default)]
    pub engine_start: crate::engine_log::EngineStart,
}

/// One request of a swap sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SwapRequest {
    /// 1-based repetition.
    pub rep: u32,
    /// Position in the repetition's order.
    pub index: u32,
    /// The model asked before (unknown for the first request of a run or a resume).
    pub from: Option<String>,
    /// The model asked now.
    pub to: String,
    /// Wall clock at the request.
    pub unix_ms: u64,
    /// From the request to its first token, seconds.
    pub time_to_first_token_s: Option<f64>,
    /// The request's figures.
    pub figures: RequestFigures,
    /// The server's identity, on the first request of the run that reached its first token
    /// (a resumed run is compared with it before its first request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerFingerprint>,
}

/// One line of the ready journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "the settings line is written once per journal; the others stay small"
)]
pub enum ReadyJournalLine {
    /// First line: what was run.
    Header {
        /// Format version.
        journal_version: u32,
        /// Wall clock.
        started_unix_ms: u64,
        /// The command line.
        command_line: Vec<String>,
        /// The settings.
        config: ReadyConfig,
    },
    /// A resumed run continues here.
    Resumed {
        /// Wall clock.
        unix_ms: u64,
        /// The command line of the resume.
        command_line: Vec<String>,
        /// The operational settings typed beside `--resume` that differ from the journal's
        /// run, used from here on: `--flag VALUE (the journal's run: X)`.
        #[serde(default)]
        changed_settings: Vec<String>,
    },
    /// One launch repetition.
    Launch(Box<LaunchRep>),
    /// One swap request.
    Swap(Box<SwapRequest>),
}

/// Reads a ready journal (a torn last line is ignored, as the writer cuts it off).
pub fn read_journal(path: &Path) -> Result<Vec<ReadyJournalLine>, LifecycleError> {
    Ok(vernier_journal::read::<ReadyJournalLine>(path)?.into_values())
}

/// The server's identity as the journal records it, if it does.
pub(crate) fn recorded_server(lines: &[ReadyJournalLine]) -> Option<ServerFingerprint> {
    lines.iter().find_map(|line| match line {
        ReadyJournalLine::Launch(rep) => rep.server.clone(),
        ReadyJournalLine::Swap(request) => request.server.clone(),
        _ => None,
    })
}

pub(crate) fn completed_launch_reps(lines: &[ReadyJournalLine]) -> u32 {
    lines
        .iter()
        .filter_map(|line| match line {
            ReadyJournalLine::Launch(rep) if !rep.interrupted => Some(rep.rep),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

pub(crate) fn completed_swap_reps(lines: &[ReadyJournalLine], models: usize) -> u32 {
    let mut rep = 0;
    loop {
        let next = rep + 1;
        let n = lines
            .iter()
            .filter(|line| matches!(line, ReadyJournalLine::Swap(s) if s.rep == next))
            .count();
        if n < models {
            return rep;
        }
        rep = next;
    }
}
