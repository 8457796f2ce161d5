//! Tool calls graded by structure (BFCL's idea): a generated set of functions with typed
//! parameters (enums, numbers, a nested object, a list, optional ones with defaults), and tasks
//! needing one call, one chosen among similar tools, several calls in one turn, a call forced by
//! `tool_choice` (`required`, a named function), no call where none fits, and a final answer
//! after a call's result came back. Calls are graded by name and by arguments compared as
//! values (valid under the function's schema first, then equal: numbers as numbers, objects in
//! any order), extra calls counted apart.

mod catalogue;
pub(crate) mod spec;

pub use spec::{CallsKind, CallsSpec, ExpectedCall};

use serde_json::{Value, json};
use vernier_stats::SplitMix64;

use crate::kind::Kind;
use crate::task::{
    Category, Checker, HistoryCall, Message, Outcome, OutcomeKind, Reply, ReplyToolCall, Task,
    ToolSpec,
};
use crate::values::{first_difference, schema_violation};

impl Category {
    /// Tool calls graded by structure.
    pub const CALLS: Self = Self::new("calls");
}

/// Default completion-token budget of a tool-call task.
pub const DEFAULT_CALLS_BUDGET: u32 = 1024;

pub(crate) const KIND: Kind = Kind {
    category: Category::CALLS,
    description: "tool calls graded by structure: names, typed arguments, parallel calls, tool_choice, no call, a result returned",
    default_budget: DEFAULT_CALLS_BUDGET,
    fits: |checker| matches!(checker, Checker::Calls(_) | Checker::NoCall { .. }),
    prove: Some(prove_calls_task),
};

/// A tool-call task from its spec.
pub fn calls_task(id: impl Into<String>, spec: CallsSpec, budget_tokens: u32) -> Task {
    let id = id.into();
    let prompt = format!("Request {id}. {}", spec.request);
    let checker = match &spec.must_mention {
        Some(word) => Checker::NoCall {
            must_mention: word.clone(),
        },
        None => Checker::Calls(spec.expected.clone()),
    };
    let tools: Vec<ToolSpec> = spec
        .offered
        .iter()
        .filter_map(|name| catalogue::function(name))
        .collect();
    let mut task = Task::new(id, Category::CALLS, prompt, budget_tokens, checker).with_tools(tools);
    if let Some((call, result)) = &spec.history {
        task.messages
            .push(Message::assistant_calls(vec![HistoryCall {
                id: "call_1".to_owned(),
                name: call.name.clone(),
                arguments: call.arguments.to_string(),
            }]));
        task.messages
            .push(Message::tool_result("call_1", result.clone()));
    }
    if let Some(choice) = &spec.tool_choice {
        task = task.with_request_field("tool_choice", choice.clone());
    }
    task.with_spec(spec)
}

/// The suite of `seed`: one task of each kind but two of `parallel`, `none_fits` and
/// `result`, ids `calls-{kind}-{n}`.
pub fn calls_suite(seed: u64, budget_tokens: u32) -> crate::suite::Suite {
    let plan = [
        CallsKind::Single,
        CallsKind::Choose,
        CallsKind::Number,
        CallsKind::Nested,
        CallsKind::List,
        CallsKind::Parallel,
        CallsKind::Parallel,
        CallsKind::NoneFits,
        CallsKind::NoneFits,
        CallsKind::Required,
        CallsKind::Named,
        CallsKind::Result,
        CallsKind::Result,
    ];
    let mut tasks = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for (place, kind) in plan.iter().enumerate() {
        let mut mixer = SplitMix64::new(seed ^ 0x0CA1_1500_0000_0000);
        for _ in 0..=place {
            mixer.next_u64();
        }
        let mut rng = SplitMix64::new(mixer.next_u64());
        let n: &mut u32 = counts.entry(kind.as_str()).or_default();
        *n += 1;
        let spec = catalogue::draw(*kind, *n, &mut rng);
        tasks.push(calls_task(
            format!("calls-{}-{n}", kind.as_str().replace('_', "-")),
            spec,
            budget_tokens,
        ));
    }
    crate::suite::Suite::new("calls", tasks)
}

