//! The simulator run: scripted answers built at runtime from the suite's own gold answers and
//! reference code, so the score is known before the run starts.

use vernier_sim::{
    Fault, Recall, RecallMiss, Script, ScriptReply, ScriptRule, ScriptToolCall, SimConfig,
    TokensPerEvent,
};
use vernier_tasks::{ArgRule, Category, Checker, ExpectedFailure, OutcomeKind, Suite, Task};

use crate::error::HardsuiteError;

/// The banner a caller shows when the in-process simulator answers (no `--base-url` given).
pub const HARDSUITE_SIMULATOR_BANNER: &str = "No --base-url given: running against the in-process \
simulator with scripted answers (right, wrong, cut off, tool calls, one dropped stream). The \
score below measures this harness, not a model. Pass --base-url URL to test a server.";

/// What the scripted reply of one task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScriptedKind {
    /// The gold answer (math), the reference solution (code), the expected call (tools) or a
    /// plain answer (the no-call task).
    Right,
    /// The gold answer, after the first stream is dropped mid-answer.
    RightAfterDrop,
    /// A wrong answer (math), a negative control (code).
    Wrong,
    /// Reasoning until the budget runs out, no content.
    CutOffInReasoning,
    /// A clean stop without an answer line.
    NoAnswer,
    /// The expected call, twice.
    ExtraCalls,
    /// A dataset question answered right in the form of the fallback rule with this index
    /// (1 to 3: `answer_label`, `bold_or_boxed`, `last_line_letter` for a choice;
    /// `final_answer_is`, `answer_label`, `gsm8k_hashes` for a final answer; 4: a boxed letter,
    /// read by `bold_or_boxed`, or a final answer boxed without its sentence).
    RightByFallback(usize),
    /// An instruction task's reply that meets every instruction but the one at this index.
    BreakInstruction(usize),
    /// A structured-output reply cut mid-object: not JSON.
    InvalidJson,
    /// The expected calls with an argument of the wrong JSON type.
    WrongArgumentType,
    /// An answer in words where a call was needed.
    MissingCall,
    /// A call where no function fits.
    UnwantedCall,
}

impl ScriptedKind {
    /// The outcome the grader must give this reply.
    pub fn expected_outcome(self) -> OutcomeKind {
        match self {
            Self::Right | Self::RightAfterDrop | Self::RightByFallback(_) => OutcomeKind::Pass,
            Self::Wrong
            | Self::BreakInstruction(_)
            | Self::InvalidJson
            | Self::WrongArgumentType
            | Self::MissingCall
            | Self::UnwantedCall => OutcomeKind::Wrong,
            Self::CutOffInReasoning => OutcomeKind::CutOff,
            Self::NoAnswer => OutcomeKind::NoAnswer,
            Self::ExtraCalls => OutcomeKind::ExtraCalls,
        }
    }

    /// The extraction rule that must read a dataset reply of this kind (`choice`: a
    /// multiple-choice question); `None` where no answer is read.
    pub fn expected_rule(self, choice: bool) -> Option<&'static str> {
        let rules = if choice {
            vernier_tasks::CHOICE_RULES
        } else {
            vernier_tasks::FINAL_RULES
        };
        match self {
            Self::Right | Self::RightAfterDrop | Self::Wrong => Some(rules[0]),
            Self::RightByFallback(4) => Some(rules[if choice { 2 } else { 0 }]),
            Self::RightByFallback(index) => rules.get(index).copied(),
            _ => None,
        }
    }
}

/// Dataset questions, by place: right in the strict form after `**Question:**` headings in the
/// reasoning and the content (what a harness stopping at "Question:" would cut), then each
/// fallback form, one wrong, one cut off, one without an answer, a boxed letter, cycling every
/// 9.
fn dataset_kind(place: usize) -> ScriptedKind {
    match place % 9 {
        1 | 0 => ScriptedKind::Right,
        8 => ScriptedKind::RightByFallback(4),
        2 => ScriptedKind::RightByFallback(1),
        3 => ScriptedKind::Wrong,
        4 => ScriptedKind::RightByFallback(2),
        5 => ScriptedKind::CutOffInReasoning,
        6 => ScriptedKind::RightByFallback(3),
        _ => ScriptedKind::NoAnswer,
    }
}

