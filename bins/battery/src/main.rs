//! `battery` command line: parse, run, print, map errors to the shared exit codes.

use std::process::ExitCode;
use vernier_cli::Failure as _;

use vernier_cli::{exit, exit_code, note, report_error, write_stdout};

fn main() -> ExitCode {
    let cli = <battery::Cli as clap::Parser>::parse();
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
    match runtime.block_on(battery::run(cli, command_line)) {
        Ok(done) => {
            if let Err(error) = write_stdout(&done.summary) {
                note(&format!("error: failed to write the summary: {error}"));
                return exit(exit_code::FAILURE);
            }
            for line in &done.notes {
                note(line);
            }
            exit(done.exit_code)
        }
        Err(error) => {
            report_error(&error);
            exit(error.exit_code())
        }
    }
}
