//! The raw replies a verdict rests on: every try's final content, reasoning, tool calls,
//! finish reason and usage, kept in `replies.jsonl` beside the journal (one line per try,
//! written and flushed before the try's journal line), untruncated.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::HardsuiteError;
use crate::journal::AttemptPhase;

/// One tool call as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReplyToolCallRecord {
    /// The function's name.
    pub name: String,
    /// The arguments as the raw string the model wrote (not re-encoded).
    pub arguments: String,
}

/// What the model sent in one try, keyed like the journal's attempt line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReplyRecord {
    /// Task id.
    pub task_id: String,
    /// Sample number, from 0.
    pub sample: u32,
    /// Main run or cut-off re-run.
    pub phase: AttemptPhase,
    /// Try number, from 1.
    pub try_number: u32,
    /// The final content, whole.
    pub content: String,
    /// The reasoning, whole (absent when the model sent none).
    pub reasoning: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ReplyToolCallRecord>,
    /// How the stream ended, as the server said.
    pub finish_reason: Option<String>,
    /// The server's final `usage` object, as sent.
    pub usage: Option<serde_json::Value>,
    /// True when the stream broke off: this is what arrived before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub broken: bool,
    /// For a graded code submission: the code as graded, the first failing cases, the
    /// exception, guard, timeout or memory kill, the grader's stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grader: Option<vernier_tasks::GradeEvidence>,
}

/// Where a run's replies live: beside its journal.
pub fn replies_path(journal: &Path) -> PathBuf {
    journal.with_file_name("replies.jsonl")
}

/// Reads a replies file (a torn last line, from a crash, is left out).
pub fn read_replies(path: &Path) -> Result<Vec<ReplyRecord>, HardsuiteError> {
    let journal = vernier_journal::read::<ReplyRecord>(path)?;
    Ok(journal.into_values())
}

/// The replies of one task sample, tries in order (main run first, then any re-run).
pub fn replies_of<'a>(
    replies: &'a [ReplyRecord],
    task_id: &str,
    sample: u32,
) -> Vec<&'a ReplyRecord> {
    let mut found: Vec<&ReplyRecord> = replies
        .iter()
        .filter(|r| r.task_id == task_id && r.sample == sample)
        .collect();
    found.sort_by_key(|r| (r.phase == AttemptPhase::Rerun, r.try_number));
    found
}
