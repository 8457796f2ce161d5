//! User-defined suites read from TOML and JSON files.

use std::path::PathBuf;

use vernier_tasks::{Category, Checker, OutcomeKind, Reply, Suite, SuiteError, self_check};

use crate::block_on;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/suite.toml")
}

#[test]
fn the_example_suite_loads() {
    let suite = Suite::from_path(example()).expect("example suite");
    assert_eq!(suite.name, "example-suite");
    let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "sum-of-squares",
            "two-coins",
            "first-prime-word",
            "reverse-words"
        ]
    );
    assert_eq!(suite.tasks[0].budget_tokens, 8000, "from [budgets]");
    assert_eq!(suite.tasks[2].budget_tokens, 1000, "per-task override");
    assert_eq!(suite.tasks[3].budget_tokens, 12_000, "code default");
    assert_eq!(suite.tasks[2].messages[0].role, "system");
    assert!(matches!(suite.tasks[0].checker, Checker::Integer(385)));
    assert!(matches!(
        suite.tasks[1].checker,
        Checker::Fraction { num: 1, den: 2 }
    ));
    let Checker::Code(check) = &suite.tasks[3].checker else {
        panic!("not a code task")
    };
    assert_eq!(check.cases.len(), 5);
    assert!(check.harness.contains("def run_case"));
    assert!(
        check
            .reference
            .as_deref()
            .is_some_and(|r| r.contains("def reverse_words"))
    );
    assert_eq!(check.controls.len(), 1);
    assert_eq!(check.limits.wall_time, std::time::Duration::from_secs(5));
}

#[test]
fn the_example_suite_math_part_passes_the_self_check_without_docker() {
    let mut suite = Suite::from_path(example()).expect("example suite");
    suite.tasks.retain(|t| t.category != Category::Code);
    let report = block_on(self_check(&suite, None)).expect("self-check");
    assert_eq!(report.tasks.len(), 3);
    let task = &suite.tasks[0];
    assert_eq!(
        block_on(task.check(&Reply::stopped("ANSWER: 385"), None)).kind,
        OutcomeKind::Pass
    );
}

#[test]
fn a_json_suite_loads_and_bad_entries_are_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("suite.json");
    std::fs::write(
        &path,
        r#"{"name": "j", "tasks": [{"id": "x", "category": "math", "prompt": "ANSWER: n", "answer": {"integer": 3}}]}"#,
    )
    .expect("write");
    let suite = Suite::from_path(&path).expect("json suite");
    assert!(matches!(suite.tasks[0].checker, Checker::Integer(3)));
    assert_eq!(suite.tasks[0].budget_tokens, 16_000);

    std::fs::write(
        &path,
        r#"{"name": "j", "tasks": [{"id": "p", "category": "math", "prompt": "ANSWER: p/q", "answer": {"fraction": "2/4"}}]}"#,
    )
    .expect("write");
    let error = Suite::from_path(&path).expect_err("unreduced");
    assert!(
        matches!(&error, SuiteError::InvalidTask { id, .. } if id == "p"),
        "{error}"
    );
    assert!(error.to_string().contains("not reduced"), "{error}");

    std::fs::write(&path, r#"{"name": "j", "tasks": [{"id": "a", "category": "math", "prompt": "q", "answr": {"integer": 1}}]}"#)
        .expect("write");
    assert!(
        matches!(Suite::from_path(&path), Err(SuiteError::Parse { .. })),
        "typo in a key is rejected"
    );

    let yaml = dir.path().join("suite.yaml");
    std::fs::write(&yaml, "name: x").expect("write");
    assert!(matches!(
        Suite::from_path(&yaml),
        Err(SuiteError::UnknownFormat { .. })
    ));
}

#[test]
fn missing_code_files_name_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("suite.toml");
    std::fs::write(
        &path,
        "name = \"c\"\n[[tasks]]\nid = \"f\"\ncategory = \"code\"\nprompt = \"p\"\n[tasks.code]\nharness = \"h.py\"\ncases = \"c.json\"\n",
    )
    .expect("write");
    let error = Suite::from_path(&path).expect_err("missing harness");
    assert!(error.to_string().contains("h.py"), "{error}");
}

#[test]
fn the_example_suite_passes_its_self_check_in_docker() {
    if std::env::var("VERNIER_SKIP_DOCKER_TESTS").is_ok_and(|v| v == "1") {
        return;
    }
    let grader = block_on(vernier_grader::Grader::connect(
        vernier_grader::GraderConfig::default(),
    ))
    .expect(
        "connect to a Docker engine with the grader image; set VERNIER_SKIP_DOCKER_TESTS=1 to skip",
    );
    let suite = Suite::from_path(example()).expect("example suite");
    let report =
        block_on(self_check(&suite, Some(&grader))).unwrap_or_else(|error| panic!("{error}"));
    let limit = report.limits_for("reverse-words").expect("calibrated");
    assert!(limit >= std::time::Duration::from_secs(5));
}
