//! A study: one file that reproduces a whole evaluation. Its target (the server, or the
//! command that launches it; the model; the key's variable; the extra body and sampling every
//! request carries) and its parts, each a kind (`sweep`, `agent`, `suite`, `ready`, …) with the
//! options of that kind's command line, written as TOML:
//!
//! ```toml
//! name = "thinking off against thinking on"
//!
//! [target]
//! base-url = "http://127.0.0.1:8000"
//! extra-body = { chat_template_kwargs = { enable_thinking = false } }
//!
//! [[part]]
//! kind = "sweep"
//! prompt-tokens = [111, 2000]
//! concurrency = [1, 8]
//!
//! [[part]]
//! kind = "suite"
//! name = "suite-thinking"
//! extra-body = { chat_template_kwargs = { enable_thinking = true } }
//! [part.scaled]
//! tasks = ["last-digits", "tool-weather"]
//! ```
//!
//! A part's keys other than `kind`, `name`, `sampling` and `scaled` are its command line's
//! long flags (`prompt-tokens` is `--prompt-tokens`; `prompt_tokens` is read the same); they
//! are checked against the kind's own command, so the file and the command line cannot
//! drift. `[part.scaled]` holds the options `--scaled` sets over the part's own (a study
//! small enough for CI and a small server). This module reads the file and keeps where each
//! key was written, so a bad key is reported at its line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Keys of `[target]`.
pub const TARGET_KEYS: [&str; 9] = [
    "base-url",
    "model",
    "api-key-env",
    "ca-cert",
    "launch",
    "stop",
    "extra-body",
    "sampling",
    "gpu-metrics-url",
];

/// Keys a part has besides its kind's options.
pub const PART_KEYS: [&str; 4] = ["kind", "name", "sampling", "scaled"];

/// Where the server is and what every request carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StudyTarget {
    /// The server (`None`: each part runs the bundled simulator, or the launched server's
    /// address is given here too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model (`None`: the first the server lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The variable holding the API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// A CA certificate to trust.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<PathBuf>,
    /// The command that starts the server (its time to ready is a `ready` part; the other
    /// parts measure it started once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<String>,
    /// The command that stops it (default: SIGTERM to its process group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    /// Fields merged into every request (`chat_template_kwargs`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
    /// Sampling (`temperature`, `top-p`, …): a part's own flag where its command has one,
    /// else a request field.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sampling: BTreeMap<String, Value>,
    /// A DCGM exporter for the server's GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_metrics_url: Option<String>,
}

/// The part kinds that run a suite of the hard suite's engine and score its samples: a
/// head-to-head reads them as quality, and a tune's pass-rate target needs one. The one list of
/// them.
pub const SUITE_KINDS: [&str; 9] = [
    "suite",
    "dataset",
    "context",
    "vision",
    "video",
    "probe",
    "instructions",
    "structured",
    "calls",
];

/// One part: its kind, its name (its folder), its options as written, and what `--scaled`
/// sets over them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StudyPart {
    /// The part kind (`sweep`, `suite`, …).
    pub kind: String,
    /// Its name, unique in the study: its folder and its row in the reports.
    pub name: String,
    /// Its options: its kind's long flags and their values (a flag's order on a command line
    /// does not matter; they are kept by name).
    #[serde(default)]
    pub options: Vec<(String, Value)>,
    /// Its sampling over the target's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sampling: BTreeMap<String, Value>,
    /// The options `--scaled` sets over `options`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaled: Vec<(String, Value)>,
}

impl StudyPart {
    /// A part of `kind` named `name` with `options`.
    pub fn new(kind: &str, name: &str, options: Vec<(String, Value)>) -> Self {
        Self {
            kind: kind.to_owned(),
            name: name.to_owned(),
            options,
            sampling: BTreeMap::new(),
            scaled: Vec::new(),
        }
    }

    /// The value of option `key`, if set.
    pub fn option(&self, key: &str) -> Option<&Value> {
        self.options
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }

    /// With `key` set to `value` (replacing a value set before).
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.set(key, value.into());
        self
    }

    /// Sets `key` to `value`, replacing a value set before.
    pub fn set(&mut self, key: &str, value: Value) {
        self.options.retain(|(name, _)| name != key);
        self.options.push((key.to_owned(), value));
    }

    /// This part with its `scaled` options over its own.
    #[must_use]
    pub fn scaled(&self) -> Self {
        let mut part = self.clone();
        for (key, value) in &self.scaled {
            part.set(key, value.clone());
        }
        part
    }
}

/// A whole study.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Study {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it reproduces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The server and what every request carries.
    #[serde(default)]
    pub target: StudyTarget,
    /// Its parts, in run order.
    pub parts: Vec<StudyPart>,
    /// Whether the parts run with their `scaled` options.
    #[serde(default)]
    pub scaled: bool,
}

impl Study {
    /// The study as it runs: with `scaled`, each part's `scaled` options over its own.
    #[must_use]
    pub fn as_run(&self) -> Self {
        if !self.scaled {
            return self.clone();
        }
        let mut study = self.clone();
        study.parts = self.parts.iter().map(StudyPart::scaled).collect();
        study
    }

    /// The part named `name`.
    pub fn part(&self, name: &str) -> Option<&StudyPart> {
        self.parts.iter().find(|part| part.name == name)
    }

    /// The study as TOML (what `--save-study` writes): the target, then each part with its
    /// options and its scaled ones.
    pub fn to_toml(&self) -> String {
        let mut root = toml::Table::new();
        if let Some(name) = &self.name {
            root.insert("name".to_owned(), name.clone().into());
        }
        if let Some(description) = &self.description {
            root.insert("description".to_owned(), description.clone().into());
        }
        let mut target = toml::Table::new();
        let target_json = serde_json::to_value(&self.target).unwrap_or(Value::Null);
        if let Value::Object(fields) = target_json {
            for (key, value) in fields {
                if let Some(value) = toml_of(&value) {
                    target.insert(key.replace('_', "-"), value);
                }
            }
        }
        if !target.is_empty() {
            root.insert("target".to_owned(), toml::Value::Table(target));
        }
        let parts: Vec<toml::Value> = self
            .parts
            .iter()
            .map(|part| {
                let mut table = toml::Table::new();
                table.insert("kind".to_owned(), part.kind.clone().into());
                table.insert("name".to_owned(), part.name.clone().into());
                for (key, value) in &part.options {
                    if let Some(value) = toml_of(value) {
                        table.insert(key.clone(), value);
                    }
                }
                if !part.sampling.is_empty() {
                    let sampling: toml::Table = part
                        .sampling
                        .iter()
                        .filter_map(|(key, value)| Some((key.clone(), toml_of(value)?)))
                        .collect();
                    table.insert("sampling".to_owned(), toml::Value::Table(sampling));
                }
                if !part.scaled.is_empty() {
                    let scaled: toml::Table = part
                        .scaled
                        .iter()
                        .filter_map(|(key, value)| Some((key.clone(), toml_of(value)?)))
                        .collect();
                    table.insert("scaled".to_owned(), toml::Value::Table(scaled));
                }
                toml::Value::Table(table)
            })
            .collect();
        root.insert("part".to_owned(), toml::Value::Array(parts));
        toml::to_string_pretty(&root).unwrap_or_default()
    }
}

/// A JSON value as TOML (`None` for null, which TOML cannot say).
fn toml_of(value: &Value) -> Option<toml::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => toml::Value::Integer(i),
            (None, Some(f)) => toml::Value::Float(f),
            (None, None) => return None,
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(items) => toml::Value::Array(items.iter().filter_map(toml_of).collect()),
        Value::Object(fields) => toml::Value::Table(
            fields
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), toml_of(value)?)))
                .collect(),
        ),
    })
}

/// Where a key or value was written: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The line.
    pub line: usize,
    /// The column.
    pub column: usize,
}

impl Place {
    /// The place of byte `offset` in `text`.
    pub fn of(text: &str, offset: usize) -> Self {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .map_or(1, |tail| tail.chars().count() + 1);
        Self { line, column }
    }
}

/// Where each part's keys were written, for messages about them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StudyPlaces {
    /// Per part: the place of its table, and of each key.
    pub parts: Vec<(Place, BTreeMap<String, Place>)>,
}

