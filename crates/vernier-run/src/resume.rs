//! One resume policy for every engine.
//!
//! A resumed run takes its settings from its journal. Flags typed beside `--resume` are
//! compared with what the journal records, one [`Setting`] each, as the engine declares them:
//! a **measurement** setting shapes what is measured (prompt lengths, the suite, sampling,
//! budgets), and a difference there is refused by name ([`RunError::ConfigMismatch`]); an
//! **operational** setting does not (the server's address, the key's variable, quietness,
//! `--allow-busy`), and the value typed wins for this session, recorded in the journal.

use std::fmt::Display;
use std::path::Path;

use crate::error::RunError;

/// Whether a setting shapes what a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingKind {
    /// It shapes the figures: a resumed run must keep the journal's value.
    Measurement,
    /// It does not: the value typed beside `--resume` wins, and the change is recorded.
    Operational,
}

/// One setting of a resumed run: its flag, its kind, the journal's value and the value typed
/// beside `--resume` (`None` when the flag was not typed).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Setting {
    /// The flag as typed, e.g. `--reps`.
    pub flag: String,
    /// Measurement or operational.
    pub kind: SettingKind,
    /// The journal's value, as a person reads it.
    pub recorded: String,
    /// The value typed beside `--resume`.
    pub given: Option<String>,
    /// Why the two cannot differ, when the plain "the journal's run: X" would not say it.
    pub explanation: Option<String>,
}

impl Setting {
    /// A setting that shapes the figures.
    pub fn measurement(
        flag: impl Into<String>,
        recorded: impl Display,
        given: Option<impl Display>,
    ) -> Self {
        Self::new(flag, SettingKind::Measurement, recorded, given)
    }

    /// A setting that does not shape the figures.
    pub fn operational(
        flag: impl Into<String>,
        recorded: impl Display,
        given: Option<impl Display>,
    ) -> Self {
        Self::new(flag, SettingKind::Operational, recorded, given)
    }

    /// A setting of `kind`.
    pub fn new(
        flag: impl Into<String>,
        kind: SettingKind,
        recorded: impl Display,
        given: Option<impl Display>,
    ) -> Self {
        Self {
            flag: flag.into(),
            kind,
            recorded: recorded.to_string(),
            given: given.map(|value| value.to_string()),
            explanation: None,
        }
    }

    /// Says why a different value is refused (replacing "the journal's run: X").
    #[must_use]
    pub fn explained(mut self, explanation: impl Into<String>) -> Self {
        self.explanation = Some(explanation.into());
        self
    }

    /// Whether a value was typed and differs from the journal's.
    pub fn differs(&self) -> bool {
        self.given
            .as_ref()
            .is_some_and(|given| *given != self.recorded)
    }

    /// `--flag VALUE (the journal's run: X)`.
    pub fn describe(&self) -> String {
        let given = self.given.as_deref().unwrap_or_default();
        match &self.explanation {
            Some(explanation) => format!("{} {given} ({explanation})", self.flag),
            None => format!(
                "{} {given} (the journal's run: {})",
                self.flag, self.recorded
            ),
        }
    }
}

/// Checks the settings typed beside `--resume` against the journal's run: any measurement
/// setting that differs refuses the resume, naming every such flag; the operational settings
/// that differ are given back, described, for the journal's `resumed` record.
pub fn check_resume(
    journal: &Path,
    original_command: Option<&str>,
    settings: &[Setting],
) -> Result<Vec<String>, RunError> {
    let (refused, operational): (Vec<&Setting>, Vec<&Setting>) = settings
        .iter()
        .filter(|setting| setting.differs())
        .partition(|setting| setting.kind == SettingKind::Measurement);
    if refused.is_empty() {
        return Ok(operational.iter().map(|s| s.describe()).collect());
    }
    Err(RunError::ConfigMismatch {
        journal: journal.to_path_buf(),
        differences: refused
            .iter()
            .map(|s| s.describe())
            .collect::<Vec<_>>()
            .join("; "),
        original_command: original_command.map(str::to_owned),
    })
}

