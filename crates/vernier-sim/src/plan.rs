//! What a request will produce: its tokens, its engine steps, and its rendered events.

use std::time::Duration;

use bytes::Bytes;
use vernier_stats::SplitMix64;

use crate::config::TokensPerEvent;
use crate::fault::Fault;
use crate::script::ScriptReply;
use crate::shape::StreamShape;
use crate::tokenizer::{Piece, generate_code, generate_prose, pieces, sim_tokenize};
use crate::usage::{final_usage, running_usage};
use crate::wire::{
    ChatChunk, ChatLogprobs, ChunkChoice, CompletionChoice, CompletionChunk, CompletionLogprobs,
    Delta, Field, FunctionDelta, TokenLogprob, ToolCallDelta, Usage,
};

/// One tool call to stream.
#[derive(Debug, Clone)]
pub(crate) struct PlannedToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) name_tokens: Vec<u32>,
    pub(crate) arguments: String,
    pub(crate) argument_pieces: Vec<Piece>,
}

/// Everything a request generates.
#[derive(Debug, Clone)]
pub(crate) struct Generation {
    pub(crate) reasoning: Vec<Piece>,
    pub(crate) content: Vec<Piece>,
    pub(crate) tool_calls: Vec<PlannedToolCall>,
    pub(crate) finish_reason: String,
    /// `usage.completion_tokens` as reported (a script may override the count).
    pub(crate) reported_completion_tokens: Option<u32>,
}

impl Generation {
    /// Generated text: `reasoning_tokens` of prose reasoning, then content, `total` tokens in all.
    pub(crate) fn generated(
        rng: &mut SplitMix64,
        total: u32,
        reasoning_tokens: u32,
        is_code: bool,
    ) -> Self {
        let reasoning_tokens = reasoning_tokens.min(total);
        let reasoning = generate_prose(rng, reasoning_tokens as usize);
        let content_tokens = (total - reasoning_tokens) as usize;
        let content = if is_code {
            generate_code(content_tokens)
        } else {
            generate_prose(rng, content_tokens)
        };
        Self {
            reasoning,
            content,
            tool_calls: Vec::new(),
            finish_reason: "length".to_owned(),
            reported_completion_tokens: None,
        }
    }

    pub(crate) fn scripted(rng: &mut SplitMix64, reply: &ScriptReply) -> Self {
        let tool_calls = reply
            .tool_calls
            .iter()
            .map(|call| PlannedToolCall {
                id: format!("chatcmpl-tool-{:016x}", rng.next_u64()),
                name: call.name.clone(),
                name_tokens: sim_tokenize(&call.name),
                arguments: call.arguments.clone(),
                argument_pieces: pieces(&call.arguments),
            })
            .collect();
        Self {
            reasoning: reply.reasoning.as_deref().map(pieces).unwrap_or_default(),
            content: pieces(&reply.content),
            tool_calls,
            finish_reason: reply.finish_reason().to_owned(),
            reported_completion_tokens: reply.completion_tokens,
        }
    }

    /// `usage.completion_tokens`: the script's count if it gives one, else the tokens `steps`
    /// carry.
    pub(crate) fn completion_tokens(&self, steps: &[Step]) -> u32 {
        self.reported_completion_tokens
            .unwrap_or_else(|| steps.iter().map(Step::tokens).sum())
    }

