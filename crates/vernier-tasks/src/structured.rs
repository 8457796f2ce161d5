//! Structured output: extraction tasks whose request carries `response_format` (a JSON schema,
//! or the `json_object` mode with the schema in the prompt). The reply must parse as JSON, be
//! valid under the schema (checked by a JSON Schema validator) and hold the values of the task's
//! generated record (read from a text or from a table with other rows beside it). Drawn fresh
//! per seed at four levels (flat fields; a number, a yes/no and an enum; a nested object; a list
//! of objects), each proved before a model sees it.

mod record;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use vernier_stats::SplitMix64;

pub use record::{Shipment, StructuredSource};

use crate::kind::Kind;
use crate::task::{Category, Checker, Outcome, OutcomeKind, Reply, Task};
use crate::values::{first_difference, schema_violation};

impl Category {
    /// Structured output: JSON a schema accepts, holding the right values.
    pub const STRUCTURED: Self = Self::new("structured");
}

/// Default completion-token budget of a structured-output task.
pub const DEFAULT_STRUCTURED_BUDGET: u32 = 1024;
/// Tasks drawn per level.
pub const STRUCTURED_PER_LEVEL: u32 = 3;
/// The levels: 1 flat text fields, 2 adds a number, a yes/no and an enum, 3 a nested object,
/// 4 a list of objects.
pub const STRUCTURED_LEVELS: [u32; 4] = [1, 2, 3, 4];

pub(crate) const KIND: Kind = Kind {
    category: Category::STRUCTURED,
    description: "structured output: response_format JSON checked by a schema validator and against the truth",
    default_budget: DEFAULT_STRUCTURED_BUDGET,
    fits: |checker| matches!(checker, Checker::Structured { .. }),
    prove: Some(prove_structured_task),
};

/// How the request asks for JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum JsonMode {
    /// `response_format: {"type": "json_schema", "json_schema": {"name", "strict", "schema"}}`.
    JsonSchema,
    /// `response_format: {"type": "json_object"}`, the schema stated in the prompt.
    JsonObject,
}

impl JsonMode {
    /// The name reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::JsonSchema => "json_schema",
            Self::JsonObject => "json_object",
        }
    }
}

/// What a structured-output task is drawn from: its level, the record and where it is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StructuredSpec {
    /// The level.
    pub level: u32,
    /// How the request asks for JSON.
    pub mode: JsonMode,
    /// Where the record is read from.
    pub source: StructuredSource,
    /// The record to extract.
    pub record: Shipment,
    /// The other rows of a table source.
    pub others: Vec<Shipment>,
}

impl StructuredSpec {
    /// The JSON schema the reply must meet.
    pub fn schema(&self) -> Value {
        record::schema(self.level)
    }

    /// The record as the reply must hold it.
    pub fn truth(&self) -> Value {
        self.record.to_json(self.level)
    }

    /// The `response_format` field the request carries.
    pub fn response_format(&self) -> Value {
        match self.mode {
            JsonMode::JsonSchema => json!({
                "type": "json_schema",
                "json_schema": {"name": "shipment", "strict": true, "schema": self.schema()},
            }),
            JsonMode::JsonObject => json!({"type": "json_object"}),
        }
    }
}

fn prompt_of(id: &str, spec: &StructuredSpec) -> String {
    let fields: Vec<&str> = record::field_names(spec.level);
    let source = match spec.source {
        StructuredSource::Text => record::prose(&spec.record, &spec.others, spec.level),
        StructuredSource::Table => record::table(&spec.record, &spec.others, spec.level),
    };
    let schema_line = match spec.mode {
        JsonMode::JsonSchema => String::new(),
        JsonMode::JsonObject => format!(
            " The object must be valid under this JSON Schema: {}",
            spec.schema()
        ),
    };
    format!(
        "Request {id}. Extract shipment {} from the {} below as one JSON object with the fields \
         {}. Numbers are JSON numbers, yes/no values JSON booleans. Reply with the JSON object \
         only.{schema_line}\n\n{source}",
        spec.record.reference,
        spec.source.as_str(),
        fields.join(", "),
    )
}

/// A structured-output task from its spec: the checker holds the schema and the truth, the
/// request carries `response_format`.
pub fn structured_task(id: impl Into<String>, spec: StructuredSpec, budget_tokens: u32) -> Task {
    let id = id.into();
    let task = Task::new(
        id.clone(),
        Category::STRUCTURED,
        prompt_of(&id, &spec),
        budget_tokens,
        Checker::Structured {
            schema: spec.schema(),
            truth: spec.truth(),
        },
    )
    .with_request_field("response_format", spec.response_format());
    task.with_spec(spec)
}

