//! Tasks, checkers, replies and outcomes (their grading is in `grading.rs`).

use std::sync::Arc;

#[cfg(feature = "grader")]
use crate::code_check::CodeCheck;
use serde::{Deserialize, Serialize};

use crate::draw::Instance;

/// The kind of a task: which family it belongs to (`math`, `code`, `tools`, `context`, ...).
///
/// Kinds are open: each family defines its own constant (`Category::MATH` in `math.rs`) and
/// registers itself in `kinds.rs`, where the order reports list them, each kind's default budget
/// and the proof of its generated tasks live. A name read from a file that no family registers
/// is kept as it was written (a results file from a newer Vernier still reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Category(&'static str);

impl Category {
    /// A category named `name` (lowercase, as files and reports write it).
    pub const fn new(name: &'static str) -> Self {
        Self(name)
    }

    /// The lowercase name used in files and reports.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Category {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

/// What a task of one family carries beyond its prompt and checker (a long-context plan, the
/// images or clips and their gold, a dataset question, the parameters of a math problem). Any
/// `'static` type that is `Debug`, `PartialEq`, `Send` and `Sync` is one; a family reads its own
/// back with [`Task::spec`].
pub trait TaskSpec: std::any::Any + std::fmt::Debug + Send + Sync {
    /// Whether `other` is the same spec (same type, equal value).
    fn same_as(&self, other: &dyn TaskSpec) -> bool;
    /// The spec as `Any`, for [`Task::spec`].
    fn as_any(&self) -> &dyn std::any::Any;
    /// The spec as mutable `Any`, for [`Task::spec_mut`].
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

impl<T: std::any::Any + std::fmt::Debug + PartialEq + Send + Sync> TaskSpec for T {
    fn same_as(&self, other: &dyn TaskSpec) -> bool {
        other
            .as_any()
            .downcast_ref::<T>()
            .is_some_and(|other| other == self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// One chat message of a task's prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant` (a turn already played) or `tool` (a call's result).
    pub role: String,
    /// The text.
    pub content: String,
    /// The calls an `assistant` turn of the history made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<HistoryCall>,
    /// The call a `tool` message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// A call made in a conversation's earlier turn (a multi-turn task's history).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryCall {
    /// The call's id, which the `tool` message answering it names.
    pub id: String,
    /// Function name.
    pub name: String,
    /// The arguments, a JSON object's text.
    pub arguments: String,
}

impl Message {
    /// A message of `role` with this text.
    fn of(role: &str, content: impl Into<String>) -> Self {
        Self {
            role: role.to_owned(),
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::of("user", content)
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::of("system", content)
    }

    /// An assistant turn of the history that made these calls.
    pub fn assistant_calls(calls: Vec<HistoryCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::of("assistant", "")
        }
    }

    /// A tool's result answering the call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::of("tool", content)
        }
    }
}

/// A function tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Function name.
    pub name: String,
    /// What the function does.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// The `OpenAI` chat-completions form: `{"type": "function", "function": {...}}`.
    pub fn to_openai_json(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// How the arguments of the expected tool call are checked: every listed field must be present
/// and match its rule; any other field must be absent or null.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgCheck {
    /// The fields and their rules.
    pub fields: Vec<ArgField>,
}

/// One argument field and its rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgField {
    /// Argument name.
    pub name: String,
    /// What its value must be.
    pub rule: ArgRule,
}

/// The rule one argument value must satisfy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgRule {
    /// A string equal to this one.
    Exact(String),
    /// A string equal to this one ignoring ASCII case.
    CaseInsensitive(String),
    /// An arithmetic expression string (`+ - * /`, parentheses, whitespace ignored) whose exact
    /// value is this integer; `example` is a form that does, used by the self-check.
    Evaluates {
        /// The value.
        value: i128,
        /// An expression with that value.
        example: String,
    },
}

