//! Token usage and llama.cpp timings, shared by chat and completions.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `usage` object. With `continuous_usage_stats` it may ride on every chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens in the prompt.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens generated so far (or in total, in the final usage).
    #[serde(default)]
    pub completion_tokens: u64,
    /// Prompt plus completion.
    #[serde(default)]
    pub total_tokens: u64,
    /// Prompt details: cached tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// Completion details: reasoning tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
    /// Unknown fields, kept for a faithful round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Usage {
    /// `prompt_tokens_details.cached_tokens`, if reported.
    pub fn cached_tokens(&self) -> Option<u64> {
        self.prompt_tokens_details
            .as_ref()
            .and_then(|details| details.cached_tokens)
    }

    /// `completion_tokens_details.reasoning_tokens`, if reported.
    pub fn reasoning_tokens(&self) -> Option<u64> {
        self.completion_tokens_details
            .as_ref()
            .and_then(|details| details.reasoning_tokens)
    }
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptTokensDetails {
    /// Prompt tokens served from the prefix cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionTokensDetails {
    /// Completion tokens spent on reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// llama.cpp's per-request `timings` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Timings {
    /// Prompt tokens taken from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_n: Option<u64>,
    /// Prompt tokens evaluated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_n: Option<u64>,
    /// Milliseconds spent on the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_ms: Option<f64>,
    /// Milliseconds per prompt token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_per_token_ms: Option<f64>,
    /// Prompt tokens per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_per_second: Option<f64>,
    /// Tokens generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_n: Option<u64>,
    /// Milliseconds spent generating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_ms: Option<f64>,
    /// Milliseconds per generated token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_per_token_ms: Option<f64>,
    /// Generated tokens per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_per_second: Option<f64>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
