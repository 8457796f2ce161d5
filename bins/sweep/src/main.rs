//! `sweep` command line: parse, run, print, map errors to the shared exit codes.

use std::process::ExitCode;

use vernier_cli::{exit, exit_code, note, report_error, write_stdout};

fn main() -> ExitCode {
    let cli = sweep::Cli::parse_from(std::env::args_os());
    if let Some(sweep::SweepCommand::Show {
        out,
        cell,
        rep,
        stream,
    }) = &cli.args.command
    {
        return match vernier_sweep::render_show(&vernier_run::run_folder(out), cell, *rep, *stream)
        {
            Ok(text) => match write_stdout(&text) {
                Ok(()) => exit(exit_code::SUCCESS),
                Err(error) => {
                    note(&format!("error: failed to write: {error}"));
                    exit(exit_code::FAILURE)
                }
            },
            Err(error) => {
                report_error(&error);
                exit(error.exit_code())
            }
        };
    }
    if cli.args.dry_run {
        let planned = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|error| error.to_string())
            .map(|runtime| runtime.block_on(sweep::dry_run(&cli)));
        return match planned {
            Ok(Ok(text)) => match write_stdout(&text) {
                Ok(()) => exit(exit_code::SUCCESS),
                Err(error) => {
                    note(&format!("error: failed to write the plan: {error}"));
                    exit(exit_code::FAILURE)
                }
            },
            Ok(Err(error)) => {
                report_error(&error);
                exit(error.exit_code())
            }
            Err(error) => {
                note(&format!(
                    "error: failed to start the async runtime: {error}"
                ));
                exit(exit_code::FAILURE)
            }
        };
    }
    let command_line: Vec<String> = std::env::args().collect();
    let json = cli.args.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            note(&format!(
                "error: failed to start the async runtime: {error}"
            ));
            return exit(exit_code::FAILURE);
        }
    };
    match runtime.block_on(sweep::run(cli, command_line)) {
        Ok(outcome) => {
            let text = if json {
                match serde_json::to_string_pretty(&outcome.run) {
                    Ok(text) => text + "\n",
                    Err(error) => {
                        note(&format!(
                            "error: failed to write the run file as JSON: {error}"
                        ));
                        return exit(exit_code::FAILURE);
                    }
                }
            } else {
                vernier_sweep::terminal_table(&outcome.run)
            };
            if let Err(error) = write_stdout(&text) {
                note(&format!("error: failed to write the table: {error}"));
                return exit(exit_code::FAILURE);
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
