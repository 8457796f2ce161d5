//! `vernier-hardsuite`: the engine of the 28-task quality suite, run against an
//! OpenAI-compatible server, and the reading side of what it writes.
//!
//! With the default feature `engine`, [`run_suite`] self-checks the suite (a failure stops the
//! run, naming the task and the reason), then streams every task through `vernier-openai`'s
//! metered stream (so tokens and time per task are measured, not guessed), grades the final
//! content — never the reasoning — and the tool calls with `vernier-tasks` (code in the
//! `vernier-grader` sandbox), and writes:
//!
//! - `OUT/journal.jsonl`: one line per try ([`HardsuiteJournalLine`]), flushed before the
//!   worker's next request; the source of truth. A [`RunTarget::Resume`] continues from it
//!   without redoing finished attempts.
//! - `OUT/results.json` ([`ResultsFile`], schema in `docs/hardsuite.md`).
//! - `OUT/report.md` ([`render_markdown`]) and the terminal table ([`render_table`]).
//!
//! [`RunConfig`]'s `suite.draw` draws the suite at a level and seed (recorded in the journal's
//! header and `results.json`); [`run_ladder`] runs one draw per level and writes
//! `ladder.json`, `ladder.md` and `ladder.svg` ([`Ladder`]); [`list_tasks`] prints a draw's
//! tasks without calling a model; [`compare_with`] refuses runs of different instances unless
//! told they are unpaired, and names every other difference between the runs.
//!
//! Every progress line and the simulator banner reach the caller through a [`RunObserver`];
//! this crate prints nothing. Infrastructure failures are retried a bounded number of times and
//! never scored; a server that refuses every connection stops the run with
//! `vernier_run::RunError::ServerStopped` (inside [`HardsuiteError::Run`]), which names the journal to resume.
//!
//! Without default features the crate is the reading side only: [`read_hardsuite_journal`],
//! [`ResultsFile`], [`compare`] of two results and the renderers, with no async runtime, HTTP
//! client or Docker client in its dependencies.
//!
//! ```
//! # fn main() -> Result<(), vernier_hardsuite::HardsuiteError> {
//! # let dir = std::env::temp_dir().join(format!("vernier-hardsuite-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).expect("temporary directory");
//! # let path = dir.join("journal.jsonl");
//! # std::fs::write(&path, concat!(
//! #     r#"{"type":"header","journal_version":1,"suite":"s","suite_path":null,"task_ids":["crt"],"#,
//! #     r#""model":"m","base_url":"http://127.0.0.1:1","simulated":false,"sampling":{"temperature":null,"#,
//! #     r#""top_p":null,"top_k":null,"presence_penalty":null},"extra_body":null,"budget_flags":{"math":null,"#,
//! #     r#""code":null,"tools":null},"samples":1,"rerun_budget":null,"self_checked":true,"grader_image":null,"#,
//! #     r#""command_line":[],"started_unix_ms":0}"#, "\n",
//! # )).expect("write");
//! let results = vernier_hardsuite::ResultsFile::load(&path)?;
//! assert_eq!(results.model, "m");
//! println!("{}", vernier_hardsuite::render_table(&results));
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod compare;
#[cfg(feature = "engine")]
mod config;
#[cfg(feature = "engine")]
mod context_fit;
mod context_report;
#[cfg(feature = "engine")]
mod context_run;
mod dataset_report;
mod dataset_run;
#[cfg(feature = "engine")]
mod demo;
#[cfg(feature = "engine")]
mod engine;
mod error;
#[cfg(feature = "engine")]
mod gpu_run;
mod instructions_report;
mod journal;
mod ladder;
#[cfg(feature = "engine")]
mod listing;
mod load_quality;
#[cfg(feature = "engine")]
mod observer;
#[cfg(feature = "engine")]
mod plan;
mod replies;
mod report;
mod results;
#[cfg(feature = "engine")]
mod resume;
#[cfg(feature = "engine")]
mod room;
#[cfg(feature = "engine")]
mod runner;
#[cfg(feature = "engine")]
mod selection;
#[cfg(feature = "engine")]
mod settings;
#[cfg(feature = "engine")]
mod show;
mod structure_report;
mod task_results;

