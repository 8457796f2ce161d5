//! `vernier-sim-server`: serve the simulator until Ctrl-C.

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
#[expect(
    clippy::print_stderr,
    reason = "a command reports its failure on stderr"
)]
async fn main() -> ExitCode {
    let args = vernier_sim_server::Args::parse();
    match vernier_sim_server::run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // The error's message already names its cause.
            eprintln!("error: failed to {error}");
            ExitCode::from(2)
        }
    }
}
