//! `hardsuite tasks`: every task of a draw with its family, parameters, prompt and gold,
//! without calling any model.

use std::fmt::Write as _;

use serde::Serialize;
use vernier_tasks::{Category, Checker, Redraw, Suite};

use crate::config::SuiteSelection;
use crate::error::HardsuiteError;
use crate::selection::load_suite;

/// One task as `hardsuite tasks` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TaskListing {
    /// Task id.
    pub id: String,
    /// Category.
    pub category: Category,
    /// Family (the bundled task id it is drawn from); `null` for suite-file tasks.
    pub family: Option<String>,
    /// Difficulty level.
    pub level: Option<u8>,
    /// Seed.
    pub seed: Option<u64>,
    /// The parameters the prompt and gold come from.
    pub parameters: serde_json::Value,
    /// Draws rejected as ill-posed before this one.
    pub redraws: Vec<Redraw>,
    /// The last user message.
    pub prompt: String,
    /// The gold answer: an integer or `p/q` as a string for math; the hidden case names
    /// and count for code (their expected values never leave the Rust side); the expected
    /// call for tools.
    pub gold: serde_json::Value,
}

/// The tasks of the selected suite (bundled, drawn at `selection.draw`, or a suite file).
pub fn list_tasks(selection: &SuiteSelection) -> Result<Vec<TaskListing>, HardsuiteError> {
    Ok(listing(&load_suite(selection)?))
}

/// The listing of a suite's tasks.
pub fn listing(suite: &Suite) -> Vec<TaskListing> {
    suite
        .tasks
        .iter()
        .map(|task| {
            let gold = match &task.checker {
                Checker::Integer(value) => serde_json::json!(value.to_string()),
                Checker::Fraction { num, den, .. } => serde_json::json!(format!("{num}/{den}")),
                Checker::ExactString(text) => serde_json::json!(text),
                Checker::IntegerList(values) => serde_json::json!(
                    values
                        .iter()
                        .map(i128::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                #[cfg(feature = "engine")]
                Checker::Code(check) => serde_json::json!({
                    "n_cases": check.cases.len(),
                    "case_names": check.cases.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                }),
                Checker::Word(word) => serde_json::json!(word),
                Checker::WordList(words) => serde_json::json!(words.join(", ")),
                Checker::Choice { gold, .. } => {
                    serde_json::json!(vernier_tasks::choice_letter(*gold).to_string())
                }
                Checker::FinalAnswer(answer) => serde_json::json!(answer),
                Checker::Instructions(constraints) => serde_json::json!(
                    constraints
                        .iter()
                        .map(vernier_tasks::Constraint::instruction)
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                Checker::Structured { truth, .. } => truth.clone(),
                Checker::Calls(calls) => serde_json::json!(calls),
                other => serde_json::json!(format!("{other:?}")),
            };
            let instance = task.instance.as_ref();
            // A vision or video task's family and parameters live in its spec.
            let media = task
                .spec::<vernier_tasks::VisionSpec>()
                .map(|spec| (&spec.family, &spec.parameters))
                .or_else(|| {
                    task.spec::<vernier_tasks::VideoSpec>()
                        .map(|spec| (&spec.family, &spec.parameters))
                });
            TaskListing {
                id: task.id.clone(),
                category: task.category,
                family: instance
                    .map(|i| i.family.clone())
                    .or_else(|| media.map(|(family, _)| family.clone())),
                level: instance.map(|i| i.level),
                seed: instance.map(|i| i.seed),
                parameters: instance.map_or_else(
                    || media.map_or(serde_json::Value::Null, |(_, p)| p.clone()),
                    |i| i.parameters.clone(),
                ),
                redraws: instance.map(|i| i.redraws.clone()).unwrap_or_default(),
                prompt: task.spec::<vernier_tasks::ContextSpec>().map_or_else(
                    || prompt_with_history(task),
                    |spec| context_summary(task, spec),
                ),
                gold,
            }
        })
        .collect()
}

/// The last user message, then any turn the task's history holds after it (a call already
/// made and its result), so that what the model saw is shown whole.
fn prompt_with_history(task: &vernier_tasks::Task) -> String {
    let Some(last_user) = task.messages.iter().rposition(|m| m.role == "user") else {
        return String::new();
    };
    let mut prompt = task.messages[last_user].content.clone();
    for message in &task.messages[last_user + 1..] {
        for call in &message.tool_calls {
            let _ = write!(
                prompt,
                "\n[{} called {}({})]",
                message.role, call.name, call.arguments
            );
        }
        if message.role == "tool" {
            let _ = write!(prompt, "\n[tool result: {}]", message.content);
        }
    }
    prompt
}

/// A context task's prompt in short: the haystack, every needle with its depth, and the
/// question (the haystack itself is thousands of words, drawn again per request).
fn context_summary(task: &vernier_tasks::Task, spec: &vernier_tasks::ContextSpec) -> String {
    let mut out = format!(
        "A {} haystack sized to {} prompt tokens in the server's count, from corpus unit {}, opening with a fresh nonce per request. Needles:\n",
        spec.haystack.as_str(),
        spec.target_tokens,
        spec.start_unit
    );
    for needle in &spec.needles {
        let _ = writeln!(
            out,
            "  at {:>3}%: {}{}",
            needle.depth_pct,
            needle.sentence(),
            if needle.asked { "  (asked)" } else { "" }
        );
    }
    let question = task
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .and_then(|m| m.content.rsplit("</document>").next())
        .unwrap_or_default()
        .trim();
    out.push_str(question);
    out
}

/// The listing as text: one block per task.
pub fn render_listing(tasks: &[TaskListing]) -> String {
    let mut out = String::new();
    for task in tasks {
        let _ = writeln!(
            out,
            "{} ({}, level {}, seed {}): gold {}",
            task.id,
            task.category,
            task.level.map_or_else(|| "-".to_owned(), |l| l.to_string()),
            task.seed.map_or_else(|| "-".to_owned(), |s| s.to_string()),
            match &task.gold {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            }
        );
        let _ = writeln!(out, "  parameters: {}", task.parameters);
        for redraw in &task.redraws {
            let _ = writeln!(out, "  redrawn: {} ({})", redraw.parameters, redraw.reason);
        }
        let _ = writeln!(out, "  prompt: {}", task.prompt);
    }
    out
}