impl StudyPlaces {
    /// The place of `key` in part `index`, else of the part itself.
    pub fn of(&self, index: usize, key: Option<&str>) -> Option<Place> {
        let (part, keys) = self.parts.get(index)?;
        Some(key.and_then(|key| keys.get(key).copied()).unwrap_or(*part))
    }
}

/// A study file that cannot be read: where, what, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{}:{}: {message}", file.display(), place.line, place.column)]
pub struct StudyFileError {
    /// The file.
    pub file: PathBuf,
    /// Where in it.
    pub place: Place,
    /// What is wrong, and how to fix it.
    pub message: String,
}

/// Reads a study file.
pub fn read_study(path: &Path) -> Result<(Study, StudyPlaces), StudyFileError> {
    let text = std::fs::read_to_string(path).map_err(|error| StudyFileError {
        file: path.to_owned(),
        place: Place { line: 1, column: 1 },
        message: format!("cannot read the study: {error}"),
    })?;
    parse_study(&text, path)
}

/// Parses a study's TOML (`file` names it in messages).
pub fn parse_study(text: &str, file: &Path) -> Result<(Study, StudyPlaces), StudyFileError> {
    let error_at = |offset: usize, message: String| StudyFileError {
        file: file.to_owned(),
        place: Place::of(text, offset),
        message,
    };
    let root = toml::de::DeTable::parse(text).map_err(|error| {
        let offset = error.span().map_or(0, |span| span.start);
        error_at(offset, format!("not TOML: {}", error.message()))
    })?;
    let mut study = Study::default();
    let mut places = StudyPlaces::default();
    for (key, value) in root.get_ref() {
        let offset = key.span().start;
        match key.get_ref().as_ref() {
            "name" => study.name = Some(string_of(value, "name", &error_at)?),
            "description" => {
                study.description = Some(string_of(value, "description", &error_at)?);
            }
            "target" => study.target = target_of(value, &error_at)?,
            "part" => {
                let toml::de::DeValue::Array(parts) = value.get_ref() else {
                    return Err(error_at(
                        value.span().start,
                        "`part` is a list of tables: write each part as [[part]]".to_owned(),
                    ));
                };
                for part in parts {
                    let (part, keys) = part_of(part, &error_at)?;
                    places.parts.push(keys);
                    study.parts.push(part);
                }
            }
            other => {
                let known = ["name", "description", "target", "part"];
                return Err(error_at(offset, unknown("study key", other, &known)));
            }
        }
    }
    if study.parts.is_empty() {
        return Err(error_at(
            text.len(),
            "the study has no part: add one or more [[part]] tables, each with its kind".to_owned(),
        ));
    }
    // Names: the kind's unless given, made unique by a number.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (index, part) in study.parts.iter().enumerate() {
        let count = seen.entry(part.name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            let place = places
                .of(index, Some("name"))
                .unwrap_or(Place { line: 1, column: 1 });
            return Err(StudyFileError {
                file: file.to_owned(),
                place,
                message: format!(
                    "two parts are named {:?}: give each part of the same kind a name of its own (name = \"…\")",
                    part.name
                ),
            });
        }
    }
    Ok((study, places))
}

/// `what` named `name` is not one of `known`: the message, with the closest.
fn unknown(what: &str, name: &str, known: &[&str]) -> String {
    let closest = vernier_cli::closest(name, known)
        .map_or_else(String::new, |close| format!("; did you mean `{close}`?"));
    format!(
        "unknown {what} `{name}`{closest} (the {what}s are {})",
        known.join(", ")
    )
}

type ErrorAt<'a> = dyn Fn(usize, String) -> StudyFileError + 'a;

fn string_of(
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    key: &str,
    error_at: &ErrorAt<'_>,
) -> Result<String, StudyFileError> {
    match value.get_ref() {
        toml::de::DeValue::String(text) => Ok(text.to_string()),
        _ => Err(error_at(
            value.span().start,
            format!("`{key}` is text: write it in quotes"),
        )),
    }
}

