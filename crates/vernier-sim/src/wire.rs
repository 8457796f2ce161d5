//! The simulator's own wire types (deliberately not shared with any client crate).

use serde::{Deserialize, Serialize};

use crate::fault::Fault;

#[derive(Debug, Deserialize)]
pub(crate) struct ChatRequest {
    pub(crate) model: String,
    pub(crate) messages: Vec<ChatMessage>,
    #[serde(default)]
    pub(crate) stream: Option<bool>,
    #[serde(default)]
    pub(crate) stream_options: Option<StreamOptions>,
    #[serde(default)]
    pub(crate) max_tokens: Option<u32>,
    #[serde(default)]
    pub(crate) max_completion_tokens: Option<u32>,
    #[serde(default)]
    pub(crate) cache_salt: Option<String>,
    #[serde(default)]
    pub(crate) return_token_ids: Option<bool>,
    #[serde(default)]
    pub(crate) logprobs: Option<bool>,
    #[serde(default)]
    pub(crate) sim_fault: Option<Fault>,
    /// vLLM's, `SGLang`'s and llama.cpp's: generate `max_tokens` whatever the model says.
    #[serde(default)]
    pub(crate) ignore_eos: Option<bool>,
    /// `OpenAI` tool objects (`{"type": "function", "function": {...}}`), kept as sent.
    #[serde(default)]
    pub(crate) tools: Option<Vec<serde_json::Value>>,
    /// Parsed and otherwise ignored.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "accepted as on the wire; the simulator does not obey it"
    )]
    pub(crate) tool_choice: Option<serde_json::Value>,
    /// Choices asked for: below 1 is refused as vLLM refuses it; more are answered with one.
    #[serde(default)]
    pub(crate) n: Option<i64>,
    /// Structured output asked for: refused when so configured, else not obeyed (the script's
    /// reply is the reply).
    #[serde(default)]
    pub(crate) response_format: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionRequest {
    pub(crate) model: String,
    pub(crate) prompt: PromptInput,
    #[serde(default)]
    pub(crate) stream: Option<bool>,
    #[serde(default)]
    pub(crate) stream_options: Option<StreamOptions>,
    #[serde(default)]
    pub(crate) max_tokens: Option<u32>,
    #[serde(default)]
    pub(crate) cache_salt: Option<String>,
    #[serde(default)]
    pub(crate) return_token_ids: Option<bool>,
    /// Completions take a number of top alternatives; any number turns logprobs on.
    #[serde(default)]
    pub(crate) logprobs: Option<u32>,
    #[serde(default)]
    pub(crate) sim_fault: Option<Fault>,
    /// As in [`ChatRequest::n`].
    #[serde(default)]
    pub(crate) n: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum PromptInput {
    Text(String),
    Texts(Vec<String>),
}

impl PromptInput {
    pub(crate) fn joined(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Texts(texts) => texts.join(""),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct TokenizeRequest {
    #[serde(default)]
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) prompt: Option<String>,
    #[serde(default)]
    pub(crate) messages: Option<Vec<ChatMessage>>,
    /// Tools offered with `messages`; they count as in a chat request.
    #[serde(default)]
    pub(crate) tools: Option<Vec<serde_json::Value>>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct StreamOptions {
    #[serde(default)]
    pub(crate) include_usage: Option<bool>,
    #[serde(default)]
    pub(crate) continuous_usage_stats: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ChatMessage {
    pub(crate) role: String,
    /// Absent or `null` (an assistant message that only calls tools) reads as empty.
    #[serde(default)]
    pub(crate) content: Option<MessageContent>,
    /// The tool calls of an assistant message.
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<MessageToolCall>>,
    /// The call a `role: "tool"` message answers (not rendered into the prompt).
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "accepted as on the wire; the template does not render it"
    )]
    pub(crate) tool_call_id: Option<String>,
    /// The tool's (or speaker's) name (not rendered into the prompt).
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "accepted as on the wire; the template does not render it"
    )]
    pub(crate) name: Option<String>,
}

/// One tool call of an assistant message sent back in the history.
#[derive(Debug, Deserialize)]
pub(crate) struct MessageToolCall {
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "accepted as on the wire; the template does not render it"
    )]
    pub(crate) id: Option<String>,
    #[serde(default, rename = "type")]
    #[expect(
        dead_code,
        reason = "accepted as on the wire; the template does not render it"
    )]
    pub(crate) kind: Option<String>,
    pub(crate) function: MessageFunction,
}

/// The function of a tool call in the history.
#[derive(Debug, Deserialize)]
pub(crate) struct MessageFunction {
    #[serde(default)]
    pub(crate) name: String,
    /// A JSON string on the wire; any other JSON value is taken as its compact text.
    #[serde(default)]
    pub(crate) arguments: serde_json::Value,
}