/// The suite of `seed`: [`STRUCTURED_PER_LEVEL`] tasks at each level (the first two from a
/// text, read with a JSON schema; the third from a table at levels 1 and 2, in the
/// `json_object` mode), ids `structured-l{level}-{n}`.
pub fn structured_suite(seed: u64, budget_tokens: u32) -> crate::suite::Suite {
    let mut tasks = Vec::new();
    for level in STRUCTURED_LEVELS {
        for sample in 0..STRUCTURED_PER_LEVEL {
            let mut mixer = SplitMix64::new(seed ^ 0x57C7_0C7E_D000_0000);
            for _ in 0..=(level * 16 + sample) {
                mixer.next_u64();
            }
            let mut rng = SplitMix64::new(mixer.next_u64());
            let last = sample + 1 == STRUCTURED_PER_LEVEL;
            let source = if last && level <= 2 {
                StructuredSource::Table
            } else {
                StructuredSource::Text
            };
            let mode = if last {
                JsonMode::JsonObject
            } else {
                JsonMode::JsonSchema
            };
            let (record, others) = record::draw(&mut rng, source);
            let spec = StructuredSpec {
                level,
                mode,
                source,
                record,
                others,
            };
            tasks.push(structured_task(
                format!("structured-l{level}-{}", sample + 1),
                spec,
                budget_tokens,
            ));
        }
    }
    crate::suite::Suite::new("structured", tasks)
}

/// The grade of a structured reply: `cut_off` when the budget stopped it, `no_answer` when it
/// is empty, `wrong` when it is not JSON (`invalid_json: ...`), not valid under the schema
/// (`schema: /path: ...`) or holds a wrong value (`value: field: expected ..., got ...`), else
/// `pass`.
pub(crate) fn check_structured(schema: &Value, truth: &Value, reply: &Reply) -> Outcome {
    if reply.finish_reason.as_deref() == Some("length") {
        return Outcome::cut_off(None);
    }
    let text = reply.content.trim();
    if text.is_empty() {
        return Outcome::new(OutcomeKind::NoAnswer, "empty reply");
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => return Outcome::new(OutcomeKind::Wrong, format!("invalid_json: {error}")),
    };
    if let Err(violation) = schema_violation(schema, &value) {
        return Outcome::new(OutcomeKind::Wrong, format!("schema: {violation}"));
    }
    match first_difference("", truth, &value) {
        Some(difference) => Outcome::new(OutcomeKind::Wrong, format!("value: {difference}")),
        None => Outcome::new(OutcomeKind::Pass, "valid and right"),
    }
}

/// A reply for the simulator's script and the proof: the truth (`None`), the truth with the
/// field at this index changed (`Some(i)`, still valid under the schema).
pub fn structured_reply(spec: &StructuredSpec, changing: Option<usize>) -> String {
    let mut truth = spec.truth();
    if let Some(index) = changing {
        record::change_leaf(&mut truth, index);
    }
    truth.to_string()
}

/// The number of values a record of this spec holds (the leaves [`structured_reply`] can
/// change).
pub fn structured_leaves(spec: &StructuredSpec) -> usize {
    record::leaf_paths(&spec.truth()).len()
}

