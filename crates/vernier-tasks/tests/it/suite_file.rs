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
            "two-dice-seven",
            "first-prime-word",
            "reverse-words"
        ]
    );
    assert_eq!(suite.tasks[0].budget_tokens, 8000, "from [budgets]");
    assert_eq!(suite.tasks[3].budget_tokens, 1000, "per-task override");
    assert_eq!(suite.tasks[4].budget_tokens, 12_000, "code default");
    assert_eq!(suite.tasks[3].messages[0].role, "system");
    assert!(matches!(suite.tasks[0].checker, Checker::Integer(385)));
    assert!(matches!(
        suite.tasks[1].checker,
        Checker::Fraction {
            num: 1,
            den: 2,
            allow_unreduced: false
        }
    ));
    assert!(matches!(
        suite.tasks[2].checker,
        Checker::Fraction {
            num: 1,
            den: 6,
            allow_unreduced: true
        }
    ));
    let Checker::Code(check) = &suite.tasks[4].checker else {
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
    suite.tasks.retain(|t| t.category != Category::CODE);
    let report = block_on(self_check(&suite, None)).expect("self-check");
    assert_eq!(report.tasks.len(), 4);
    let task = &suite.tasks[0];
    assert_eq!(
        block_on(task.check(&Reply::stopped("ANSWER: 385"), None)).kind,
        OutcomeKind::Pass
    );
    // `two-coins` requires a reduced answer; `two-dice-seven` sets `allow_unreduced = true`.
    let graded = |index: usize, answer: &str| {
        block_on(suite.tasks[index].check(&Reply::stopped(answer), None)).kind
    };
    assert_eq!(graded(1, "ANSWER: 2/4"), OutcomeKind::Wrong);
    assert_eq!(graded(2, "ANSWER: 6/36"), OutcomeKind::Pass);
    assert_eq!(graded(2, "ANSWER: 5/36"), OutcomeKind::Wrong);
}

#[test]
fn allow_unreduced_is_read_from_json_and_only_for_fractions() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("suite.json");
    let write = |task: &str| {
        std::fs::write(&path, format!(r#"{{"name": "j", "tasks": [{task}]}}"#)).expect("write");
    };
    let fraction_task = |extra: &str| {
        format!(
            r#"{{"id": "p", "category": "math", "prompt": "ANSWER: p/q", "answer": {{"fraction": "3/8"}}{extra}}}"#
        )
    };
    for (extra, allowed) in [
        ("", false),
        (r#", "allow_unreduced": false"#, false),
        (r#", "allow_unreduced": true"#, true),
    ] {
        write(&fraction_task(extra));
        let suite = Suite::from_path(&path).expect("json suite");
        assert!(
            matches!(
                suite.tasks[0].checker,
                Checker::Fraction { num: 3, den: 8, allow_unreduced } if allow_unreduced == allowed
            ),
            "{extra:?}: {:?}",
            suite.tasks[0].checker
        );
        let unreduced = block_on(suite.tasks[0].check(&Reply::stopped("ANSWER: 6/16"), None));
        let want = if allowed {
            OutcomeKind::Pass
        } else {
            OutcomeKind::Wrong
        };
        assert_eq!(unreduced.kind, want, "{extra:?}");
        // The self-check expects the unreduced form to pass exactly where it is allowed.
        block_on(self_check(&suite, None)).expect("self-check");
    }

    write(
        r#"{"id": "n", "category": "math", "prompt": "ANSWER: n", "answer": {"integer": 3}, "allow_unreduced": true}"#,
    );
    let error = Suite::from_path(&path).expect_err("not a fraction");
    assert!(
        matches!(&error, SuiteError::InvalidTask { id, .. } if id == "n"),
        "{error}"
    );
    assert!(error.to_string().contains("allow_unreduced"), "{error}");

    // The gold answer itself must still be written reduced.
    write(
        r#"{"id": "q", "category": "math", "prompt": "ANSWER: p/q", "answer": {"fraction": "6/16"}, "allow_unreduced": true}"#,
    );
    let error = Suite::from_path(&path).expect_err("unreduced gold");
    assert!(error.to_string().contains("not reduced"), "{error}");
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
    // The operating system's reason is the cause, printed by the chain, not repeated.
    let cause = std::error::Error::source(&error)
        .expect("an I/O cause")
        .to_string();
    assert!(
        !error.to_string().contains(&cause),
        "{error} repeats {cause}"
    );
}

#[test]
fn unusable_time_floors_are_named_without_panicking() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("h.py"),
        "def run_case(case):\n    return case\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("c.json"),
        r#"[{"name": "one", "input": 1, "expected": 1}]"#,
    )
    .expect("write");
    let path = dir.path().join("suite.toml");
    for floor in ["1e300", "-1.0", "nan", "inf", "0.0", "1e-12"] {
        std::fs::write(
            &path,
            format!(
                "name = \"c\"\n[[tasks]]\nid = \"slow\"\ncategory = \"code\"\nprompt = \"p\"\n[tasks.code]\nharness = \"h.py\"\ncases = \"c.json\"\ntime_floor_seconds = {floor}\n"
            ),
        )
        .expect("write");
        let error = Suite::from_path(&path).expect_err(floor);
        assert!(
            matches!(&error, SuiteError::InvalidTask { id, .. } if id == "slow"),
            "{floor}: {error}"
        );
        assert!(error.to_string().contains("time_floor_seconds"), "{error}");
    }
    // A sane floor loads.
    std::fs::write(
        &path,
        "name = \"c\"\n[[tasks]]\nid = \"slow\"\ncategory = \"code\"\nprompt = \"p\"\n[tasks.code]\nharness = \"h.py\"\ncases = \"c.json\"\ntime_floor_seconds = 2.5\n",
    )
    .expect("write");
    let suite = Suite::from_path(&path).expect("a usable floor");
    let Checker::Code(check) = &suite.tasks[0].checker else {
        panic!("not a code task")
    };
    assert_eq!(check.time_floor, std::time::Duration::from_millis(2500));
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
