//! The one error type of the crate.

use std::path::PathBuf;

/// Why a journal could not be read or written. Messages read after "failed to ...".
///
/// Exhaustive on purpose: callers map each kind onto their own error type.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file could not be created, opened, read, written or synced.
    #[error("{what} journal {path}", path = path.display())]
    Io {
        /// What was being done, e.g. `append to`.
        what: &'static str,
        /// The journal file.
        path: PathBuf,
        /// The I/O error (for `serialise a line for`, the serialiser's error).
        #[source]
        source: std::io::Error,
    },
    /// A complete line is not valid JSON of the expected shape.
    #[error("parse line {line} of journal {path}: {detail}", path = path.display())]
    Parse {
        /// The journal file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        detail: String,
    },
}

impl JournalError {
    pub(crate) fn io(what: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            what,
            path: path.to_owned(),
            source,
        }
    }
}
