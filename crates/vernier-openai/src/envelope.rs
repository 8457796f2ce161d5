//! The fields shared by every chat and completions answer and stream chunk.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Timings, Usage};

/// An answer or stream chunk: id, model, usage and timings around a list of choices `C`.
///
/// Chat and completions, streamed or not, differ only in their choice type, so the named types
/// are aliases of this one: [`ChatResponse`](crate::ChatResponse),
/// [`ChatChunk`](crate::ChatChunk), [`CompletionResponse`](crate::CompletionResponse) and
/// [`CompletionChunk`](crate::CompletionChunk).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
#[non_exhaustive]
pub struct ResponseEnvelope<C> {
    /// Response id.
    #[serde(default)]
    pub id: String,
    /// `chat.completion`, `chat.completion.chunk` or `text_completion`.
    #[serde(default)]
    pub object: String,
    /// Unix seconds.
    #[serde(default)]
    pub created: u64,
    /// Model that answered.
    #[serde(default)]
    pub model: String,
    /// The answers, or this chunk's pieces (empty in a usage-only chunk).
    #[serde(default)]
    pub choices: Vec<C>,
    /// Token usage. In a stream: on the last chunk, on every chunk with
    /// `continuous_usage_stats`, or (llama.cpp) on the finishing chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// llama.cpp timings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl<C> ResponseEnvelope<C> {
    /// The server's error object when this payload is an error rather than an answer: an
    /// `error` field, or the whole payload when `object` is `"error"`.
    pub(crate) fn error_object(&self) -> Option<Value> {
        if let Some(error) = self.extra.get("error") {
            return Some(error.clone());
        }
        (self.object == "error").then(|| Value::Object(self.extra.clone()))
    }
}
