//! The one error type of the run store.

use std::path::PathBuf;

/// Why a run could not be read, registered or queried.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A folder holds no run file this crate knows.
    #[error(
        "read the run in {path}: no run file there (battery.json, run.json, results.json, agent.json, replay.json or watch.json); give a run's folder"
    )]
    NotARun {
        /// The folder given.
        path: PathBuf,
    },
    /// A run file could not be read.
    #[error("read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A run file is not what its name says.
    #[error("read {path}: {detail}; is it a run file of this version of Vernier?")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The store's address is not one this crate can open.
    #[error(
        "open the run store {given:?}: {detail}; give a file path (SQLite), a postgres:// URL, or `off`"
    )]
    Location {
        /// The address as given.
        given: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The database refused or failed.
    #[error("{action} the run store at {location}: {source}")]
    Database {
        /// What was being done (`open`, `register a run in`, `read`).
        action: &'static str,
        /// The store's address, its password hidden.
        location: String,
        /// The database's own error.
        #[source]
        source: sqlx::Error,
    },
    /// The store's schema could not be brought up to date.
    #[error("migrate the run store at {location}: {source}")]
    Migrate {
        /// The store's address, its password hidden.
        location: String,
        /// The migrator's error.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// No run has this id.
    #[error("find run {id:?} in the run store: no such run; `runs list` shows the ids")]
    NoSuchRun {
        /// The id asked for.
        id: String,
    },
    /// A statistic could not be computed.
    #[error("compare the runs: {0}")]
    Stats(#[from] vernier_stats::StatsError),
}

impl vernier_cli::Failure for StoreError {
    fn exit_kind(&self) -> vernier_cli::ExitKind {
        match self {
            Self::NotARun { .. }
            | Self::Parse { .. }
            | Self::Location { .. }
            | Self::NoSuchRun { .. } => vernier_cli::ExitKind::Usage,
            Self::Io { .. } | Self::Database { .. } | Self::Migrate { .. } | Self::Stats(_) => {
                vernier_cli::ExitKind::Failure
            }
        }
    }
}
