//! A chat chunk read without owning it, for the metered stream's hot path.
//!
//! [`LeanChunk`] holds only what the meter and [`ChatAccumulator`](crate::ChatAccumulator)
//! take from a chunk, borrowed from the event's text: no `String` for the id, object or model,
//! no `Vec` of token ids (they are counted), no map of unknown fields, and nothing to move
//! through the stream but a few counts. Every type here denies unknown fields and accepts only
//! `null` where the whole chunk type would hold something (log-probabilities, tool calls): a
//! chunk with anything else fails to read, and the caller reads it whole as a
//! [`ChatChunk`](crate::ChatChunk) instead. So both reads of an event agree by construction,
//! and the rare chunks (tool calls, logprobs, llama.cpp's timings, errors) take the whole path.
//!
//! The usual chunk is read by a scanner written for it (`scan`), in one pass; whatever it is
//! not sure of goes to the derived deserializer of these types, which stays the reference.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use crate::{CompletionTokensDetails, PromptTokensDetails, Usage};

mod scan;

/// A chat chunk's metered fields. See the module's documentation.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeanChunk<'a> {
    // The fields the whole chunk types are typed here as there (a string, a number), so that a
    // chunk the whole read refuses is refused here too, and read whole for its error.
    #[serde(default, rename = "id")]
    _id: AString,
    #[serde(default, borrow)]
    pub(crate) object: Cow<'a, str>,
    #[serde(default, rename = "created")]
    _created: AnInteger,
    #[serde(default, borrow)]
    pub(crate) model: Cow<'a, str>,
    #[serde(default, rename = "system_fingerprint")]
    _system_fingerprint: IgnoredAny,
    /// Hosted APIs' service tier and padding fields (the whole chunk keeps them in `extra`).
    #[serde(default, rename = "service_tier")]
    _service_tier: IgnoredAny,
    #[serde(default, rename = "obfuscation")]
    _obfuscation: IgnoredAny,
    #[serde(default, borrow)]
    pub(crate) choices: Vec<LeanChoice<'a>>,
    #[serde(default)]
    pub(crate) usage: Option<LeanUsage>,
}

/// One choice of a [`LeanChunk`].
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeanChoice<'a> {
    #[serde(default)]
    pub(crate) index: u32,
    #[serde(default, borrow)]
    pub(crate) delta: LeanDelta<'a>,
    #[serde(default, borrow)]
    pub(crate) finish_reason: Option<Cow<'a, str>>,
    #[serde(default, rename = "logprobs")]
    _logprobs: Option<Never>,
    #[serde(default)]
    pub(crate) token_ids: Option<Count>,
    /// vLLM's stop string or token and `SGLang`'s matched stop, `null` when none (the whole
    /// chunk keeps them in `extra`).
    #[serde(default, rename = "stop_reason")]
    _stop_reason: IgnoredAny,
    #[serde(default, rename = "matched_stop")]
    _matched_stop: IgnoredAny,
}

/// The delta of a [`LeanChoice`].
#[derive(Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeanDelta<'a> {
    #[serde(default, borrow)]
    pub(crate) role: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(crate) content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(crate) reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(crate) reasoning: Option<Cow<'a, str>>,
    #[serde(default, rename = "tool_calls")]
    _tool_calls: NoToolCalls,
}

/// A `usage` object with the fields [`Usage`] names and no others.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeanUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    pub(crate) completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<LeanPromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<LeanCompletionDetails>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeanPromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeanCompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl LeanUsage {
    /// The [`Usage`] the whole chunk would hold: the same fields, and nothing in `extra`
    /// (this type took no other field).
    pub(crate) fn to_usage(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            total_tokens: self.total_tokens,
            prompt_tokens_details: self.prompt_tokens_details.as_ref().map(|details| {
                PromptTokensDetails {
                    cached_tokens: details.cached_tokens,
                    ..PromptTokensDetails::default()
                }
            }),
            completion_tokens_details: self.completion_tokens_details.as_ref().map(|details| {
                CompletionTokensDetails {
                    reasoning_tokens: details.reasoning_tokens,
                    ..CompletionTokensDetails::default()
                }
            }),
            ..Usage::default()
        }
    }
}

