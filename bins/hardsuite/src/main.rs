//! `hardsuite` command line: parse, run, print, map errors to exit codes.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;

/// Exit codes scripts can rely on.
#[derive(Debug, Clone, Copy)]
enum Exit {
    /// The command finished.
    Success = 0,
    /// Anything else went wrong.
    Failure = 1,
    /// The self-check failed: no model saw the suite.
    SelfCheckFailed = 2,
    /// The server stopped answering; the run can be resumed.
    ServerStopped = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit as u8)
    }
}

fn main() -> ExitCode {
    let args = hardsuite::Args::parse();
    let command_line: Vec<String> = std::env::args().collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: failed to start the async runtime: {error}"
            );
            return Exit::Failure.into();
        }
    };
    match runtime.block_on(hardsuite::run(args, command_line)) {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            if let Err(error) = stdout
                .write_all(output.text().as_bytes())
                .and_then(|()| stdout.flush())
                && error.kind() != std::io::ErrorKind::BrokenPipe
            {
                let _ = writeln!(
                    std::io::stderr(),
                    "error: failed to write the output: {error}"
                );
                return Exit::Failure.into();
            }
            if let hardsuite::CommandOutput::Run(outcome) = &output {
                let mut stderr = std::io::stderr().lock();
                let _ = writeln!(stderr, "journal: {}", outcome.files.journal.display());
                let _ = writeln!(stderr, "results: {}", outcome.files.results.display());
                let _ = writeln!(stderr, "report:  {}", outcome.files.report.display());
            }
            Exit::Success.into()
        }
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: failed to {}",
                hardsuite::cause_chain(&error)
            );
            match error {
                hardsuite::HardsuiteError::SelfCheck(_) => Exit::SelfCheckFailed.into(),
                hardsuite::HardsuiteError::ServerStopped { .. } => Exit::ServerStopped.into(),
                _ => Exit::Failure.into(),
            }
        }
    }
}
