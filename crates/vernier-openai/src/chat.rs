//! Chat-completions request, response and stream-chunk types.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ResponseEnvelope;

/// `stream_options`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StreamOptions {
    /// Send a final usage chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_usage: Option<bool>,
    /// vLLM: send usage on every chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuous_usage_stats: Option<bool>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl StreamOptions {
    /// Options asking for a final usage chunk, and per-chunk usage when `continuous`.
    pub fn usage(continuous: bool) -> Self {
        Self {
            include_usage: Some(true),
            continuous_usage_stats: continuous.then_some(true),
            extra: Map::new(),
        }
    }
}

/// A `POST /v1/chat/completions` request body.
///
/// Vendor extensions (`chat_template_kwargs`, `cache_salt`, `ignore_eos`, `min_tokens`,
/// `return_token_ids`, `cache_prompt`, ...) go in `extra` and are sent as top-level fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChatRequest {
    /// Model name.
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// Output cap (classic name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Output cap (newer name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-k sampling (vLLM, llama.cpp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Sampling seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Stop strings: a string or a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Value>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// `"auto"`, `"none"`, `"required"` or a named function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Stream the answer. The streaming call sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Return log-probabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// Alternatives per token with logprobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// Vendor extensions and unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    /// A request for `model` with `messages` and nothing else set.
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        Self {
            model: model.into(),
            messages,
            ..Self::default()
        }
    }

    /// Sets a top-level extension field such as `cache_salt` or `ignore_eos`.
    #[must_use]
    pub fn with_extra(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }
}

/// A message's content: plain text or a list of parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum MessageContent {
    /// Plain text.
    Text(String),
    /// Content parts (`{"type": "text", "text": ...}`, images, ...).
    Parts(Vec<Value>),
}

impl MessageContent {
    /// The text: the string, or the `text` parts concatenated.
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Parts(parts) => parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
        }
    }
}

/// One message of a conversation (request or response).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The content; `None` for an assistant turn holding only tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<MessageContent>,
    /// Reasoning text (the vLLM and llama.cpp name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Reasoning text (newer vLLM and gateways name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool calls made in an assistant turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<MessageToolCall>>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Participant or tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatMessage {
    /// A message with `role` and text `content`.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: Some(MessageContent::Text(content.into())),
            ..Self::default()
        }
    }

    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }

    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }

    /// An `assistant` message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }

    /// A `tool` result answering `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(tool_call_id.into()),
            ..Self::new("tool", content)
        }
    }

    /// The text content, empty when there is none.
    pub fn text(&self) -> String {
        self.content
            .as_ref()
            .map(MessageContent::text)
            .unwrap_or_default()
    }

    /// The reasoning text under either name.
    pub fn reasoning_text(&self) -> Option<&str> {
        self.reasoning_content
            .as_deref()
            .or(self.reasoning.as_deref())
    }
}

/// A whole tool call inside a message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MessageToolCall {
    /// The call's id.
    #[serde(default)]
    pub id: String,
    /// Always `function` today.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function and its JSON arguments.
    pub function: FunctionCall,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MessageToolCall {
    /// A function call with this id, name and JSON arguments.
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: function_type(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
                extra: Map::new(),
            },
            extra: Map::new(),
        }
    }
}

fn function_type() -> String {
    "function".to_owned()
}