/// A call's arguments as graded: parsed, valid under its function's schema, with optional
/// arguments the request did not state dropped when they hold their schema's default.
fn read_arguments(
    call: &ReplyToolCall,
    tool: Option<&ToolSpec>,
    expected: &Value,
) -> Result<Value, String> {
    let mut arguments: Value = serde_json::from_str(call.arguments.trim())
        .map_err(|error| format!("arguments are not JSON: {error}"))?;
    if let Some(tool) = tool {
        schema_violation(&tool.parameters, &arguments).map_err(|v| format!("schema: {v}"))?;
        if let (Some(fields), Some(stated)) = (arguments.as_object_mut(), expected.as_object()) {
            fields.retain(|key, value| {
                stated.contains_key(key)
                    || tool
                        .parameters
                        .pointer(&format!("/properties/{key}/default"))
                        != Some(value)
            });
        }
    }
    Ok(arguments)
}

/// The grade of a reply to a task expecting `expected` calls of `tools`: `cut_off` when the
/// budget stopped it; `no_answer` when it holds neither a call nor content; `wrong` without a
/// call (`no_call`), or when an expected call is missing or differs (its first difference:
/// a wrong name, arguments that are not JSON, a schema violation, a wrong value); `extra_calls`
/// when every expected call was made and more besides; else `pass`.
pub(crate) fn check_calls(expected: &[ExpectedCall], tools: &[ToolSpec], reply: &Reply) -> Outcome {
    if reply.finish_reason.as_deref() == Some("length") {
        return Outcome::cut_off(None);
    }
    if reply.tool_calls.is_empty() {
        if reply.content.trim().is_empty() {
            return Outcome::new(OutcomeKind::NoAnswer, "no call and no content");
        }
        let names: Vec<&str> = expected.iter().map(|call| call.name.as_str()).collect();
        return Outcome::new(
            OutcomeKind::Wrong,
            format!("no_call: expected {}", names.join(", ")),
        );
    }
    let mut unused: Vec<&ReplyToolCall> = reply.tool_calls.iter().collect();
    for want in expected {
        let tool = tools.iter().find(|tool| tool.name == want.name);
        let matched = unused.iter().position(|call| {
            call.name == want.name
                && read_arguments(call, tool, &want.arguments)
                    .is_ok_and(|got| first_difference("", &want.arguments, &got).is_none())
        });
        if let Some(index) = matched {
            unused.remove(index);
            continue;
        }
        let detail = if let Some(call) = unused.iter().find(|call| call.name == want.name) {
            match read_arguments(call, tool, &want.arguments) {
                Err(why) => format!("{}: {why}", want.name),
                Ok(got) => format!(
                    "{}: {}",
                    want.name,
                    first_difference("", &want.arguments, &got).unwrap_or_default()
                ),
            }
        } else {
            let called: Vec<&str> = reply.tool_calls.iter().map(|c| c.name.as_str()).collect();
            format!("missing_call: {} (called {})", want.name, called.join(", "))
        };
        return Outcome::new(OutcomeKind::Wrong, detail);
    }
    if unused.is_empty() {
        let names: Vec<&str> = expected.iter().map(|call| call.name.as_str()).collect();
        Outcome::new(OutcomeKind::Pass, format!("calls: {}", names.join(", ")))
    } else {
        let extra: Vec<String> = unused
            .iter()
            .map(|call| format!("{}({})", call.name, call.arguments))
            .collect();
        Outcome::new(
            OutcomeKind::ExtraCalls,
            format!("extra: {}", extra.join("; ")),
        )
    }
}

/// A reply making these calls (ids in order), for the script and the proof.
pub fn calls_reply(calls: &[ExpectedCall]) -> Reply {
    Reply {
        content: String::new(),
        reasoning: None,
        tool_calls: calls
            .iter()
            .map(|call| ReplyToolCall::new(call.name.clone(), call.arguments.to_string()))
            .collect(),
        finish_reason: Some("tool_calls".to_owned()),
    }
}

