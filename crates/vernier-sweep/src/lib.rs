//! The prefill/decode sweep of an OpenAI-compatible inference server, as a library.
//!
//! For every cell of workload (prose, code) × prompt length × output length × concurrency, the
//! engine ([`run_sweep`], feature `engine`, on by default) measures TTFT, time to first byte,
//! prefill and decode tokens per second counted in the server's own tokens, the event-count
//! rate beside the true one, tokens per event, inter-token latency and end-to-end time, over
//! warm-up-then-measured repetitions, and reports medians with p10/p90 and a bootstrap
//! interval on the median.
//!
//! The run journal (`OUT/journal.jsonl`, one JSON line per request attempt, flushed before the
//! next request starts) is the source of truth: the run file ([`RunFile`], `OUT/run.json`,
//! schema in `docs/run-file.md`), the Markdown report, the CSV and the SVG charts are derived
//! from it by [`summarise`] and [`write_reports`], and [`SweepStart::Resume`] continues a
//! crashed run from it without measuring any request twice.
//!
//! **The reading side.** With `default-features = false` the crate holds the journal and
//! run-file types, [`read_sweep_journal`], [`summarise`] and the report writers, and depends
//! on no async runtime, HTTP stack or simulator.
//!
//! ```no_run
//! # #[cfg(feature = "engine")]
//! # async fn demo() -> Result<(), vernier_sweep::SweepError> {
//! use std::sync::Arc;
//! use vernier_sweep::{QuietObserver, RunContext, SweepConfig, SweepStart, run_sweep, sweep_client};
//!
//! let mut config = SweepConfig::default();
//! config.prompt_tokens = vec![100, 400];
//! config.output_tokens = vec![64];
//! let client = sweep_client("http://127.0.0.1:8000", None, None)?;
//! let start = SweepStart::New { config: Box::new(config), out: "sweep-out".into() };
//! let outcome = run_sweep(client, start, RunContext::default(), Arc::new(QuietObserver), None).await?;
//! for cell in &outcome.run.cells {
//!     println!("{} c{}: {:?} tok/s", cell.workload, cell.concurrency, cell.median.decode_tokens_per_s);
//! }
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "engine")]
pub mod agent;
#[cfg(feature = "engine")]
mod calibrate;
#[cfg(feature = "engine")]
mod capacity_search;
mod capacity_target;
#[cfg(feature = "engine")]
mod cells;
mod config;
#[cfg(feature = "engine")]
mod context;
#[cfg(feature = "engine")]
mod corpus;
mod counted;
#[cfg(feature = "engine")]
mod dry_run;
#[cfg(feature = "engine")]
mod engine;
mod environment;
mod error;
mod headlines;
mod interval;
mod journal;
mod k8s;
mod lag;
mod merge;
mod observer;
mod offered_load;
#[cfg(feature = "engine")]
mod open_loop;
#[cfg(feature = "engine")]
mod parts;
mod plan;
mod pooled;
#[cfg(feature = "engine")]
mod probe;
#[cfg(feature = "engine")]
mod queue_sampler;
mod report;
#[cfg(feature = "engine")]
mod request;
#[cfg(feature = "engine")]
mod resume;
mod run_file;
#[cfg(feature = "engine")]
mod runtimes;
mod shard;
#[cfg(feature = "engine")]
mod shard_clock;
#[cfg(feature = "engine")]
mod shard_grid;
mod shard_report;
#[cfg(feature = "engine")]
mod show;
#[cfg(feature = "engine")]
mod stream;
mod summary;
mod trace;
#[cfg(feature = "engine")]
mod watchdog;

pub use capacity_target::{Target, TargetMetric, TargetPart};
pub use config::{Arrival, CellKey, LoadMode, SweepConfig, Workload};
#[cfg(feature = "engine")]
pub use context::{DEFAULT_SHARD_GAP, DEFAULT_START_TOLERANCE};
#[cfg(feature = "engine")]
pub use dry_run::probe_rates;
#[cfg(feature = "engine")]
pub use engine::{
    DEFAULT_GPU_SAMPLE_INTERVAL, ResumeFlags, RunContext, SIMULATOR_BANNER, SweepOutcome,
    SweepStart, agent_simulator_config, demo_simulator_config, run_sweep, sweep_client,
};
pub use environment::{ClientMachine, Environment, GpuInfo, ServedModel, ServerInfo, ToolInfo};
pub use error::{StopReason, SweepError};
pub use headlines::sweep_headlines;
pub use journal::{
    Attempt, Calibration, CapturedFrame, CellSkipped, CellWindow, FieldDropped, Header,
    IdentityChecked, LoadedSweepJournal, QueueSamples, RateLimitWait, RepDone, RepPhase,
    RequestSpecDecode, Resumed, SWEEP_JOURNAL_VERSION, SearchDone, ServerTimings, Status,
    StreamCapture, SweepJournalLine, Timeline, TimelineClock, journal_path, read_sweep_journal,
};
pub use k8s::{ShardJob, render_shard_job};
pub use lag::{LagHistogram, LagSummary};
pub use merge::{MergeOutcome, merge_shards};
pub use observer::{QuietObserver, SweepObserver};
pub use offered_load::{
    Aggregate, Capacity, CapacityStep, Lateness, PartCheck, ServerClock, TargetCheck, Throughput,
    ThroughputIntervals,
};
pub use plan::{Plan, ProbeRates, estimate_s, plan, render_plan};
pub use pooled::{LoadPoint, capacity_point, pooled_load_points};
pub use report::{
    Chart, ReportFiles, csv_report, markdown_report, svg_charts, terminal_table, validity,
    write_reports,
};
#[cfg(feature = "engine")]
pub use resume::read_resumable;
pub use run_file::{
    CellGpu, CellSummary, ClientLag, Figures, MedianIntervals, PerRequestSpecDecode,
    RUN_FILE_SCHEMA_VERSION, RateLimited, RunFile, SpecDecode, Spread,
};
pub use shard::{ClockOffset, MAX_SHARDS, MergedFrom, Shard, ShardSource, ShardStart};
pub use shard_report::{ShardFigures, ShardsReport};
#[cfg(feature = "engine")]
pub use show::render_show;
pub use summary::summarise;
pub use trace::{
    BUNDLED_TRACE_NAMES, DEFAULT_BLOCK_TOKENS, MAX_RECORD_TOKENS, Synthesis, Trace, TraceError,
    TraceFormat, TraceRecord, bundled_trace, parse_trace, read_trace, synthesize,
};
#[cfg(feature = "engine")]
pub use vernier_run::{InProcessSimulator, Interrupt};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
