//! `sweep` command line: parse, run, print, map errors to the shared exit codes.

use std::process::ExitCode;
use vernier_cli::Failure as _;

use vernier_cli::{exit, exit_code, note, report_error, write_stdout};
use vernier_sweep::SweepError;

/// Prints `text` on stdout (exit 0), or says what could not be written (exit 1).
fn print(text: &str, what: &str) -> ExitCode {
    match write_stdout(text) {
        Ok(()) => exit(exit_code::SUCCESS),
        Err(error) => {
            note(&format!("error: failed to write {what}: {error}"));
            exit(exit_code::FAILURE)
        }
    }
}

/// Prints a command's text, or its error with the documented exit code.
fn print_or_fail(result: Result<String, SweepError>, what: &str) -> ExitCode {
    match result {
        Ok(text) => print(&text, what),
        Err(error) => {
            report_error(&error);
            exit(error.exit_code())
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            note(&format!(
                "error: failed to start the async runtime: {error}"
            ));
            exit(exit_code::FAILURE)
        })
}

fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut <sweep::Args as clap::CommandFactory>::command(),
        "sweep",
        &mut script,
    );
    print(&String::from_utf8_lossy(&script), "the completions")
}

/// The run's table, or its run file with `--json`, on stdout; a failure to write it is said
/// and is the exit code.
fn print_run(run: &vernier_sweep::RunFile, json: bool) -> Result<(), ExitCode> {
    let text = if json {
        match serde_json::to_string_pretty(run) {
            Ok(text) => text + "\n",
            Err(error) => {
                note(&format!(
                    "error: failed to write the run file as JSON: {error}"
                ));
                return Err(exit(exit_code::FAILURE));
            }
        }
    } else {
        vernier_sweep::terminal_table(run)
    };
    write_stdout(&text).map_err(|error| {
        note(&format!("error: failed to write the table: {error}"));
        exit(exit_code::FAILURE)
    })
}

/// `sweep merge`: the merged run's table (or run file), where its files are, and its verdict.
fn merge(out: &std::path::Path, shards: &[std::path::PathBuf], json: bool) -> ExitCode {
    let command_line: Vec<String> = std::env::args().collect();
    let outcome = match vernier_sweep::merge_shards(out, shards, command_line) {
        Ok(outcome) => outcome,
        Err(error) => {
            report_error(&error);
            return exit(error.exit_code());
        }
    };
    if let Err(code) = print_run(&outcome.run, json) {
        return code;
    }
    note(&format!("run file: {}", outcome.files.run_file.display()));
    note(&format!("report:   {}", outcome.files.markdown.display()));
    note(&format!("journal:  {}", outcome.journal.display()));
    exit(exit_code::SUCCESS)
}

/// Prints a run file as JSON, or the report's text; says where the files are.
fn print_agent_like(
    run_json: impl FnOnce() -> serde_json::Result<String>,
    json: bool,
    markdown: &std::path::Path,
    files: &[(&str, &std::path::Path)],
) -> Result<(), ExitCode> {
    let text = if json {
        run_json().map(|text| text + "\n").map_err(|error| {
            note(&format!(
                "error: failed to write the run file as JSON: {error}"
            ));
            exit(exit_code::FAILURE)
        })?
    } else {
        std::fs::read_to_string(markdown).map_err(|error| {
            note(&format!(
                "error: failed to read {}: {error}",
                markdown.display()
            ));
            exit(exit_code::FAILURE)
        })?
    };
    write_stdout(&text).map_err(|error| {
        note(&format!("error: failed to write the report: {error}"));
        exit(exit_code::FAILURE)
    })?;
    for (what, path) in files {
        note(&format!("{what:<9} {}", path.display()));
    }
    Ok(())
}

/// The exit code of a finished run, with the resume command when it was interrupted.
fn ended(interrupted: bool, journal: &std::path::Path, command: &str) -> ExitCode {
    if interrupted {
        note(&format!(
            "interrupted: continue with `sweep {command} --resume {}`",
            journal.display()
        ));
        exit(exit_code::INTERRUPTED)
    } else {
        exit(exit_code::SUCCESS)
    }
}