    /// The reply's token ids as the prefix cache keeps them after the request: reasoning and
    /// content as generated, then each tool call as the chat template re-renders it when the
    /// reply comes back as an assistant message (its name's tokens, then its arguments'
    /// tokens; see [`sim_assistant_content`](crate::sim_assistant_content)).
    ///
    /// For content and arguments these are the generated ids. A tool call's name is generated
    /// as its tokens too, except a name with no token at all, generated as one token of the
    /// whole name, which renders as nothing: the cache holds the re-rendered ids, what a real
    /// server's cache would hold if its template re-renders a call as it was generated.
    /// Reasoning is kept, as vLLM computed it: a client that sends the reply back without its
    /// reasoning diverges there and reuses only the prompt's blocks, as with a real reasoning
    /// model whose template drops past reasoning.
    pub(crate) fn cache_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .reasoning
            .iter()
            .chain(&self.content)
            .map(|piece| piece.id)
            .collect();
        for call in &self.tool_calls {
            ids.extend(sim_tokenize(&call.name));
            ids.extend(call.argument_pieces.iter().map(|piece| piece.id));
        }
        ids
    }

    pub(crate) fn reasoning_tokens(&self) -> u32 {
        u32::try_from(self.reasoning.len()).unwrap_or(u32::MAX)
    }

    pub(crate) fn content_text(&self) -> String {
        self.content.iter().map(|p| p.text.as_str()).collect()
    }

    pub(crate) fn reasoning_text(&self) -> String {
        self.reasoning.iter().map(|p| p.text.as_str()).collect()
    }
}

/// What one engine step emits.
#[derive(Debug, Clone)]
pub(crate) enum StepKind {
    Reasoning,
    Content,
    ToolHeader { call: usize },
    ToolArguments { call: usize },
}

/// Speculative-decoding counts of one step.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SpecCounts {
    pub(crate) drafts: u64,
    pub(crate) draft_tokens: u64,
    pub(crate) accepted_tokens: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) kind: StepKind,
    /// Texts and ids of the tokens (a tool header has the name's ids and empty texts).
    pub(crate) texts: Vec<String>,
    pub(crate) ids: Vec<u32>,
    pub(crate) spec: SpecCounts,
}

impl Step {
    pub(crate) fn tokens(&self) -> u32 {
        u32::try_from(self.ids.len()).unwrap_or(u32::MAX)
    }
}

/// Splits a generation into engine steps. A step never spans two segments (reasoning,
/// content, one tool call's header, its arguments), so a segment's last step may be short.
pub(crate) fn schedule_steps(
    generation: &Generation,
    tokens_per_event: &TokensPerEvent,
    first_step_tokens: Option<u32>,
    is_code: bool,
    rng: &mut SplitMix64,
) -> Vec<Step> {
    let mut first = first_step_tokens;
    let mut draw = || -> (usize, SpecCounts) {
        if let Some(n) = first.take() {
            return (n.max(1) as usize, SpecCounts::default());
        }
        match tokens_per_event {
            TokensPerEvent::Fixed(n) => {
                let n = (*n).max(1);
                let spec = if n > 1 {
                    SpecCounts {
                        drafts: 1,
                        draft_tokens: u64::from(n - 1),
                        accepted_tokens: 0,
                    }
                } else {
                    SpecCounts::default()
                };
                (n as usize, spec)
            }
            TokensPerEvent::Speculative {
                draft_tokens,
                prose,
                code,
            } => {
                let distribution = if is_code { code } else { prose };
                let emitted = rng.categorical(distribution) + 1;
                (
                    emitted,
                    SpecCounts {
                        drafts: 1,
                        draft_tokens: u64::from(*draft_tokens),
                        accepted_tokens: 0,
                    },
                )
            }
        }
    };
    let mut steps = Vec::new();
    let mut segment = |kind: &dyn Fn() -> StepKind, tokens: &[Piece], steps: &mut Vec<Step>| {
        let mut rest = tokens;
        while !rest.is_empty() {
            let (want, mut spec) = draw();
            let take = want.min(rest.len());
            let (now, later) = rest.split_at(take);
            if spec.drafts > 0 {
                spec.accepted_tokens = (take as u64).saturating_sub(1);
            }
            steps.push(Step {
                kind: kind(),
                texts: now.iter().map(|p| p.text.clone()).collect(),
                ids: now.iter().map(|p| p.id).collect(),
                spec,
            });
            rest = later;
        }
    };
    segment(&|| StepKind::Reasoning, &generation.reasoning, &mut steps);
    segment(&|| StepKind::Content, &generation.content, &mut steps);
    for (call, planned) in generation.tool_calls.iter().enumerate() {
        let mut ids = planned.name_tokens.clone();
        if ids.is_empty() {
            ids.push(crate::tokenizer::token_id(&planned.name));
        }
        steps.push(Step {
            kind: StepKind::ToolHeader { call },
            texts: vec![String::new(); ids.len()],
            ids,
            spec: SpecCounts::default(),
        });
        segment(
            &|| StepKind::ToolArguments { call },
            &planned.argument_pieces,
            &mut steps,
        );
    }
    steps
}