/// The scripted content of a dataset question.
fn dataset_content(checker: &Checker, kind: ScriptedKind) -> String {
    let headings = "**Question:** what is asked here?\nQuestion: which option fits best?\n\
                    Going through each one in turn.\n";
    let (answer, choice) = match checker {
        Checker::Choice { gold, n_options } => {
            let index = if kind == ScriptedKind::Wrong {
                (gold + 1) % n_options
            } else {
                *gold
            };
            (vernier_tasks::choice_letter(index).to_string(), true)
        }
        Checker::FinalAnswer(gold) if kind == ScriptedKind::Wrong => (format!("{gold}1"), false),
        Checker::FinalAnswer(gold) => (gold.clone(), false),
        _ => (String::new(), false),
    };
    let ending = match (kind, choice) {
        (ScriptedKind::NoAnswer, _) => "I cannot decide between them.".to_owned(),
        (ScriptedKind::RightByFallback(1), true) => format!("**Answer:** ({answer})"),
        (ScriptedKind::RightByFallback(2), true) => format!("I pick **{answer}**."),
        (ScriptedKind::RightByFallback(3), true) => format!("So, finally:\n({answer})"),
        (ScriptedKind::RightByFallback(4), true) => format!("$\\boxed{{{answer}}}$"),
        (ScriptedKind::RightByFallback(4), false) => format!("So it is \\boxed{{{answer}}}"),
        (ScriptedKind::RightByFallback(1), false) => format!("The final answer is {answer}"),
        (ScriptedKind::RightByFallback(2), false) => format!("Answer: {answer}"),
        (ScriptedKind::RightByFallback(3), false) => format!("#### {answer}"),
        (_, true) => format!("the answer is ({answer})."),
        (_, false) => format!("The final answer is $\\boxed{{{answer}}}$."),
    };
    format!("{headings}{ending}")
}

/// One task's scripted reply and the outcome it must get.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScriptedTask {
    /// Task id.
    pub task_id: String,
    /// What the reply is.
    pub kind: ScriptedKind,
}

/// Which reply each task gets, by its place in its category: math 2nd wrong, 3rd cut off
/// inside its reasoning, 4th without an answer line, 1st right after a dropped stream; code
/// 2nd a negative control, 3rd cut off; the 2nd tool-call task calls twice; the rest right.
/// Tasks drawn at level L ≥ 3 also get the last 2·(L − 2) math tasks (from the 5th on)
/// wrong, so a ladder run has a known score per level.
pub fn scripted_plan(suite: &Suite) -> Vec<ScriptedTask> {
    let (mut n_math, mut n_code, mut n_calls, mut n_vision, mut n_video) = (0, 0, 0, 0, 0);
    let (mut n_dataset, mut n_instructions, mut n_structured) = (0, 0, 0);
    let (mut n_structured_calls, mut n_unfit) = (0, 0);
    let math_total = suite
        .tasks
        .iter()
        .filter(|task| {
            matches!(
                task.checker,
                Checker::Integer(_) | Checker::Fraction { .. } | Checker::ExactString(_)
            )
        })
        .count();
    suite
        .tasks
        .iter()
        .map(|task| {
            let kind = match (task.category, &task.checker) {
                (Category::CONTEXT, _) => context_kind(task),
                (Category::DATASET, _) => {
                    n_dataset += 1;
                    dataset_kind(n_dataset)
                }
                (Category::VISION, _) => {
                    n_vision += 1;
                    media_kind(n_vision)
                }
                (Category::INSTRUCTIONS, Checker::Instructions(constraints)) => {
                    n_instructions += 1;
                    instructions_kind(n_instructions, constraints.len())
                }
                (Category::STRUCTURED, _) => {
                    n_structured += 1;
                    structured_kind(n_structured)
                }
                (Category::CALLS, Checker::Calls(_)) => {
                    n_structured_calls += 1;
                    calls_kind(n_structured_calls)
                }
                (Category::CALLS, _) => {
                    n_unfit += 1;
                    if n_unfit == 1 {
                        ScriptedKind::UnwantedCall
                    } else {
                        ScriptedKind::Right
                    }
                }
                (Category::VIDEO, _) => {
                    n_video += 1;
                    media_kind(n_video)
                }
                (_, Checker::ToolCall { .. }) => {
                    n_calls += 1;
                    if n_calls == 2 {
                        ScriptedKind::ExtraCalls
                    } else {
                        ScriptedKind::Right
                    }
                }
                (Category::CODE, Checker::Code(check)) => {
                    n_code += 1;
                    match n_code {
                        2 if failing_control(check).is_some() => ScriptedKind::Wrong,
                        3 => ScriptedKind::CutOffInReasoning,
                        _ => ScriptedKind::Right,
                    }
                }
                (_, Checker::Integer(_) | Checker::Fraction { .. } | Checker::ExactString(_)) => {
                    n_math += 1;
                    let level = task.instance.as_ref().map_or(2, |instance| instance.level);
                    let harder = 2 * usize::from(level.saturating_sub(2));
                    match n_math {
                        1 => ScriptedKind::RightAfterDrop,
                        2 => ScriptedKind::Wrong,
                        3 => ScriptedKind::CutOffInReasoning,
                        4 => ScriptedKind::NoAnswer,
                        place if math_total - place < harder => ScriptedKind::Wrong,
                        _ => ScriptedKind::Right,
                    }
                }
                _ => ScriptedKind::Right,
            };
            ScriptedTask {
                task_id: task.id.clone(),
                kind,
            }
        })
        .collect()
}

