//! One request of a trace as every format reads it ([`TraceRecord`]), why a trace could not be
//! read ([`TraceError`]), the block size a hash id stands for unless a trace says otherwise, and
//! the message every format gives for a record with no prompt tokens.

use std::path::PathBuf;

/// The most tokens a record may ask for, in its prompt or its reply: 2^24 (16,777,216), beyond
/// any model's context. A larger count is a wrong unit or a corrupt line, refused by line before
/// any prompt is made (one of 10^8 tokens would take gigabytes to synthesise).
pub const MAX_RECORD_TOKENS: u32 = 1 << 24;

/// A token count over [`MAX_RECORD_TOKENS`], in words.
pub(crate) fn over_bound(field: &str, count: u32) -> String {
    format!(
        "\"{field}\" is {count} tokens, over the {MAX_RECORD_TOKENS} tokens any server takes; check the trace's units or the line"
    )
}

/// The block size, in tokens, a hash id stands for when a trace does not say otherwise (and
/// always in Mooncake traces).
pub const DEFAULT_BLOCK_TOKENS: u32 = 512;

/// Why a trace could not be read. Messages read after "failed to ...".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be read.
    #[error("read trace {path}", path = path.display())]
    Read {
        /// The trace file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// One line of the trace is wrong.
    #[error("read trace {origin} line {line}: {detail}")]
    Line {
        /// The file (or the bundled trace's name).
        origin: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong and what to write instead.
        detail: String,
    },
    /// The trace holds no request.
    #[error("read trace {origin}: it has no records; a trace needs at least one request")]
    Empty {
        /// The file (or the bundled trace's name).
        origin: String,
    },
    /// No format was given and the content did not tell.
    #[error(
        "read trace {origin}: cannot tell its format ({detail}); name the format: jsonl, mooncake or azure"
    )]
    Undetected {
        /// The file (or the bundled trace's name).
        origin: String,
        /// What the first line looked like.
        detail: String,
    },
    /// A format name that is not one of `jsonl`, `mooncake`, `azure`.
    #[error("choose a trace format: \"{name}\" is not one; use jsonl, mooncake or azure")]
    UnknownFormat {
        /// The name given.
        name: String,
    },
}

/// One request of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRecord {
    /// Arrival in milliseconds after the trace's first record (which arrives at 0).
    pub offset_ms: f64,
    /// The conversation or user the request belongs to, when the trace says (Vernier's JSONL
    /// only).
    pub session: Option<String>,
    /// Prompt length in tokens (at least 1).
    pub input_tokens: u32,
    /// Reply length in tokens.
    pub output_tokens: u32,
    /// One id per leading block of `block_tokens` prompt tokens: equal ids are equal text,
    /// so records with the same leading ids share a prompt prefix. May cover only part of
    /// the prompt (or none), never more blocks than the prompt fills.
    pub hash_ids: Vec<u64>,
}

/// The message for a record with no prompt tokens.
pub(super) fn zero_input(field: &str) -> String {
    format!("\"{field}\" is 0; every request needs at least one prompt token")
}