/// One item of a stream's plan.
#[derive(Debug)]
pub(crate) enum Planned {
    /// A `data:` event sent as soon as the one before it (role chunk, usage, `[DONE]`, and
    /// injected malformed or over-long lines).
    Immediate(Bytes),
    /// A token-bearing event, sent at its engine step's deadline.
    Tokens {
        bytes: Bytes,
        tokens: u32,
        spec: SpecCounts,
    },
    /// Pause before whatever comes next.
    Stall(Duration),
    /// Close the connection abruptly.
    Drop,
}

impl<'a> StreamShape<'a> {
    /// A `chat.completion.chunk` event of this stream, without the first chunk's extras.
    fn chat_chunk<'c>(&self, choices: Vec<ChunkChoice<'c>>, usage: Option<Usage>) -> ChatChunk<'c>
    where
        'a: 'c,
    {
        ChatChunk {
            id: self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: self.model,
            choices,
            usage,
            prompt_token_ids: Field::Absent,
            prompt_text: Field::Absent,
            system_fingerprint: None,
        }
    }

    /// A `text_completion` event of this stream.
    fn completion_chunk<'c>(
        &self,
        choices: Vec<CompletionChoice<'c>>,
        usage: Option<Usage>,
    ) -> CompletionChunk<'c>
    where
        'a: 'c,
    {
        CompletionChunk {
            id: self.id,
            object: "text_completion",
            created: self.created,
            model: self.model,
            choices,
            usage,
            system_fingerprint: None,
        }
    }
}

fn sse(json: &impl serde::Serialize) -> Bytes {
    let mut line = b"data: ".to_vec();
    // Serializing these plain structs cannot fail.
    let _ = serde_json::to_writer(&mut line, json);
    line.extend_from_slice(b"\n\n");
    Bytes::from(line)
}

pub(crate) fn logprob_of(id: u32) -> f64 {
    -f64::from(id % 1000) / 400.0
}

/// The chat logprob entry of one sampled token.
pub(crate) fn token_logprob(id: u32, token: &str) -> TokenLogprob {
    TokenLogprob {
        token: token.to_owned(),
        logprob: logprob_of(id),
        bytes: token.as_bytes().to_vec(),
        top_logprobs: Vec::new(),
    }
}

