//! Errors of this crate: loading a suite, and proving it with the self-check.

use std::path::PathBuf;

/// Failure to load a user-defined suite. Messages read after "failed to ...".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteError {
    /// A file could not be read.
    #[error("read {path}; check the path (code-task files are relative to the suite file)")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file is not valid TOML or JSON of the expected shape.
    #[error("parse {path}: {message}; see the suite-file format in the vernier-tasks docs")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The suite file has an extension other than `.toml` or `.json`.
    #[error("load suite {path}: unknown format; name the file *.toml or *.json")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// Two tasks share an id.
    #[error("load suite {path}: task id {id:?} appears twice; give each task its own id")]
    DuplicateId {
        /// The suite file.
        path: PathBuf,
        /// The repeated id.
        id: String,
    },
    /// A difficulty level outside 1 to 5.
    #[error("draw the suite at level {level}: levels run from 1 to 5")]
    InvalidLevel {
        /// The level asked for.
        level: u8,
    },
    /// A task entry is inconsistent.
    #[error("load task {id:?} of {path}: {reason}")]
    InvalidTask {
        /// The suite file.
        path: PathBuf,
        /// The task.
        id: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
}

/// One problem the self-check found, naming its task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfCheckFailure {
    /// The task's id.
    pub task_id: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for SelfCheckFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "task {}: {}", self.task_id, self.reason)
    }
}

/// The self-check did not prove the suite; no model should see it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SelfCheckError {
    /// The suite has code tasks and no grader was given.
    #[error(
        "self-check the suite: it has {n_code_tasks} code tasks and no grader; connect a grader \
         (a Docker engine and the grader image) or remove the code tasks"
    )]
    GraderRequired {
        /// How many code tasks.
        n_code_tasks: usize,
    },
    /// One or more tasks failed their checks.
    #[error("self-check the suite: {} problem(s): {}", failures.len(), join(failures))]
    Failed {
        /// Every problem found, each naming its task.
        failures: Vec<SelfCheckFailure>,
    },
}

impl SelfCheckError {
    /// The problems found (empty for [`SelfCheckError::GraderRequired`]).
    pub fn failures(&self) -> &[SelfCheckFailure] {
        match self {
            Self::Failed { failures } => failures,
            Self::GraderRequired { .. } => &[],
        }
    }
}

fn join(failures: &[SelfCheckFailure]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
