//! Reading a dataset file: JSON Lines (or one JSON array), gzip read transparently, each
//! record checked against its kind and refused by line and field.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::draw::name_hash;
use super::error::DatasetError;
use super::extract::choice_letter;
use super::files::{Records, csv_records, parquet_records, records};
#[cfg(feature = "grader")]
use super::program::ProgramTests;
use super::question::{DatasetKind, Gold, MAX_OPTIONS, Question};

/// A dataset file read: its questions, and the records left out with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadedDataset {
    /// The questions, in file order.
    pub questions: Vec<Question>,
    /// Records that are not questions to ask: a multiple-choice question with fewer than two
    /// options (MMLU-Pro has five with one), a header row carried over from a CSV.
    pub left_out: Vec<LeftOut>,
}

/// A record left out of a dataset, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LeftOut {
    /// Its 1-based line (or record number).
    pub line: usize,
    /// Why.
    pub reason: String,
}

/// Reads a dataset file of `kind`: JSON Lines or one JSON array, gzip-compressed or not (told
/// from its first bytes, not its name).
pub fn load_dataset(path: &Path, kind: DatasetKind) -> Result<LoadedDataset, DatasetError> {
    let bytes = std::fs::read(path).map_err(|source| DatasetError::Read {
        path: path.to_owned(),
        source,
    })?;
    load_dataset_bytes(path, &bytes, kind)
}

/// Reads a dataset from its bytes; `path` names it in errors.
pub fn load_dataset_bytes(
    path: &Path,
    bytes: &[u8],
    kind: DatasetKind,
) -> Result<LoadedDataset, DatasetError> {
    let format_error = |reason: &str| DatasetError::Format {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    if bytes.starts_with(b"PAR1") {
        return questions_of(path, kind, parquet_records(path, bytes)?);
    }
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_string(&mut text)
            .map_err(|source| DatasetError::Read {
                path: path.to_owned(),
                source,
            })?;
        text
    } else {
        String::from_utf8(bytes.to_vec())
            .map_err(|_| format_error("it is not UTF-8 text; give a JSON Lines file"))?
    };
    // GPQA is published as CSV; its hub copies as JSON Lines or Parquet carry the same columns.
    let records = if kind == DatasetKind::Gpqa && !text.trim_start().starts_with(['{', '[']) {
        csv_records(path, &text)?
    } else {
        records(path, &text)?
    };
    questions_of(path, kind, records)
}

