//! The lean chunk's types: the fields of a chat chunk the meter reads, borrowed from the
//! event's text, and the values checked and not kept (a string, an integer, an empty list of
//! tool calls, a count of token ids). Every type here denies unknown fields; the derived
//! deserializer of these types is the reference the scanner (`scan`) is held to.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use crate::{CompletionTokensDetails, PromptTokensDetails, Usage};

/// A chat chunk's metered fields. See the module's documentation.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeanChunk<'a> {
    // The fields the whole chunk types are typed here as there (a string, a number), so that a
    // chunk the whole read refuses is refused here too, and read whole for its error.
    #[serde(default, rename = "id")]
    pub(super) _id: AString,
    #[serde(default, borrow)]
    pub(crate) object: Cow<'a, str>,
    #[serde(default, rename = "created")]
    pub(super) _created: AnInteger,
    #[serde(default, borrow)]
    pub(crate) model: Cow<'a, str>,
    #[serde(default, rename = "system_fingerprint")]
    pub(super) _system_fingerprint: IgnoredAny,
    /// Hosted APIs' service tier and padding fields (the whole chunk keeps them in `extra`).
    #[serde(default, rename = "service_tier")]
    pub(super) _service_tier: IgnoredAny,
    #[serde(default, rename = "obfuscation")]
    pub(super) _obfuscation: IgnoredAny,
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
    pub(super) _logprobs: Option<Never>,
    #[serde(default)]
    pub(crate) token_ids: Option<Count>,
    /// vLLM's stop string or token and `SGLang`'s matched stop, `null` when none (the whole
    /// chunk keeps them in `extra`).
    #[serde(default, rename = "stop_reason")]
    pub(super) _stop_reason: IgnoredAny,
    #[serde(default, rename = "matched_stop")]
    pub(super) _matched_stop: IgnoredAny,
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
    pub(super) _tool_calls: NoToolCalls,
}

/// A `usage` object with the fields [`Usage`] names and no others.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeanUsage {
    #[serde(default)]
    pub(super) prompt_tokens: u64,
    #[serde(default)]
    pub(crate) completion_tokens: u64,
    #[serde(default)]
    pub(super) total_tokens: u64,
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<LeanPromptDetails>,
    #[serde(default)]
    pub(super) completion_tokens_details: Option<LeanCompletionDetails>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LeanPromptDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LeanCompletionDetails {
    #[serde(default)]
    pub(super) reasoning_tokens: Option<u64>,
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
pub(super) enum Never {}

impl<'de> Deserialize<'de> for Never {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom(
            "a value the lean chunk does not read",
        ))
    }
}

/// A string, checked and not kept.
#[derive(Debug, Default, PartialEq)]
pub(super) struct AString;

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
pub(super) struct AnInteger;

impl<'de> Deserialize<'de> for AnInteger {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u64::deserialize(deserializer).map(|_| Self)
    }
}

/// A `tool_calls` list that is absent, `null` or empty (as vLLM sends it with a tool parser
/// on): a fragment in it fails the lean read.
#[derive(Debug, Default, PartialEq)]
pub(super) struct NoToolCalls;

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
    /// The derived deserializer's reading, for the shapes the scanner leaves to it (and, in
    /// tests, the reference the scanner is held to).
    pub(super) fn derived(data: &str) -> Option<LeanChunk<'_>> {
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
