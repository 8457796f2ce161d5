//! `hardsuite show`: one task's evidence from a run's files — the prompt, the raw reply of
//! every try (reasoning apart from content), the extracted answer, the gold and the outcome.

use std::fmt::Write as _;
use std::path::Path;

use vernier_tasks::OutcomeKind;

use crate::config::{ContextSelection, SuiteSelection};
use crate::error::HardsuiteError;
use crate::journal::read_hardsuite_journal;
use crate::listing::{TaskListing, listing};
use crate::replies::{ReplyRecord, read_replies, replies_of, replies_path};
use crate::results::ResultsFile;
use crate::task_results::{SampleResult, TaskResult};

/// What to show.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ShowRequest {
    /// One task (with `sample`), or `None` with `all_failures`.
    pub task: Option<String>,
    /// The sample of that task (default 0).
    pub sample: u32,
    /// Every task sample that did not pass.
    pub all_failures: bool,
}

impl ShowRequest {
    /// One task's sample.
    pub fn task(task: impl Into<String>, sample: u32) -> Self {
        Self {
            task: Some(task.into()),
            sample,
            all_failures: false,
        }
    }

    /// Every task sample that did not pass.
    pub fn all_failures() -> Self {
        Self {
            all_failures: true,
            ..Self::default()
        }
    }
}

fn section(out: &mut String, title: &str, text: &str) {
    let _ = writeln!(out, "--- {title} ---");
    if text.is_empty() {
        let _ = writeln!(out, "(empty)");
    } else {
        let _ = writeln!(out, "{text}");
    }
}

/// What a long-context try sent and what the server counted.
fn show_context(out: &mut String, context: &crate::journal::ContextTry, result: &SampleResult) {
    let _ = writeln!(
        out,
        "sent: {} corpus units, nonce {}, {} prompt tokens by the server's usage (target {}, counted before sending: {}, sized by {}); cached prompt tokens: {}",
        context.n_units,
        context.nonce,
        result
            .prompt_tokens
            .map_or_else(|| "no".to_owned(), |t| t.to_string()),
        context.target_tokens,
        context
            .counted_tokens
            .map_or_else(|| "-".to_owned(), |t| t.to_string()),
        context.count_method,
        result
            .cached_tokens
            .map_or_else(|| "not reported".to_owned(), |t| t.to_string()),
    );
    let depths: Vec<String> = context
        .needle_depths
        .iter()
        .map(|d| format!("{d:.1}%"))
        .collect();
    let _ = writeln!(out, "needles landed at: {}", depths.join(", "));
}

