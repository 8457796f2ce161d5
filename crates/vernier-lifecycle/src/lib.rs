//! Server lifecycle measurements: how long a server takes to become useful (`ready`), what a
//! model switch costs on a proxy that loads models on demand, and a watchdog (`watch`) that
//! tells a busy engine from a hung one by reading its generation counter twice.
//!
//! - [`run_ready`] with a [`ReadyConfig`]: launches the server (`sh -c`, its own process group,
//!   stopped after each repetition and on every exit path), records [`Milestones`] from the
//!   launch instant, the first request against the next few, or per-switch costs with
//!   [`ReadyConfig::swap`]. A JSON Lines journal, `run.json` ([`ReadyRun`]) and `report.md`;
//!   [`ReadyStart::Resume`] continues a journal.
//! - [`run_watch`] with a [`WatchConfig`]: one-token probes; a failed probe is followed by two
//!   counter reads; [`CounterRule`] decides; every probe, decision and action is a
//!   [`WatchEvent`] in `watch.jsonl` and handed to the [`WatchObserver`].
//!
//! The crate never prints; the `lifecycle` binary does.

#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod common;
mod error;
mod observer;
mod process;
mod ready;
mod report;
mod watch;

pub use common::{Distribution, Interrupt, ProbeOutcome};
pub use error::LifecycleError;
pub use observer::{QuietObserver, ReadyObserver, WatchObserver};
pub use process::{LaunchedServer, StopReport, group_alive};
pub use ready::{
    LaunchRep, Milestones, READY_JOURNAL_VERSION, ReadyConfig, ReadyJournalLine, ReadyOutcome,
    ReadyStart, RequestFigures, SwapRequest, read_journal, run_ready,
};
pub use report::{
    ColdWarm, READY_RUN_VERSION, ReadyRun, SwapDirection, ready_markdown, summarise,
    write_ready_reports,
};
pub use watch::{
    CounterEvidence, CounterRule, HangRule, Verdict, WATCH_JOURNAL_VERSION, WatchConfig,
    WatchEvent, WatchOutcome, WatchSummary, run_watch, run_watch_with_rule,
};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
