//! `hardsuite`: the command line of the hard suite. The engine is the `vernier-hardsuite`
//! crate; this crate parses the flags into its configuration (the `cli` module), prints progress through
//! a [`RunObserver`] ([`TerminalObserver`]: a line per attempt, a heartbeat line where stderr is no
//! terminal, a count for a dataset run), prints a dataset run's end as a table per category
//! ([`dataset_summary`]), and maps errors to exit codes and messages.
//!
//! ```no_run
//! use clap::Parser as _;
//!
//! # async fn demo() -> Result<(), vernier_hardsuite::HardsuiteError> {
//! // Math and tool tasks against the simulator: no Docker engine needed.
//! let args = hardsuite::Args::parse_from([
//!     "hardsuite", "run", "--tasks", "domino-tiling,tool-search,tool-none", "--out", "/tmp/hs",
//! ]);
//! let output = hardsuite::run(args, vec!["hardsuite".to_owned()]).await?;
//! vernier_cli::write_stdout(output.text()).ok();
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod cli;
mod observer;
pub mod part;
mod summary;
pub mod under_load;

pub use cli::{
    Args, Command, CompareArgs, Preset, RunArgs, SelfCheckArgs, ShowArgs, SuiteArgs, TasksArgs,
    UnderLoadArgs,
};
pub use observer::{TerminalObserver, progress_line};
pub use summary::dataset_summary;
use vernier_hardsuite::{
    Comparison, HardsuiteError, HardsuiteOutcome, LadderOutcome, RunObserver, RunTarget,
    compare_files, list_tasks, parse_levels, render_comparison, render_listing, render_self_check,
    run_ladder, run_suite_until, self_check_suite,
};

/// What a command gives back for printing.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CommandOutput {
    /// `run`.
    Run(Box<HardsuiteOutcome>),
    /// `run --levels`.
    Ladder(Box<LadderOutcome>),
    /// `compare`: the comparison and its text.
    Compare(Box<Comparison>, String),
    /// `self-check`: the printed report.
    SelfCheck(String),
    /// `tasks`: the listing as text or JSON.
    Tasks(String),
    /// `show`: one task's evidence, or every failure's.
    Show(String),
    /// `under-load`: both passes and their comparison.
    UnderLoad(Box<under_load::UnderLoadOutcome>),
}

impl CommandOutput {
    /// The text for standard output.
    pub fn text(&self) -> &str {
        match self {
            Self::Run(outcome) => &outcome.table,
            Self::Ladder(outcome) => &outcome.table,
            Self::UnderLoad(outcome) => &outcome.text,
            Self::Compare(_, text)
            | Self::SelfCheck(text)
            | Self::Tasks(text)
            | Self::Show(text) => text,
        }
    }
}

/// Runs the command the arguments name to its end on a runtime of its own: the text for
/// stdout, where a run's files are, and the resume command when it was interrupted.
pub fn execute(
    args: Args,
    command_line: Vec<String>,
) -> Result<vernier_cli::Finished, HardsuiteError> {
    let output = vernier_run::block_on(run(args, command_line))??;
    let mut finished = vernier_cli::Finished::printing(output.text());
    if let CommandOutput::Run(outcome) = &output {
        finished = finished
            .note(format!("journal: {}", outcome.files.journal.display()))
            .note(format!("results: {}", outcome.files.results.display()))
            .note(format!("report:  {}", outcome.files.report.display()))
            .ran_in(&outcome.files.results);
        if let Some(command) = &outcome.resume_command {
            finished = finished
                .note(format!("interrupted; continue with: {command}"))
                .of_kind(vernier_cli::ExitKind::Interrupted);
        }
    }
    if let CommandOutput::UnderLoad(outcome) = &output {
        finished = finished.note(format!("alone:  {}", outcome.alone.files.results.display()));
        if let Some(loaded) = &outcome.loaded {
            finished = finished.note(format!("loaded: {}", loaded.files.results.display()));
        }
        if outcome.quality.is_some() {
            finished = finished.note(format!("report: {}", outcome.markdown.display()));
        }
        if let Some(command) = &outcome.resume_command {
            finished = finished
                .note(format!("interrupted; continue with: {command}"))
                .of_kind(vernier_cli::ExitKind::Interrupted);
        }
    }
    Ok(finished)
}

