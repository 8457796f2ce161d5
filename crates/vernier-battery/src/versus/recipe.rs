//! What two studies' recipes differ in: the parts one side ran and the other did not (the
//! comparison cannot pair them), and, part by part, every option that differs, the extra
//! body and sampling each part sent included, with the rows each difference confounds.

use std::collections::BTreeMap;

use serde_json::Value;

use super::SettingDifference;
use crate::file::BatteryFile;
use crate::study::{SUITE_KINDS, Study, StudyPart};

/// What a difference in `part` confounds: the speed rows for a sweep, the part's quality
/// rows for a suite, the part itself otherwise.
fn confounds(part: &StudyPart) -> Vec<String> {
    if part.kind == "sweep" {
        vec!["speed".to_owned()]
    } else if SUITE_KINDS.contains(&part.kind.as_str()) {
        vec![format!("quality: {}", part.name)]
    } else {
        vec![part.name.clone()]
    }
}

/// Every setting `part` runs with in `study`: its options, the extra body it sends (its own,
/// else the target's) and its sampling (the target's, its own over them).
fn settings(study: &Study, part: &StudyPart) -> BTreeMap<String, Value> {
    let mut settings: BTreeMap<String, Value> = part
        .options
        .iter()
        .filter(|(key, _)| key != "extra-body")
        .cloned()
        .collect();
    let extra = part
        .option("extra-body")
        .cloned()
        .unwrap_or_else(|| Value::Object(study.target.extra_body.clone()));
    settings.insert("extra-body".to_owned(), extra);
    let mut sampling = study.target.sampling.clone();
    sampling.extend(part.sampling.clone());
    for (key, value) in sampling {
        settings.insert(format!("sampling.{key}"), value);
    }
    settings
}

/// A setting's value in words (`unset` when a side does not set it).
fn said(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "unset".to_owned(),
        Some(Value::Object(fields)) if fields.is_empty() => "none".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// What keeps two studies from being paired part by part: a part only one side runs, or a
/// part of one name but another kind. Empty when the recipes pair.
pub fn recipe_differences(a: &Study, b: &Study) -> Vec<String> {
    let mut differences = Vec::new();
    for part in &a.parts {
        match b.part(&part.name) {
            None => differences.push(format!("part {}: only A runs it", part.name)),
            Some(other) if other.kind != part.kind => differences.push(format!(
                "part {}: of kind {} in A, {} in B",
                part.name, part.kind, other.kind
            )),
            Some(_) => {}
        }
    }
    for part in &b.parts {
        if a.part(&part.name).is_none() {
            differences.push(format!("part {}: only B runs it", part.name));
        }
    }
    differences
}

/// Every option that differs between the parts both studies run (extra body and sampling
/// included), and the model where the targets name different ones, each with what it
/// confounds.
pub fn study_differences(a: &Study, b: &Study) -> Vec<SettingDifference> {
    let mut differences = Vec::new();
    if a.target.model != b.target.model {
        differences.push(SettingDifference {
            what: format!(
                "model asked for: A {}, B {}",
                a.target.model.as_deref().unwrap_or("the first listed"),
                b.target.model.as_deref().unwrap_or("the first listed")
            ),
            confounds: Vec::new(),
        });
    }
    for part in &a.parts {
        let Some(other) = b.part(&part.name) else {
            continue;
        };
        if other.kind != part.kind {
            continue;
        }
        let (settings_a, settings_b) = (settings(a, part), settings(b, other));
        let mut keys: Vec<&String> = settings_a.keys().collect();
        keys.extend(
            settings_b
                .keys()
                .filter(|key| !settings_a.contains_key(*key)),
        );
        for key in keys {
            let (value_a, value_b) = (settings_a.get(key), settings_b.get(key));
            if value_a == value_b {
                continue;
            }
            differences.push(SettingDifference {
                what: format!(
                    "{}: {key}: A {}, B {}",
                    part.name,
                    said(value_a),
                    said(value_b)
                ),
                confounds: confounds(part),
            });
        }
    }
    differences
}

/// The differences of two batteries where at least one ran a study.
pub(crate) fn battery_study_differences(
    a: &BatteryFile,
    b: &BatteryFile,
) -> Vec<SettingDifference> {
    match (&a.study, &b.study) {
        (Some(study_a), Some(study_b)) => study_differences(study_a, study_b),
        _ => vec![SettingDifference {
            what: format!("recipe: A {}, B {}", recipe_name(a), recipe_name(b)),
            confounds: vec!["speed".to_owned(), "quality".to_owned()],
        }],
    }
}

/// A battery's recipe in words: its study's name, or its preset.
fn recipe_name(file: &BatteryFile) -> String {
    match (&file.study, &file.config) {
        (Some(study), _) => format!("the study {}", study.name.as_deref().unwrap_or("(unnamed)")),
        (None, Some(config)) => format!("the {} preset of flags", config.preset.name()),
        (None, None) => "an unknown recipe".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn study(text: &str) -> Study {
        crate::study::parse_study(text, Path::new("test.toml"))
            .expect("a valid study")
            .0
    }

    #[test]
    fn extra_body_and_sampling_differences_are_named_with_what_they_confound() {
        let a = study(
            "[target]\nextra-body = { chat_template_kwargs = { enable_thinking = false } }\nsampling = { temperature = 0.6 }\n[[part]]\nkind = \"suite\"\n[[part]]\nkind = \"sweep\"\n",
        );
        let b = study(
            "[target]\nextra-body = { chat_template_kwargs = { enable_thinking = true } }\nsampling = { temperature = 0.6 }\n[[part]]\nkind = \"suite\"\n[[part]]\nkind = \"sweep\"\nconcurrency = [1, 8]\n",
        );
        assert!(recipe_differences(&a, &b).is_empty());
        let differences = study_differences(&a, &b);
        let whats: Vec<&str> = differences.iter().map(|d| d.what.as_str()).collect();
        assert!(
            whats
                .iter()
                .any(|what| what.starts_with("suite: extra-body:")
                    && what.contains("false")
                    && what.contains("true")),
            "{whats:?}"
        );
        assert!(
            whats
                .iter()
                .any(|what| what.starts_with("sweep: concurrency: A unset, B [1,8]")),
            "{whats:?}"
        );
        assert!(
            !whats.iter().any(|what| what.contains("sampling")),
            "{whats:?}"
        );
        let suite = differences
            .iter()
            .find(|d| d.what.starts_with("suite:"))
            .expect("the suite's difference");
        assert_eq!(suite.confounds, vec!["quality: suite".to_owned()]);
    }

    #[test]
    fn parts_one_side_lacks_keep_the_recipes_from_pairing() {
        let a = study("[[part]]\nkind = \"suite\"\n[[part]]\nkind = \"sweep\"\n");
        let b = study("[[part]]\nkind = \"suite\"\n[[part]]\nkind = \"agent\"\nname = \"sweep\"\n");
        let differences = recipe_differences(&a, &b);
        assert_eq!(
            differences,
            vec!["part sweep: of kind sweep in A, agent in B".to_owned()]
        );
    }
}
