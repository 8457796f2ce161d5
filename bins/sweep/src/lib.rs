//! `sweep`: the prefill/decode sweep of an OpenAI-compatible inference server.
//!
//! For every cell of workload (prose, code) × prompt length × output length × concurrency it
//! measures TTFT, time to first byte, prefill and decode tokens per second (token-accurate),
//! the event-count rate beside the true one, tokens per event, inter-token latency and
//! end-to-end time, over warm-up-then-measured repetitions, and reports medians with p10/p90
//! and a bootstrap interval on the median.
//!
//! The run journal (`OUT/journal.jsonl`, one JSON line per request attempt, flushed before the
//! next request starts) is the source of truth: the run file (`OUT/run.json`, schema in
//! `docs/run-file.md`), the Markdown report, the CSV and the SVG charts are derived from it,
//! and `--resume` continues a crashed run from it without measuring any request twice.
//!
//! ```no_run
//! use clap::Parser as _;
//!
//! # async fn demo() -> Result<(), sweep::SweepError> {
//! // Against the in-process simulator (no --base-url), two short prompts, three reps.
//! let args = sweep::Args::parse_from(["sweep", "--prompt-tokens", "100,400", "--output-tokens", "64",
//!     "--reps", "3", "--out", "/tmp/sweep-demo", "--quiet"]);
//! let outcome = sweep::run(args, vec!["sweep".to_owned()]).await?;
//! println!("{}", outcome.table);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod calibrate;
mod cli;
mod command;
mod config;
mod corpus;
mod environment;
mod error;
mod journal;
mod lag;
mod progress;
mod report;
mod runner;
mod server_metrics;
mod simulator;
mod summary;

pub use cli::Args;
pub use command::{RunOutcome, SIMULATOR_BANNER, demo_simulator_config, run};
pub use config::{CellKey, SweepConfig, Workload};
pub use environment::{ClientMachine, Environment, GpuInfo, ModelInfo, ServerInfo, ToolInfo};
pub use error::{SweepError, cause_chain};
pub use journal::{
    Attempt, Calibration, CellWindow, Header, JOURNAL_VERSION, JournalLine, LoadedJournal, Phase,
    RepDone, RequestSpecDecode, Resumed, Status, read_journal,
};
pub use lag::{LagHistogram, LagSummary};
pub use report::{
    Chart, ReportFiles, render_charts, render_csv, render_markdown, render_table, write_reports,
};
pub use summary::{
    CellSummary, ClientLag, Figures, MedianIntervals, PerRequestSpecDecode,
    RUN_FILE_SCHEMA_VERSION, RunFile, SpecDecode, Spread, summarise,
};
