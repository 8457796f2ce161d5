//! The request a task is sent as: its messages (a history's calls and results included), its
//! tools and request fields, the budget, the sampling and the extra body.

use serde_json::{Map, Value};
use vernier_openai::{ChatMessage, ChatRequest, StreamOptions, Tool};
use vernier_tasks::Task;

use crate::journal::Sampling;

/// The request for one task: its messages and tools, the budget as `max_tokens`, the sampling,
/// usage in the stream, then the extra body merged over the top. No stop sequences are sent.
pub(crate) fn build_request(
    task: &Task,
    model: &str,
    sampling: &Sampling,
    extra_body: &Map<String, Value>,
    budget_tokens: u32,
) -> Result<ChatRequest, String> {
    let messages = task.messages.iter().map(chat_message).collect();
    let mut request = ChatRequest::new(model, messages);
    request.max_tokens = Some(u64::from(budget_tokens));
    request.temperature = sampling.temperature;
    request.top_p = sampling.top_p;
    request.top_k = sampling.top_k;
    if let Some(penalty) = sampling.presence_penalty {
        request
            .extra
            .insert("presence_penalty".to_owned(), penalty.into());
    }
    if !task.tools.is_empty() {
        request.tools = Some(
            task.tools
                .iter()
                .map(|tool| Tool::function(&tool.name, &tool.description, tool.parameters.clone()))
                .collect(),
        );
    }
    for (key, value) in &task.request_fields {
        request.extra.insert(key.clone(), value.clone());
    }
    if let Some(choice) = request.extra.remove("tool_choice") {
        request.tool_choice = Some(choice);
    }
    request.stream_options = Some(StreamOptions::usage(false));
    if extra_body.is_empty() {
        return Ok(request);
    }
    let mut body = serde_json::to_value(&request).map_err(|error| error.to_string())?;
    if let Value::Object(fields) = &mut body {
        for (key, value) in extra_body {
            fields.insert(key.clone(), value.clone());
        }
        fields.remove("stop");
    }
    serde_json::from_value(body).map_err(|error| error.to_string())
}

/// A task's message as sent: an assistant turn of the history with its calls (content `null`
/// when it has none), a tool result with the call it answers.
fn chat_message(message: &vernier_tasks::Message) -> ChatMessage {
    let mut sent = ChatMessage::new(message.role.clone(), message.content.clone());
    if !message.tool_calls.is_empty() {
        if message.content.is_empty() {
            sent.content = None;
        }
        sent.tool_calls = Some(
            message
                .tool_calls
                .iter()
                .map(|call| {
                    vernier_openai::MessageToolCall::function(
                        call.id.clone(),
                        call.name.clone(),
                        call.arguments.clone(),
                    )
                })
                .collect(),
        );
    }
    sent.tool_call_id.clone_from(&message.tool_call_id);
    sent
}
