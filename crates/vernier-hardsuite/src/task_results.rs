//! Per-task results: each sample's final outcome, read from the tries the journal holds.
//! The results file (`results.rs`) and the long-context view (`context_report.rs`) both build on
//! these.

use serde::{Deserialize, Serialize};
use vernier_tasks::{Category, Instance, OutcomeKind};

use crate::journal::AttemptRecord;

/// The confidence level of every interval in the reports.
pub const CONFIDENCE: f64 = 0.95;

/// One task sample's final result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SampleResult {
    /// Sample number, from 0.
    pub sample: u32,
    /// Outcome; `infra` here means every try failed and the sample is not scored.
    pub outcome: OutcomeKind,
    /// Why.
    pub detail: String,
    /// The extracted answer.
    pub answer: Option<String>,
    /// For a dataset question: the extraction rule that read the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// `max_tokens` sent.
    pub budget_tokens: u32,
    /// Completion tokens.
    pub completion_tokens: Option<u64>,
    /// Where the count came from.
    pub token_source: Option<String>,
    /// Seconds from the request to the end of the stream.
    pub seconds: Option<f64>,
    /// Stopped by (or used all of) the budget.
    pub hit_budget: bool,
    /// Cut off with no content and no call.
    pub ended_in_reasoning: bool,
    /// Tries it took (more than 1 after infrastructure failures).
    pub n_tries: u32,
    /// `usage.prompt_tokens` (with media, the image tokens included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens`, when the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Prompt tokens of the images and videos, where the server counts them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_tokens: Option<u64>,
    /// The server's own words when it refused the request (`unsupported`,
    /// `context_exceeded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_message: Option<String>,
    /// Time to the first token-bearing event, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// A long-context sample: what was sent and counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<crate::journal::ContextTry>,
}

/// One task's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskResult {
    /// Task id.
    pub id: String,
    /// Category.
    pub category: Category,
    /// Main-run samples.
    pub samples: Vec<SampleResult>,
    /// Re-run samples (only those that were cut off in the main run).
    pub rerun: Vec<SampleResult>,
    /// The family, level, seed and parameters the task was drawn from (absent in files
    /// written before levels existed, and for suite files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<Instance>,
}

/// The sample's scored try, else its last try (infra after every try).
pub(crate) fn final_sample(sample: u32, tries: &[&AttemptRecord]) -> Option<SampleResult> {
    let chosen = tries
        .iter()
        .rev()
        .find(|attempt| attempt.is_scored())
        .or_else(|| tries.last())?;
    Some(SampleResult {
        sample,
        outcome: chosen.outcome,
        detail: chosen.detail.clone(),
        answer: chosen.answer.clone(),
        rule: chosen.rule.clone(),
        budget_tokens: chosen.budget_tokens,
        completion_tokens: chosen.completion_tokens,
        token_source: chosen.token_source.clone(),
        seconds: chosen.elapsed_ms.map(|ms| ms / 1e3),
        hit_budget: chosen.hit_budget,
        ended_in_reasoning: chosen.ended_in_reasoning,
        n_tries: u32::try_from(tries.len()).unwrap_or(u32::MAX),
        prompt_tokens: chosen.prompt_tokens,
        cached_tokens: chosen.cached_tokens,
        media_tokens: chosen.media_tokens,
        server_message: chosen.server_message.clone(),
        ttft_ms: chosen.ttft_ms,
        context: chosen.context.clone(),
    })
}
