//! Sums streamed chunks into the whole answer.

use crate::{ChatChunk, CompletionChunk, ResponseEnvelope, Timings, Usage};

/// A tool call assembled from its streamed fragments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call's position (`tool_calls[].index`).
    pub index: u32,
    /// The call id (empty if the server sent none).
    pub id: String,
    /// Function name.
    pub name: String,
    /// Arguments, a JSON text, concatenated from the fragments.
    pub arguments: String,
}

/// Sums a stream's chunks: content and reasoning apart, tool calls assembled, the finish reason,
/// the last usage and timings, and event counts. Usable on its own with [`push`](Self::push).
///
/// Only choice 0 is assembled into text; counts cover every event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatAccumulator {
    role: Option<String>,
    content: String,
    reasoning: String,
    tool_calls: Vec<ToolCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    timings: Option<Timings>,
    n_events: usize,
    n_token_events: usize,
    n_token_ids: Option<usize>,
    n_logprob_tokens: Option<usize>,
    model: Option<String>,
}

fn add_option(total: &mut Option<usize>, value: Option<usize>) {
    if let Some(value) = value {
        *total = Some(total.unwrap_or(0) + value);
    }
}

impl ChatAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one chat chunk.
    pub fn push(&mut self, chunk: &ChatChunk) {
        self.note_chunk(
            chunk,
            chunk.is_token_bearing(),
            chunk.token_id_count(),
            chunk.logprob_count(),
        );
        for choice in chunk.choices.iter().filter(|choice| choice.index == 0) {
            let delta = &choice.delta;
            self.add_text(
                delta.role.as_deref(),
                delta.content.as_deref(),
                [
                    delta.reasoning_content.as_deref(),
                    delta.reasoning.as_deref(),
                ],
            );
            self.reasoning.push_str(&delta.reasoning_details_text());
            for fragment in delta.tool_calls.iter().flatten() {
                let position = if let Some(position) = self
                    .tool_calls
                    .iter()
                    .position(|call| call.index == fragment.index)
                {
                    position
                } else {
                    self.tool_calls.push(ToolCall {
                        index: fragment.index,
                        ..ToolCall::default()
                    });
                    self.tool_calls.len() - 1
                };
                let call = &mut self.tool_calls[position];
                if let Some(id) = fragment.id.as_deref().filter(|id| !id.is_empty()) {
                    id.clone_into(&mut call.id);
                }
                if let Some(function) = &fragment.function {
                    if let Some(name) = &function.name {
                        call.name.push_str(name);
                    }
                    if let Some(arguments) = &function.arguments {
                        call.arguments.push_str(arguments);
                    }
                }
            }
            if let Some(reason) = &choice.finish_reason {
                self.finish_reason = Some(reason.clone());
            }
        }
    }

    /// Adds one chat chunk read leanly: the same sums as [`push`](Self::push) of the whole
    /// chunk (a lean chunk has no tool calls, logprobs, reasoning details or timings).
    pub(crate) fn push_lean(&mut self, chunk: &crate::lean::LeanChunk<'_>) {
        self.count(
            &chunk.model,
            chunk.is_token_bearing(),
            chunk.token_id_count(),
            None,
        );
        if let Some(usage) = &chunk.usage {
            self.usage = Some(usage.to_usage());
        }
        for choice in chunk.choices.iter().filter(|choice| choice.index == 0) {
            let delta = &choice.delta;
            self.add_text(
                delta.role.as_deref(),
                delta.content.as_deref(),
                [
                    delta.reasoning_content.as_deref(),
                    delta.reasoning.as_deref(),
                ],
            );
            if let Some(reason) = &choice.finish_reason {
                self.finish_reason = Some(reason.clone().into_owned());
            }
        }
    }

    /// Choice 0's role, content and reasoning (under either name), from either reading of a
    /// chunk.
    fn add_text(
        &mut self,
        role: Option<&str>,
        content: Option<&str>,
        reasoning: [Option<&str>; 2],
    ) {
        if let Some(role) = role {
            self.role = Some(role.to_owned());
        }
        if let Some(content) = content {
            self.content.push_str(content);
        }
        for reasoning in reasoning.into_iter().flatten() {
            self.reasoning.push_str(reasoning);
        }
    }

    /// Adds one completions chunk (its text counts as content).
    pub fn push_completion(&mut self, chunk: &CompletionChunk) {
        self.note_chunk(
            chunk,
            chunk.is_token_bearing(),
            chunk.token_id_count(),
            chunk.logprob_count(),
        );
        for choice in chunk.choices.iter().filter(|choice| choice.index == 0) {
            self.content.push_str(&choice.text);
            if let Some(reason) = &choice.finish_reason {
                self.finish_reason = Some(reason.clone());
            }
        }
    }

    /// Counts one event, from either reading of a chunk, and keeps the first model named.
    fn count(
        &mut self,
        model: &str,
        is_token_bearing: bool,
        n_token_ids: Option<usize>,
        n_logprob_tokens: Option<usize>,
    ) {
        self.n_events += 1;
        if is_token_bearing {
            self.n_token_events += 1;
        }
        add_option(&mut self.n_token_ids, n_token_ids);
        add_option(&mut self.n_logprob_tokens, n_logprob_tokens);
        if self.model.is_none() && !model.is_empty() {
            self.model = Some(model.to_owned());
        }
    }

    /// Counts one chunk of either kind and keeps its model, usage and timings.
    fn note_chunk<C>(
        &mut self,
        chunk: &ResponseEnvelope<C>,
        is_token_bearing: bool,
        n_token_ids: Option<usize>,
        n_logprob_tokens: Option<usize>,
    ) {
        self.count(
            &chunk.model,
            is_token_bearing,
            n_token_ids,
            n_logprob_tokens,
        );
        if let Some(usage) = &chunk.usage {
            self.usage = Some(usage.clone());
        }
        if let Some(timings) = &chunk.timings {
            self.timings = Some(timings.clone());
        }
    }

    /// The role from the first delta that named one.
    pub fn role(&self) -> Option<&str> {
        self.role.as_deref()
    }

    /// Answer text so far.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// Reasoning text so far (`reasoning_content` and `reasoning`).
    pub fn reasoning(&self) -> &str {
        &self.reasoning
    }

    /// Tool calls assembled so far, in order of first appearance.
    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.tool_calls
    }

    /// The last finish reason seen.
    pub fn finish_reason(&self) -> Option<&str> {
        self.finish_reason.as_deref()
    }

    /// The last usage seen (the final one, once the stream ended).
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_ref()
    }

    /// The last llama.cpp timings seen.
    pub fn timings(&self) -> Option<&Timings> {
        self.timings.as_ref()
    }

    /// Chunks pushed.
    pub fn n_events(&self) -> usize {
        self.n_events
    }

    /// Chunks that carried generated output.
    pub fn n_token_events(&self) -> usize {
        self.n_token_events
    }

    /// Token ids received in all chunks, if any chunk carried them.
    pub fn n_token_ids(&self) -> Option<usize> {
        self.n_token_ids
    }

    /// Logprob entries received in all chunks, if any chunk carried them.
    pub fn n_logprob_tokens(&self) -> Option<usize> {
        self.n_logprob_tokens
    }

    /// The model named by the first chunk that named one.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(json: &str) -> ChatChunk {
        serde_json::from_str(json).expect("valid chunk")
    }

    #[test]
    fn tool_calls_assemble_and_reasoning_stays_apart() {
        let mut accumulator = ChatAccumulator::new();
        for json in [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":"more"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"name":"b","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Paris\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}"#,
        ] {
            accumulator.push(&chunk(json));
        }
        assert_eq!(accumulator.content(), "");
        assert_eq!(accumulator.reasoning(), "think more");
        assert_eq!(
            accumulator.tool_calls()[0],
            ToolCall {
                index: 0,
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city": "Paris"}"#.into()
            }
        );
        assert_eq!(accumulator.tool_calls()[1].arguments, "{}");
        assert_eq!(accumulator.finish_reason(), Some("tool_calls"));
        assert_eq!(
            accumulator.usage().map(|usage| usage.completion_tokens),
            Some(9)
        );
        assert_eq!(accumulator.n_events(), 8);
        assert_eq!(accumulator.n_token_events(), 5);
    }
}