/// The demo's simulated model misses the needle at this depth (percent)...
pub const DEMO_CONTEXT_MISS_DEPTH: u8 = 75;
/// ...in prompts of at least this many tokens (32k, less the 2% a prompt may fall short).
pub const DEMO_CONTEXT_MISS_FROM: u32 = 32_000;
/// The demo simulator's context for a context suite: 32k fits with its answer budget, 64k
/// does not.
pub const DEMO_CONTEXT_LIMIT: u32 = 40_960;

/// Vision and video tasks, by place in their category: the first wrong, the second without an
/// answer line, the third cut off in its reasoning, the rest right.
/// An instruction task's scripted outcome by its place: the 3rd cut off, the 5th empty, every
/// other even place breaking one instruction (the next in turn, so each kind of a suite's
/// instructions is broken somewhere), the rest meeting them all.
fn instructions_kind(place: usize, n_constraints: usize) -> ScriptedKind {
    match place {
        3 => ScriptedKind::CutOffInReasoning,
        5 => ScriptedKind::NoAnswer,
        place if place % 2 == 0 => {
            ScriptedKind::BreakInstruction((place / 2) % n_constraints.max(1))
        }
        _ => ScriptedKind::Right,
    }
}

/// A structured-output task's scripted outcome by its place: the 2nd valid JSON with a wrong
/// value, the 3rd not JSON, the 5th cut off, the 6th empty, the rest right.
fn structured_kind(place: usize) -> ScriptedKind {
    match place {
        2 => ScriptedKind::Wrong,
        3 => ScriptedKind::InvalidJson,
        5 => ScriptedKind::CutOffInReasoning,
        6 => ScriptedKind::NoAnswer,
        _ => ScriptedKind::Right,
    }
}

/// A tool-call task's scripted outcome by its place among those expecting calls: the 2nd one
/// call too many, the 3rd an argument of the wrong type, the 4th an answer without a call, the
/// 5th a wrong argument value, the rest right. (Of the tasks expecting no call, the first gets
/// a call, the rest a plain answer.)
fn calls_kind(place: usize) -> ScriptedKind {
    match place {
        2 => ScriptedKind::ExtraCalls,
        3 => ScriptedKind::WrongArgumentType,
        4 => ScriptedKind::MissingCall,
        5 => ScriptedKind::Wrong,
        _ => ScriptedKind::Right,
    }
}

fn media_kind(place: usize) -> ScriptedKind {
    match place {
        1 => ScriptedKind::Wrong,
        2 => ScriptedKind::NoAnswer,
        3 => ScriptedKind::CutOffInReasoning,
        _ => ScriptedKind::Right,
    }
}

/// A context task's scripted outcome: right, except a single needle at 75% in a prompt of 32k
/// or more, where the simulated model gives a distractor's value.
fn context_kind(task: &Task) -> ScriptedKind {
    match task.spec::<vernier_tasks::ContextSpec>() {
        Some(spec)
            if spec.depth_pct == Some(DEMO_CONTEXT_MISS_DEPTH)
                && spec.target_tokens >= DEMO_CONTEXT_MISS_FROM =>
        {
            ScriptedKind::Wrong
        }
        _ => ScriptedKind::Right,
    }
}

fn failing_control(check: &vernier_tasks::CodeCheck) -> Option<&str> {
    check
        .controls
        .iter()
        .find(|control| {
            !control.integrity && control.must_fail_with == ExpectedFailure::FailedCases
        })
        .map(|control| control.code.as_str())
}

const WORKING: &str = "Let me work through this carefully, one step at a time, and check the \
result before I answer.";