impl MessageFunction {
    /// The arguments as text: the string itself, or the compact JSON of another value.
    pub(crate) fn arguments_text(&self) -> String {
        match &self.arguments {
            serde_json::Value::String(text) => text.clone(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Deserialize)]
pub(crate) struct ContentPart {
    #[serde(default, rename = "type")]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) text: Option<String>,
}

impl ChatMessage {
    /// Image and video parts (`image_url`, `video_url`, `input_image`).
    pub(crate) fn n_media(&self) -> usize {
        match &self.content {
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .filter(|part| {
                    matches!(
                        part.kind.as_deref(),
                        Some("image_url" | "video_url" | "input_image")
                    )
                })
                .count(),
            _ => 0,
        }
    }

    /// Video parts (`video_url`).
    pub(crate) fn n_videos(&self) -> usize {
        match &self.content {
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .filter(|part| part.kind.as_deref() == Some("video_url"))
                .count(),
            _ => 0,
        }
    }

    /// The text the chat template renders for this message: its content, then (on an
    /// assistant message) each tool call's name and arguments.
    pub(crate) fn prompt_text(&self) -> String {
        let calls: Vec<(String, String)> = self
            .tool_calls
            .iter()
            .flatten()
            .map(|call| (call.function.name.clone(), call.function.arguments_text()))
            .collect();
        crate::tokenizer::sim_assistant_content(
            &self.text(),
            calls.iter().map(|(n, a)| (n.as_str(), a.as_str())),
        )
    }

    pub(crate) fn text(&self) -> String {
        match &self.content {
            None => String::new(),
            Some(MessageContent::Text(text)) => text.clone(),
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .filter_map(|part| part.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// A field vLLM writes, leaves out, or writes as `null`, depending on the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field<T> {
    /// Not written.
    Absent,
    /// Written as `null`.
    Null,
    /// Written with this value.
    Value(T),
}

impl<T> Field<T> {
    /// `Null` for `None`, the value otherwise.
    pub(crate) fn null_or(value: Option<T>) -> Self {
        value.map_or(Self::Null, Self::Value)
    }

    pub(crate) fn is_absent(&self) -> bool {
        matches!(self, Self::Absent)
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Absent | Self::Null => serializer.serialize_none(),
            Self::Value(value) => value.serialize(serializer),
        }
    }
}

/// `usage` as vLLM 0.32 writes it: which details appear, and as what, depends on where the
/// usage rides (see [`crate::plan`]'s `running_usage`, `final_usage` and `response_usage`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Usage {
    pub(crate) prompt_tokens: u32,
    pub(crate) total_tokens: u32,
    pub(crate) completion_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_tokens_details: Option<PromptTokensDetails>,
    /// Absent, `null`, or the reasoning count.
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub(crate) completion_tokens_details: Field<CompletionTokensDetails>,
}

#[derive(Debug, Clone, Serialize)]
#[expect(
    clippy::struct_field_names,
    reason = "the field names are the wire's: usage.prompt_tokens_details"
)]
pub(crate) struct PromptTokensDetails {
    pub(crate) cached_tokens: u32,
    /// vLLM's: prompt tokens this request wrote to the prefix cache (chat only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) created_cache_tokens: Option<u32>,
    /// Prompt tokens of images, as some servers report them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) image_tokens: Option<u32>,
    /// Prompt tokens of videos, as some servers report them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) video_tokens: Option<u32>,
    /// vLLM's per-modality count: absent, `null`, or `{"image": n, ...}`.
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub(crate) multimodal_tokens: Field<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct CompletionTokensDetails {
    pub(crate) reasoning_tokens: u32,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChatChunk<'a> {
    pub(crate) id: &'a str,
    pub(crate) object: &'static str,
    pub(crate) created: u64,
    pub(crate) model: &'a str,
    pub(crate) choices: Vec<ChunkChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<Usage>,
    /// The first chunk's: `null`, or the prompt's ids with `return_token_ids`.
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub(crate) prompt_token_ids: Field<&'a [u32]>,
    /// The first chunk's: always `null` here (vLLM fills it only with `return_prompt_text`).
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub(crate) prompt_text: Field<&'a str>,
    /// On the last chunk: the usage chunk, or the finishing one without usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system_fingerprint: Option<&'a str>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChunkChoice<'a> {
    pub(crate) index: u32,
    pub(crate) delta: Delta<'a>,
    pub(crate) logprobs: Option<ChatLogprobs>,
    pub(crate) finish_reason: Option<&'a str>,
    /// On the finishing chunk only: `null` (no stop string or token ended it).
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub(crate) stop_reason: Field<&'a str>,
    /// On every chunk but the role chunk: `null`, or the chunk's token ids with
    /// `return_token_ids`.
    #[serde(skip_serializing_if = "Field::is_absent")]
    pub(crate) token_ids: Field<Vec<u32>>,
}

#[derive(Debug, Default, Serialize)]
pub(crate) struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ToolCallDelta<'a> {
    pub(crate) index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<&'static str>,
    pub(crate) function: FunctionDelta<'a>,
}

#[derive(Debug, Serialize)]
pub(crate) struct FunctionDelta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<&'a str>,
    pub(crate) arguments: &'a str,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChatLogprobs {
    pub(crate) content: Vec<TokenLogprob>,
}

