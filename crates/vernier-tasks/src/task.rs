//! Tasks, checkers, replies and outcomes (their grading is in `grading.rs`).

#[cfg(feature = "grader")]
use std::time::Duration;

use serde::{Deserialize, Serialize};
#[cfg(feature = "grader")]
use vernier_grader::{Case, GradeReason, Guard, Limits, Submission};

use crate::family::Instance;
use crate::math::Problem;

/// The three parts of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Category {
    /// Math and logic problems with one numeric answer.
    Math,
    /// Coding tasks graded by hidden tests in a sandbox.
    Code,
    /// Tool-calling requests.
    Tools,
    /// Long-context retrieval: needles in haystacks sized in the server's tokens.
    Context,
    /// Questions about generated images.
    Vision,
    /// Questions about generated videos.
    Video,
    /// Questions of a standard dataset (MMLU-Pro, GSM8K, ...) or a user's own file.
    Dataset,
}

impl Category {
    /// Every category, in the order scores and reports list them.
    pub const ALL: [Self; 7] = [
        Self::Math,
        Self::Code,
        Self::Tools,
        Self::Context,
        Self::Vision,
        Self::Video,
        Self::Dataset,
    ];

    /// The lowercase name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Math => "math",
            Self::Code => "code",
            Self::Tools => "tools",
            Self::Context => "context",
            Self::Vision => "vision",
            Self::Video => "video",
            Self::Dataset => "dataset",
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One chat message of a task's prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system` or `user`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: "user".to_owned(),
            content: content.into(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: "system".to_owned(),
            content: content.into(),
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

#[cfg(feature = "grader")]
/// The task's code check: hidden harness and cases, guards, limits and the controls that
/// prove the tests bite.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CodeCheck {
    /// Python defining `run_case(solution, case_input)`.
    pub harness: String,
    /// Hidden cases with their expected values.
    pub cases: Vec<Case>,
    /// Forbidden names in the submission.
    pub guards: Vec<Guard>,
    /// Sandbox limits; `wall_time` is the task's time limit (its floor until a self-check
    /// calibrates it, see [`crate::SelfCheckReport::apply`]).
    pub limits: Limits,
    /// The smallest time limit the task may get.
    pub time_floor: Duration,
    /// The reference solution, which must pass every case.
    pub reference: Option<String>,
    /// Submissions that must fail.
    pub controls: Vec<CodeControl>,
    /// Lines put before every submission when it is graded (a code dataset's prompt imports);
    /// empty for the bundled tasks.
    pub preamble: String,
}

#[cfg(feature = "grader")]
impl CodeCheck {
    /// A code check with default limits whose time limit is `time_floor`.
    pub fn new(harness: impl Into<String>, cases: Vec<Case>, time_floor: Duration) -> Self {
        let mut limits = Limits::default();
        limits.wall_time = time_floor;
        Self {
            harness: harness.into(),
            cases,
            guards: Vec::new(),
            limits,
            time_floor,
            reference: None,
            controls: Vec::new(),
            preamble: String::new(),
        }
    }

    /// The program graded for `code`: the preamble, then the code; the code's `from __future__`
    /// imports stay first, where Python requires them.
    pub fn graded_program(&self, code: &str) -> String {
        if self.preamble.is_empty() {
            return code.to_owned();
        }
        let (future, rest): (Vec<&str>, Vec<&str>) = code
            .lines()
            .partition(|line| line.starts_with("from __future__ import"));
        if future.is_empty() {
            return format!("{}{code}", self.preamble);
        }
        format!(
            "{}\n{}{}\n",
            future.join("\n"),
            self.preamble,
            rest.join("\n")
        )
    }

    /// A submission of `code` (after the preamble) under this check's harness, cases, limits
    /// and guards.
    pub fn submission(&self, code: impl Into<String>) -> Submission {
        let code: String = code.into();
        Submission::new(
            self.graded_program(&code),
            self.harness.clone(),
            self.cases.clone(),
        )
        .with_limits(self.limits)
        .with_guards(self.guards.clone())
    }
}

#[cfg(feature = "grader")]
/// A submission that must fail, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeControl {
    /// Short name, e.g. `returns-input`.
    pub name: String,
    /// The Python source.
    pub code: String,
    /// The failure it must produce.
    pub must_fail_with: ExpectedFailure,
    /// A grading-integrity control (sandbox escape or result forgery) rather than a
    /// task-specific negative control.
    pub integrity: bool,
}

#[cfg(feature = "grader")]
/// The failure a control must produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExpectedFailure {
    /// Some hidden case fails (or results are missing).
    FailedCases,
    /// The time limit kills it.
    Timeout,
    /// The memory limit kills it.
    OutOfMemory,
    /// A static guard rejects it.
    GuardViolation,
    /// Any failure except an infrastructure one: used where more than one verdict is
    /// right (a submission that exits at import gives no results; the grader may call
    /// that failed cases or a crash).
    AnyFailure,
}

#[cfg(feature = "grader")]
impl ExpectedFailure {
    /// Whether a grade's reason is this failure.
    pub fn matches(self, reason: &GradeReason) -> bool {
        match self {
            Self::FailedCases => matches!(reason, GradeReason::FailedCases(_)),
            Self::Timeout => matches!(reason, GradeReason::Timeout),
            Self::OutOfMemory => matches!(reason, GradeReason::OutOfMemory),
            Self::GuardViolation => matches!(reason, GradeReason::GuardViolation(_)),
            Self::AnyFailure => !matches!(reason, GradeReason::Passed | GradeReason::Infra(_)),
        }
    }
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
}

/// A task: prompt, tools on offer, token budget and checker.
#[derive(Debug, Clone, PartialEq)]
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
    /// Completion-token budget (`max_tokens`).
    pub budget_tokens: u32,
    /// How the reply is judged.
    pub checker: Checker,
    /// The parameters the prompt and gold answer come from (bundled math tasks); the self-check
    /// recomputes both from them.
    pub problem: Option<Problem>,
    /// The self-check requires a positive gold answer (a counting puzzle with 0 solutions is
    /// broken).
    pub expect_positive: bool,
    /// The family, level, seed and parameters the task was drawn from (bundled tasks).
    pub instance: Option<Instance>,
    /// A long-context task: what its prompt is drawn from. The runner renders the prompt again
    /// for every request, at the haystack length the server's token count calls for.
    pub context: Option<crate::context::ContextSpec>,
    /// A vision task: its images (PNG), the parameters they were drawn from and their gold.
    pub vision: Option<crate::vision::VisionSpec>,
    /// A video task: its clips (MP4), the parameters they were drawn from and their gold.
    pub video: Option<crate::video::VideoSpec>,
    /// A dataset question: the question, its kind and its examples.
    pub dataset: Option<crate::dataset::DatasetSpec>,
}

impl Task {
    /// A task with a single user message, no tools and no problem parameters.
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
            budget_tokens,
            checker,
            problem: None,
            expect_positive: false,
            instance: None,
            context: None,
            vision: None,
            video: None,
            dataset: None,
        }
    }

    /// A math task built from a problem: the prompt and gold answer come from its parameters.
    pub fn from_problem(id: impl Into<String>, problem: Problem, budget_tokens: u32) -> Self {
        let mut task = Self::new(
            id,
            Category::Math,
            problem.prompt(),
            budget_tokens,
            problem.gold(),
        );
        task.problem = Some(problem);
        task.expect_positive = true;
        task
    }

    /// The same task with these tools on offer.
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
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
    /// The server or model takes no images (or videos): recorded with the server's message,
    /// never retried, never scored.
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
    /// cannot see the images).
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