/// How a reply is judged.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Checker {
    /// The answer is this integer; `2,131` and `2131` are equal.
    Integer(i128),
    /// The answer is this fraction. The gold `num/den` is always stored reduced; whether the
    /// model's answer must be reduced too is the task's choice (`allow_unreduced`).
    Fraction {
        /// Numerator (carries the sign).
        num: i128,
        /// Denominator, positive.
        den: i128,
        /// `false` (the bundled `dice-probability`): an unreduced form of the right value, such
        /// as `146/1296` for `73/648`, is wrong (`unreduced 146/1296`). `true`: any form equal
        /// in value passes, for tasks whose prompt does not ask for a reduced fraction.
        allow_unreduced: bool,
    },
    /// The answer is this string (surrounding whitespace and emphasis ignored).
    ExactString(String),
    /// The answer is these integers, all of them, in this order (a multi-needle context task:
    /// a partial answer is wrong).
    IntegerList(Vec<i128>),
    /// The answer is this word, ASCII case ignored (a closed-list answer, or a word to read).
    Word(String),
    /// The answer is these words, all of them, in this order, ASCII case ignored, separated by
    /// commas (a video's background colours).
    WordList(Vec<String>),
    /// Exactly one call of this function with these arguments.
    ToolCall {
        /// Function name.
        name: String,
        /// Argument rules.
        check: ArgCheck,
    },
    /// No call, a clean stop, and content that mentions this word (ASCII case ignored).
    NoCall {
        /// The word the answer must contain.
        must_mention: String,
    },
    /// The last fenced code block passes the hidden tests.
    #[cfg(feature = "grader")]
    Code(CodeCheck),
    /// A multiple-choice question: the option read from the reply
    /// ([`crate::extract_choice`]) is this one.
    Choice {
        /// The right option's index (0 is `A`).
        gold: usize,
        /// How many options the question has.
        n_options: usize,
    },
    /// A final answer ([`crate::extract_final`]) equal to this one once both are normalised
    /// ([`crate::normalise_final`]).
    FinalAnswer(String),
    /// Every one of these instructions holds on the final content as written
    /// ([`crate::Constraint`]).
    Instructions(Vec<crate::instructions::Constraint>),
    /// JSON that parses, is valid under `schema` and holds `truth`'s values (a structured-output
    /// task, [`crate::StructuredSpec`]).
    Structured {
        /// The JSON schema the reply must meet.
        schema: serde_json::Value,
        /// The values it must hold.
        truth: serde_json::Value,
    },
    /// These calls, in any order, each by name and by arguments compared as values, and no
    /// other ([`crate::CallsSpec`]).
    Calls(Vec<crate::calls::spec::ExpectedCall>),
}

/// A task: prompt, tools on offer, token budget and checker.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Task {
    /// Stable id, e.g. `domino-tiling`.
    pub id: String,
    /// Category.
    pub category: Category,
    /// The chat messages sent.
    pub messages: Vec<Message>,
    /// Tools offered (empty for math and code).
    pub tools: Vec<ToolSpec>,
    /// Fields the task adds to its request's body: `response_format` (a structured-output
    /// task), `tool_choice` (a tool-call task that forces a call).
    pub request_fields: serde_json::Map<String, serde_json::Value>,
    /// Completion-token budget (`max_tokens`).
    pub budget_tokens: u32,
    /// How the reply is judged.
    pub checker: Checker,
    /// The self-check requires a positive gold answer (a counting puzzle with 0 solutions is
    /// broken).
    pub expect_positive: bool,
    /// The family, level, seed and parameters the task was drawn from (bundled tasks).
    pub instance: Option<Instance>,
    /// What the task's family carries beyond its prompt ([`Task::spec`]): a math problem's
    /// parameters (the self-check recomputes prompt and gold from them), a long-context plan
    /// (the runner renders the prompt again for every request, at the haystack length the
    /// server's token count calls for), images or clips with their gold, a dataset question.
    pub spec: Option<Arc<dyn TaskSpec>>,
}

impl PartialEq for Task {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.category == other.category
            && self.messages == other.messages
            && self.tools == other.tools
            && self.request_fields == other.request_fields
            && self.budget_tokens == other.budget_tokens
            && self.checker == other.checker
            && self.expect_positive == other.expect_positive
            && self.instance == other.instance
            && match (&self.spec, &other.spec) {
                (None, None) => true,
                (Some(a), Some(b)) => a.same_as(b.as_ref()),
                _ => false,
            }
    }
}

impl Task {
    /// A task with a single user message, no tools and no spec.
    pub fn new(
        id: impl Into<String>,
        category: Category,
        prompt: impl Into<String>,
        budget_tokens: u32,
        checker: Checker,
    ) -> Self {
        Self {
            id: id.into(),
            category,
            messages: vec![Message::user(prompt)],
            tools: Vec::new(),
            request_fields: serde_json::Map::new(),
            budget_tokens,
            checker,
            expect_positive: false,
            instance: None,
            spec: None,
        }
    }

    /// The same task with these tools on offer.
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }

    /// The same task with this field added to its request's body (`response_format`,
    /// `tool_choice`).
    #[must_use]
    pub fn with_request_field(mut self, key: &str, value: serde_json::Value) -> Self {
        self.request_fields.insert(key.to_owned(), value);
        self
    }

    /// The same task carrying `spec` ([`Task::spec`] reads it back).
    #[must_use]
    pub fn with_spec(mut self, spec: impl TaskSpec) -> Self {
        self.spec = Some(Arc::new(spec));
        self
    }

    /// The task's spec when it is a `T` (a family asks for its own type).
    pub fn spec<T: TaskSpec>(&self) -> Option<&T> {
        self.spec
            .as_deref()
            .and_then(|spec| spec.as_any().downcast_ref::<T>())
    }

    /// The task's spec when it is a `T`, to change (this task's copy only: a clone of the
    /// task keeps the spec it had).
    pub fn spec_mut<T: TaskSpec + Clone>(&mut self) -> Option<&mut T> {
        let own: T = self.spec::<T>()?.clone();
        let spec = self.spec.insert(Arc::new(own));
        Arc::get_mut(spec)?.as_any_mut().downcast_mut::<T>()
    }
}