/// Renders the whole stream, faults included.
#[expect(
    clippy::too_many_lines,
    reason = "one pass over the steps, in wire order; splitting it scatters the vLLM shape"
)]
pub(crate) fn render_stream(
    shape: &StreamShape<'_>,
    generation: &Generation,
    steps: &[Step],
    fault: Option<&Fault>,
) -> Vec<Planned> {
    let mut plan = Vec::with_capacity(steps.len() + 4);
    let completion_tokens = generation.completion_tokens(steps);
    let reasoning_tokens = generation.reasoning_tokens();
    let running_usage = |done: u32, reasoning: u32| {
        shape
            .continuous_usage
            .then(|| running_usage(shape, done, reasoning))
    };
    // Without a usage chunk, the finishing chunk is the last and carries the fingerprint.
    let last_fingerprint = (!shape.include_usage).then_some(shape.fingerprint);
    if shape.chat {
        let role = ChunkChoice {
            index: 0,
            delta: Delta {
                role: Some("assistant"),
                content: Some(""),
                ..Delta::default()
            },
            logprobs: None,
            finish_reason: None,
            stop_reason: Field::Absent,
            token_ids: Field::Absent,
        };
        // vLLM 0.32's first chunk: `prompt_token_ids` (null unless asked for) and
        // `prompt_text: null` (fixtures/vllm/chat-stream-continuous-usage.sse).
        let chunk = ChatChunk {
            prompt_token_ids: Field::null_or(
                shape.return_token_ids.then_some(shape.prompt_token_ids),
            ),
            prompt_text: Field::Null,
            ..shape.chat_chunk(vec![role], running_usage(0, 0))
        };
        plan.push(Planned::Immediate(sse(&chunk)));
    }
    let mut done = 0_u32;
    let mut reasoning_done = 0_u32;
    for (index, step) in steps.iter().enumerate() {
        done += step.tokens();
        if matches!(step.kind, StepKind::Reasoning) {
            reasoning_done += step.tokens();
        }
        let last = index + 1 == steps.len();
        let finish_reason = last.then_some(generation.finish_reason.as_str());
        let text: String = step.texts.concat();
        let token_ids = shape.return_token_ids.then(|| step.ids.clone());
        let bytes = if shape.chat {
            let mut delta = Delta::default();
            match step.kind {
                StepKind::Reasoning => delta.reasoning_content = Some(&text),
                StepKind::Content => delta.content = Some(&text),
                StepKind::ToolHeader { call } => {
                    let planned = &generation.tool_calls[call];
                    delta.tool_calls = Some(vec![ToolCallDelta {
                        index: u32::try_from(call).unwrap_or(u32::MAX),
                        id: Some(&planned.id),
                        kind: Some("function"),
                        function: FunctionDelta {
                            name: Some(&planned.name),
                            arguments: "",
                        },
                    }]);
                }
                StepKind::ToolArguments { call } => {
                    delta.tool_calls = Some(vec![ToolCallDelta {
                        index: u32::try_from(call).unwrap_or(u32::MAX),
                        id: None,
                        kind: None,
                        function: FunctionDelta {
                            name: None,
                            arguments: &text,
                        },
                    }]);
                }
            }
            let logprobs = shape.logprobs.then(|| ChatLogprobs {
                content: step
                    .ids
                    .iter()
                    .zip(&step.texts)
                    .map(|(id, token)| token_logprob(*id, token))
                    .collect(),
            });
            let choice = ChunkChoice {
                index: 0,
                delta,
                logprobs,
                finish_reason,
                stop_reason: if last { Field::Null } else { Field::Absent },
                token_ids: Field::null_or(token_ids),
            };
            let chunk = ChatChunk {
                system_fingerprint: last_fingerprint.filter(|_| last),
                ..shape.chat_chunk(vec![choice], running_usage(done, reasoning_done))
            };
            sse(&chunk)
        } else {
            let choice = CompletionChoice {
                index: 0,
                text: &text,
                logprobs: shape.logprobs.then(|| completion_logprobs(step)),
                finish_reason,
                stop_reason: None,
                prompt_token_ids: (index == 0 && shape.return_token_ids)
                    .then_some(shape.prompt_token_ids),
                token_ids,
            };
            let chunk = CompletionChunk {
                system_fingerprint: last_fingerprint.filter(|_| last),
                ..shape.completion_chunk(vec![choice], running_usage(done, reasoning_done))
            };
            sse(&chunk)
        };
        plan.push(Planned::Tokens {
            bytes,
            tokens: step.tokens(),
            spec: step.spec,
        });
    }
    if steps.is_empty() {
        plan.push(Planned::Immediate(empty_finish(
            shape,
            &generation.finish_reason,
            last_fingerprint,
        )));
    }
    if shape.include_usage {
        let usage = Some(final_usage(shape, completion_tokens, reasoning_tokens));
        let bytes = if shape.chat {
            sse(&ChatChunk {
                system_fingerprint: Some(shape.fingerprint),
                ..shape.chat_chunk(Vec::new(), usage)
            })
        } else {
            sse(&CompletionChunk {
                system_fingerprint: Some(shape.fingerprint),
                ..shape.completion_chunk(Vec::new(), usage)
            })
        };
        plan.push(Planned::Immediate(bytes));
    }
    plan.push(Planned::Immediate(Bytes::from_static(b"data: [DONE]\n\n")));
    if let Some(fault) = fault {
        inject_fault(&mut plan, fault, shape);
    }
    plan
}