fn literal_answer(checker: &Checker, wrong: bool) -> String {
    match checker {
        Checker::Integer(gold) => (if wrong { gold + 1 } else { *gold }).to_string(),
        Checker::Fraction { num, den, .. } => {
            if wrong {
                format!("{}/{}", num + 1, den + 1)
            } else {
                format!("{num}/{den}")
            }
        }
        Checker::ExactString(gold) => {
            if wrong {
                format!("not {gold}")
            } else {
                gold.clone()
            }
        }
        Checker::Word(gold) => {
            if wrong {
                format!("{gold}x")
            } else {
                gold.clone()
            }
        }
        Checker::WordList(gold) => {
            let mut words = gold.clone();
            if wrong {
                words.reverse();
            }
            words.join(", ")
        }
        _ => String::new(),
    }
}

fn call_arguments(check: &vernier_tasks::ArgCheck) -> String {
    let mut arguments = serde_json::Map::new();
    for field in &check.fields {
        let value = match &field.rule {
            ArgRule::Exact(value) | ArgRule::CaseInsensitive(value) => value.clone(),
            ArgRule::Evaluates { example, .. } => example.clone(),
            _ => String::new(),
        };
        arguments.insert(field.name.clone(), value.into());
    }
    serde_json::Value::Object(arguments).to_string()
}

/// The scripted reply of `task`. A cut-off reply reports the tokens it streamed, not the budget:
/// the simulator cannot tell a re-run's larger budget from the first.
fn reply_for(task: &Task, kind: ScriptedKind) -> ScriptReply {
    if kind == ScriptedKind::CutOffInReasoning {
        return ScriptReply::text("")
            .with_reasoning(
                "Let me verify that once more. Wait, I should check the previous step again. "
                    .repeat(12),
            )
            .with_finish_reason("length");
    }
    match &task.checker {
        Checker::Integer(_)
        | Checker::Fraction { .. }
        | Checker::ExactString(_)
        | Checker::Word(_)
        | Checker::WordList(_) => {
            let content = match kind {
                ScriptedKind::NoAnswer => {
                    "I worked on this but I am not sure of the final value.".to_owned()
                }
                _ => format!(
                    "Counting every case and checking the total.\n\nANSWER: {}",
                    literal_answer(&task.checker, kind == ScriptedKind::Wrong)
                ),
            };
            let reply = ScriptReply::text(content).with_reasoning(WORKING);
            if kind == ScriptedKind::RightAfterDrop {
                // Role chunk, then a few token events, then the connection closes mid-answer.
                reply.with_fault_first_attempts(1, Fault::DropAfterEvents { events: 4 })
            } else {
                reply
            }
        }
        Checker::Code(check) => {
            let code = match kind {
                ScriptedKind::Wrong => failing_control(check).unwrap_or_default(),
                _ => check.reference.as_deref().unwrap_or_default(),
            };
            ScriptReply::text(format!("Here is the solution.\n\n```python\n{code}\n```\n"))
                .with_reasoning(WORKING)
        }
        Checker::ToolCall { name, check } => {
            let call = ScriptToolCall::new(name.clone(), call_arguments(check));
            let reply = ScriptReply::text("").with_tool_call(call.clone());
            if kind == ScriptedKind::ExtraCalls {
                reply.with_tool_call(call)
            } else {
                reply
            }
        }
        Checker::NoCall { must_mention } => match (kind, task.tools.first()) {
            (ScriptedKind::UnwantedCall, Some(tool)) => ScriptReply::text("")
                .with_tool_call(ScriptToolCall::new(tool.name.clone(), "{}".to_owned())),
            _ => ScriptReply::text(format!("The answer is {must_mention}.")),
        },
        Checker::Structured { .. } => structured_script(task, kind),
        Checker::Calls(expected) => calls_script(expected, kind),
        Checker::Instructions(_) => {
            let content = match (task.spec::<vernier_tasks::InstructionsSpec>(), kind) {
                (_, ScriptedKind::NoAnswer) | (None, _) => String::new(),
                (Some(spec), ScriptedKind::BreakInstruction(index)) => {
                    vernier_tasks::instructions_reply(spec, Some(index))
                }
                (Some(spec), _) => vernier_tasks::instructions_reply(spec, None),
            };
            ScriptReply::text(content)
        }
        Checker::Choice { .. } | Checker::FinalAnswer(_) => ScriptReply::text(dataset_content(
            &task.checker,
            kind,
        ))
        .with_reasoning(
            "**Question:** restated in my own words.\nQuestion: what would rule each option out?",
        ),
        _ => ScriptReply::text("no script for this checker"),
    }
}