/// The questions of a file's records, and the records left out.
fn questions_of(
    path: &Path,
    kind: DatasetKind,
    records: Records,
) -> Result<LoadedDataset, DatasetError> {
    let mut questions = Vec::with_capacity(records.len());
    let mut seen = HashSet::new();
    let mut left_out = Vec::new();
    for (line, record) in records {
        let at = At {
            path,
            kind,
            line,
            record: &record,
        };
        if let Some(reason) = at.not_a_question() {
            left_out.push(LeftOut { line, reason });
            continue;
        }
        let question = at.question(questions.len())?;
        if !seen.insert(question.id.clone()) {
            return Err(at.error(
                "id",
                format!(
                    "the id {:?} is used by an earlier record; give each question its own id",
                    question.id
                ),
            ));
        }
        questions.push(question);
    }
    if questions.is_empty() {
        return Err(DatasetError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(LoadedDataset {
        questions,
        left_out,
    })
}

/// One record being read.
struct At<'a> {
    path: &'a Path,
    kind: DatasetKind,
    line: usize,
    record: &'a Map<String, Value>,
}

impl At<'_> {
    fn error(&self, field: &str, reason: impl Into<String>) -> DatasetError {
        DatasetError::Record {
            path: self.path.to_owned(),
            kind: self.kind,
            line: self.line,
            field: field.to_owned(),
            reason: reason.into(),
        }
    }

    fn field(&self, name: &str) -> Result<&Value, DatasetError> {
        self.record.get(name).ok_or_else(|| {
            let mut keys: Vec<&str> = self.record.keys().map(String::as_str).collect();
            keys.sort_unstable();
            self.error(
                name,
                format!(
                    "missing; the record has {}; is this a {} file?",
                    keys.join(", "),
                    self.kind
                ),
            )
        })
    }

    fn text(&self, name: &str) -> Result<String, DatasetError> {
        match self.field(name)? {
            Value::String(text) if !text.trim().is_empty() => Ok(text.clone()),
            Value::String(_) => Err(self.error(name, "empty")),
            Value::Number(number) => Ok(number.to_string()),
            other => Err(self.error(name, format!("expected text, found {}", type_name(other)))),
        }
    }

    fn optional_text(&self, names: &[&str]) -> Option<String> {
        names.iter().find_map(|name| match self.record.get(*name) {
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
            Some(Value::Number(number)) => Some(number.to_string()),
            _ => None,
        })
    }

    fn options(&self, name: &str) -> Result<Vec<String>, DatasetError> {
        let Value::Array(items) = self.field(name)? else {
            return Err(self.error(name, "expected a list of options"));
        };
        let mut options = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Value::String(text) => options.push(text.clone()),
                Value::Number(number) => options.push(number.to_string()),
                other => {
                    return Err(
                        self.error(name, format!("an option is {}, not text", type_name(other)))
                    );
                }
            }
        }
        Ok(options)
    }

    /// The gold option from a letter (`"C"`) or a 0-based index.
    fn choice(&self, name: &str, n_options: usize) -> Result<usize, DatasetError> {
        let index = match self.field(name)? {
            Value::Number(number) => number.as_u64().and_then(|n| usize::try_from(n).ok()),
            Value::String(text) => letter_index(text.trim()),
            _ => None,
        };
        let Some(index) = index else {
            return Err(self.error(
                name,
                "expected a letter (A, B, ...) or a 0-based option index",
            ));
        };
        if index >= n_options {
            return Err(self.error(
                name,
                format!(
                    "{} is not one of the {n_options} options (A to {})",
                    choice_letter(index),
                    choice_letter(n_options.saturating_sub(1))
                ),
            ));
        }
        Ok(index)
    }

    fn check_options(&self, name: &str, options: &[String]) -> Result<(), DatasetError> {
        if !(2..=MAX_OPTIONS).contains(&options.len()) {
            return Err(self.error(
                name,
                format!(
                    "{} options; a question needs 2 to {MAX_OPTIONS}",
                    options.len()
                ),
            ));
        }
        Ok(())
    }

    /// Why a record is no question to ask: a header row (every value its own field name), or
    /// a multiple-choice question with fewer than two options.
    fn not_a_question(&self) -> Option<String> {
        // A header row: most fields hold their own name (a packaged MMLU keeps its topic
        // column filled in on the two it carries).
        let named = self
            .record
            .iter()
            .filter(|(key, value)| {
                value.as_str().is_some_and(|text| {
                    text == key.as_str() || (key.contains("answer") && text == "answer")
                })
            })
            .count();
        let header = named >= 2 && named * 2 > self.record.len();
        if header {
            return Some("a header row, not a question".to_owned());
        }
        let options =
            ["options", "choices"]
                .iter()
                .find_map(|name| match self.record.get(*name) {
                    Some(Value::Array(items)) => Some(
                        items
                            .iter()
                            .filter(|item| item.as_str().is_none_or(|text| text.trim() != "N/A"))
                            .count(),
                    ),
                    _ => None,
                })?;
        (options < 2).then(|| {
            format!(
                "{options} option{}; a multiple-choice question needs at least 2",
                if options == 1 { "" } else { "s" }
            )
        })
    }

    fn question(&self, index: usize) -> Result<Question, DatasetError> {
        match self.kind {
            DatasetKind::MmluPro => self.mmlu_pro(),
            DatasetKind::Mmlu => self.mmlu(index),
            DatasetKind::Gpqa => self.gpqa(),
            DatasetKind::Arc => self.arc(),
            DatasetKind::Gsm8k => self.gsm8k(),
            DatasetKind::Math => self.math(),
            DatasetKind::Custom => self.custom(),
            #[cfg(feature = "grader")]
            DatasetKind::HumanEval => self.humaneval(),
            #[cfg(feature = "grader")]
            DatasetKind::Mbpp => self.mbpp(),
            #[cfg(not(feature = "grader"))]
            DatasetKind::HumanEval | DatasetKind::Mbpp => Err(self.error(
                "(kind)",
                "code datasets are graded in the sandbox, which this build leaves out (feature grader)",
            )),
        }
    }

    #[cfg(feature = "grader")]
    fn humaneval(&self) -> Result<Question, DatasetError> {
        let id = self.text("task_id")?.replace('/', "-");
        let prompt = self.text("prompt")?;
        let entry_point = self.text("entry_point")?;
        let preamble = ProgramTests::preamble_of(&prompt, &entry_point);
        let canonical = self.text("canonical_solution")?;
        let test = self.text("test")?;
        if !test.contains("def check(") {
            return Err(self.error("test", "no `def check(candidate)` to call"));
        }
        Ok(Question {
            id,
            subject: "python".to_owned(),
            gold: Gold::Program(ProgramTests {
                entry_point: Some(entry_point),
                tests: vec![test],
                setup: String::new(),
                reference: format!("{prompt}{canonical}"),
                preamble,
            }),
            text: prompt,
            options: Vec::new(),
            explanation: None,
            line: self.line,
        })
    }

    #[cfg(feature = "grader")]
    fn mbpp(&self) -> Result<Question, DatasetError> {
        let id = self.text("task_id")?;
        let text = self
            .optional_text(&["text", "prompt"])
            .ok_or_else(|| self.error("text", "missing (or `prompt`)"))?;
        let tests = self.options("test_list")?;
        if tests.is_empty() {
            return Err(self.error("test_list", "no assert to grade with"));
        }
        let mut setup = match self.record.get("test_imports") {
            Some(Value::Array(lines)) => {
                lines
                    .iter()
                    .filter_map(Value::as_str)
                    .fold(String::new(), |mut setup, line| {
                        setup.push_str(line);
                        setup.push('\n');
                        setup
                    })
            }
            _ => String::new(),
        };
        if let Some(code) = self.optional_text(&["test_setup_code"]) {
            setup.push_str(&code);
            setup.push('\n');
        }
        Ok(Question {
            id: format!("mbpp-{id}"),
            subject: "python".to_owned(),
            text,
            options: Vec::new(),
            gold: Gold::Program(ProgramTests {
                entry_point: None,
                tests,
                setup,
                reference: self.text("code")?,
                preamble: String::new(),
            }),
            explanation: None,
            line: self.line,
        })
    }

    fn mmlu_pro(&self) -> Result<Question, DatasetError> {
        let id = self.text("question_id")?;
        let mut options = self.options("options")?;
        // The hub's copy pads with "N/A" options; its authors drop them before asking.
        while options.last().is_some_and(|option| option.trim() == "N/A") {
            options.pop();
        }
        self.check_options("options", &options)?;
        let gold = self.choice("answer", options.len())?;
        if let Some(Value::Number(number)) = self.record.get("answer_index")
            && number.as_u64() != u64::try_from(gold).ok()
        {
            return Err(self.error(
                "answer_index",
                format!(
                    "{number} disagrees with `answer` {}; fix one of them",
                    choice_letter(gold)
                ),
            ));
        }
        Ok(Question {
            id: format!("mmlu-pro-{id}"),
            subject: self.text("category")?,
            text: self.text("question")?,
            options,
            gold: Gold::Choice(gold),
            explanation: self.optional_text(&["cot_content"]),
            line: self.line,
        })
    }

    fn mmlu(&self, index: usize) -> Result<Question, DatasetError> {
        // The hub's `choices` + `answer`, or `answer_a`..`answer_d` + `correct_answer`.
        let (options, gold) = if self.record.contains_key("answer_a") {
            let options = ["answer_a", "answer_b", "answer_c", "answer_d"]
                .iter()
                .map(|name| self.text(name))
                .collect::<Result<Vec<_>, _>>()?;
            let gold = self.choice("correct_answer", options.len())?;
            (options, gold)
        } else {
            let options = self.options("choices")?;
            self.check_options("choices", &options)?;
            let gold = self.choice("answer", options.len())?;
            (options, gold)
        };
        let subject = self
            .optional_text(&["subject", "topic", "category"])
            .unwrap_or_else(|| "general knowledge".to_owned());
        let id = self
            .optional_text(&["id"])
            .unwrap_or_else(|| format!("{}-{}", subject.replace(' ', "_"), index));
        Ok(Question {
            id: format!("mmlu-{id}"),
            subject: subject.replace('_', " "),
            text: self.text("question")?,
            options,
            gold: Gold::Choice(gold),
            explanation: None,
            line: self.line,
        })
    }

    fn gpqa(&self) -> Result<Question, DatasetError> {
        let id = self.text("Record ID")?;
        let correct = self.text("Correct Answer")?.trim().to_owned();
        let mut options = vec![correct.clone()];
        for name in [
            "Incorrect Answer 1",
            "Incorrect Answer 2",
            "Incorrect Answer 3",
        ] {
            options.push(self.text(name)?.trim().to_owned());
        }
        // An order fixed by the record id alone: every run and every model sees the same one.
        let mut order = [0_usize, 1, 2, 3];
        vernier_stats::SplitMix64::new(name_hash(&id)).shuffle(&mut order);
        let options: Vec<String> = order.iter().map(|index| options[*index].clone()).collect();
        let gold = order
            .iter()
            .position(|index| *index == 0)
            .unwrap_or_default();
        Ok(Question {
            id: format!("gpqa-{id}"),
            subject: self
                .optional_text(&["High-level domain", "Subdomain"])
                .unwrap_or_else(|| "science".to_owned())
                .trim()
                .to_lowercase(),
            text: self.text("Question")?.trim().to_owned(),
            options,
            gold: Gold::Choice(gold),
            explanation: self.optional_text(&["Explanation"]),
            line: self.line,
        })
    }

    fn arc(&self) -> Result<Question, DatasetError> {
        let id = self.text("id")?;
        // The hub's flat form, or the authors' `question: {stem, choices: [{text, label}]}`.
        let (text, options, labels) = match self.field("question")? {
            Value::Object(question) => {
                let stem = match question.get("stem") {
                    Some(Value::String(stem)) => stem.clone(),
                    _ => return Err(self.error("question.stem", "missing")),
                };
                let Some(Value::Array(choices)) = question.get("choices") else {
                    return Err(self.error("question.choices", "missing"));
                };
                let mut options = Vec::new();
                let mut labels = Vec::new();
                for choice in choices {
                    match (choice.get("text"), choice.get("label")) {
                        (Some(Value::String(text)), Some(Value::String(label))) => {
                            options.push(text.clone());
                            labels.push(label.clone());
                        }
                        _ => {
                            return Err(self.error(
                                "question.choices",
                                "each choice needs `text` and `label`",
                            ));
                        }
                    }
                }
                (stem, options, labels)
            }
            Value::String(text) => {
                let Some(Value::Object(choices)) = self.record.get("choices") else {
                    return Err(
                        self.error("choices", "missing; expected {text: [...], label: [...]}")
                    );
                };
                let list = |name: &str| -> Result<Vec<String>, DatasetError> {
                    match choices.get(name) {
                        Some(Value::Array(items)) => Ok(items
                            .iter()
                            .map(|item| match item {
                                Value::String(text) => text.clone(),
                                other => other.to_string(),
                            })
                            .collect()),
                        _ => Err(self.error(&format!("choices.{name}"), "missing list")),
                    }
                };
                (text.clone(), list("text")?, list("label")?)
            }
            other => {
                return Err(self.error(
                    "question",
                    format!(
                        "expected text or {{stem, choices}}, found {}",
                        type_name(other)
                    ),
                ));
            }
        };
        if labels.len() != options.len() {
            return Err(self.error("choices.label", "not one label per option"));
        }
        self.check_options("choices", &options)?;
        let key = self.text("answerKey")?;
        let Some(gold) = labels.iter().position(|label| *label == key.trim()) else {
            return Err(self.error(
                "answerKey",
                format!("{key:?} is none of the labels {}", labels.join(", ")),
            ));
        };
        Ok(Question {
            id: format!("arc-{id}"),
            subject: "science".to_owned(),
            text,
            options,
            gold: Gold::Choice(gold),
            explanation: None,
            line: self.line,
        })
    }

    fn gsm8k(&self) -> Result<Question, DatasetError> {
        let solution = self.text("answer")?;
        let Some((worked, gold)) = solution.rsplit_once("####") else {
            return Err(self.error("answer", "no `#### N` final answer line"));
        };
        let gold = gold.trim().replace(',', "");
        if gold.is_empty() {
            return Err(self.error("answer", "the `####` line is empty"));
        }
        Ok(Question {
            id: format!("gsm8k-{}", self.line),
            subject: "grade school math".to_owned(),
            text: self.text("question")?,
            options: Vec::new(),
            gold: Gold::Final(gold),
            explanation: Some(worked.trim().to_owned()),
            line: self.line,
        })
    }

    fn math(&self) -> Result<Question, DatasetError> {
        let text = self
            .optional_text(&["problem", "question"])
            .ok_or_else(|| self.error("problem", "missing (or `question`)"))?;
        let answer = if let Some(answer) = self.optional_text(&["answer", "expected_answer"]) {
            answer
        } else {
            let solution = self.text("solution").map_err(|_| {
                self.error(
                    "answer",
                    "missing, and no `solution` with a \\boxed{} answer",
                )
            })?;
            crate::answer::last_boxed(&solution)
                .map(|(_, inner)| inner)
                .ok_or_else(|| self.error("solution", "no \\boxed{} final answer"))?
        };
        let id = self
            .optional_text(&["unique_id", "id", "problem_id", "gid"])
            .unwrap_or_else(|| self.line.to_string());
        Ok(Question {
            id: format!("math-{id}"),
            subject: self
                .optional_text(&["subject", "type", "data_source"])
                .unwrap_or_else(|| "math".to_owned())
                .to_lowercase(),
            text,
            options: Vec::new(),
            gold: Gold::Final(answer.trim().to_owned()),
            explanation: self.optional_text(&["solution"]),
            line: self.line,
        })
    }

    fn custom(&self) -> Result<Question, DatasetError> {
        let id = self.text("id")?;
        let subject = self
            .optional_text(&["category", "subject"])
            .unwrap_or_else(|| "custom".to_owned());
        let (options, gold) = if self.record.contains_key("options") {
            let options = self.options("options")?;
            self.check_options("options", &options)?;
            let gold = self.choice("answer", options.len())?;
            (options, Gold::Choice(gold))
        } else {
            (
                Vec::new(),
                Gold::Final(self.text("answer")?.trim().to_owned()),
            )
        };
        Ok(Question {
            id,
            subject,
            text: self.text("question")?,
            options,
            gold,
            explanation: self.optional_text(&["explanation"]),
            line: self.line,
        })
    }
}

fn letter_index(text: &str) -> Option<usize> {
    let mut chars = text.chars();
    let letter = chars.next()?;
    (chars.next().is_none() && letter.is_ascii_uppercase())
        .then(|| usize::from(letter as u8 - b'A'))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
