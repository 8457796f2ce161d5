//! Append-only JSON Lines journals that survive a crash mid-write.
//!
//! A journal is a file of JSON values, one per line. [`JournalWriter::append`] writes a line
//! with its newline in one call and flushes it before returning, so a crash of the process
//! loses at most the line being written; [`JournalWriter::sync`] forces written lines to the
//! disk. [`read`] parses every complete line and reports a torn last line (one without its
//! newline) as a [`TornTail`] instead of failing; [`JournalWriter::open_append`] cuts such a
//! tail off before appending.
//!
//! Every fallible function returns [`JournalError`].

#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod error;
mod read;
mod writer;

pub use error::JournalError;
pub use read::{Journal, Line, TornTail, read};
pub use writer::JournalWriter;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