#[derive(Debug, Serialize)]
pub(crate) struct TokenLogprob {
    pub(crate) token: String,
    pub(crate) logprob: f64,
    pub(crate) bytes: Vec<u8>,
    pub(crate) top_logprobs: Vec<()>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CompletionChunk<'a> {
    pub(crate) id: &'a str,
    pub(crate) object: &'static str,
    pub(crate) created: u64,
    pub(crate) model: &'a str,
    pub(crate) choices: Vec<CompletionChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<Usage>,
    /// As on a chat chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system_fingerprint: Option<&'a str>,
}

/// A completions choice, streamed or not: vLLM 0.32 writes every field on every chunk.
#[derive(Debug, Serialize)]
pub(crate) struct CompletionChoice<'a> {
    pub(crate) index: u32,
    pub(crate) text: &'a str,
    pub(crate) logprobs: Option<CompletionLogprobs>,
    pub(crate) finish_reason: Option<&'a str>,
    pub(crate) stop_reason: Option<&'a str>,
    /// The prompt's ids, on the first chunk with `return_token_ids`.
    pub(crate) prompt_token_ids: Option<&'a [u32]>,
    /// This chunk's token ids with `return_token_ids`.
    pub(crate) token_ids: Option<Vec<u32>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CompletionLogprobs {
    pub(crate) tokens: Vec<String>,
    pub(crate) token_logprobs: Vec<f64>,
    pub(crate) top_logprobs: Vec<()>,
    pub(crate) text_offset: Vec<usize>,
}

/// A non-streamed chat answer, with every field vLLM 0.32 writes (its unused ones `null`).
#[derive(Debug, Serialize)]
pub(crate) struct ChatResponse<'a> {
    pub(crate) id: &'a str,
    pub(crate) object: &'static str,
    pub(crate) created: u64,
    pub(crate) model: &'a str,
    pub(crate) choices: Vec<ChatChoice>,
    pub(crate) service_tier: Option<()>,
    pub(crate) system_fingerprint: &'a str,
    pub(crate) usage: Usage,
    pub(crate) prompt_logprobs: Option<()>,
    pub(crate) prompt_token_ids: Option<&'a [u32]>,
    pub(crate) prompt_text: Option<()>,
    pub(crate) kv_transfer_params: Option<()>,
    pub(crate) ec_transfer_params: Option<()>,
    pub(crate) metrics: Option<()>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChatChoice {
    pub(crate) index: u32,
    pub(crate) message: ResponseMessage,
    pub(crate) logprobs: Option<ChatLogprobs>,
    pub(crate) finish_reason: String,
    pub(crate) stop_reason: Option<()>,
    pub(crate) token_ids: Option<Vec<u32>>,
    pub(crate) routed_experts: Option<()>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ResponseMessage {
    pub(crate) role: &'static str,
    pub(crate) content: Option<String>,
    pub(crate) refusal: Option<()>,
    pub(crate) annotations: Option<()>,
    pub(crate) audio: Option<()>,
    pub(crate) function_call: Option<()>,
    /// vLLM 0.32's name for reasoning, `null` without a reasoning parser. Always `null`
    /// here: the simulator's reasoning goes in `reasoning_content`.
    pub(crate) reasoning: Option<()>,
    /// Reasoning under the name `SGLang`, llama.cpp and earlier vLLM use, when there is some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tool_calls: Vec<ToolCall>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ToolCall {
    pub(crate) id: String,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) function: FunctionCall,
}

#[derive(Debug, Serialize)]
pub(crate) struct FunctionCall {
    pub(crate) name: String,
    pub(crate) arguments: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct CompletionResponse<'a> {
    pub(crate) id: &'a str,
    pub(crate) object: &'static str,
    pub(crate) created: u64,
    pub(crate) model: &'a str,
    pub(crate) choices: Vec<CompletionChoice<'a>>,
    pub(crate) system_fingerprint: &'a str,
    pub(crate) usage: Usage,
}

/// vLLM's error body (0.32: `{"error": {"message", "type", "param", "code"}}`).
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub(crate) error: ErrorInfo<'a>,
}

/// The `error` object of [`ErrorBody`].
#[derive(Debug, Serialize)]
pub(crate) struct ErrorInfo<'a> {
    pub(crate) message: &'a str,
    #[serde(rename = "type")]
    pub(crate) kind: &'a str,
    /// The request field at fault, where vLLM names one.
    pub(crate) param: Option<&'a str>,
    pub(crate) code: u16,
}
