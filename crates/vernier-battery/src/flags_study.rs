//! A battery of flags written as the study it is (`battery run … --save-study FILE`): each
//! fixed part as its kind with the options its engine runs with, so the file reruns the same
//! work through `battery run --study FILE`.

use serde_json::{Value, json};

use crate::config::{BatteryConfig, Part};
use crate::error::BatteryError;
use crate::study::{Study, StudyPart, StudyTarget};

/// The study `config` runs against `base_url` (`None`: the bundled simulator).
pub fn study_of_flags(
    config: &BatteryConfig,
    base_url: Option<String>,
) -> Result<Study, BatteryError> {
    let target = StudyTarget {
        base_url,
        model: config.model.clone(),
        launch: config.launch.clone(),
        stop: config.stop.clone(),
        extra_body: config.extra_body.clone(),
        ..StudyTarget::default()
    };
    let mut study = Study {
        name: Some(format!(
            "the {} preset of battery run, as flags set it",
            config.preset.name()
        )),
        target,
        ..Study::default()
    };
    for part in &config.parts {
        study.parts.push(part_of(*part, config)?);
    }
    Ok(study)
}

/// One fixed part as a study's part.
fn part_of(part: Part, config: &BatteryConfig) -> Result<StudyPart, BatteryError> {
    let new = |options: Vec<(&str, Value)>| {
        StudyPart::new(
            part.kind(),
            part.name(),
            options
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect(),
        )
    };
    let budgets = |flags: &[&'static str]| -> Vec<(&'static str, Value)> {
        config.suite_budget.map_or_else(Vec::new, |budget| {
            flags.iter().map(|flag| (*flag, json!(budget))).collect()
        })
    };
    Ok(match part {
        Part::Ready => new(vec![("reps", json!(config.ready_reps.max(1)))]),
        Part::Sweep => new(vec![
            (
                "workload",
                json!(
                    config
                        .workloads
                        .iter()
                        .map(|workload| workload.as_str())
                        .collect::<Vec<_>>()
                ),
            ),
            ("prompt-tokens", json!(config.prompt_tokens)),
            ("output-tokens", json!([config.output_tokens])),
            ("concurrency", json!(config.concurrencies())),
            ("reps", json!(config.reps)),
            ("label", json!("battery")),
        ]),
        Part::Suite | Part::SuiteBatched => {
            let selection = crate::parts::selection(part, config)?;
            let concurrency = if part == Part::SuiteBatched {
                config.batched_concurrency.max(1) as usize
            } else {
                config.suite_concurrency.max(1)
            };
            let mut options = vec![
                ("samples", json!(config.suite_samples)),
                ("concurrency", json!(concurrency)),
            ];
            if let Some(tasks) = selection.tasks {
                options.push(("tasks", json!(tasks)));
            }
            options.extend(budgets(&["budget-math", "budget-code", "budget-tools"]));
            new(options)
        }
        Part::Probe => {
            let mut options = vec![
                ("seed", json!(config.seed)),
                ("samples", json!(config.suite_samples)),
                ("concurrency", json!(config.suite_concurrency.max(1))),
            ];
            options.extend(budgets(&[
                "budget-vision",
                "budget-video",
                "budget-context",
                "budget-tools",
            ]));
            new(options)
        }
        Part::Context => {
            let mut options = vec![
                ("seed", json!(config.seed)),
                ("samples", json!(config.suite_samples)),
                ("concurrency", json!(config.suite_concurrency.max(1))),
            ];
            if let Some(lengths) = &config.context_lengths {
                options.push(("lengths", json!(lengths)));
            }
            options.extend(budgets(&["budget-context"]));
            new(options)
        }
    })
}
