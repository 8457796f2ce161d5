//! The one error type of the sweep.

use std::path::PathBuf;

use vernier_run::RunError;
pub use vernier_run::StopReason;

/// Everything that can stop a sweep. Messages read after "failed to ...". What every engine
/// shares (a refused flag, a journal that exists or cannot be continued, a busy, changed or
/// stopped server, the client and the simulator) is a [`RunError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A failure every engine shares, with its exit code.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The server refused a request in a way retrying will not fix.
    #[error("send requests: {detail}")]
    ServerRejected {
        /// The status and body, and which flag to use.
        detail: String,
    },
    /// Calibration could not reach the wanted prompt length.
    #[error("calibrate the {workload} prompt to {target} tokens: {detail}")]
    Calibration {
        /// prose or code.
        workload: String,
        /// The wanted prompt tokens.
        target: u32,
        /// Why.
        detail: String,
    },
    /// The journal could not be read or written.
    #[error("{what} journal {path}", path = path.display())]
    Journal {
        /// read, write, create...
        what: &'static str,
        /// The journal file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A journal line is not valid JSON of the expected shape.
    #[error("parse line {line} of journal {path}: {detail}; the file may belong to another tool or version", path = path.display())]
    JournalParse {
        /// The journal file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        detail: String,
    },
    /// The server cannot take a request this long (a cell is then left out, not failed).
    #[error("send a request the server's context can hold: {detail}")]
    ContextExceeded {
        /// The server's message.
        detail: String,
    },
    /// An agent run's texts or a replay's synthesised prompts could not be sized in the
    /// server's tokens.
    #[error("size the texts in the server's tokens: {detail}")]
    Sizing {
        /// What the server did, and the fix where there is one.
        detail: String,
    },
    /// `sweep merge` found the shards given are not one complete run; the merged files (verdict
    /// invalid) say what is wrong.
    #[error("merge the shards into one run: {reasons}; the files in {out} record it, verdict invalid", out = out.display())]
    MergeInvalid {
        /// The merge's output folder.
        out: PathBuf,
        /// What makes it invalid.
        reasons: String,
    },
    /// A report file could not be read back (to print it).
    #[error("read {path}", path = path.display())]
    ReadReport {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A report file could not be written.
    #[error("write {path}", path = path.display())]
    WriteReport {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The run ended without measuring any request: every cell was left out or failed.
    #[error(
        "measure anything: no request of any cell was measured ({reasons}); the journal and reports say why"
    )]
    NothingMeasured {
        /// Why, cell by cell.
        reasons: String,
    },
    /// A statistic could not be computed.
    #[error("summarise cell {cell}: {detail}")]
    Stats {
        /// The cell key.
        cell: String,
        /// The statistics error.
        detail: String,
    },
}

impl From<vernier_journal::JournalError> for SweepError {
    fn from(error: vernier_journal::JournalError) -> Self {
        match error {
            vernier_journal::JournalError::Io { what, path, source } => {
                Self::Journal { what, path, source }
            }
            vernier_journal::JournalError::Parse { path, line, detail } => {
                Self::JournalParse { path, line, detail }
            }
        }
    }
}

impl SweepError {
    /// A refused flag or setting: `what` names it (e.g. `--reps`).
    pub fn invalid(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Run(RunError::invalid(what, detail))
    }
}

impl vernier_cli::Failure for SweepError {
    /// The shared failures' own kind, a usage error for a request the server refuses whatever
    /// is retried (a key, a model, a field: a flag to change), a failure for the rest.
    fn exit_kind(&self) -> vernier_cli::ExitKind {
        match self {
            Self::Run(error) => error.exit_kind(),
            // Every request has the refused shape: a flag to change, not a run-time failure.
            Self::ServerRejected { .. } | Self::MergeInvalid { .. } => vernier_cli::ExitKind::Usage,
            _ => vernier_cli::ExitKind::Failure,
        }
    }
}
