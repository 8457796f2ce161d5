//! Scripted replies: ordered rules from a prompt pattern to a fixed answer.

use std::path::Path;

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::SimError;
use crate::fault::Fault;

/// One tool call in a scripted reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScriptToolCall {
    /// Function name.
    pub name: String,
    /// Arguments as a JSON string, streamed in fragments.
    pub arguments: String,
}

impl ScriptToolCall {
    /// A tool call with these name and arguments.
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// The fixed answer of a rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ScriptReply {
    /// Answer text.
    #[serde(default)]
    pub content: String,
    /// Reasoning text streamed as `reasoning_content` before the answer.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// Tool calls, streamed after the content.
    #[serde(default)]
    pub tool_calls: Vec<ScriptToolCall>,
    /// `"stop"`, `"length"` or `"tool_calls"`; default `"tool_calls"` when there are tool
    /// calls, else `"stop"`.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Reported `usage.completion_tokens`; default: counted by the simulator's tokenizer.
    #[serde(default)]
    pub completion_tokens: Option<u32>,
    /// The first `n` requests that match this rule get the fault; later ones succeed.
    #[serde(
        default,
        serialize_with = "serialize_attempts",
        deserialize_with = "deserialize_attempts"
    )]
    pub fault_first_attempts: Option<(usize, Fault)>,
    /// Answer a long-context retrieval prompt by reading its needles (the content above is
    /// then replaced by `ANSWER: <value>`), missing where the rules say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<crate::recall::Recall>,
    /// The reply given instead while more requests are in flight than
    /// [`crate::SimConfig::degrade_above_in_flight`] allows (a model whose answers worsen
    /// under load: batching, speculative decoding or a quantised cache changing outputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<Box<ScriptReply>>,
}

impl ScriptReply {
    /// A reply with this content and nothing else.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }

    /// Sets the reply given under load (see [`ScriptReply::degraded`]).
    #[must_use]
    pub fn with_degraded(mut self, degraded: ScriptReply) -> Self {
        self.degraded = Some(Box::new(degraded));
        self
    }

    /// Sets the reasoning text.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// Adds a tool call.
    #[must_use]
    pub fn with_tool_call(mut self, call: ScriptToolCall) -> Self {
        self.tool_calls.push(call);
        self
    }

    /// Sets the finish reason.
    #[must_use]
    pub fn with_finish_reason(mut self, finish_reason: impl Into<String>) -> Self {
        self.finish_reason = Some(finish_reason.into());
        self
    }

    /// Sets the reported completion tokens.
    #[must_use]
    pub fn with_completion_tokens(mut self, completion_tokens: u32) -> Self {
        self.completion_tokens = Some(completion_tokens);
        self
    }

    /// Reads the needles out of the prompt instead of a fixed content.
    #[must_use]
    pub fn with_recall(mut self, recall: crate::recall::Recall) -> Self {
        self.recall = Some(recall);
        self
    }

    /// Gives the first `attempts` matching requests this fault.
    #[must_use]
    pub fn with_fault_first_attempts(mut self, attempts: usize, fault: Fault) -> Self {
        self.fault_first_attempts = Some((attempts, fault));
        self
    }

    pub(crate) fn finish_reason(&self) -> &str {
        match &self.finish_reason {
            Some(reason) => reason,
            None if self.tool_calls.is_empty() => "stop",
            None => "tool_calls",
        }
    }
}

#[derive(Serialize, Deserialize)]
struct AttemptsOnWire {
    attempts: usize,
    fault: Fault,
}

#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with passes a reference to the field"
)]
fn serialize_attempts<S: Serializer>(
    value: &Option<(usize, Fault)>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    value
        .as_ref()
        .map(|(attempts, fault)| AttemptsOnWire {
            attempts: *attempts,
            fault: fault.clone(),
        })
        .serialize(serializer)
}

fn deserialize_attempts<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<(usize, Fault)>, D::Error> {
    Ok(Option::<AttemptsOnWire>::deserialize(deserializer)?.map(|w| (w.attempts, w.fault)))
}

/// One rule: a regular expression over the last user message, and its reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ScriptRule {
    /// Regular expression (regex crate syntax) searched in the last user message.
    pub pattern: String,
    /// The reply sent when the pattern matches.
    pub reply: ScriptReply,
}