/// A TOML value as JSON (dates as their text).
pub(crate) fn json_of(value: &toml::de::DeValue<'_>) -> Value {
    match value {
        toml::de::DeValue::String(text) => Value::String(text.to_string()),
        toml::de::DeValue::Integer(integer) => {
            i64::from_str_radix(&integer.as_str().replace('_', ""), integer.radix())
                .map_or_else(|_| Value::String(integer.as_str().to_owned()), Value::from)
        }
        toml::de::DeValue::Float(float) => float
            .as_str()
            .replace('_', "")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(float.as_str().to_owned()), Value::Number),
        toml::de::DeValue::Boolean(b) => Value::Bool(*b),
        toml::de::DeValue::Datetime(date) => Value::String(date.to_string()),
        toml::de::DeValue::Array(items) => {
            Value::Array(items.iter().map(|item| json_of(item.get_ref())).collect())
        }
        toml::de::DeValue::Table(table) => Value::Object(
            table
                .iter()
                .map(|(key, value)| (key.get_ref().to_string(), json_of(value.get_ref())))
                .collect(),
        ),
    }
}

/// A key as the study reads it: `_` written for `-`.
fn normal(key: &str) -> String {
    key.replace('_', "-")
}

fn target_of(
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    error_at: &ErrorAt<'_>,
) -> Result<StudyTarget, StudyFileError> {
    let toml::de::DeValue::Table(table) = value.get_ref() else {
        return Err(error_at(
            value.span().start,
            "`target` is a table: write it as [target]".to_owned(),
        ));
    };
    let mut target = StudyTarget::default();
    for (key, value) in table {
        let name = normal(key.get_ref());
        let text = || string_of(value, &name, error_at);
        match name.as_str() {
            "base-url" => target.base_url = Some(text()?),
            "model" => target.model = Some(text()?),
            "api-key-env" => target.api_key_env = Some(text()?),
            "ca-cert" => target.ca_cert = Some(PathBuf::from(text()?)),
            "launch" => target.launch = Some(text()?),
            "stop" => target.stop = Some(text()?),
            "gpu-metrics-url" => target.gpu_metrics_url = Some(text()?),
            "extra-body" => match json_of(value.get_ref()) {
                Value::Object(fields) => target.extra_body = fields,
                _ => {
                    return Err(error_at(
                        value.span().start,
                        "`extra-body` is a table of request fields, e.g. { chat_template_kwargs = { enable_thinking = false } }".to_owned(),
                    ));
                }
            },
            "sampling" => target.sampling = sampling_of(value, error_at)?,
            other => {
                return Err(error_at(
                    key.span().start,
                    unknown("target key", other, &TARGET_KEYS),
                ));
            }
        }
    }
    Ok(target)
}

fn sampling_of(
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    error_at: &ErrorAt<'_>,
) -> Result<BTreeMap<String, Value>, StudyFileError> {
    match json_of(value.get_ref()) {
        Value::Object(fields) => Ok(fields
            .into_iter()
            .map(|(key, value)| (normal(&key), value))
            .collect()),
        _ => Err(error_at(
            value.span().start,
            "`sampling` is a table, e.g. { temperature = 0.6, top-p = 0.95 }".to_owned(),
        )),
    }
}

type PartRead = (StudyPart, (Place, BTreeMap<String, Place>));

