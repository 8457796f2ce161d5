//! `hardsuite` command line: parse, run, print, map errors to exit codes.

use std::process::ExitCode;
use vernier_cli::Failure as _;

use clap::Parser as _;
use vernier_cli::{exit, exit_code, note};

fn main() -> ExitCode {
    // clap prints usage errors itself and exits with 2 (`exit_code::USAGE`).
    let args = hardsuite::Args::parse();
    let command_line: Vec<String> = std::env::args().collect();
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
    match runtime.block_on(hardsuite::run(args, command_line.clone())) {
        Ok(output) => {
            if let Err(error) = vernier_cli::write_stdout(output.text()) {
                note(&format!("error: failed to write the output: {error}"));
                return exit(exit_code::FAILURE);
            }
            if let hardsuite::CommandOutput::Run(outcome) = &output {
                note(&format!("journal: {}", outcome.files.journal.display()));
                note(&format!("results: {}", outcome.files.results.display()));
                note(&format!("report:  {}", outcome.files.report.display()));
                if let Some(command) = &outcome.resume_command {
                    note(&format!("interrupted; continue with: {command}"));
                    return exit(exit_code::INTERRUPTED);
                }
            }
            exit(exit_code::SUCCESS)
        }
        Err(error) => {
            note(&hardsuite::error_text(&error));
            exit(error.exit_code())
        }
    }
}
