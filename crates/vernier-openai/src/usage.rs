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

    /// Prompt tokens of images and videos, where the server reports them in
    /// `prompt_tokens_details` (`image_tokens`, `video_tokens`): their sum, `None` when it
    /// reports neither.
    pub fn media_tokens(&self) -> Option<u64> {
        let details = self.prompt_tokens_details.as_ref()?;
        let counts: Vec<u64> = ["image_tokens", "video_tokens"]
            .iter()
            .filter_map(|name| details.extra.get(*name).and_then(Value::as_u64))
            .collect();
        (!counts.is_empty()).then(|| counts.iter().sum())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_tokens_are_summed_where_the_server_counts_them_apart() {
        // vLLM's usage carries only cached_tokens: no media count.
        let vllm: Usage = serde_json::from_str(
            r#"{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305,"prompt_tokens_details":{"cached_tokens":0}}"#,
        )
        .expect("usage");
        assert_eq!(vllm.media_tokens(), None);
        assert_eq!(vllm.cached_tokens(), Some(0));
        let apart: Usage = serde_json::from_str(
            r#"{"prompt_tokens":900,"prompt_tokens_details":{"cached_tokens":0,"image_tokens":512,"video_tokens":256}}"#,
        )
        .expect("usage");
        assert_eq!(apart.media_tokens(), Some(768));
        assert_eq!(Usage::default().media_tokens(), None);
    }
}