fn part_of(
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    error_at: &ErrorAt<'_>,
) -> Result<PartRead, StudyFileError> {
    let toml::de::DeValue::Table(table) = value.get_ref() else {
        return Err(error_at(
            value.span().start,
            "each part is a table: write it as [[part]]".to_owned(),
        ));
    };
    let place = error_at(value.span().start, String::new()).place;
    let mut kind = None;
    let mut name = None;
    let mut part = StudyPart::new("", "", Vec::new());
    let mut keys = BTreeMap::new();
    for (key, value) in table {
        let key_name = normal(key.get_ref());
        keys.insert(
            key_name.clone(),
            error_at(key.span().start, String::new()).place,
        );
        match key_name.as_str() {
            "kind" => kind = Some(string_of(value, "kind", error_at)?),
            "name" => name = Some(string_of(value, "name", error_at)?),
            "sampling" => part.sampling = sampling_of(value, error_at)?,
            "scaled" => {
                let toml::de::DeValue::Table(scaled) = value.get_ref() else {
                    return Err(error_at(
                        value.span().start,
                        "`scaled` is a table of the part's options: write it as [part.scaled]"
                            .to_owned(),
                    ));
                };
                for (key, value) in scaled {
                    let scaled_key = normal(key.get_ref());
                    keys.entry(format!("scaled.{scaled_key}"))
                        .or_insert_with(|| error_at(key.span().start, String::new()).place);
                    part.scaled.push((scaled_key, json_of(value.get_ref())));
                }
            }
            _ => part.options.push((key_name, json_of(value.get_ref()))),
        }
    }
    let Some(kind) = kind else {
        return Err(error_at(
            value.span().start,
            "a part without its kind: add kind = \"sweep\" (or suite, agent, replay, dataset, context, vision, video, probe, ready, swap, soak, watch)".to_owned(),
        ));
    };
    part.name = name.unwrap_or_else(|| kind.clone());
    part.kind = kind;
    Ok((part, (place, keys)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STUDY: &str = r#"
name = "a study"

[target]
base_url = "http://127.0.0.1:8000"
extra-body = { chat_template_kwargs = { enable_thinking = false } }
sampling = { temperature = 0.6, top_p = 0.95 }

[[part]]
kind = "sweep"
prompt-tokens = [111, 2000]
reps = 5
[part.scaled]
reps = 2

[[part]]
kind = "suite"
name = "thinking"
extra-body = { chat_template_kwargs = { enable_thinking = true } }
"#;

    #[test]
    fn a_study_reads_its_target_parts_options_and_places() {
        let (study, places) = parse_study(STUDY, Path::new("s.toml")).expect("reads");
        assert_eq!(
            study.target.base_url.as_deref(),
            Some("http://127.0.0.1:8000")
        );
        assert_eq!(
            study.target.extra_body["chat_template_kwargs"]["enable_thinking"],
            false
        );
        assert_eq!(study.target.sampling["top-p"], 0.95);
        assert_eq!(study.parts.len(), 2);
        assert_eq!(study.parts[0].name, "sweep");
        assert_eq!(
            study.parts[0].option("prompt-tokens"),
            Some(&serde_json::json!([111, 2000]))
        );
        assert_eq!(
            study.parts[0].scaled().option("reps"),
            Some(&Value::from(2))
        );
        assert_eq!(study.parts[1].name, "thinking");
        // `reps` of the first part is on line 12 (the text opens with a newline).
        assert_eq!(
            places.of(0, Some("reps")),
            Some(Place {
                line: 12,
                column: 1
            })
        );
    }

    #[test]
    fn unknown_keys_are_named_with_the_closest_and_their_place() {
        let text = "[target]\nbase-ulr = \"http://x\"\n\n[[part]]\nkind = \"sweep\"\n";
        let error = parse_study(text, Path::new("s.toml")).expect_err("refused");
        assert_eq!(error.place, Place { line: 2, column: 1 });
        assert!(error.message.contains("did you mean `base-url`"), "{error}");
        assert!(error.to_string().starts_with("s.toml:2:1: "), "{error}");
        let error = parse_study("[[part]]\nreps = 3\n", Path::new("s.toml")).expect_err("no kind");
        assert!(error.message.contains("without its kind"), "{error}");
        let error = parse_study(
            "[[part]]\nkind = \"sweep\"\n[[part]]\nkind = \"sweep\"\n",
            Path::new("s.toml"),
        )
        .expect_err("two sweeps");
        assert_eq!(error.place.line, 3, "the second [[part]]: {error}");
        let error = parse_study(
            "name = 3\n[[part]]\nkind = \"sweep\"\n",
            Path::new("s.toml"),
        )
        .expect_err("a number for a name");
        assert!(error.message.contains("in quotes"), "{error}");
    }

    #[test]
    fn a_study_saved_reads_back_the_same() {
        let (study, _) = parse_study(STUDY, Path::new("s.toml")).expect("reads");
        let saved = study.to_toml();
        let (again, _) = parse_study(&saved, Path::new("saved.toml")).expect("reads back");
        assert_eq!(again, study, "{saved}");
    }
}
