//! `hardsuite`: the 28-task quality suite, run against an OpenAI-compatible server.
//!
//! `hardsuite run --base-url URL` self-checks the suite (a failure stops the run, naming the
//! task and the reason), then streams every task through `vernier-openai` and `vernier-meter`
//! (so tokens and time per task are measured, not guessed), grades the final content — never
//! the reasoning — and the tool calls with `vernier-tasks` (code in the `vernier-grader`
//! sandbox), and writes:
//!
//! - `OUT/journal.jsonl`: one line per try, flushed before the worker's next request; the
//!   source of truth. `--resume` continues from it without redoing finished attempts.
//! - `OUT/results.json` ([`ResultsFile`], schema in `docs/hardsuite.md`).
//! - `OUT/report.md` and the terminal table: pass counts with Wilson 95% intervals per
//!   category (with `--samples K` > 1, the mean of per-task pass fractions with a
//!   task-clustered interval, [`ClusteredRate`]), cut-offs apart from wrong answers, median tokens per solved task, the tasks that
//!   ended inside their reasoning or hit the budget, time per task.
//!
//! Infrastructure failures (HTTP errors, dropped streams, grader trouble) are retried a bounded
//! number of times and never scored. A server that refuses every connection stops the run with
//! everything on disk and the command that resumes it.
//!
//! `hardsuite compare A B` pairs two runs task by task: Newcombe's paired interval on the
//! difference and exact `McNemar` (with one sample per task), or a task-clustered interval on
//! the per-task differences (with more, [`ClusteredDifference`]), a paired bootstrap over tasks
//! as a cross-check, median tokens, and the smallest difference the suite can detect.
//!
//! Without `--base-url` the in-process simulator answers with a script built from the suite's
//! own gold answers and reference code ([`demo_script`], [`scripted_plan`]), so the score is
//! known before the run starts.
//!
//! ```no_run
//! use clap::Parser as _;
//!
//! # async fn demo() -> Result<(), hardsuite::HardsuiteError> {
//! // Math and tool tasks against the simulator: no Docker engine needed.
//! let args = hardsuite::Args::parse_from([
//!     "hardsuite", "run", "--tasks", "domino-tiling,tool-search,tool-none", "--out", "/tmp/hs",
//! ]);
//! let output = hardsuite::run(args, vec!["hardsuite".to_owned()]).await?;
//! println!("{}", output.text());
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod cli;
mod command;
mod compare;
mod demo;
mod error;
mod journal;
mod report;
mod results;
mod runner;

pub use cli::{Args, Command, CompareArgs, Preset, RunArgs, SelfCheckArgs, SuiteArgs};
pub use command::{CommandOutput, RunFiles, RunOutcome, render_self_check, run};
pub use compare::{
    ClusteredDifference, Comparison, POWER, TaskComparison, compare, render_comparison,
    render_comparison_markdown,
};
pub use demo::{
    SIMULATOR_BANNER, ScriptedKind, ScriptedTask, demo_script, demo_simulator_config, scripted_plan,
};
pub use error::{HardsuiteError, cause_chain};
pub use journal::{
    AttemptRecord, BudgetFlags, JOURNAL_VERSION, JournalLine, LoadedJournal, Phase, RunHeader,
    Sampling, read_journal,
};
pub use report::{render_markdown, render_table, thousands};
pub use results::{
    ASSUMED_DISCORDANCE, CONFIDENCE, CONFIDENCE_Z, ClusteredRate, RESULTS_SCHEMA_VERSION,
    ResultsFile, SampleResult, Score, Scoreboard, TaskResult, difference_half_width_points,
};