/// A structured-output task's scripted reply: the truth, a value changed, the truth cut
/// mid-object, or nothing.
fn structured_script(task: &Task, kind: ScriptedKind) -> ScriptReply {
    let content = match (task.spec::<vernier_tasks::StructuredSpec>(), kind) {
        (_, ScriptedKind::NoAnswer) | (None, _) => String::new(),
        (Some(spec), ScriptedKind::Wrong) => vernier_tasks::structured_reply(spec, Some(0)),
        (Some(spec), ScriptedKind::InvalidJson) => {
            let whole = vernier_tasks::structured_reply(spec, None);
            whole.chars().take(whole.chars().count() / 2).collect()
        }
        (Some(spec), _) => vernier_tasks::structured_reply(spec, None),
    };
    ScriptReply::text(content)
}

/// A tool-call task's scripted reply: the expected calls, one more, an argument of the wrong
/// type or value, or an answer without a call.
fn calls_script(expected: &[vernier_tasks::ExpectedCall], kind: ScriptedKind) -> ScriptReply {
    let calls = match kind {
        ScriptedKind::WrongArgumentType => vernier_tasks::calls_with_wrong_type(expected),
        ScriptedKind::Wrong => vernier_tasks::calls_with_wrong_value(expected),
        ScriptedKind::ExtraCalls => {
            let mut calls = expected.to_vec();
            calls.extend(expected.first().cloned());
            calls
        }
        ScriptedKind::MissingCall => {
            return ScriptReply::text("I would look that up with the tools you have.");
        }
        _ => expected.to_vec(),
    };
    calls.iter().fold(ScriptReply::text(""), |reply, call| {
        reply.with_tool_call(ScriptToolCall::new(
            call.name.clone(),
            call.arguments.to_string(),
        ))
    })
}

/// The simulator's script for `suite`: one rule per task, matching its last user message
/// exactly.
pub fn demo_script(suite: &Suite) -> Result<Script, HardsuiteError> {
    let plan = scripted_plan(suite);
    let mut rules: Vec<ScriptRule> = suite
        .tasks
        .iter()
        .zip(&plan)
        .filter(|(task, _)| task.category != Category::CONTEXT)
        .filter_map(|(task, planned)| {
            let prompt = task.messages.iter().rev().find(|m| m.role == "user")?;
            // With `--video-as frames` the prompt is followed by the frames' text parts.
            let pattern = if task.category == Category::VIDEO {
                format!(r"(?s)\A{}(\n.*)?\z", regex::escape(&prompt.content))
            } else {
                format!(r"\A{}\z", regex::escape(&prompt.content))
            };
            // Under a load above the simulator's `degrade_above_in_flight` (off by default) the
            // answer is lost: what `hardsuite under-load` must find.
            let degraded = ScriptReply::text("I am not sure, the answer escapes me.");
            Some(ScriptRule::new(
                pattern,
                reply_for(task, planned.kind).with_degraded(degraded),
            ))
        })
        .collect();
    if suite.count(Category::CONTEXT) > 0 {
        // Context prompts differ per request (nonce, length): one rule reads their needles.
        rules.push(ScriptRule::new(
            r"The special code for [A-Za-z]+ is [0-9]+\.",
            ScriptReply::text("").with_recall(Recall::missing(vec![RecallMiss::new(
                DEMO_CONTEXT_MISS_FROM,
                vec![DEMO_CONTEXT_MISS_DEPTH],
            )])),
        ));
    }
    Script::new(rules).map_err(|error| HardsuiteError::Run(vernier_run::RunError::Simulator(error)))
}

/// The simulator configuration of the demo run: fast decoding, four tokens per event.
pub fn hardsuite_demo_simulator_config(suite: &Suite) -> Result<SimConfig, HardsuiteError> {
    let max_model_len = if suite.count(Category::CONTEXT) > 0 {
        DEMO_CONTEXT_LIMIT
    } else {
        1_000_000
    };
    Ok(SimConfig::builder()
        .max_model_len(max_model_len)
        .decode_step(std::time::Duration::from_millis(1))
        .tokens_per_event(TokensPerEvent::Fixed(4))
        .prefill_tokens_per_s(200_000.0)
        .script(Some(demo_script(suite)?))
        .build())
}
