//! `usage` as vLLM 0.32 writes it where it rides: on each chunk with
//! `continuous_usage_stats`, on the stream's final `choices: []` chunk, or in a non-streamed
//! answer. Which details appear, and as what, differs between the three
//! (fixtures/vllm/chat-stream-continuous-usage.sse, completions-stream.sse,
//! chat-nonstream.http).

use crate::shape::StreamShape;
use crate::wire::{CompletionTokensDetails, Field, PromptTokensDetails, Usage};

impl StreamShape<'_> {
    /// `completion_tokens_details` as vLLM 0.32 writes it where it sets the field: the
    /// reasoning count with a reasoning parser, else `null`.
    fn completion_details(&self, reasoning_tokens: u32) -> Field<CompletionTokensDetails> {
        Field::null_or(
            self.reasoning_details
                .then_some(CompletionTokensDetails { reasoning_tokens }),
        )
    }

    /// The image and video counts of `prompt_tokens_details` (the simulator's own names).
    fn media(&self) -> (Option<u32>, Option<u32>) {
        let (images, videos) = self.media_tokens;
        (
            (images > 0).then_some(images),
            (videos > 0).then_some(videos),
        )
    }

    /// vLLM's `multimodal_tokens`: the prompt tokens of each modality, `None` without any.
    fn multimodal_tokens(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        let (images, videos) = self.media_tokens;
        let counts: serde_json::Map<String, serde_json::Value> =
            [("image", images), ("video", videos)]
                .into_iter()
                .filter(|(_, tokens)| *tokens > 0)
                .map(|(name, tokens)| (name.to_owned(), tokens.into()))
                .collect();
        (!counts.is_empty()).then_some(counts)
    }
}

/// The usage riding on each chunk with `continuous_usage_stats`: the counts so far and, on a
/// chat chunk, `completion_tokens_details` (`null` without reasoning); no prompt details
/// (vLLM 0.32: fixtures/vllm/chat-stream-continuous-usage.sse, completions-stream.sse).
pub(crate) fn running_usage(shape: &StreamShape<'_>, done: u32, reasoning_done: u32) -> Usage {
    Usage {
        prompt_tokens: shape.prompt_tokens,
        total_tokens: shape.prompt_tokens + done,
        completion_tokens: done,
        prompt_tokens_details: None,
        completion_tokens_details: if shape.chat {
            shape.completion_details(reasoning_done)
        } else {
            Field::Absent
        },
    }
}

/// The usage of the stream's final `choices: []` chunk: the prompt details (chat adds
/// `created_cache_tokens`), reasoning only where counted, nothing `null` (vLLM writes that
/// chunk without its `None` fields).
pub(crate) fn final_usage(
    shape: &StreamShape<'_>,
    completion_tokens: u32,
    reasoning_tokens: u32,
) -> Usage {
    Usage {
        prompt_tokens: shape.prompt_tokens,
        total_tokens: shape.prompt_tokens + completion_tokens,
        completion_tokens,
        prompt_tokens_details: Some(prompt_details(
            shape,
            shape
                .multimodal_tokens()
                .map_or(Field::Absent, Field::Value),
        )),
        completion_tokens_details: if shape.chat && shape.reasoning_details {
            shape.completion_details(reasoning_tokens)
        } else {
            Field::Absent
        },
    }
}

/// The usage of a non-streamed answer: every field, the unused ones `null`
/// (fixtures/vllm/chat-nonstream.http).
pub(crate) fn response_usage(
    shape: &StreamShape<'_>,
    completion_tokens: u32,
    reasoning_tokens: u32,
) -> Usage {
    Usage {
        prompt_tokens: shape.prompt_tokens,
        total_tokens: shape.prompt_tokens + completion_tokens,
        completion_tokens,
        prompt_tokens_details: Some(prompt_details(
            shape,
            if shape.chat {
                Field::null_or(shape.multimodal_tokens())
            } else {
                Field::Absent
            },
        )),
        completion_tokens_details: shape.completion_details(reasoning_tokens),
    }
}

/// The prompt details of a final chunk or a whole answer: cached tokens, the tokens the
/// request put into the cache (chat only), its media, and `multimodal_tokens` as the caller
/// writes it (absent, or `null` where vLLM writes `null`).
fn prompt_details(
    shape: &StreamShape<'_>,
    multimodal_tokens: Field<serde_json::Map<String, serde_json::Value>>,
) -> PromptTokensDetails {
    let (image_tokens, video_tokens) = shape.media();
    PromptTokensDetails {
        cached_tokens: shape.cached_tokens,
        created_cache_tokens: shape.chat.then_some(shape.created_cache_tokens),
        image_tokens,
        video_tokens,
        multimodal_tokens,
    }
}
