//! The one error type of the crate.

use std::path::PathBuf;

use vernier_journal::JournalError;
use vernier_openai::ClientError;

/// Everything `ready` and `watch` can fail at. Messages read after "failed to".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LifecycleError {
    /// A setting is out of range or settings contradict each other.
    #[error("use {field}: {reason}")]
    InvalidConfig {
        /// The setting (as on the command line).
        field: &'static str,
        /// What is wrong and what to do instead.
        reason: String,
    },
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
    /// The client could not be built for the base URL.
    #[error("set up a client for {base_url}")]
    Client {
        /// The base URL.
        base_url: String,
        /// Why.
        #[source]
        source: ClientError,
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
    /// A journal already exists where a new run would write one.
    #[error(
        "start a new run in {path}: a journal is already there; pass --resume {path} or choose another --out"
    )]
    JournalExists {
        /// The journal.
        path: PathBuf,
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
