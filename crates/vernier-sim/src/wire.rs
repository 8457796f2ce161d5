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

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Usage {
    pub(crate) prompt_tokens: u32,
    pub(crate) total_tokens: u32,
    pub(crate) completion_tokens: u32,
    pub(crate) prompt_tokens_details: PromptTokensDetails,
    pub(crate) completion_tokens_details: CompletionTokensDetails,
}

#[derive(Debug, Clone, Serialize)]
#[expect(
    clippy::struct_field_names,
    reason = "the field names are the wire's: usage.prompt_tokens_details"
)]
pub(crate) struct PromptTokensDetails {
    pub(crate) cached_tokens: u32,
    /// Prompt tokens of images, as some servers report them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) image_tokens: Option<u32>,
    /// Prompt tokens of videos, as some servers report them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) video_tokens: Option<u32>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_token_ids: Option<&'a [u32]>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChunkChoice<'a> {
    pub(crate) index: u32,
    pub(crate) delta: Delta<'a>,
    pub(crate) logprobs: Option<ChatLogprobs>,
    pub(crate) finish_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) token_ids: Option<Vec<u32>>,
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
}

#[derive(Debug, Serialize)]
pub(crate) struct CompletionChoice<'a> {
    pub(crate) index: u32,
    pub(crate) text: &'a str,
    pub(crate) logprobs: Option<CompletionLogprobs>,
    pub(crate) finish_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) token_ids: Option<Vec<u32>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CompletionLogprobs {
    pub(crate) tokens: Vec<String>,
    pub(crate) token_logprobs: Vec<f64>,
    pub(crate) top_logprobs: Vec<()>,
    pub(crate) text_offset: Vec<usize>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChatResponse<'a> {
    pub(crate) id: &'a str,
    pub(crate) object: &'static str,
    pub(crate) created: u64,
    pub(crate) model: &'a str,
    pub(crate) choices: Vec<ChatChoice>,
    pub(crate) usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_token_ids: Option<&'a [u32]>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChatChoice {
    pub(crate) index: u32,
    pub(crate) message: ResponseMessage,
    pub(crate) logprobs: Option<ChatLogprobs>,
    pub(crate) finish_reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) token_ids: Option<Vec<u32>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ResponseMessage {
    pub(crate) role: &'static str,
    pub(crate) content: Option<String>,
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
    pub(crate) usage: Usage,
}

/// vLLM's error body.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub(crate) object: &'static str,
    pub(crate) message: &'a str,
    #[serde(rename = "type")]
    pub(crate) kind: &'a str,
    pub(crate) param: Option<()>,
    pub(crate) code: u16,
}
