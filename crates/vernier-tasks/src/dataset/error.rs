//! Why a dataset file could not be read.

use std::path::PathBuf;

use super::question::DatasetKind;

/// Failure to read a dataset file. Messages read after "failed to ...".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file could not be read.
    #[error("read dataset {path}: {source}; check the path given to --dataset-file")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A format this build does not read.
    #[error("read dataset {path}: {reason}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A record that does not match its kind.
    #[error("read dataset {path} as {kind}: line {line}, field `{field}`: {reason}")]
    Record {
        /// The file.
        path: PathBuf,
        /// The kind it was read as.
        kind: DatasetKind,
        /// The 1-based line (or, for a JSON array, the record number).
        line: usize,
        /// The field at fault.
        field: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The file holds no question.
    #[error("read dataset {path}: it holds no question")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The draw asks for more questions than there are.
    #[error("draw from dataset: {reason}")]
    Draw {
        /// What is wrong and how to fix it.
        reason: String,
    },
}
