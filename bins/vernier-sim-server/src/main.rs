//! `vernier-sim-server`: serve the simulator until Ctrl-C.

use std::process::ExitCode;

use clap::Parser;
use vernier_cli::{exit, exit_code, note, report_error, write_stdout};

#[tokio::main]
async fn main() -> ExitCode {
    let args = vernier_sim_server::Args::parse();
    let mut printed = Ok(());
    // The handler is installed before the URL is printed, so a Ctrl-C sent as soon as the URL
    // appears is caught rather than killing the process.
    #[cfg(unix)]
    let mut interrupt =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
            Ok(signal) => signal,
            Err(error) => {
                note(&format!("error: failed to listen for Ctrl-C: {error}"));
                return exit(exit_code::FAILURE);
            }
        };
    let stop = async move {
        #[cfg(unix)]
        let _ = interrupt.recv().await;
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    };
    let served = vernier_sim_server::run(
        &args,
        |base_url| printed = write_stdout(&format!("{base_url}\n")),
        stop,
    )
    .await;
    match served {
        Ok(Some(crash)) => {
            // What a dying engine leaves in its log; the exit status is a crashed process's.
            for line in crash.log_lines() {
                note(&line);
            }
            exit(exit_code::FAILURE)
        }
        Ok(None) => match printed {
            Ok(()) => exit(exit_code::SUCCESS),
            Err(error) => {
                note(&format!("error: failed to print the base URL: {error}"));
                exit(exit_code::FAILURE)
            }
        },
        Err(error) => {
            report_error(&error);
            exit(if vernier_sim_server::is_usage_error(&error) {
                exit_code::USAGE
            } else {
                exit_code::FAILURE
            })
        }
    }
}