pub use compare::{
    ClusteredDifference, CompareOptions, Comparison, PLANNED_DIFFERENCES, POWER, TaskComparison,
    compare, compare_files, compare_with, instance_differences, render_comparison,
    render_comparison_markdown, setting_differences,
};
#[cfg(feature = "engine")]
pub use config::{
    ContextSelection, DEFAULT_OUT, MAX_TIMEOUT_SECS, RunConfig, RunTarget, SamplingPreset,
    SuiteSelection,
};
pub use context_report::{
    ContextCell, ContextLength, ContextReport, render_context_markdown, render_context_svg,
};
pub use dataset_report::RuleCount;
pub use dataset_report::{DatasetReport, SubjectScore, render_dataset_markdown};
pub use dataset_run::{DatasetRecord, DatasetSelection, DrawnQuestion, dataset_differences};
#[cfg(feature = "engine")]
pub use demo::{
    DEMO_CONTEXT_LIMIT, DEMO_CONTEXT_MISS_DEPTH, DEMO_CONTEXT_MISS_FROM,
    HARDSUITE_SIMULATOR_BANNER, ScriptedKind, ScriptedTask, demo_script,
    hardsuite_demo_simulator_config, scripted_plan,
};
#[cfg(feature = "engine")]
pub use engine::{HardsuiteOutcome, RunFiles, check_suite_fits_server, run_suite, run_suite_until};
pub use error::HardsuiteError;
pub use instructions_report::{
    InstructionsBreakdown, StrictLoose, instructions_breakdown, render_instructions_markdown,
};
pub use journal::{
    AttemptPhase, AttemptRecord, BudgetFlags, ContextTry, DroppedLength, HARDSUITE_JOURNAL_VERSION,
    HardsuiteJournalLine, LoadedHardsuiteJournal, RecordedCapacity, RecordedLimit, RunHeader,
    Sampling, TryWait, VideoAs, read_hardsuite_journal,
};
pub use ladder::{
    Ladder, LadderRung, parse_levels, render_ladder, render_ladder_markdown, render_ladder_svg,
};
#[cfg(feature = "engine")]
pub use ladder::{LadderOutcome, run_ladder};
#[cfg(feature = "engine")]
pub use listing::{TaskListing, list_tasks, listing, render_listing};
pub use load_quality::{
    InFlightSeen, LoadFinding, LoadQuality, LoadRow, load_quality, render_load_quality_markdown,
};
#[cfg(feature = "engine")]
pub use observer::{RunObserver, SilentObserver};
#[cfg(feature = "engine")]
pub use plan::{SuitePlan, plan_suite};
pub use replies::{
    ReplyRecord, ReplyToolCallRecord, audit, read_replies, replies_of, replies_path,
};
pub use report::{render_markdown, render_table, thousands};
pub use results::{
    ASSUMED_DISCORDANCE, Audit, ClusteredRate, EvidenceCount, RESULTS_SCHEMA_VERSION, RanAlone,
    RateLimitWaits, ResultsFile, Score, Scoreboard, difference_half_width_points,
};
#[cfg(feature = "engine")]
pub use selection::{load_suite, render_self_check, self_check_suite};
#[cfg(feature = "engine")]
pub use show::{ShowRequest, render_show};
pub use structure_report::{
    FailureCounts, StructureBreakdown, render_structure_markdown, structure_breakdown,
};
pub use task_results::{CONFIDENCE, SampleResult, TaskResult};
pub use vernier_tasks::{DatasetKind, DatasetSampling, Draw, Instance, Redraw};

pub use results::validity as suite_validity;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