fn completion_logprobs(step: &Step) -> CompletionLogprobs {
    let mut offset = 0;
    let mut text_offset = Vec::with_capacity(step.texts.len());
    for text in &step.texts {
        text_offset.push(offset);
        offset += text.len();
    }
    CompletionLogprobs {
        tokens: step.texts.clone(),
        token_logprobs: step.ids.iter().map(|id| logprob_of(*id)).collect(),
        top_logprobs: Vec::new(),
        text_offset,
    }
}

fn empty_finish(shape: &StreamShape<'_>, finish_reason: &str, fingerprint: Option<&str>) -> Bytes {
    if shape.chat {
        let choice = ChunkChoice {
            index: 0,
            delta: Delta {
                content: Some(""),
                ..Delta::default()
            },
            logprobs: None,
            finish_reason: Some(finish_reason),
            stop_reason: Field::Null,
            token_ids: Field::null_or(shape.return_token_ids.then(Vec::new)),
        };
        sse(&ChatChunk {
            system_fingerprint: fingerprint,
            ..shape.chat_chunk(vec![choice], None)
        })
    } else {
        let choice = CompletionChoice {
            index: 0,
            text: "",
            logprobs: None,
            finish_reason: Some(finish_reason),
            stop_reason: None,
            prompt_token_ids: shape.return_token_ids.then_some(shape.prompt_token_ids),
            token_ids: shape.return_token_ids.then(Vec::new),
        };
        sse(&CompletionChunk {
            system_fingerprint: fingerprint,
            ..shape.completion_chunk(vec![choice], None)
        })
    }
}

/// Size of the over-long line fault: more than the 4 MiB a careful client accepts.
pub(crate) const OVERLONG_LINE_BYTES: usize = 5 * 1024 * 1024;

