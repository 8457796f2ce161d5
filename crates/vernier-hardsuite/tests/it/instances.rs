//! Runs drawn from different instances are refused by `compare` unless unpaired, and every
//! other difference between two runs is named.

use std::path::PathBuf;

use vernier_hardsuite::{
    CompareOptions, Draw, HardsuiteError, ResultsFile, compare_with, instance_differences,
    setting_differences,
};

fn fixture() -> ResultsFile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    ResultsFile::load(&path).expect("fixture journal")
}

#[test]
fn an_old_journal_of_the_bundled_suite_reads_as_level_two_seed_zero() {
    assert_eq!(fixture().draw, Some(Draw::BUNDLED));
}

#[test]
fn different_draws_are_refused_unless_unpaired() {
    let a = fixture();
    let mut b = fixture();
    b.draw = Some(Draw::new(3, 1).expect("level"));
    let refused = compare_with(&a, &b, &CompareOptions::default()).expect_err("refused");
    assert!(matches!(refused, HardsuiteError::DifferentInstances { .. }));
    let message = refused.to_string();
    assert!(message.contains("level 2 seed 0") && message.contains("level 3 seed 1"));
    assert!(message.contains("--unpaired"), "{message}");
    let mut options = CompareOptions::default();
    options.unpaired = true;
    let unpaired = compare_with(&a, &b, &options).expect("unpaired");
    assert!(unpaired.unpaired);
    assert!(unpaired.newcombe.is_none() && unpaired.mcnemar_exact_p.is_none());
    assert!(unpaired.bootstrap.is_none());
    assert!(unpaired.newcombe_independent.is_some());
    assert!(unpaired.difference.abs() < 1e-12);
}

#[test]
fn every_other_difference_is_named() {
    let a = fixture();
    let mut b = fixture();
    for task in &mut b.tasks {
        if task.category == vernier_tasks::Category::MATH {
            for sample in &mut task.samples {
                sample.budget_tokens = 200;
            }
        }
    }
    b.extra_body = Some(serde_json::json!({"chat_template_kwargs": {"enable_thinking": true}}));
    b.samples = 2;
    let sampling = serde_json::json!({"temperature": 1.0, "top_p": null, "top_k": 20, "presence_penalty": 1.5});
    b.sampling = serde_json::from_value(sampling).expect("sampling");
    assert!(instance_differences(&a, &b).is_empty());
    let named = setting_differences(&a, &b);
    let text = named.join("; ");
    assert_eq!(named.len(), 4, "{text}");
    assert!(
        text.contains("math budget: A 16,000 tokens, B 200 tokens"),
        "{text}"
    );
    assert!(text.contains("sampling"), "{text}");
    assert!(text.contains("extra body: A none"), "{text}");
    assert!(text.contains("samples per task: A 1, B 2"), "{text}");
    let comparison = compare_with(&a, &b, &CompareOptions::default()).expect("paired");
    assert_eq!(comparison.setting_differences, named);
    let rendered = vernier_hardsuite::render_comparison(&comparison);
    assert!(
        rendered.contains("math budget: A 16,000 tokens, B 200 tokens"),
        "{rendered}"
    );
    assert!(setting_differences(&a, &fixture()).is_empty());
}
