//! The one error type of the sweep.

use std::path::PathBuf;

/// Everything that can stop a sweep. Messages read after "failed to ...".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A command-line value could not be used.
    #[error("use {what}: {detail}")]
    InvalidArgument {
        /// The flag or value at fault.
        what: String,
        /// Why, and what to pass instead.
        detail: String,
    },
    /// The HTTP client could not be built or a set-up call failed.
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
    /// The simulator's thread or runtime could not start.
    #[cfg(feature = "engine")]
    #[error("start the in-process simulator's thread")]
    SimulatorThread(#[source] std::io::Error),
    /// The server had requests in flight before the sweep began.
    #[error(
        "start: the server reports {running} running and {waiting} waiting requests, which would distort every figure; wait for them to finish or pass --allow-busy"
    )]
    ServerBusy {
        /// Requests running (`vllm:num_requests_running`, `llamacpp:requests_processing`,
        /// `sglang:num_running_reqs`).
        running: f64,
        /// Requests waiting (`vllm:num_requests_waiting`, `llamacpp:requests_deferred`,
        /// `sglang:num_queue_reqs`).
        waiting: f64,
    },
    /// The server refused a request in a way retrying will not fix.
    #[error("send requests: {detail}")]
    ServerRejected {
        /// The status and body, and which flag to use.
        detail: String,
    },
    /// The server stopped answering; the journal holds everything measured so far.
    #[error("keep measuring: {detail}; everything measured is in {journal}; continue with: {resume_command}", journal = journal.display())]
    ServerStopped {
        /// Why the run stopped.
        reason: StopReason,
        /// What was seen (connect refused, hung stream, ...).
        detail: String,
        /// The journal to resume from.
        journal: PathBuf,
        /// The exact command that continues the run.
        resume_command: String,
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
    /// The journal was written by a version of the sweep whose format this one cannot continue.
    #[error("resume {path}: it is a version {found} journal and this sweep continues version {supported}; finish it with the sweep that started it, or start a new run with --out DIR", path = path.display())]
    JournalVersion {
        /// The journal.
        path: PathBuf,
        /// The version the journal records.
        found: u32,
        /// The version this sweep writes.
        supported: u32,
    },
    /// A resumed run found another model or another server than the journal records.
    #[error("resume {path}: the server is not the one the journal measured ({differences}); point --base-url at that server, or start a new run with --out DIR", path = path.display())]
    ServerChanged {
        /// The journal.
        path: PathBuf,
        /// What differs, `name: journal X, now Y`.
        differences: String,
    },
    /// The server cannot take a request this long (a cell is then left out, not failed).
    #[error("send a request the server's context can hold: {detail}")]
    ContextExceeded {
        /// The server's message.
        detail: String,
    },
    /// A resumed run was started with a different configuration.
    #[error("resume {path}: flags given beside --resume differ from the journal's configuration ({differences}); leave them out, --resume alone continues with the journal's configuration (the run was started as: {original_command})", path = path.display())]
    ConfigMismatch {
        /// The journal.
        path: PathBuf,
        /// Field by field: `name: journal X, now Y`.
        differences: String,
        /// The command line recorded in the journal.
        original_command: String,
    },
    /// The output folder already holds a journal.
    #[error("start a new run in {out}: it already holds a journal; pass --resume {journal} to continue it, or --out DIR for a new run", out = out.display(), journal = journal.display())]
    JournalExists {
        /// The output folder.
        out: PathBuf,
        /// The journal in it.
        journal: PathBuf,
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

/// Why a run stopped before its end, with everything measured on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// A stream went silent and the server's generation counter stood still.
    ServerHung,
    /// The server refused connections, or a stream could not be measured after every retry.
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
