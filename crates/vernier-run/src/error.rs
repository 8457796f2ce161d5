//! The one error type for what every engine's run shares, and its exit code.

use std::path::PathBuf;

use vernier_cli::{ExitKind, Failure};

/// A failure of the run itself, the same in every engine: a refused setting, a journal that
/// cannot be started or continued, a server that is busy, changed or gone. Each engine's error
/// enum wraps it (`#[error(transparent)] Run(RunError)`) and asks it for the exit code, so the
/// binaries map every error to its code in one line. Messages read after "failed to ...".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A flag, argument or setting could not be used.
    #[error("use {what}: {detail}")]
    InvalidArgument {
        /// The flag or value at fault (e.g. `--reps`).
        what: String,
        /// Why, and what to pass instead.
        detail: String,
    },
    /// A new run's output folder already holds a journal.
    #[error("start a new run in {out}: {journal} already exists; pass --resume {journal} to continue it, or choose another --out", out = out.display(), journal = journal.display())]
    JournalExists {
        /// The output folder.
        out: PathBuf,
        /// The journal in it.
        journal: PathBuf,
    },
    /// The journal was written by a version whose format this one cannot continue.
    #[error("resume {path}: it is a version {found} journal and this tool continues version {supported}; finish it with the version that started it, or start a new run with --out DIR", path = path.display())]
    JournalVersion {
        /// The journal.
        path: PathBuf,
        /// The version the journal records.
        found: u32,
        /// The version this tool writes.
        supported: u32,
    },
    /// Settings given beside `--resume` would change what the journal's run measures.
    #[error("resume {journal}: flags given beside --resume differ from the journal's run ({differences}); leave them out (--resume alone continues the run as it was started{started}), or start a new run with another --out", journal = journal.display(), started = started_as(original_command.as_deref()))]
    ConfigMismatch {
        /// The journal.
        journal: PathBuf,
        /// Setting by setting: `--flag: journal X, now Y`, joined by `; `.
        differences: String,
        /// The command line recorded in the journal, when it has one.
        original_command: Option<String>,
    },
    /// A resumed run found another model or another server than the journal records.
    #[error("resume {journal}: the server is not the one the journal measured ({differences}); point --base-url at that server, or start a new run with another --out", journal = journal.display())]
    ServerChanged {
        /// The journal.
        journal: PathBuf,
        /// What differs, `name: journal X, now Y`, joined by `; `.
        differences: String,
    },
    /// The server had requests in flight before the run began.
    #[error(
        "start: the server reports {running} running and {waiting} waiting requests, which would distort every figure; wait for them to finish or pass --allow-busy"
    )]
    ServerBusy {
        /// Requests running.
        running: f64,
        /// Requests waiting.
        waiting: f64,
    },
    /// The server stopped answering; the journal holds everything measured so far.
    #[error("keep measuring: {detail}; everything measured is in {journal}; continue with: {resume_command}", journal = journal.display())]
    ServerStopped {
        /// Why the run stopped.
        reason: StopReason,
        /// What was seen (connection refused, hung stream, ...).
        detail: String,
        /// The journal to resume from.
        journal: PathBuf,
        /// The exact command that continues the run.
        resume_command: String,
    },
    /// The HTTP client could not be built, or a set-up call to the server failed.
    #[cfg(feature = "engine")]
    #[error("{what}")]
    Client {
        /// What was being done.
        what: String,
        /// The client's error.
        #[source]
        source: vernier_openai::ClientError,
    },
    /// The in-process simulator did not start.
    #[cfg(feature = "engine")]
    #[error("start the in-process simulator")]
    Simulator(#[source] vernier_sim::SimError),
    /// The in-process simulator's thread or runtime could not start.
    #[cfg(feature = "engine")]
    #[error("start the in-process simulator's thread")]
    SimulatorThread(#[source] std::io::Error),
    /// The async runtime a command runs on could not start.
    #[cfg(feature = "engine")]
    #[error("start the async runtime")]
    Runtime(#[source] std::io::Error),
}

fn started_as(command: Option<&str>) -> String {
    command.map_or_else(String::new, |command| format!(", as: {command}"))
}

impl RunError {
    /// A refused flag or setting: `what` names it (e.g. `--samples`).
    pub fn invalid(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::InvalidArgument {
            what: what.into(),
            detail: detail.into(),
        }
    }
}

impl Failure for RunError {
    /// A refused flag, setting or resume is a usage error, a busy server and a stopped server
    /// are their own kinds, anything else a failure.
    fn exit_kind(&self) -> ExitKind {
        match self {
            Self::InvalidArgument { .. }
            | Self::JournalExists { .. }
            | Self::ConfigMismatch { .. } => ExitKind::Usage,
            Self::ServerBusy { .. } => ExitKind::ServerBusy,
            Self::ServerStopped { .. } => ExitKind::ServerStopped,
            _ => ExitKind::Failure,
        }
    }
}

/// Why a run stopped before its end, with everything measured on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// A stream went silent and the server's generation counter stood still.
    ServerHung,
    /// The server refused connections, or a request could not be made after every retry.
    ServerUnreachable,
    /// Every request of two repetitions in a row failed.
    RepeatedFailures,
}

impl StopReason {
    /// A short name (`server_hung`, `server_unreachable`, `repeated_failures`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ServerHung => "server_hung",
            Self::ServerUnreachable => "server_unreachable",
            Self::RepeatedFailures => "repeated_failures",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shared_failure_has_its_documented_exit_code() {
        let journal = PathBuf::from("out/journal.jsonl");
        let cases = [
            (RunError::invalid("--reps", "give a number"), 2),
            (
                RunError::JournalExists {
                    out: "out".into(),
                    journal: journal.clone(),
                },
                2,
            ),
            (
                RunError::ConfigMismatch {
                    journal: journal.clone(),
                    differences: "--reps: journal 3, now 5".to_owned(),
                    original_command: None,
                },
                2,
            ),
            (
                RunError::ServerBusy {
                    running: 1.0,
                    waiting: 0.0,
                },
                3,
            ),
            (
                RunError::ServerStopped {
                    reason: StopReason::ServerHung,
                    detail: "silent".to_owned(),
                    journal: journal.clone(),
                    resume_command: "sweep --resume out/journal.jsonl".to_owned(),
                },
                4,
            ),
            (
                RunError::ServerChanged {
                    journal: journal.clone(),
                    differences: "model".to_owned(),
                },
                1,
            ),
            (
                RunError::JournalVersion {
                    path: journal,
                    found: 2,
                    supported: 1,
                },
                1,
            ),
        ];
        // The codes are the table in the README and docs/architecture.md, not our own output.
        for (error, code) in cases {
            assert_eq!(error.exit_code(), code, "{error}");
        }
    }
}