/// The expected calls with one argument of the first call sent as the wrong JSON type (a
/// number as a string, anything else as a number): what a schema refuses.
pub fn calls_with_wrong_type(calls: &[ExpectedCall]) -> Vec<ExpectedCall> {
    let mut calls = calls.to_vec();
    if let Some(Value::Object(fields)) = calls.first_mut().map(|call| &mut call.arguments)
        && let Some((_, value)) = fields.iter_mut().next()
    {
        *value = match value {
            Value::Number(number) => Value::String(number.to_string()),
            _ => json!(7),
        };
    }
    calls
}

/// The expected calls with the first call's first text argument changed (a wrong value the
/// schema accepts) or, without one, its first number raised.
pub fn calls_with_wrong_value(calls: &[ExpectedCall]) -> Vec<ExpectedCall> {
    let mut calls = calls.to_vec();
    if let Some(Value::Object(fields)) = calls.first_mut().map(|call| &mut call.arguments) {
        let free_text = fields
            .iter()
            .find(|(key, value)| value.is_string() && catalogue::is_free_text(key))
            .map(|(key, _)| key.clone());
        if let Some(key) = free_text {
            if let Some(Value::String(text)) = fields.get_mut(&key) {
                text.push_str(" North");
            }
        } else if let Some(value) = fields.values_mut().find(|value| value.is_number()) {
            *value = json!(value.as_f64().unwrap_or(0.0) + 2.0);
        }
    }
    calls
}

