//! `sweep` command line: parse, run, print, map errors to exit codes.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;

/// Exit codes scripts can rely on.
#[derive(Debug, Clone, Copy)]
enum Exit {
    /// The sweep finished.
    Success = 0,
    /// Anything else went wrong.
    Failure = 1,
    /// A flag's value was refused (by clap, or by the sweep's own checks).
    BadArguments = 2,
    /// The server was busy before the start (see --allow-busy).
    ServerBusy = 3,
    /// The server stopped answering; the run can be resumed.
    ServerStopped = 4,
    /// Ctrl-C; what was measured was written.
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit as u8)
    }
}

fn is_broken_pipe(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::BrokenPipe
}

fn main() -> ExitCode {
    let args = sweep::Args::parse();
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
    match runtime.block_on(sweep::run(args, command_line)) {
        Ok(outcome) => {
            let mut stdout = std::io::stdout().lock();
            if let Err(error) = stdout
                .write_all(outcome.table.as_bytes())
                .and_then(|()| stdout.flush())
                && !is_broken_pipe(&error)
            {
                let _ = writeln!(
                    std::io::stderr(),
                    "error: failed to write the table: {error}"
                );
                return Exit::Failure.into();
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "run file: {}", outcome.files.run_file.display());
            let _ = writeln!(stderr, "report:   {}", outcome.files.markdown.display());
            let _ = writeln!(stderr, "csv:      {}", outcome.files.csv.display());
            for chart in &outcome.files.charts {
                let _ = writeln!(stderr, "chart:    {}", chart.display());
            }
            let _ = writeln!(stderr, "journal:  {}", outcome.journal.display());
            if outcome.interrupted {
                Exit::Interrupted.into()
            } else {
                Exit::Success.into()
            }
        }
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: failed to {}",
                sweep::cause_chain(&error)
            );
            match error {
                sweep::SweepError::ServerBusy { .. } => Exit::ServerBusy.into(),
                sweep::SweepError::ServerStopped { .. } => Exit::ServerStopped.into(),
                sweep::SweepError::InvalidArgument { ref what, .. } if what.starts_with("--") => {
                    Exit::BadArguments.into()
                }
                _ => Exit::Failure.into(),
            }
        }
    }
}
