//! What can go wrong in a battery or a head-to-head.

use std::path::{Path, PathBuf};

use vernier_cli::{ExitKind, Failure};

/// A battery's or a head-to-head's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BatteryError {
    /// A file could not be read or written.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file is not what it should be.
    #[error("read {}: {detail}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the fix where there is one.
        detail: String,
    },
    /// A path given for a head-to-head holds no battery, sweep or suite run.
    #[error(
        "read {} as a run: it holds no battery.json, sweep run (journal.jsonl) or suite run (results.json); pass a folder `battery run`, `sweep` or `hardsuite run` wrote",
        path.display()
    )]
    NotARun {
        /// The path given.
        path: PathBuf,
    },
    /// A suite run of a kind no battery part stands for (vision, video, a dataset).
    #[error(
        "read {} as a battery part: its suite {suite:?} is not one a battery runs (the hard suite, the probe, long context); compare two such runs with `hardsuite compare A B`",
        path.display()
    )]
    NotAPart {
        /// The results file.
        path: PathBuf,
        /// Its suite's name.
        suite: String,
    },
    /// The two sides share nothing to compare.
    #[error("compare: {detail}")]
    NothingInCommon {
        /// What each side holds.
        detail: String,
    },
    /// The server launched for the battery did not become ready.
    #[error("start the server with {command:?}: {detail} (its output: {})", log.display())]
    Launch {
        /// The launch command.
        command: String,
        /// What went wrong.
        detail: String,
        /// Where its output went.
        log: PathBuf,
    },
    /// A study file that cannot be read.
    #[error(transparent)]
    StudyFile(#[from] crate::study::StudyFileError),
    /// A study that cannot run as written: each problem at its file, line and column.
    #[error("check the study:\n{}", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Study {
        /// Each problem.
        problems: Vec<crate::study::StudyFileError>,
    },
    /// One run's life: a refused flag, a journal, the server, an interrupt.
    #[error(transparent)]
    Run(#[from] vernier_run::RunError),
    /// The sweep part.
    #[error(transparent)]
    Sweep(#[from] vernier_sweep::SweepError),
    /// A suite part.
    #[error(transparent)]
    Suite(#[from] vernier_hardsuite::HardsuiteError),
    /// The `ready` part.
    #[cfg(feature = "engine")]
    #[error(transparent)]
    Ready(#[from] vernier_lifecycle::LifecycleError),
}

impl BatteryError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl Failure for BatteryError {
    /// Each part's own kind, a usage error for a path or flag that cannot be used, a failure
    /// otherwise.
    fn exit_kind(&self) -> ExitKind {
        match self {
            Self::Run(error) => error.exit_kind(),
            Self::Sweep(error) => error.exit_kind(),
            Self::Suite(error) => error.exit_kind(),
            #[cfg(feature = "engine")]
            Self::Ready(error) => error.exit_kind(),
            Self::Launch { .. } => ExitKind::ServerStopped,
            Self::NotARun { .. }
            | Self::NotAPart { .. }
            | Self::NothingInCommon { .. }
            | Self::StudyFile(_)
            | Self::Study { .. } => ExitKind::Usage,
            // A file given to read (a battery, a run) that is missing, unreadable or not what
            // it should be is a refused argument; one that cannot be written is a failure.
            Self::Parse { .. } | Self::Io { action: "read", .. } => ExitKind::Usage,
            Self::Io { .. } => ExitKind::Failure,
        }
    }
}