/// Runs the command the arguments name (`run` when none), printing progress on stderr unless
/// `--quiet`.
pub async fn run(args: Args, command_line: Vec<String>) -> Result<CommandOutput, HardsuiteError> {
    match args.command {
        // A run's future is large (the engine's state): on the heap, so this one stays small.
        None => Box::pin(run_command(&args.run, command_line)).await,
        Some(Command::Run(run_args)) => Box::pin(run_command(&run_args, command_line)).await,
        Some(Command::UnderLoad(under_load_args)) => {
            // Two runs' futures one after the other: on the heap, so `run`'s own stays small.
            Box::pin(under_load::run_under_load(&under_load_args, command_line)).await
        }
        Some(Command::Compare(compare_args)) => {
            let comparison =
                compare_files(&compare_args.a, &compare_args.b, &compare_args.options())?;
            let text = render_comparison(&comparison);
            Ok(CommandOutput::Compare(Box::new(comparison), text))
        }
        Some(Command::Show(show_args)) => {
            let request = match &show_args.task {
                Some(task) if !show_args.all_failures => {
                    vernier_hardsuite::ShowRequest::task(task.clone(), show_args.sample)
                }
                _ => vernier_hardsuite::ShowRequest::all_failures(),
            };
            let text =
                vernier_hardsuite::render_show(&vernier_run::run_folder(&show_args.out), &request)?;
            Ok(CommandOutput::Show(text))
        }
        Some(Command::Tasks(tasks_args)) => {
            let tasks = list_tasks(&tasks_args.suite.selection()?)?;
            let text = if tasks_args.json {
                let mut text = serde_json::to_string_pretty(&tasks).map_err(|error| {
                    HardsuiteError::invalid(
                        "--json",
                        format!("the listing did not encode: {error}"),
                    )
                })?;
                text.push('\n');
                text
            } else {
                render_listing(&tasks)
            };
            Ok(CommandOutput::Tasks(text))
        }
        Some(Command::Completions { shell }) => {
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Args as clap::CommandFactory>::command(),
                "hardsuite",
                &mut script,
            );
            Ok(CommandOutput::Show(
                String::from_utf8_lossy(&script).into_owned(),
            ))
        }
        Some(Command::SelfCheck(check_args)) => {
            let (suite, report) = self_check_suite(&check_args.suite.selection()?).await?;
            Ok(CommandOutput::SelfCheck(render_self_check(&suite, &report)))
        }
    }
}

/// `hardsuite run` with its progress on stderr; a dataset run ends with a table per category
/// unless `--per-task`.
async fn run_command(
    args: &RunArgs,
    command_line: Vec<String>,
) -> Result<CommandOutput, HardsuiteError> {
    let observer =
        TerminalObserver::for_run(args.quiet, args.suite.dataset.is_some(), args.per_task);
    let output = run_observed(args, command_line, &observer).await;
    observer.finish();
    let mut output = output?;
    if let CommandOutput::Run(outcome) = &mut output
        && !args.per_task
        && let Some(dataset) = &outcome.results.dataset
    {
        outcome.table = dataset_summary(outcome, dataset);
    }
    Ok(output)
}

async fn run_observed(
    args: &RunArgs,
    command_line: Vec<String>,
    observer: &dyn RunObserver,
) -> Result<CommandOutput, HardsuiteError> {
    let (config, target) = args.to_config()?;
    if let Some(levels) = &args.levels {
        let levels = parse_levels(levels)?;
        let RunTarget::New { out_dir } = &target else {
            return Err(HardsuiteError::invalid(
                "--levels",
                "a ladder cannot be resumed",
            ));
        };
        let outcome = run_ladder(&config, out_dir, &levels, command_line, observer).await?;
        return Ok(CommandOutput::Ladder(Box::new(outcome)));
    }
    let outcome = run_suite_until(
        &config,
        &target,
        command_line,
        observer,
        vernier_run::signals(),
    )
    .await?;
    Ok(CommandOutput::Run(Box::new(outcome)))
}

/// The error as printed: `error: failed to <cause chain>` (for a stopped run, the chain ends
/// with the command that continues it).
pub fn error_text(error: &HardsuiteError) -> String {
    format!("error: failed to {}", vernier_cli::cause_chain(error))
}