/// Runs `sweep agent` or `sweep replay` (`command`) to its end: the report (or run file with
/// `--json`) on stdout, the files on stderr, the exit code.
fn agent_like<O>(
    command: &str,
    json: bool,
    run: impl std::future::Future<Output = Result<O, SweepError>>,
    shown: impl FnOnce(
        &O,
    ) -> (
        serde_json::Result<String>,
        Vec<(&'static str, std::path::PathBuf)>,
        bool,
    ),
) -> ExitCode {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    match runtime.block_on(run) {
        Ok(outcome) => {
            let (run_json, files, interrupted) = shown(&outcome);
            let markdown = files
                .iter()
                .find(|(what, _)| *what == "report:")
                .map(|(_, path)| path.clone())
                .unwrap_or_default();
            let journal = files
                .iter()
                .find(|(what, _)| *what == "journal:")
                .map(|(_, path)| path.clone())
                .unwrap_or_default();
            let listed: Vec<(&str, &std::path::Path)> = files
                .iter()
                .map(|(what, path)| (*what, path.as_path()))
                .collect();
            if let Err(code) = print_agent_like(|| run_json, json, &markdown, &listed) {
                return code;
            }
            ended(interrupted, &journal, command)
        }
        Err(error) => {
            report_error(&error);
            exit(error.exit_code())
        }
    }
}

/// `sweep agent`.
fn agent(args: sweep::AgentArgs) -> ExitCode {
    let json = args.common.json;
    let command_line: Vec<String> = std::env::args().collect();
    agent_like(
        "agent",
        json,
        sweep::run_agent(args, command_line),
        |outcome| {
            (
                serde_json::to_string_pretty(&outcome.run),
                vec![
                    ("run file:", outcome.files.run_file.clone()),
                    ("report:", outcome.files.markdown.clone()),
                    ("chart:", outcome.files.chart.clone()),
                    ("journal:", outcome.journal.clone()),
                ],
                outcome.interrupted,
            )
        },
    )
}

/// `sweep replay`.
fn replay(args: sweep::ReplayArgs) -> ExitCode {
    let json = args.common.json;
    let command_line: Vec<String> = std::env::args().collect();
    agent_like(
        "replay",
        json,
        sweep::run_replay(args, command_line),
        |outcome| {
            (
                serde_json::to_string_pretty(&outcome.run),
                vec![
                    ("run file:", outcome.run_file.clone()),
                    ("report:", outcome.markdown.clone()),
                    ("journal:", outcome.journal.clone()),
                ],
                outcome.interrupted,
            )
        },
    )
}

fn main() -> ExitCode {
    let cli = sweep::Cli::parse_from(std::env::args_os());
    match &cli.args.command {
        Some(sweep::SweepCommand::Completions { shell }) => return completions(*shell),
        Some(sweep::SweepCommand::Merge { out, shards, json }) => {
            return merge(out, shards, *json);
        }
        Some(sweep::SweepCommand::ShardJob { .. }) => {
            let job = sweep::shard_job(&cli.args);
            return print_or_fail(job, "the Job");
        }
        Some(sweep::SweepCommand::Agent(args)) => return agent((**args).clone()),
        Some(sweep::SweepCommand::Replay(args)) => return replay((**args).clone()),
        Some(sweep::SweepCommand::Show {
            out,
            cell,
            rep,
            stream,
        }) => {
            let shown =
                vernier_sweep::render_show(&vernier_run::run_folder(out), cell, *rep, *stream);
            return print_or_fail(shown, "the request");
        }
        _ => {}
    }
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    if cli.args.dry_run {
        return print_or_fail(runtime.block_on(sweep::dry_run(&cli)), "the plan");
    }
    let command_line: Vec<String> = std::env::args().collect();
    let json = cli.args.json;
    match runtime.block_on(sweep::run(cli, command_line)) {
        Ok(outcome) => {
            if let Err(code) = print_run(&outcome.run, json) {
                return code;
            }
            note(&format!("run file: {}", outcome.files.run_file.display()));
            note(&format!("report:   {}", outcome.files.markdown.display()));
            note(&format!("csv:      {}", outcome.files.csv.display()));
            for chart in &outcome.files.charts {
                note(&format!("chart:    {}", chart.display()));
            }
            note(&format!("journal:  {}", outcome.journal.display()));
            exit(if outcome.interrupted {
                exit_code::INTERRUPTED
            } else {
                exit_code::SUCCESS
            })
        }
        Err(error) => {
            report_error(&error);
            exit(error.exit_code())
        }
    }
}