fn prompt_text(task: &Task) -> String {
    task.messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The self-check of one tool-call task. Every expected function is offered and its arguments
/// are valid under its schema and stated in the request; the expected calls pass (in reverse
/// order too); one more call is `extra_calls`; a wrong argument type, a wrong value, a similar
/// function instead, no call, a cut-off and an empty reply each get their class. A task with no
/// fitting function passes a plain answer holding its word and fails any call; a task with a
/// result has the call and the result in its history, the word in the result. Gives the number
/// of checks and every failure.
pub fn prove_calls_task(task: &Task) -> (usize, Vec<String>) {
    let mut proof = crate::proof::Proof::default();
    let Some(spec) = task.spec::<CallsSpec>() else {
        proof.require(false, "a tool-call task without its spec");
        return proof.finish();
    };
    proof.require(
        task.request_fields.get("tool_choice") == spec.tool_choice.as_ref(),
        "the request's tool_choice is not the spec's",
    );
    let names: Vec<&str> = task.tools.iter().map(|tool| tool.name.as_str()).collect();
    proof.require(
        names == spec.offered.iter().map(String::as_str).collect::<Vec<_>>(),
        "the tools offered are not the spec's",
    );
    let prompt = prompt_text(task);
    if let Some(word) = &spec.must_mention {
        prove_answer(&mut proof, task, spec, word);
    } else {
        proof.require(
            task.checker == Checker::Calls(spec.expected.clone()),
            "the checker's calls are not the spec's",
        );
        proof.require(!spec.expected.is_empty(), "a call task expecting no call");
        for call in &spec.expected {
            prove_call_stated(&mut proof, task, call, &prompt);
        }
        prove_call_grades(&mut proof, task, spec);
    }
    proof.finish()
}

fn prove_call_stated(
    proof: &mut crate::proof::Proof,
    task: &Task,
    call: &ExpectedCall,
    prompt: &str,
) {
    let Some(tool) = task.tools.iter().find(|tool| tool.name == call.name) else {
        proof.require(false, format!("{} is not offered", call.name));
        return;
    };
    if let Err(violation) = schema_violation(&tool.parameters, &call.arguments) {
        proof.require(
            false,
            format!(
                "{}: the expected arguments are not valid: {violation}",
                call.name
            ),
        );
    }
    let mut leaves = Vec::new();
    collect_leaves(&call.arguments, &mut leaves);
    for leaf in leaves {
        let stated = match &leaf {
            Value::String(text) => prompt.contains(text.as_str()),
            Value::Number(number) => crate::values::states_number(prompt, &number.to_string()),
            _ => true,
        };
        proof.require(
            stated,
            format!("{}: the request does not state {leaf}", call.name),
        );
    }
}

fn collect_leaves(value: &Value, out: &mut Vec<Value>) {
    match value {
        Value::Object(fields) => fields.values().for_each(|inner| collect_leaves(inner, out)),
        Value::Array(items) => items.iter().for_each(|inner| collect_leaves(inner, out)),
        leaf => out.push(leaf.clone()),
    }
}

fn prove_call_grades(proof: &mut crate::proof::Proof, task: &Task, spec: &CallsSpec) {
    let right = calls_reply(&spec.expected);
    proof.grades(task, "the expected calls", &right, OutcomeKind::Pass);
    let mut reversed = spec.expected.clone();
    reversed.reverse();
    proof.grades(
        task,
        "the expected calls reversed",
        &calls_reply(&reversed),
        OutcomeKind::Pass,
    );
    let mut extra = spec.expected.clone();
    extra.push(spec.expected[0].clone());
    proof.grades(
        task,
        "one call more",
        &calls_reply(&extra),
        OutcomeKind::ExtraCalls,
    );
    let typed = task.check_answer(&calls_reply(&calls_with_wrong_type(&spec.expected)));
    proof.require(
        typed
            .as_ref()
            .is_some_and(|o| o.kind == OutcomeKind::Wrong && o.detail.contains("schema: ")),
        "an argument of the wrong type is not refused by the schema",
    );
    let valued = task.check_answer(&calls_reply(&calls_with_wrong_value(&spec.expected)));
    proof.require(
        valued
            .as_ref()
            .is_some_and(|o| o.kind == OutcomeKind::Wrong && o.detail.contains(": expected ")),
        format!("a wrong argument value is not graded a wrong value: {valued:?}"),
    );
    if let Some(sibling) = catalogue::sibling(&spec.expected[0].name) {
        let mut swapped = spec.expected.clone();
        sibling.clone_into(&mut swapped[0].name);
        proof.grades(
            task,
            "a similar function instead",
            &calls_reply(&swapped),
            OutcomeKind::Wrong,
        );
    }
    proof.grades(
        task,
        "an answer without a call",
        &Reply::stopped("I would look that up for you."),
        OutcomeKind::Wrong,
    );
    proof.grades(
        task,
        "an empty reply",
        &Reply::stopped(""),
        OutcomeKind::NoAnswer,
    );
    let mut cut = right;
    cut.finish_reason = Some("length".to_owned());
    proof.grades(task, "the calls cut off", &cut, OutcomeKind::CutOff);
}

fn prove_answer(proof: &mut crate::proof::Proof, task: &Task, spec: &CallsSpec, word: &str) {
    proof.require(
        task.checker
            == Checker::NoCall {
                must_mention: word.to_owned(),
            },
        "the checker's word is not the spec's",
    );
    if let Some((call, result)) = &spec.history {
        proof.require(
            result.contains(word),
            "the call's result does not hold the word",
        );
        let turns: Vec<&str> = task.messages.iter().map(|m| m.role.as_str()).collect();
        proof.require(
            turns == ["user", "assistant", "tool"],
            "the history is not a call and its result",
        );
        let made = task.messages.get(1).and_then(|m| m.tool_calls.first());
        let answered = task.messages.get(2).and_then(|m| m.tool_call_id.as_deref());
        proof.require(
            made.is_some_and(|made| made.name == call.name && Some(made.id.as_str()) == answered),
            "the result does not answer the call made",
        );
    }
    proof.grades(
        task,
        "an answer holding the word",
        &Reply::stopped(format!("It is {word}.")),
        OutcomeKind::Pass,
    );
    let any = spec.offered.first().cloned().unwrap_or_default();
    let mut call = Reply::stopped("");
    call.tool_calls = vec![ReplyToolCall::new(any, "{}")];
    call.finish_reason = Some("tool_calls".to_owned());
    proof.grades(task, "a call", &call, OutcomeKind::Wrong);
    proof.grades(
        task,
        "an answer without the word",
        &Reply::stopped("I do not know."),
        OutcomeKind::Wrong,
    );
}

#[cfg(test)]
mod tests;