/// The self-check of one structured task: the schema compiles and the truth is valid under it;
/// the checker and `response_format` are the spec's; the prompt names the record and states
/// every value; the truth passes; each value changed alone fails on that value; a reply cut
/// mid-object is `invalid_json`, one without a required field `schema`; a cut-off is `cut_off`
/// and an empty reply `no_answer`. Gives the number of checks and every failure.
pub fn prove_structured_task(task: &Task) -> (usize, Vec<String>) {
    let mut proof = crate::proof::Proof::default();
    let Some(spec) = task.spec::<StructuredSpec>() else {
        proof.require(false, "a structured task without its spec");
        return proof.finish();
    };
    let (schema, truth) = (spec.schema(), spec.truth());
    proof.require(
        task.checker
            == Checker::Structured {
                schema: schema.clone(),
                truth: truth.clone(),
            },
        "the checker's schema or truth is not the spec's",
    );
    proof.require(
        task.request_fields.get("response_format") == Some(&spec.response_format()),
        "the request does not carry the spec's response_format",
    );
    if let Err(violation) = schema_violation(&schema, &truth) {
        proof.require(false, format!("the truth is not valid: {violation}"));
    }
    let prompt: String = task
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for (path, value) in record::leaf_paths(&truth) {
        let stated = match &value {
            Value::String(text) => prompt.contains(text.as_str()),
            Value::Number(number) => crate::values::states_number(&prompt, &number.to_string()),
            // Yes/no values are stated in words; the change test below proves they are read.
            _ => true,
        };
        proof.require(
            stated,
            format!("the prompt does not state {path} ({value})"),
        );
    }
    let truth_text = truth.to_string();
    proof.grades(
        task,
        "the truth",
        &Reply::stopped(truth_text.clone()),
        OutcomeKind::Pass,
    );
    for (index, (path, _)) in record::leaf_paths(&truth).iter().enumerate() {
        let changed = structured_reply(spec, Some(index));
        let parsed: Value = serde_json::from_str(&changed).unwrap_or(Value::Null);
        proof.require(
            schema_violation(&schema, &parsed).is_ok(),
            format!("{path}: the changed record is not valid under the schema"),
        );
        let outcome = task.check_answer(&Reply::stopped(changed));
        proof.require(
            outcome.as_ref().is_some_and(|outcome| {
                outcome.kind == OutcomeKind::Wrong && outcome.detail.starts_with("value: ")
            }),
            format!("{path}: a record with it changed is not graded a wrong value"),
        );
    }
    let cut_mid = &truth_text[..truth_text.len() - 1];
    let outcome = task.check_answer(&Reply::stopped(cut_mid));
    proof.require(
        outcome
            .as_ref()
            .is_some_and(|outcome| outcome.detail.starts_with("invalid_json")),
        "a reply cut mid-object is not invalid JSON",
    );
    let mut missing = truth.clone();
    if let Some(fields) = missing.as_object_mut() {
        fields.remove("reference");
    }
    let outcome = task.check_answer(&Reply::stopped(missing.to_string()));
    proof.require(
        outcome
            .as_ref()
            .is_some_and(|outcome| outcome.detail.starts_with("schema: ")),
        "a reply without a required field is not refused by the schema",
    );
    let mut cut = Reply::stopped(truth_text);
    cut.finish_reason = Some("length".to_owned());
    proof.grades(task, "the truth cut off", &cut, OutcomeKind::CutOff);
    proof.grades(
        task,
        "an empty reply",
        &Reply::stopped(""),
        OutcomeKind::NoAnswer,
    );
    proof.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_proves_over_many_seeds_and_is_drawn_alike_per_seed() {
        for seed in 0..200 {
            let suite = structured_suite(seed, 512);
            assert_eq!(suite.tasks.len(), 12);
            for task in &suite.tasks {
                let (n, failures) = prove_structured_task(task);
                assert!(n > 10, "{}: {n} checks", task.id);
                assert!(failures.is_empty(), "seed {seed} {}: {failures:?}", task.id);
            }
        }
        assert_eq!(
            structured_suite(7, 512).tasks,
            structured_suite(7, 512).tasks
        );
        assert_ne!(
            structured_suite(7, 512).tasks,
            structured_suite(8, 512).tasks
        );
    }

    #[test]
    fn a_generator_that_states_a_wrong_value_is_named() {
        let suite = structured_suite(3, 512);
        let mut task = suite.tasks[4].clone();
        let spec = task.spec_mut::<StructuredSpec>().expect("spec");
        spec.record.pieces += 1;
        let (_, failures) = prove_structured_task(&task);
        assert!(
            failures
                .iter()
                .any(|f| f.contains("checker's schema or truth")),
            "{failures:?}"
        );
        // The prompt kept the old value: a checker rebuilt from the broken spec is caught by the
        // prompt check instead.
        let spec = task.spec::<StructuredSpec>().expect("spec").clone();
        let rebuilt = Task {
            messages: task.messages.clone(),
            ..structured_task(task.id.clone(), spec, 512)
        };
        let (_, failures) = prove_structured_task(&rebuilt);
        assert!(
            failures.iter().any(|f| f.contains("does not state pieces")),
            "{failures:?}"
        );
    }

    #[test]
    fn replies_are_graded_by_parse_then_schema_then_value() {
        let suite = structured_suite(1, 512);
        let task = &suite.tasks[3];
        let spec = task.spec::<StructuredSpec>().expect("spec");
        let grade = |text: &str| task.check_answer(&Reply::stopped(text)).expect("graded");
        assert_eq!(grade(&structured_reply(spec, None)).kind, OutcomeKind::Pass);
        let fenced = format!("```json\n{}\n```", structured_reply(spec, None));
        assert!(grade(&fenced).detail.starts_with("invalid_json"));
        let mut as_string = spec.truth();
        as_string["pieces"] = Value::String(spec.record.pieces.to_string());
        assert!(
            grade(&as_string.to_string())
                .detail
                .starts_with("schema: /pieces"),
            "{}",
            grade(&as_string.to_string()).detail
        );
        let wrong = grade(&structured_reply(spec, Some(0)));
        assert_eq!(wrong.kind, OutcomeKind::Wrong);
        let first = record::leaf_paths(&spec.truth())[0].0.clone();
        assert!(
            wrong
                .detail
                .starts_with(&format!("value: {first}: expected")),
            "{}",
            wrong.detail
        );
    }
}