/// A value that can only be absent or `null`: any other value fails the lean read.
#[derive(Debug, PartialEq)]
enum Never {}

impl<'de> Deserialize<'de> for Never {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom(
            "a value the lean chunk does not read",
        ))
    }
}

/// A string, checked and not kept.
#[derive(Debug, Default, PartialEq)]
struct AString;

impl<'de> Deserialize<'de> for AString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;
        impl Visitor<'_> for StrVisitor {
            type Value = AString;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<AString, E> {
                Ok(AString)
            }
        }
        deserializer.deserialize_str(StrVisitor)
    }
}

/// An integer that fits a `u64`, checked and not kept.
#[derive(Debug, Default, PartialEq)]
struct AnInteger;

impl<'de> Deserialize<'de> for AnInteger {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u64::deserialize(deserializer).map(|_| Self)
    }
}

/// A `tool_calls` list that is absent, `null` or empty (as vLLM sends it with a tool parser
/// on): a fragment in it fails the lean read.
#[derive(Debug, Default, PartialEq)]
struct NoToolCalls;

impl<'de> Deserialize<'de> for NoToolCalls {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EmptyVisitor;
        impl<'de> Visitor<'de> for EmptyVisitor {
            type Value = NoToolCalls;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an empty list of tool calls")
            }

            fn visit_none<E: serde::de::Error>(self) -> Result<NoToolCalls, E> {
                Ok(NoToolCalls)
            }

            fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<NoToolCalls, D::Error> {
                inner.deserialize_seq(EmptyVisitor)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoToolCalls, A::Error> {
                match seq.next_element::<IgnoredAny>()? {
                    None => Ok(NoToolCalls),
                    Some(_) => Err(serde::de::Error::custom(
                        "a tool-call fragment, read by the whole chunk",
                    )),
                }
            }
        }
        deserializer.deserialize_option(EmptyVisitor)
    }
}

/// The length of a list of token ids (each checked to be a `u32`, as the whole chunk's
/// `Vec<u32>` would), without keeping them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Count(pub(crate) usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountVisitor;
        impl<'de> Visitor<'de> for CountVisitor {
            type Value = Count;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of token ids")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
                let mut n = 0;
                while seq.next_element::<u32>()?.is_some() {
                    n += 1;
                }
                Ok(Count(n))
            }
        }
        deserializer.deserialize_seq(CountVisitor)
    }
}

