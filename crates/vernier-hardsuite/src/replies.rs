//! The raw replies a verdict rests on: every try's final content, reasoning, tool calls,
//! finish reason and usage, kept in `replies.jsonl` beside the journal (one line per try,
//! written and flushed before the try's journal line), untruncated.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::HardsuiteError;
use crate::journal::AttemptPhase;
use crate::results::{Audit, EvidenceCount, ResultsFile};

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

/// Whether `content` holds an answer in a format other than the `ANSWER:` line asked for:
/// a line naming an answer and holding a digit ("The final answer is 42", "**Answer:** 42").
fn answer_like(content: &str) -> bool {
    content.lines().any(|line| {
        let lower = line.to_ascii_lowercase();
        !line.trim_start().starts_with("ANSWER:")
            && lower.contains("answer")
            && line.chars().any(|c| c.is_ascii_digit())
    })
}

/// Whether `content` states a 7-digit number (a context task's code) on its own.
fn states_a_code(content: &str) -> bool {
    content
        .split(|c: char| !c.is_ascii_digit())
        .any(|run| run.len() == 7)
}

/// Audits a run: `results` with the `replies` kept beside its journal.
pub fn audit(results: &ResultsFile, replies: &[ReplyRecord]) -> Audit {
    use vernier_tasks::{Category, OutcomeKind};
    let mut evidence: Vec<EvidenceCount> = Vec::new();
    let mut no_answer_like = 0;
    let mut no_answers = 0;
    let mut code_details: Vec<&str> = Vec::new();
    let (mut tool_samples, mut tool_no_call) = (0, 0);
    let (mut context_no_answers, mut context_unlined) = (0, 0);
    let (mut headed, mut headed_passed) = (0, 0);
    for task in &results.tasks {
        for sample in &task.samples {
            let tries = replies_of(replies, &task.id, sample.sample);
            let outcome = sample.outcome.as_str().to_owned();
            match evidence.iter_mut().find(|e| e.outcome == outcome) {
                Some(count) => {
                    count.n_samples += 1;
                    count.n_with_reply += usize::from(!tries.is_empty());
                }
                None => evidence.push(EvidenceCount {
                    outcome,
                    n_samples: 1,
                    n_with_reply: usize::from(!tries.is_empty()),
                }),
            }
            if sample.outcome == OutcomeKind::NoAnswer {
                no_answers += 1;
                if tries
                    .last()
                    .is_some_and(|reply| reply.content.len() > 200 && answer_like(&reply.content))
                {
                    no_answer_like += 1;
                }
            }
            match task.category {
                Category::CODE if sample.outcome != OutcomeKind::Infra => {
                    code_details.push(sample.detail.as_str());
                }
                Category::TOOLS => {
                    tool_samples += 1;
                    tool_no_call += usize::from(sample.detail == "no_call");
                }
                Category::DATASET
                    if tries
                        .last()
                        .is_some_and(|reply| writes_question_headings(&reply.content)) =>
                {
                    headed += 1;
                    headed_passed += usize::from(sample.outcome == OutcomeKind::Pass);
                }
                Category::CONTEXT if sample.outcome == OutcomeKind::NoAnswer => {
                    context_no_answers += 1;
                    context_unlined += usize::from(
                        tries
                            .last()
                            .is_some_and(|reply| states_a_code(&reply.content)),
                    );
                }
                _ => {}
            }
        }
    }
    let mut flags = Vec::new();
    if no_answer_like >= 2 {
        flags.push(format!(
            "{no_answer_like} of {no_answers} no_answer replies are long and hold an answer-like line in another format (\"The final answer is 42\"): the model may answer in its own format, so check the answer instruction and the chat template, and read them with `hardsuite show OUT --all-failures`"
        ));
    }
    if code_details.len() >= 2
        && code_details.iter().all(|d| d.starts_with("crashed"))
        && code_details.windows(2).all(|w| w[0] == w[1])
    {
        flags.push(format!(
            "every code task crashed the same way ({}): suspect the harness, the grader image or the extraction of the code block, not the model",
            code_details[0]
        ));
    }
    if context_unlined >= 2 {
        flags.push(format!(
            "{context_unlined} of {context_no_answers} context no_answer replies state a 7-digit code without the `ANSWER:` line: the model may find the needle but not follow the answer format (the score stands: only the ANSWER line is graded); read them with `hardsuite show OUT --all-failures`"
        ));
    }
    let mut notes = Vec::new();
    if headed > 0 {
        notes.push(format!(
            "{headed} dataset replies write \"Question:\" headings inside their answer ({headed_passed} of them passed): a harness that stops generation at \"Question:\" would have cut them off before their answer and scored them wrong; this run sends no stop sequence"
        ));
    }
    if tool_samples >= 2 && tool_no_call == tool_samples {
        flags.push(
            "every tool task ended without a tool call: the server may not pass tools to the model (llama.cpp needs --jinja; vLLM --enable-auto-tool-choice and a tool-call parser)".to_owned(),
        );
    }
    Audit {
        evidence,
        flags,
        notes,
    }
}

/// Whether a reply has a line that opens with a "Question:" heading (Markdown marks allowed).
fn writes_question_headings(content: &str) -> bool {
    content.lines().any(|line| {
        line.trim_start_matches(|c: char| c.is_whitespace() || "*_#>`".contains(c))
            .starts_with("Question:")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_in_another_format_are_seen_and_the_asked_format_is_not() {
        assert!(answer_like("Working...\nThe final answer is 42."));
        assert!(answer_like("**Answer:** 7"));
        assert!(!answer_like("ANSWER: 42"));
        assert!(!answer_like("I am not sure what the answer is."));
        assert!(states_a_code("The special code for Abel is 1234567."));
        assert!(!states_a_code(
            "Codes 123456 and 12345678 are not seven digits."
        ));
    }
}