impl ScriptRule {
    /// A rule with this pattern and reply.
    pub fn new(pattern: impl Into<String>, reply: ScriptReply) -> Self {
        Self {
            pattern: pattern.into(),
            reply,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptFile {
    Rules { rules: Vec<ScriptRule> },
    Bare(Vec<ScriptRule>),
}

/// Ordered rules; the first whose pattern matches wins, and no match falls back to generated
/// text.
///
/// JSON: `{"rules": [{"pattern": "capital of France", "reply": {"content": "Paris."}}]}` (or
/// the bare array). TOML: `[[rules]]` tables with `pattern` and a `[rules.reply]` table.
/// `fault_first_attempts` is written `{"attempts": 2, "fault": {"kind": "http_status",
/// "status": 500}}`.
#[derive(Debug, Clone)]
pub struct Script {
    rules: Vec<ScriptRule>,
    patterns: Vec<Regex>,
}

impl Script {
    /// A script from rules built in code.
    pub fn new(rules: Vec<ScriptRule>) -> Result<Self, SimError> {
        let patterns = rules
            .iter()
            .map(|rule| {
                Regex::new(&rule.pattern).map_err(|source| SimError::ScriptPattern {
                    pattern: rule.pattern.clone(),
                    source,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { rules, patterns })
    }

    /// A script from JSON text.
    pub fn from_json_str(text: &str) -> Result<Self, SimError> {
        match serde_json::from_str(text).map_err(SimError::ScriptJson)? {
            ScriptFile::Rules { rules } | ScriptFile::Bare(rules) => Self::new(rules),
        }
    }

    /// A script from TOML text.
    pub fn from_toml_str(text: &str) -> Result<Self, SimError> {
        #[derive(Deserialize)]
        struct TomlFile {
            rules: Vec<ScriptRule>,
        }
        let file: TomlFile = toml::from_str(text).map_err(SimError::ScriptToml)?;
        Self::new(file.rules)
    }

    /// A script from a file: TOML when the name ends in `.toml`, JSON otherwise.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, SimError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SimError::ScriptRead {
            path: path.to_owned(),
            source,
        })?;
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
        {
            Self::from_toml_str(&text)
        } else {
            Self::from_json_str(&text)
        }
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[ScriptRule] {
        &self.rules
    }

    /// Index of the first rule matching `last_user_message`.
    pub(crate) fn match_index(&self, last_user_message: &str) -> Option<usize> {
        self.patterns
            .iter()
            .position(|pattern| pattern.is_match(last_user_message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_match_wins_in_json() {
        let script = Script::from_json_str(
            r#"{"rules": [
                {"pattern": "(?i)weather", "reply": {"tool_calls": [{"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}]}},
                {"pattern": "Paris|weather", "reply": {"content": "Paris.", "finish_reason": "length",
                  "fault_first_attempts": {"attempts": 2, "fault": {"kind": "http_status", "status": 500}}}}
            ]}"#,
        )
        .expect("valid script");
        assert_eq!(script.match_index("What is the WEATHER in Paris?"), Some(0));
        assert_eq!(script.match_index("Tell me about Paris"), Some(1));
        assert_eq!(script.match_index("nothing"), None);
        assert_eq!(script.rules()[0].reply.finish_reason(), "tool_calls");
        assert_eq!(script.rules()[1].reply.finish_reason(), "length");
        assert_eq!(
            script.rules()[1].reply.fault_first_attempts,
            Some((
                2,
                Fault::HttpStatus {
                    status: 500,
                    body: None
                }
            ))
        );
    }

    #[test]
    fn toml_and_bare_array_forms() {
        let script = Script::from_toml_str(
            "[[rules]]\npattern = \"2 \\\\+ 2\"\n[rules.reply]\ncontent = \"4\"\nreasoning = \"add\"\n",
        )
        .expect("valid toml");
        assert_eq!(script.match_index("what is 2 + 2"), Some(0));
        assert_eq!(script.rules()[0].reply.reasoning.as_deref(), Some("add"));
        let bare = Script::from_json_str(r#"[{"pattern": "x", "reply": {"content": "y"}}]"#)
            .expect("bare array");
        assert_eq!(bare.rules().len(), 1);
    }

    #[test]
    fn errors_name_the_problem() {
        let error =
            Script::new(vec![ScriptRule::new("(", ScriptReply::text("x"))]).expect_err("bad regex");
        assert!(
            error.to_string().starts_with("compile script pattern `(`"),
            "{error}"
        );
        let error =
            Script::from_json_str(r#"{"rules": [{"pattern": "x", "reply": {"contnet": "y"}}]}"#)
                .expect_err("typo");
        assert!(
            error.to_string().starts_with("parse script JSON"),
            "{error}"
        );
        let error = Script::from_path("/no/such/script.json").expect_err("missing");
        assert!(
            error.to_string().contains("/no/such/script.json"),
            "{error}"
        );
        // The cause is left to the error chain, not repeated in the message.
        let cause = std::error::Error::source(&error)
            .expect("an I/O cause")
            .to_string();
        assert!(!error.to_string().contains(&cause), "{error}");
    }
}