impl LeanChunk<'_> {
    /// Reads `data` leanly, or `None` when the chunk holds anything this type does not (the
    /// caller then reads it whole). An error payload (`"object": "error"`) is never lean.
    pub(crate) fn read(data: &str) -> Option<LeanChunk<'_>> {
        let chunk = scan::scan(data).or_else(|| Self::derived(data))?;
        (chunk.object != "error").then_some(chunk)
    }

    /// The derived deserializer's reading, for the shapes the scanner leaves to it (and, in
    /// tests, the reference the scanner is held to).
    fn derived(data: &str) -> Option<LeanChunk<'_>> {
        serde_json::from_str(data).ok()
    }

    /// UTF-8 bytes of answer content (as [`ChatChunk::content_len`](crate::ChatChunk::content_len)).
    pub(crate) fn content_len(&self) -> usize {
        self.choices
            .iter()
            .filter_map(|choice| choice.delta.content.as_deref())
            .map(str::len)
            .sum()
    }

    /// UTF-8 bytes of reasoning (a lean chunk has no `reasoning_details`).
    pub(crate) fn reasoning_len(&self) -> usize {
        self.choices
            .iter()
            .map(|choice| {
                choice
                    .delta
                    .reasoning_content
                    .as_deref()
                    .map_or(0, str::len)
                    + choice.delta.reasoning.as_deref().map_or(0, str::len)
            })
            .sum()
    }

    /// Token ids in this chunk, if any choice sent a list.
    pub(crate) fn token_id_count(&self) -> Option<usize> {
        self.choices
            .iter()
            .filter_map(|choice| choice.token_ids.map(|count| count.0))
            .reduce(|sum, n| sum + n)
    }

    /// Whether the chunk carried generated output (a lean chunk has no tool calls or
    /// logprobs).
    pub(crate) fn is_token_bearing(&self) -> bool {
        self.content_len() > 0
            || self.reasoning_len() > 0
            || self.token_id_count().is_some_and(|n| n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::LeanChunk;

    #[test]
    fn the_chunks_of_a_metered_stream_read_leanly() {
        // Chunks as the servers sent them: llama-server b11434 and llama-cpp-python 0.3.36
        // (fixtures/real-transcripts, chat-stream-usage.sse), and the simulator's vLLM-shaped
        // chunk with token ids and per-event usage.
        let llama_server = r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" hello"}}],"created":1795972504,"id":"chatcmpl-x58W","model":"gemma-3-270m-q4_k_m","system_fingerprint":"b11434-unknown","object":"chat.completion.chunk"}"#;
        let python = r#"{"id": "chatcmpl-eba8", "model": "gemma-3-270m-q4_k_m", "created": 1795973269, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Say"}, "logprobs": null, "finish_reason": null}]}"#;
        let vllm = r#"{"id":"chatcmpl-e3dd","object":"chat.completion.chunk","created":1796187449,"model":"vernier-sim","choices":[{"index":0,"delta":{"content":" wa\u00efter"},"logprobs":null,"finish_reason":null,"token_ids":[160,7]}],"usage":{"prompt_tokens":8,"total_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}"#;
        let chunk = LeanChunk::read(llama_server).expect("lean");
        assert_eq!((chunk.content_len(), chunk.token_id_count()), (6, None));
        let chunk = LeanChunk::read(python).expect("lean");
        assert_eq!(chunk.content_len(), 3);
        // SGLang's matched stop and vLLM's stop reason and empty tool-call list (with a tool
        // parser on) are read leanly too; a tool-call fragment is not.
        let sglang = r#"{"choices":[{"index":0,"delta":{"content":"a","tool_calls":[]},"matched_stop":null,"stop_reason":null}]}"#;
        assert_eq!(LeanChunk::read(sglang).expect("lean").content_len(), 1);
        let chunk = LeanChunk::read(vllm).expect("lean");
        // " waïter": the escape is decoded, 'ï' is two bytes in UTF-8.
        assert_eq!(chunk.content_len(), 8);
        assert_eq!(chunk.token_id_count(), Some(2));
        let usage = chunk.usage.as_ref().expect("usage").to_usage();
        assert_eq!(
            (
                usage.completion_tokens,
                usage.cached_tokens(),
                usage.reasoning_tokens()
            ),
            (2, Some(0), Some(0))
        );
    }

    #[test]
    fn anything_the_lean_chunk_does_not_hold_sends_the_chunk_to_the_whole_read() {
        let fall_back = [
            // A tool-call fragment (llama-server's shape).
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}}]}"#,
            // Log-probabilities.
            r#"{"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-0.1}]}}]}"#,
            // Reasoning sent only as a list (a gateway's shape).
            r#"{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"hm"}]}}]}"#,
            // llama.cpp's timings on the last chunk.
            r#"{"choices":[],"timings":{"prompt_n":3,"predicted_n":2}}"#,
            // Error payloads: an `error` field, or the whole object an error.
            r#"{"error":{"code":500,"message":"slot failed"}}"#,
            r#"{"object":"error","message":"engine dead","code":500}"#,
            // A usage field the lean usage does not name.
            r#"{"choices":[],"usage":{"completion_tokens":3,"prompt_tokens_details":{"image_tokens":9}}}"#,
            // An unknown field anywhere.
            r#"{"choices":[{"index":0,"delta":{"content":"a"},"refusal":null}]}"#,
            r#"{"choices":[],"prompt_token_ids":[1,2]}"#,
            // Fields the whole read refuses: an id that is not a string, a null model.
            r#"{"id":7,"choices":[]}"#,
            r#"{"model":null,"choices":[]}"#,
            // A token id that is not a u32, and text that is not JSON.
            r#"{"choices":[{"index":0,"delta":{},"token_ids":[-1]}]}"#,
            r#"{"choices":[{"index":0,"#,
        ];
        for data in fall_back {
            assert!(LeanChunk::read(data).is_none(), "{data}");
        }
    }
}
