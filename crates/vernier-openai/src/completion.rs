//! Legacy completions (`/v1/completions`) request, response and chunk types.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ResponseEnvelope, StreamOptions};

/// A completions prompt: text, several texts, or token ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum CompletionPrompt {
    /// One text.
    Text(String),
    /// Several texts.
    Texts(Vec<String>),
    /// Token ids.
    Tokens(Vec<u32>),
}

impl Default for CompletionPrompt {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

/// A `POST /v1/completions` request body. Extensions go in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// Model name.
    pub model: String,
    /// The prompt.
    pub prompt: CompletionPrompt,
    /// Output cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-k sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Sampling seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Stop strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Value>,
    /// Stream the answer. The streaming call sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Number of logprobs per token (legacy integer form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<u32>,
    /// Extensions and unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CompletionRequest {
    /// A request for `model` completing `prompt`.
    pub fn new(model: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            prompt: CompletionPrompt::Text(prompt.into()),
            ..Self::default()
        }
    }
}

/// A non-streamed completions answer.
pub type CompletionResponse = ResponseEnvelope<CompletionChoice>;

/// One choice of a completions response or chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionChoice {
    /// Choice index.
    #[serde(default)]
    pub index: u32,
    /// Generated text (whole, or this chunk's piece).
    #[serde(default)]
    pub text: String,
    /// Why generation stopped.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Legacy logprobs object (`tokens`, `token_logprobs`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Value>,
    /// Generated token ids (vLLM `return_token_ids`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ids: Option<Vec<u32>>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One streamed completions chunk: the same shape as a whole answer, holding text pieces.
pub type CompletionChunk = ResponseEnvelope<CompletionChoice>;

impl CompletionChunk {
    /// UTF-8 bytes of text in this chunk.
    pub fn content_len(&self) -> usize {
        self.choices.iter().map(|choice| choice.text.len()).sum()
    }

    /// Generated token ids in this chunk, if the server sent any.
    pub fn token_id_count(&self) -> Option<usize> {
        self.choices
            .iter()
            .filter_map(|choice| choice.token_ids.as_ref().map(Vec::len))
            .reduce(|sum, n| sum + n)
    }

    /// Tokens in the legacy `logprobs.tokens` arrays, if logprobs were sent.
    pub fn logprob_count(&self) -> Option<usize> {
        self.choices
            .iter()
            .filter_map(|choice| {
                choice
                    .logprobs
                    .as_ref()?
                    .get("tokens")?
                    .as_array()
                    .map(Vec::len)
            })
            .reduce(|sum, n| sum + n)
    }

    /// Whether the chunk carried generated text, token ids or logprob entries.
    pub fn is_token_bearing(&self) -> bool {
        self.content_len() > 0
            || self.token_id_count().is_some_and(|n| n > 0)
            || self.logprob_count().is_some_and(|n| n > 0)
    }

    /// The first non-null finish reason in this chunk.
    pub fn finish_reason(&self) -> Option<&str> {
        self.choices
            .iter()
            .find_map(|choice| choice.finish_reason.as_deref())
    }
}
