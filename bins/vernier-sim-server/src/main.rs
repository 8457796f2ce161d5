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
            let mut message = format!("error: failed to {error}");
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            eprintln!("{message}");
            ExitCode::from(2)
        }
    }
}