/// What a code verdict rests on: the submission as graded and what the grader saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GradeEvidence {
    /// The code that was graded, whole.
    pub submission: String,
    /// The first failing cases (up to 5): name and what happened (`expected 3, got 4`,
    /// `raised TypeError: ...`, `no result`), each cut at 2,000 characters.
    pub failing_cases: Vec<(String, String)>,
    /// Failing cases in all.
    pub n_failed_cases: usize,
    /// Why the program stopped, for a crash (the exception type and message, or the exit).
    pub crash: Option<String>,
    /// The static guard that refused the submission.
    pub guard: Option<String>,
    /// The wall-clock limit killed it.
    pub timed_out: bool,
    /// The kernel killed it for its memory.
    pub oom_killed: bool,
    /// The container's exit code.
    pub exit_code: Option<i64>,
    /// The start of its standard error, cut at 2,000 characters.
    pub stderr_excerpt: String,
    /// Wall time of the grading container, ms.
    pub wall_time_ms: u64,
    /// The grader image, by digest.
    pub image_digest: String,
}

/// The model's final turn, as assembled from the stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// The final content (the only text that is graded).
    pub content: String,
    /// The reasoning, if the server separated it (never graded).
    pub reasoning: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ReplyToolCall>,
    /// `stop`, `length`, `tool_calls`, ...
    pub finish_reason: Option<String>,
}

impl Reply {
    /// A reply with this content that stopped normally.
    pub fn stopped(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            finish_reason: Some("stop".to_owned()),
            ..Self::default()
        }
    }
}

/// One tool call of a reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyToolCall {
    /// Function name.
    pub name: String,
    /// The arguments exactly as streamed (a JSON object, if the model got it right).
    pub arguments: String,
}

impl ReplyToolCall {
    /// A call of `name` with these raw arguments.
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// The kind of an attempt's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutcomeKind {
    /// Correct.
    Pass,
    /// A wrong answer, a failing submission, a wrong or missing call, a call on the no-call task.
    Wrong,
    /// Stopped by the token budget (`finish_reason` `length`), whatever the content.
    CutOff,
    /// Finished normally with nothing to grade.
    NoAnswer,
    /// More than one call on a one-call task.
    ExtraCalls,
    /// Not the model's fault: sandbox or engine trouble. Retried, never scored.
    Infra,
    /// The server refused the prompt for its length (it does not fit the context): recorded
    /// with the server's message, never retried, never scored.
    ContextExceeded,
    /// The server or model takes no images (or videos), or the server parses no tool calls
    /// (vLLM without a tool-call parser): recorded with the server's message, never retried,
    /// never scored.
    Unsupported,
}

impl OutcomeKind {
    /// The snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Wrong => "wrong",
            Self::CutOff => "cut_off",
            Self::NoAnswer => "no_answer",
            Self::ExtraCalls => "extra_calls",
            Self::Infra => "infra",
            Self::ContextExceeded => "context_exceeded",
            Self::Unsupported => "unsupported",
        }
    }

    /// Whether the outcome counts in a score: everything but `infra` (the harness or server
    /// failed), `context_exceeded` (the server cannot take the prompt) and `unsupported` (it
    /// cannot take the images or tools).
    pub fn is_scored(self) -> bool {
        !matches!(
            self,
            Self::Infra | Self::ContextExceeded | Self::Unsupported
        )
    }
}

impl std::fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// What happened.
    pub kind: OutcomeKind,
    /// Short machine-readable explanation, e.g. `expected 581 got 871`, `timeout`, `guard:eval`.
    pub detail: String,
    /// The answer extracted (for a cut-off: the provisional one, if any).
    pub provisional_answer: Option<String>,
    /// For a graded code submission: what the verdict rests on.
    pub evidence: Option<GradeEvidence>,
    /// For a dataset question: the extraction rule that read the answer (`answer_is`,
    /// `last_line_letter`, `boxed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl Outcome {
    /// An outcome without an extracted answer.
    pub fn new(kind: OutcomeKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
            provisional_answer: None,
            evidence: None,
            rule: None,
        }
    }

    pub(crate) fn cut_off(provisional_answer: Option<String>) -> Self {
        Self {
            kind: OutcomeKind::CutOff,
            detail: "length".to_owned(),
            provisional_answer,
            evidence: None,
            rule: None,
        }
    }

    /// Whether the attempt passed.
    pub fn passed(&self) -> bool {
        self.kind == OutcomeKind::Pass
    }
}