/// What was typed beside `--resume`: the configuration the flags make, and for each flag typed
/// that sets a configuration field, the field and the flag (`("turns", "--turns")`). Each is
/// compared with the journal's: a measurement setting that differs is refused by name.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TypedBeside<C> {
    /// The configuration the flags make.
    pub config: C,
    /// The fields typed, with their flags.
    pub fields: Vec<(String, String)>,
}

impl<C> TypedBeside<C> {
    /// `config`, with `fields` typed.
    pub fn new(config: C, fields: Vec<(String, String)>) -> Self {
        Self { config, fields }
    }
}

/// The settings of a configuration typed beside `--resume`, compared field by field with the
/// journal's: `recorded` and `typed` are the two configurations as JSON objects, `fields` the
/// configuration fields whose flags were typed (each with its flag, as `("turns", "--turns")`),
/// `operational` the fields whose change does not alter what is measured. A field the journal's
/// configuration lacks counts as null there.
pub fn typed_settings(
    recorded: &serde_json::Value,
    typed: &serde_json::Value,
    fields: &[(String, String)],
    operational: &[&str],
) -> Vec<Setting> {
    let shown = |value: Option<&serde_json::Value>| match value {
        None | Some(serde_json::Value::Null) => "none".to_owned(),
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    fields
        .iter()
        .map(|(field, flag)| {
            let kind = if operational.contains(&field.as_str()) {
                SettingKind::Operational
            } else {
                SettingKind::Measurement
            };
            Setting::new(
                flag.clone(),
                kind,
                shown(recorded.get(field)),
                Some(shown(typed.get(field))),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_cli::Failure as _;

    #[test]
    fn typed_fields_are_compared_as_the_journal_recorded_them() {
        let recorded = serde_json::json!({"turns": 6, "sessions": 4, "capture": false});
        let typed = serde_json::json!({"turns": 5, "sessions": 4, "capture": true});
        let fields = [
            ("turns".to_owned(), "--turns".to_owned()),
            ("sessions".to_owned(), "--sessions".to_owned()),
            ("capture".to_owned(), "--capture".to_owned()),
        ];
        let settings = typed_settings(&recorded, &typed, &fields, &["capture"]);
        let error = check_resume(Path::new("j.jsonl"), None, &settings).expect_err("--turns");
        let text = error.to_string();
        assert!(text.contains("--turns 5 (the journal's run: 6)"), "{text}");
        assert!(
            !text.contains("--sessions"),
            "the same value is no change: {text}"
        );
        assert!(!text.contains("--capture"), "operational: {text}");
        let same = typed_settings(&recorded, &recorded, &fields, &["capture"]);
        assert_eq!(
            check_resume(Path::new("j.jsonl"), None, &same).expect("same"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn measurement_changes_are_refused_by_name_and_operational_ones_recorded() {
        let settings = [
            Setting::measurement("--reps", 3, Some(5)),
            Setting::measurement("--prompt-tokens", "100,200", None::<String>),
            Setting::operational("--base-url", "http://a:1", Some("http://b:2")),
            Setting::operational("--quiet", false, Some(false)),
            Setting::measurement("--out", "x", Some("y"))
                .explained("a resumed run writes next to its journal, in x"),
        ];
        let error = check_resume(Path::new("j.jsonl"), Some("sweep --reps 3"), &settings)
            .expect_err("two measurement settings differ");
        let RunError::ConfigMismatch {
            differences,
            original_command,
            ..
        } = &error
        else {
            panic!("not a mismatch: {error}");
        };
        assert_eq!(
            differences,
            "--reps 5 (the journal's run: 3); --out y (a resumed run writes next to its journal, in x)"
        );
        assert_eq!(original_command.as_deref(), Some("sweep --reps 3"));
        assert_eq!(error.exit_code(), 2);
        let recorded = check_resume(Path::new("j.jsonl"), None, &settings[1..4])
            .expect("operational changes pass");
        assert_eq!(
            recorded,
            vec!["--base-url http://b:2 (the journal's run: http://a:1)".to_owned()]
        );
    }
}
