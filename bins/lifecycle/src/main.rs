//! `lifecycle` command line: parse, run, print, map errors to the shared exit codes.

use std::process::ExitCode;
use vernier_cli::Failure as _;

use vernier_cli::{exit, exit_code, note, report_error, write_stdout};

fn main() -> ExitCode {
    let cli = lifecycle::Cli::parse_from(std::env::args_os());
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
    match runtime.block_on(lifecycle::run(cli, command_line)) {
        Ok(done) => {
            if done.summary_to_stdout {
                if let Err(error) = write_stdout(&done.summary) {
                    note(&format!("error: failed to write the summary: {error}"));
                    return exit(exit_code::FAILURE);
                }
            } else {
                note(done.summary.trim_end());
            }
            for (what, path) in &done.files {
                note(&format!("{what}: {}", path.display()));
            }
            if let Some(reason) = &done.gave_up {
                let then = done
                    .resume_command
                    .as_ref()
                    .map_or_else(String::new, |command| {
                        format!("; once the server answers again, continue with: {command}")
                    });
                note(&format!("error: the soak could not go on: {reason}{then}"));
                return exit(exit_code::FAILURE);
            }
            if let Some(command) = &done.resume_command {
                note(&format!("interrupted; continue with: {command}"));
            }
            exit(if done.interrupted_ready {
                exit_code::INTERRUPTED
            } else if done.failed_reps > 0 {
                note(&format!(
                    "error: {} repetition(s) did not reach every milestone; see the report and the logs",
                    done.failed_reps
                ));
                exit_code::FAILURE
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
