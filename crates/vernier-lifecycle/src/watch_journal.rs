//! The watch journal: every probe, decision, action and change of state, one JSON line each
//! (also handed to the observer), and the tallies of a watch.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::hang_rule::{CounterEvidence, Verdict};
use crate::probe::ProbeOutcome;
use crate::watch_config::WatchConfig;

/// Version of the watch journal's line format.
pub const WATCH_JOURNAL_VERSION: u32 = 1;

/// One line of the watch journal (also handed to the observer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "the settings line is written once per journal; the others stay small"
)]
pub enum WatchEvent {
    /// The watchdog started.
    Start {
        /// Journal format version.
        journal_version: u32,
        /// Wall clock, milliseconds since the epoch.
        unix_ms: u64,
        /// The settings.
        config: WatchConfig,
        /// The rule deciding.
        rule: String,
        /// The generation counter found in `/metrics`, if any.
        counter: Option<String>,
        /// Why there is no counter, when there is none.
        counter_note: Option<String>,
    },
    /// One probe.
    Probe {
        /// 1-based probe number.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
        /// What it found.
        outcome: ProbeOutcome,
    },
    /// What the rule made of it (after the counter reads, if any).
    Decision {
        /// The probe judged.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
        /// The counter's evidence.
        counter: CounterEvidence,
        /// The verdict.
        verdict: Verdict,
        /// What the watchdog does about it, in words.
        action: String,
    },
    /// The server stopped answering connections.
    ServerDown {
        /// The probe that first found it down.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
    },
    /// The server answers probes again after being down or hung.
    ServerBack {
        /// The first successful probe.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
        /// Seconds since it was found down or hung.
        after_s: f64,
    },
    /// A command was run.
    Action {
        /// `on_hung` or `on_down`.
        trigger: String,
        /// The shell command.
        command: String,
        /// Wall clock at its start.
        unix_ms: u64,
        /// Its exit status, or why it did not run.
        status: String,
        /// Seconds it ran.
        duration_s: f64,
    },
    /// After an action: the first successful probe, or the wait gave up.
    Ready {
        /// Whether a probe succeeded within `ready_timeout_s`.
        ready: bool,
        /// Seconds from the action's end.
        after_s: f64,
        /// Probes tried.
        probes: u64,
    },
    /// The watchdog stopped.
    Stop {
        /// Wall clock.
        unix_ms: u64,
        /// `"interrupted"` or `"max probes"`.
        reason: String,
        /// The tallies.
        summary: WatchSummary,
    },
}

/// Tallies of a watch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WatchSummary {
    /// Probes sent.
    pub probes: u64,
    /// Probes that failed.
    pub failed_probes: u64,
    /// Verdicts, by name.
    pub verdicts: BTreeMap<String, u64>,
    /// `--on-hung` runs.
    pub on_hung_runs: u64,
    /// `--on-down` runs.
    pub on_down_runs: u64,
    /// Times the server was found down.
    pub downs: u64,
    /// Times it came back.
    pub backs: u64,
}
