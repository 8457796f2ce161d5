//! From a parsed command line to what `sweep` prints and exits with: each subcommand run, its
//! table or report for stdout, where its files are for stderr, and its kind of end.

use std::path::{Path, PathBuf};

use vernier_cli::{ExitKind, Finished};
use vernier_sweep::SweepError;

use crate::cli::{Cli, SweepCommand};

/// Runs the command `cli` names (`command_line` is how it was typed, for the journal and the
/// resume command) and says what it ends with.
pub fn execute(cli: Cli, command_line: Vec<String>) -> Result<Finished, SweepError> {
    match &cli.args.command {
        Some(SweepCommand::Completions { shell }) => Ok(Finished::printing(completions(*shell))),
        Some(SweepCommand::Merge { out, shards, json }) => merge(out, shards, *json, command_line),
        Some(SweepCommand::ShardJob { .. }) => {
            crate::command::shard_job(&cli.args).map(Finished::printing)
        }
        Some(SweepCommand::Agent(args)) => {
            let args = (**args).clone();
            let json = args.common.json;
            let outcome =
                vernier_run::block_on(crate::run_agent(args, &cli.typed, command_line.clone()))??;
            let resume = outcome
                .interrupted
                .then(|| resume_command(&command_line, &outcome.journal));
            agent_like(
                &serde_json::to_string_pretty(&outcome.run),
                json,
                &[
                    ("run file:", &outcome.files.run_file),
                    ("report:", &outcome.files.markdown),
                    ("chart:", &outcome.files.chart),
                    ("journal:", &outcome.journal),
                ],
                resume.as_deref(),
            )
            .map(|finished| finished.ran_in(&outcome.journal))
        }
        Some(SweepCommand::Replay(args)) => {
            let args = (**args).clone();
            let json = args.common.json;
            let outcome =
                vernier_run::block_on(crate::run_replay(args, &cli.typed, command_line.clone()))??;
            let resume = outcome
                .interrupted
                .then(|| resume_command(&command_line, &outcome.journal));
            agent_like(
                &serde_json::to_string_pretty(&outcome.run),
                json,
                &[
                    ("run file:", &outcome.run_file),
                    ("report:", &outcome.markdown),
                    ("journal:", &outcome.journal),
                ],
                resume.as_deref(),
            )
            .map(|finished| finished.ran_in(&outcome.journal))
        }
        Some(SweepCommand::Show {
            out,
            cell,
            rep,
            stream,
        }) => vernier_sweep::render_show(&vernier_run::run_folder(out), cell, *rep, *stream)
            .map(Finished::printing),
        None => sweep(cli, command_line),
    }
}

/// A sweep (or its `--dry-run` plan).
fn sweep(cli: Cli, command_line: Vec<String>) -> Result<Finished, SweepError> {
    if cli.args.dry_run {
        return vernier_run::block_on(crate::dry_run(&cli))?.map(Finished::printing);
    }
    let json = cli.args.json;
    let outcome = vernier_run::block_on(crate::run(cli, command_line))??;
    let mut finished = Finished::printing(run_text(&outcome.run, json)?)
        .note(format!("run file: {}", outcome.files.run_file.display()))
        .note(format!("report:   {}", outcome.files.markdown.display()))
        .note(format!("csv:      {}", outcome.files.csv.display()));
    for chart in &outcome.files.charts {
        finished = finished.note(format!("chart:    {}", chart.display()));
    }
    finished = finished
        .note(format!("journal:  {}", outcome.journal.display()))
        .ran_in(&outcome.journal);
    Ok(if outcome.interrupted {
        finished.of_kind(ExitKind::Interrupted)
    } else {
        finished
    })
}

/// `sweep merge`: the merged run's table (or run file), where its files are.
fn merge(
    out: &Path,
    shards: &[PathBuf],
    json: bool,
    command_line: Vec<String>,
) -> Result<Finished, SweepError> {
    let outcome = vernier_sweep::merge_shards(out, shards, command_line)?;
    Ok(Finished::printing(run_text(&outcome.run, json)?)
        .note(format!("run file: {}", outcome.files.run_file.display()))
        .note(format!("report:   {}", outcome.files.markdown.display()))
        .note(format!("journal:  {}", outcome.journal.display()))
        .ran_in(&outcome.journal))
}

/// The run's table, or its run file as JSON with `--json`.
fn run_text(run: &vernier_sweep::RunFile, json: bool) -> Result<String, SweepError> {
    if json {
        serde_json::to_string_pretty(run)
            .map(|text| text + "\n")
            .map_err(|error| SweepError::invalid("--json", format!("the run file: {error}")))
    } else {
        Ok(vernier_sweep::terminal_table(run))
    }
}

/// `sweep agent` or `sweep replay`: the report (or the run file with `--json`), the files, and
/// the resume command when the run stopped before its end.
fn agent_like(
    run_json: &serde_json::Result<String>,
    json: bool,
    files: &[(&str, &Path)],
    resume_command: Option<&str>,
) -> Result<Finished, SweepError> {
    let markdown = files
        .iter()
        .find(|(what, _)| *what == "report:")
        .map(|(_, path)| *path);
    let text = if json {
        match run_json {
            Ok(text) => format!("{text}\n"),
            Err(error) => {
                return Err(SweepError::invalid(
                    "--json",
                    format!("the run file: {error}"),
                ));
            }
        }
    } else {
        let markdown = markdown.unwrap_or_else(|| Path::new("report.md"));
        std::fs::read_to_string(markdown).map_err(|source| SweepError::ReadReport {
            path: markdown.to_path_buf(),
            source,
        })?
    };
    let mut finished = Finished::printing(text);
    for (what, path) in files {
        finished = finished.note(format!("{what:<9} {}", path.display()));
    }
    Ok(match resume_command {
        Some(command) => finished
            .note(format!("interrupted; continue with: {command}"))
            .of_kind(ExitKind::Interrupted),
        None => finished,
    })
}

/// The command that continues the run of `journal`: the command line as typed (its server,
/// key variable and settings included), with `--resume JOURNAL` in place of any earlier one.
fn resume_command(command_line: &[String], journal: &Path) -> String {
    vernier_cli::resume_command(
        vernier_cli::program_name(command_line, "sweep"),
        command_line,
        "--resume",
        &journal.display().to_string(),
    )
}

/// The shell completion script.
fn completions(shell: clap_complete::Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut <crate::Args as clap::CommandFactory>::command(),
        "sweep",
        &mut script,
    );
    String::from_utf8_lossy(&script).into_owned()
}