fn show_one(
    out: &mut String,
    task: &TaskResult,
    sample: u32,
    listed: Option<&TaskListing>,
    replies: &[ReplyRecord],
) {
    let Some(result) = task.samples.iter().find(|s| s.sample == sample) else {
        let _ = writeln!(out, "task {} has no sample {sample} in this run", task.id);
        return;
    };
    let _ = writeln!(out, "=== {} #{sample} ({}) ===", task.id, task.category);
    let _ = writeln!(
        out,
        "outcome: {}{}",
        result.outcome.as_str(),
        if result.detail.is_empty() {
            String::new()
        } else {
            format!(" ({})", result.detail)
        }
    );
    let _ = writeln!(
        out,
        "answer extracted: {}",
        result.answer.as_deref().unwrap_or("(none)")
    );
    if let Some(listed) = listed {
        let _ = writeln!(out, "gold: {}", listed.gold);
        section(out, "prompt", &listed.prompt);
    }
    if let Some(context) = &result.context {
        show_context(out, context, result);
    }
    if let Some(message) = &result.server_message {
        let _ = writeln!(out, "the server refused it: {message}");
    }
    let tries = replies_of(replies, &task.id, sample);
    if tries.is_empty() {
        let _ = writeln!(out, "(no reply on file: the run kept none for this task)");
    }
    for reply in tries {
        let _ = writeln!(
            out,
            "--- try {} ({}){}: finish reason {} ---",
            reply.try_number,
            reply.phase.describe(),
            if reply.broken { ", broke off" } else { "" },
            reply.finish_reason.as_deref().unwrap_or("none")
        );
        if let Some(reasoning) = &reply.reasoning {
            section(out, "reasoning", reasoning);
        }
        section(out, "content", &reply.content);
        for call in &reply.tool_calls {
            let _ = writeln!(out, "tool call: {}({})", call.name, call.arguments);
        }
        if let Some(usage) = &reply.usage {
            let _ = writeln!(out, "usage: {usage}");
        }
        if let Some(grader) = &reply.grader {
            let _ = writeln!(
                out,
                "--- grader: {} failing cases, {}, {} ms, image {} ---",
                grader.n_failed_cases,
                grader
                    .exit_code
                    .map_or_else(|| "no exit code".to_owned(), |code| format!("exit {code}")),
                grader.wall_time_ms,
                grader.image_digest
            );
            if let Some(crash) = &grader.crash {
                let _ = writeln!(out, "crashed: {crash}");
            }
            if let Some(guard) = &grader.guard {
                let _ = writeln!(out, "guard: {guard}");
            }
            if grader.timed_out {
                let _ = writeln!(out, "killed by the wall-clock limit");
            }
            if grader.oom_killed {
                let _ = writeln!(out, "killed for its memory");
            }
            for (name, detail) in &grader.failing_cases {
                let _ = writeln!(out, "case {name}: {detail}");
            }
            if !grader.stderr_excerpt.is_empty() {
                section(out, "grader stderr", &grader.stderr_excerpt);
            }
            section(out, "submission as graded", &grader.submission);
        }
    }
    let _ = writeln!(out);
}

/// The evidence of `request` from the run in `out_dir` (its `journal.jsonl` and
/// `replies.jsonl`). The prompt and gold come from drawing the run's suite again.
pub fn render_show(out_dir: &Path, request: &ShowRequest) -> Result<String, HardsuiteError> {
    let journal_path = out_dir.join("journal.jsonl");
    let journal = read_hardsuite_journal(&journal_path)?;
    let results = ResultsFile::from_loaded(&journal);
    let replies_file = replies_path(&journal_path);
    let replies = if replies_file.exists() {
        read_replies(&replies_file)?
    } else {
        Vec::new()
    };
    let selection = SuiteSelection {
        suite: journal.header.suite_path.clone(),
        draw: journal.header.draw,
        budgets: journal.header.budget_flags,
        context: journal.header.context.clone().map(|plan| ContextSelection {
            plan,
            lengths_given: true,
        }),
        vision: journal.header.vision_seed,
        instructions: journal.header.instructions_seed,
        structured: journal.header.structured_seed,
        calls: journal.header.calls_seed,
        video: journal.header.video_seed,
        probe: journal.header.probe_seed,
        dataset: journal
            .header
            .dataset
            .as_ref()
            .map(|record| record.selection.clone()),
        ..SuiteSelection::default()
    };
    let listed = crate::selection::load_suite(&selection)
        .map(|suite| listing(&suite))
        .unwrap_or_default();
    let find = |id: &str| listed.iter().find(|l| l.id == id);
    let mut out = String::new();
    if request.all_failures {
        for task in &results.tasks {
            for sample in task
                .samples
                .iter()
                .filter(|s| s.outcome != OutcomeKind::Pass)
            {
                show_one(&mut out, task, sample.sample, find(&task.id), &replies);
            }
        }
        if out.is_empty() {
            out.push_str("every task passed\n");
        }
        return Ok(out);
    }
    let id = request.task.as_deref().unwrap_or_default();
    let task = results.task(id).ok_or_else(|| {
        HardsuiteError::invalid(
            "TASK",
            format!(
                "the run has no task {id:?}; its tasks are {}",
                results
                    .tasks
                    .iter()
                    .map(|t| t.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    show_one(&mut out, task, request.sample, find(id), &replies);
    Ok(out)
}
