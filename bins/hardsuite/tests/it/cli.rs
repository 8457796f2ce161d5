//! Command-line behaviour: the self-check gate, argument checks, the self-check subcommand.

use hardsuite::{CommandOutput, HardsuiteError};

use crate::{arg, run_cli};

const BROKEN_SUITE: &str = r#"
name = "broken"

[[tasks]]
id = "sum-of-squares"
category = "math"
prompt = "What is 1^2 + 2^2 + ... + 10^2? End with a line `ANSWER: <integer>`."
answer = { integer = 385 }
positive = true

[[tasks]]
id = "seating-puzzle"
category = "math"
prompt = "How many seatings satisfy every rule? End with a line `ANSWER: <integer>`."
answer = { integer = 0 }
positive = true
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_self_check_stops_the_run_naming_the_task() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let suite = dir.path().join("broken.toml");
    std::fs::write(&suite, BROKEN_SUITE).expect("write suite");
    let out = dir.path().join("out");
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--suite",
        arg(&suite),
        "--out",
        arg(&out),
        "--quiet",
    ])
    .await
    .expect_err("the seating puzzle has no solution");
    let HardsuiteError::SelfCheck(check) = &error else {
        panic!("expected a self-check failure, got {error}");
    };
    let failures = check.failures();
    assert!(!failures.is_empty());
    assert!(
        failures
            .iter()
            .all(|failure| failure.task_id == "seating-puzzle"),
        "{failures:?}"
    );
    let message = error.to_string();
    assert!(message.contains("task seating-puzzle: "), "{message}");
    assert!(message.contains("must be positive"), "{message}");
    // No model saw the suite: nothing was written.
    assert!(!out.join("journal.jsonl").exists());
}

#[tokio::test]
async fn self_check_subcommand_prints_what_it_proved() {
    let output = run_cli(&[
        "hardsuite",
        "self-check",
        "--tasks",
        "crt,dice-probability,tool-calc,tool-none",
    ])
    .await
    .expect("no code tasks: no Docker needed");
    let CommandOutput::SelfCheck(text) = output else {
        panic!("self-check gives its report");
    };
    assert!(text.starts_with("self-check passed: "), "{text}");
    for id in ["crt", "dice-probability", "tool-calc", "tool-none"] {
        assert!(
            text.lines().any(|line| line.starts_with(id)),
            "{id} missing from\n{text}"
        );
    }
}

#[tokio::test]
async fn arguments_that_would_distort_the_run_are_refused() {
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--extra-body",
        r#"{"stop": ["\n\n"]}"#,
        "--tasks",
        "crt",
    ])
    .await
    .expect_err("stop sequences are never sent");
    assert!(
        error
            .to_string()
            .starts_with("use --extra-body: it sets `stop`"),
        "{error}"
    );
    let error = run_cli(&["hardsuite", "run", "--extra-body", "[1]", "--tasks", "crt"])
        .await
        .expect_err("not an object");
    assert!(
        error.to_string().contains("must be a JSON object"),
        "{error}"
    );
    let error = run_cli(&["hardsuite", "run", "--tasks", "no-such-task"])
        .await
        .expect_err("unknown task");
    assert!(
        error.to_string().contains("no task \"no-such-task\""),
        "{error}"
    );
    let error = run_cli(&["hardsuite", "run", "--samples", "0"])
        .await
        .expect_err("zero samples");
    assert!(error.to_string().contains("--samples"), "{error}");
}
