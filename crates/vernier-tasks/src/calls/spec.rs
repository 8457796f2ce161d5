//! What a tool-call task is drawn from: its kind, the functions offered, the calls expected.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One call a task expects: the function and its arguments as values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectedCall {
    /// Function name.
    pub name: String,
    /// The arguments object: every argument the request states (an optional one left out may
    /// be sent only with its schema's default).
    pub arguments: Value,
}

/// What a tool-call task tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallsKind {
    /// One call with flat arguments and an enum.
    Single,
    /// One call of the right one of two similar functions.
    Choose,
    /// One call with a number and two enums.
    Number,
    /// One call with a nested object and an optional flag.
    Nested,
    /// One call with a list.
    List,
    /// Several calls in one turn.
    Parallel,
    /// No function fits: an answer, no call.
    NoneFits,
    /// `tool_choice: "required"`.
    Required,
    /// `tool_choice` naming a function.
    Named,
    /// A call and its result already in the conversation: the final answer uses the result.
    Result,
}

impl CallsKind {
    /// The snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Choose => "choose",
            Self::Number => "number",
            Self::Nested => "nested",
            Self::List => "list",
            Self::Parallel => "parallel",
            Self::NoneFits => "none_fits",
            Self::Required => "required",
            Self::Named => "named",
            Self::Result => "result",
        }
    }
}

/// What a tool-call task is drawn from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallsSpec {
    /// What it tests.
    pub kind: CallsKind,
    /// The user's request.
    pub request: String,
    /// The functions offered, by name, in the order offered.
    pub offered: Vec<String>,
    /// The calls expected (empty where no call is).
    pub expected: Vec<ExpectedCall>,
    /// `tool_choice`, when the task sets one.
    pub tool_choice: Option<Value>,
    /// A call already made and its result (a `Result` task): the call and the result's text.
    pub history: Option<(ExpectedCall, String)>,
    /// The word the final answer must hold (`NoneFits`, `Result`).
    pub must_mention: Option<String>,
}
