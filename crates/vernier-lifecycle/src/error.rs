//! The one error type of the crate, and its exit code.

use std::path::PathBuf;

use vernier_cli::{ExitKind, Failure};
use vernier_journal::JournalError;
use vernier_run::RunError;

/// Everything `ready` and `watch` can fail at. Messages read after "failed to".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LifecycleError {
    /// What every engine's run shares: a refused flag or setting (named as on the command
    /// line), a journal in the way, a refused resume, a changed server, the client.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The launch command could not be started.
    #[error("start the server with `sh -c {command:?}`")]
    Launch {
        /// The shell command.
        command: String,
        /// Why it did not start.
        #[source]
        source: std::io::Error,
    },
    /// The server's log file could not be created.
    #[error("create the server log {path}")]
    Log {
        /// The log file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `/metrics` answered but has no known generation counter, and the watchdog was not
    /// allowed to fall back on probe failures alone.
    #[error(
        "find a generation counter in {base_url}/metrics (known: {known}); pass --allow-no-counter to judge by failed probes alone"
    )]
    NoGenerationCounter {
        /// The server.
        base_url: String,
        /// The names looked for.
        known: String,
    },
    /// The output folder or a report could not be written.
    #[error("write {path}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A journal to resume from does not hold a `ready` run.
    #[error("resume from {path}: {reason}")]
    Resume {
        /// The journal.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading or writing the journal failed.
    #[error("keep the journal")]
    Journal(#[from] JournalError),
}

impl LifecycleError {}

impl Failure for LifecycleError {
    /// A shared failure's own kind; a usage error for a journal that holds no `ready` run and
    /// for a server without a generation counter (pass `--allow-no-counter`); a failure for
    /// anything else.
    fn exit_kind(&self) -> ExitKind {
        match self {
            Self::Run(error) => error.exit_kind(),
            Self::NoGenerationCounter { .. } | Self::Resume { .. } => ExitKind::Usage,
            _ => ExitKind::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_has_its_documented_exit_code() {
        let cases = [
            (
                LifecycleError::from(RunError::invalid("--reps", "use 1 or more")),
                2,
            ),
            (
                LifecycleError::from(RunError::ServerChanged {
                    journal: "j".into(),
                    differences: "model".to_owned(),
                }),
                1,
            ),
            (
                LifecycleError::Resume {
                    path: "j".into(),
                    reason: "not a ready journal".to_owned(),
                },
                2,
            ),
            (
                LifecycleError::NoGenerationCounter {
                    base_url: "http://127.0.0.1:1".to_owned(),
                    known: "x".to_owned(),
                },
                2,
            ),
            (
                LifecycleError::Write {
                    path: "out".into(),
                    source: std::io::Error::other("disk full"),
                },
                1,
            ),
        ];
        // The codes are the table in bins/lifecycle/README.md.
        for (error, code) in cases {
            assert_eq!(error.exit_code(), code, "{error}");
        }
    }
}