fn inject_fault(plan: &mut Vec<Planned>, fault: &Fault, shape: &StreamShape<'_>) {
    let (events, item) = match fault {
        Fault::HttpStatus { .. } => return,
        Fault::DropAfterEvents { events } => (*events, Planned::Drop),
        Fault::StallAfterEvents { events, ms } => {
            (*events, Planned::Stall(Duration::from_millis(*ms)))
        }
        Fault::MalformedJsonAfterEvents { events } => {
            let line = format!(
                "data: {{\"id\":\"{}\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"cut off\n\n",
                shape.id
            );
            (*events, Planned::Immediate(Bytes::from(line)))
        }
        Fault::ErrorEventAfterEvents { events, message } => {
            let error = serde_json::json!({
                "error": {"code": 500, "message": message, "type": "server_error"}
            });
            plan.truncate(*events);
            plan.push(Planned::Immediate(Bytes::from(format!(
                "data: {error}\n\n"
            ))));
            return;
        }
        Fault::OverlongLineAfterEvents { events } => {
            let mut line = Vec::with_capacity(OVERLONG_LINE_BYTES + 32);
            line.extend_from_slice(b"data: {\"padding\":\"");
            line.resize(OVERLONG_LINE_BYTES, b'x');
            line.extend_from_slice(b"\"}\n\n");
            (*events, Planned::Immediate(Bytes::from(line)))
        }
    };
    let position = plan.len().min(events);
    plan.insert(position, item);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generation(tokens: u32) -> Generation {
        Generation::generated(&mut SplitMix64::new(1), tokens, 0, false)
    }

    #[test]
    fn fixed_steps_cover_every_token() {
        let generation = generation(10);
        let steps = schedule_steps(
            &generation,
            &TokensPerEvent::Fixed(3),
            None,
            false,
            &mut SplitMix64::new(1),
        );
        let sizes: Vec<u32> = steps.iter().map(Step::tokens).collect();
        assert_eq!(sizes, vec![3, 3, 3, 1]);
        assert_eq!(steps[0].spec.draft_tokens, 2);
        assert_eq!(steps[3].spec.accepted_tokens, 0);
        assert_eq!(steps[0].spec.accepted_tokens, 2);
    }

    #[test]
    fn cached_reply_ids_are_the_generated_ids() {
        let reply = ScriptReply::text("Looking it up.").with_tool_call(
            crate::script::ScriptToolCall::new("web_search", r#"{"query":"river stone"}"#),
        );
        let generation = Generation::scripted(&mut SplitMix64::new(1), &reply);
        let steps = schedule_steps(
            &generation,
            &TokensPerEvent::Fixed(3),
            None,
            false,
            &mut SplitMix64::new(1),
        );
        let generated: Vec<u32> = steps.iter().flat_map(|s| s.ids.iter().copied()).collect();
        assert_eq!(generation.cache_ids(), generated);
        // And they are the tokens of the assistant message that sends the reply back.
        let rendered = crate::tokenizer::sim_assistant_content(
            "Looking it up.",
            [("web_search", r#"{"query":"river stone"}"#)],
        );
        assert_eq!(sim_tokenize(&rendered), generated);
    }

    #[test]
    fn steps_do_not_span_reasoning_and_content() {
        let generation = Generation::generated(&mut SplitMix64::new(1), 10, 4, false);
        let steps = schedule_steps(
            &generation,
            &TokensPerEvent::Fixed(3),
            None,
            false,
            &mut SplitMix64::new(1),
        );
        let sizes: Vec<u32> = steps.iter().map(Step::tokens).collect();
        assert_eq!(sizes, vec![3, 1, 3, 3]);
        assert!(matches!(steps[1].kind, StepKind::Reasoning));
        assert!(matches!(steps[2].kind, StepKind::Content));
    }

    #[test]
    fn speculative_code_prompts_emit_more_per_step() {
        let generation = generation(20_000);
        let mean = |is_code| {
            let steps = schedule_steps(
                &generation,
                &TokensPerEvent::speculative(),
                None,
                is_code,
                &mut SplitMix64::new(9),
            );
            20_000.0 / steps.len() as f64
        };
        let (prose, code) = (mean(false), mean(true));
        // The configured means (2.32 and 3.42 tokens per step), within sampling error.
        let expected = |is_code| TokensPerEvent::speculative().mean_tokens_per_step(is_code);
        assert!((prose - expected(false)).abs() < 0.05, "{prose}");
        assert!((code - expected(true)).abs() < 0.05, "{code}");
    }

    #[test]
    fn faults_land_after_the_asked_number_of_events() {
        let generation = generation(4);
        let steps = schedule_steps(
            &generation,
            &TokensPerEvent::Fixed(1),
            None,
            false,
            &mut SplitMix64::new(1),
        );
        let shape = StreamShape {
            id: "chatcmpl-x",
            model: "m",
            created: 0,
            chat: true,
            include_usage: true,
            continuous_usage: false,
            return_token_ids: false,
            logprobs: false,
            prompt_tokens: 5,
            cached_tokens: 0,
            created_cache_tokens: 0,
            media_tokens: (0, 0),
            prompt_token_ids: &[],
            reasoning_details: false,
            fingerprint: "vernier-sim",
        };
        let plan = render_stream(&shape, &generation, &steps, None);
        // role + 4 tokens + usage + [DONE]
        assert_eq!(plan.len(), 7);
        let plan = render_stream(
            &shape,
            &generation,
            &steps,
            Some(&Fault::DropAfterEvents { events: 3 }),
        );
        assert!(matches!(plan[3], Planned::Drop));
    }
}
