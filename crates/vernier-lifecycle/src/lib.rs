//! Server lifecycle measurements: how long a server takes to become useful (`ready`), what a
//! model switch costs on a proxy that loads models on demand, and a watchdog (`watch`) that
//! tells a busy engine from a hung one by reading its generation counter twice.
//!
//! - [`run_ready`] with a [`ReadyConfig`]: launches the server (`sh -c`, its own process group,
//!   stopped after each repetition and on every exit path), records [`Milestones`] from the
//!   launch instant, the first request against the next few, or per-switch costs with
//!   [`ReadyConfig::swap`]. A JSON Lines journal, `run.json` ([`ReadyRun`]) and `report.md`;
//!   [`ReadyStart::Resume`] continues a journal by `vernier-run`'s rules: flags typed beside
//!   `--resume` ([`ResumeFlags`]) that would change what is measured are refused by name, a
//!   new `--base-url` is used and recorded, and a server other than the journal's (its
//!   fingerprint is recorded at the run's first first token) is refused.
//! - [`run_watch`] with a [`WatchConfig`]: one-token probes; a failed probe is followed by two
//!   counter reads; [`CounterRule`] decides; every probe, decision and action is a
//!   [`WatchEvent`] in `watch.jsonl` and handed to the [`WatchObserver`].
//!
//! The crate never prints; the `lifecycle` binary does. [`LifecycleError`] wraps
//! [`vernier_run::RunError`] and gives each failure's exit kind
//! (its `vernier_cli::Failure` kind).

#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod distribution;
mod engine_log;
mod error;
mod hang_rule;
mod observer;
mod probe;
mod process;
mod ready;
mod ready_config;
mod ready_journal;
mod report;
mod resume;
mod soak;
mod soak_config;
mod soak_context;
mod soak_evidence;
mod soak_journal;
mod soak_load;
mod soak_report;
mod soak_resume;
mod soak_segment;
mod user_agent;
mod watch;
mod watch_config;
mod watch_journal;

pub use distribution::Distribution;
pub use engine_log::{EngineStart, LogFollower, LogMilestone};
pub use error::LifecycleError;
pub use hang_rule::{CounterEvidence, CounterRule, HangRule, Verdict};
pub use observer::{QuietObserver, ReadyObserver, WatchObserver};
pub use probe::ProbeOutcome;
pub use process::{LaunchedServer, StopReport, group_alive};
pub use ready::{ReadyOutcome, ReadyStart, check_port_free, host_port, port_answering, run_ready};
pub use ready_config::ReadyConfig;
pub use ready_journal::{
    LaunchRep, Milestones, READY_JOURNAL_VERSION, ReadyJournalLine, RequestFigures, SwapRequest,
    read_journal,
};
pub use report::{
    ColdWarm, READY_RUN_VERSION, ReadyRun, SwapDirection, ready_markdown, summarise,
    write_ready_reports,
};
pub use resume::ResumeFlags;
pub use soak::{SoakOutcome, SoakStart, run_soak};
pub use soak_config::{SoakArm, SoakConfig, SoakServer};
pub use soak_evidence::{FATAL_MARKERS, log_evidence};
pub use soak_journal::{
    DeathKind, DeathRecord, InFlight, LogEvidence, LogMarker, MetricsAtDeath, RequestLine,
    SOAK_JOURNAL_VERSION, SoakJournalLine,
};
pub use soak_report::{
    ArmComparison, ArmResult, DeathPattern, SOAK_RUN_VERSION, SoakRun, soak_markdown,
    summarise as summarise_soak, write_soak_reports,
};
pub use soak_resume::{SoakResumeFlags, read_soak_journal};
pub use vernier_run::Interrupt;
pub use watch::{WatchOutcome, run_watch, run_watch_with_rule};
pub use watch_config::WatchConfig;
pub use watch_journal::{WATCH_JOURNAL_VERSION, WatchEvent, WatchSummary};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