/// A function name with its arguments as a JSON string.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionCall {
    /// Function name.
    #[serde(default)]
    pub name: String,
    /// Arguments, a JSON text.
    #[serde(default)]
    pub arguments: String,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool offered to the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tool {
    /// Always `function` today.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function.
    pub function: FunctionDef,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Tool {
    /// A function tool.
    pub fn function(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Self {
        Self {
            kind: function_type(),
            function: FunctionDef {
                name: name.into(),
                description: Some(description.into()),
                parameters: Some(parameters),
                extra: Map::new(),
            },
            extra: Map::new(),
        }
    }
}

/// A function definition: name, description and JSON-schema parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionDef {
    /// Function name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON schema of the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// Unknown fields (`strict`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A non-streamed chat answer.
pub type ChatResponse = ResponseEnvelope<ChatChoice>;

/// One answer of a [`ChatResponse`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChatChoice {
    /// Choice index.
    #[serde(default)]
    pub index: u32,
    /// The assistant message.
    pub message: ChatMessage,
    /// Why generation stopped.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Log-probabilities, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<ChoiceLogprobs>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One streamed `chat.completion.chunk`.
pub type ChatChunk = ResponseEnvelope<ChunkChoice>;

impl ChatChunk {
    /// UTF-8 bytes of answer content in this chunk.
    pub fn content_len(&self) -> usize {
        self.choices
            .iter()
            .filter_map(|choice| choice.delta.content.as_ref())
            .map(String::len)
            .sum()
    }

    /// UTF-8 bytes of reasoning (`reasoning_content`, `reasoning`, or a `reasoning_details`
    /// list) in this chunk.
    pub fn reasoning_len(&self) -> usize {
        self.choices
            .iter()
            .map(|choice| {
                choice
                    .delta
                    .reasoning_content
                    .as_ref()
                    .map_or(0, String::len)
                    + choice.delta.reasoning.as_ref().map_or(0, String::len)
                    + choice.delta.reasoning_details_text().len()
            })
            .sum()
    }

    /// UTF-8 bytes of tool-call names and argument fragments in this chunk.
    pub fn tool_call_len(&self) -> usize {
        self.choices
            .iter()
            .flat_map(|choice| choice.delta.tool_calls.iter().flatten())
            .filter_map(|call| call.function.as_ref())
            .map(|function| {
                function.name.as_ref().map_or(0, String::len)
                    + function.arguments.as_ref().map_or(0, String::len)
            })
            .sum()
    }

    /// Generated token ids in this chunk (vLLM `return_token_ids`), if the server sent any.
    pub fn token_id_count(&self) -> Option<usize> {
        self.choices
            .iter()
            .filter_map(|choice| choice.token_ids.as_ref().map(Vec::len))
            .reduce(|sum, n| sum + n)
    }

    /// Entries of `logprobs.content` in this chunk, if logprobs were sent.
    pub fn logprob_count(&self) -> Option<usize> {
        self.choices
            .iter()
            .filter_map(|choice| {
                choice
                    .logprobs
                    .as_ref()
                    .and_then(|logprobs| logprobs.content.as_ref())
                    .map(Vec::len)
            })
            .reduce(|sum, n| sum + n)
    }

    /// Whether the chunk carried generated output (text, reasoning, tool-call text, token ids
    /// or logprob entries). A role-only or usage-only chunk does not.
    pub fn is_token_bearing(&self) -> bool {
        self.content_len() > 0
            || self.reasoning_len() > 0
            || self.tool_call_len() > 0
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

/// One choice of a [`ChatChunk`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChunkChoice {
    /// Choice index.
    #[serde(default)]
    pub index: u32,
    /// What this chunk adds.
    #[serde(default)]
    pub delta: Delta,
    /// Set on the chunk that ends the choice.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Log-probabilities of this chunk's tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<ChoiceLogprobs>,
    /// Generated token ids of this chunk (vLLM `return_token_ids`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ids: Option<Vec<u32>>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A streamed delta.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Delta {
    /// Role, on the first chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning text (the vLLM and llama.cpp name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Reasoning text (newer name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool-call fragments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Delta {
    /// Reasoning sent only as a `reasoning_details` list (`reasoning.text` entries' `text`,
    /// `reasoning.summary` entries' `summary`), as some gateways stream it; empty when the
    /// delta also has `reasoning_content` or `reasoning` (those gateways send both, with the
    /// same text) or no such list.
    pub fn reasoning_details_text(&self) -> String {
        if self.reasoning_content.is_some() || self.reasoning.is_some() {
            return String::new();
        }
        let Some(Value::Array(details)) = self.extra.get("reasoning_details") else {
            return String::new();
        };
        details
            .iter()
            .filter_map(|entry| {
                entry
                    .get("text")
                    .or_else(|| entry.get("summary"))
                    .and_then(Value::as_str)
            })
            .collect()
    }
}

/// A fragment of a streamed tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCallDelta {
    /// Which call this fragment belongs to.
    #[serde(default)]
    pub index: u32,
    /// The call id, usually on the first fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `function`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name and argument fragments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDelta>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Function name and argument fragment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionDelta {
    /// Name (whole or a fragment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// An argument text fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `logprobs` of a chat choice.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChoiceLogprobs {
    /// One entry per generated token.
    #[serde(default)]
    pub content: Option<Vec<TokenLogprob>>,
    /// Unknown fields (`refusal`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The log-probability of one generated token.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenLogprob {
    /// Token text.
    #[serde(default)]
    pub token: String,
    /// Natural-log probability.
    #[serde(default)]
    pub logprob: f64,
    /// UTF-8 bytes of the token, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Vec<u8>>,
    /// The most likely alternatives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<Vec<Value>>,
    /// Unknown fields (llama.cpp's `id`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
