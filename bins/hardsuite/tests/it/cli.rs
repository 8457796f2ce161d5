//! Command-line behaviour: the self-check gate, argument checks, the self-check subcommand.

use hardsuite::CommandOutput;
use vernier_cli::Failure as _;
use vernier_hardsuite::HardsuiteError;
use vernier_run::RunError;

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

/// A grader image no engine holds: connecting the grader fails with or without Docker.
const NO_SUCH_IMAGE: &str = "vernier-no-such-grader-image:none";

#[tokio::test]
async fn a_missing_grader_says_how_to_get_one_or_leave_the_code_tasks_out() {
    let error = run_cli(&[
        "hardsuite",
        "self-check",
        "--grader-image",
        NO_SUCH_IMAGE,
        "--tasks",
        "crt,merge-intervals,tool-none,lru-cache",
    ])
    .await
    .expect_err("no such image");
    let HardsuiteError::Grader { n_code_tasks, .. } = &error else {
        panic!("expected a grader error, got {error}");
    };
    assert_eq!(*n_code_tasks, 2);
    let message = error.to_string();
    assert!(
        message.contains("`docker/setup-engine.sh && docker/build-grader-image.sh`"),
        "{message}"
    );
    assert!(
        message.ends_with("leave the code tasks out with `--tasks crt,tool-none`"),
        "{message}"
    );
    // The whole bundled suite: every task id but the ten code ones, in suite order.
    let error = run_cli(&["hardsuite", "self-check", "--grader-image", NO_SUCH_IMAGE])
        .await
        .expect_err("no such image");
    let message = error.to_string();
    let (_, list) = message.rsplit_once("`--tasks ").expect("a --tasks list");
    let list = list.strip_suffix('`').expect("the list is quoted");
    let suite = vernier_tasks::Suite::bundled();
    let expected: Vec<&str> = suite
        .tasks
        .iter()
        .filter(|task| task.category != vernier_tasks::Category::CODE)
        .map(|task| task.id.as_str())
        .collect();
    assert_eq!(expected.len(), 18);
    assert_eq!(list, expected.join(","));
}

#[tokio::test]
async fn client_settings_are_checked_before_docker_and_the_self_check() {
    // A code task with an image no engine holds: were the grader connected first, this would be
    // a grader error.
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--base-url",
        "not a url",
        "--grader-image",
        NO_SUCH_IMAGE,
        "--tasks",
        "merge-intervals",
        "--quiet",
    ])
    .await
    .expect_err("bad URL");
    // A URL that cannot name a server is a refused flag (vernier-run's one client rule).
    assert!(
        matches!(
            &error,
            HardsuiteError::Run(RunError::InvalidArgument { what, .. }) if what == "--base-url"
        ),
        "expected a refused --base-url, got {error}"
    );
    assert_eq!(error.exit_code(), vernier_cli::exit_code::USAGE);
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--base-url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--api-key-env",
        "HARDSUITE_TEST_VARIABLE_NOBODY_SETS",
        "--grader-image",
        NO_SUCH_IMAGE,
        "--tasks",
        "merge-intervals",
        "--quiet",
    ])
    .await
    .expect_err("unset API key variable");
    let message = vernier_cli::cause_chain(&error);
    // A key variable that is not set is a refused flag, as a bad URL is.
    assert_eq!(
        error.exit_code(),
        vernier_cli::exit_code::USAGE,
        "{message}"
    );
    assert!(message.contains("--api-key-env"), "{message}");
    assert!(
        message.contains("HARDSUITE_TEST_VARIABLE_NOBODY_SETS"),
        "{message}"
    );
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--extra-body",
        "{not json",
        "--grader-image",
        NO_SUCH_IMAGE,
        "--tasks",
        "merge-intervals",
    ])
    .await
    .expect_err("bad extra body");
    assert!(
        error
            .to_string()
            .starts_with("use --extra-body: it is not JSON"),
        "{error}"
    );
}

#[tokio::test]
async fn huge_timeouts_are_refused_not_overflowed() {
    for flag in ["--idle-timeout", "--request-timeout"] {
        let error = run_cli(&[
            "hardsuite",
            "run",
            flag,
            "18446744073709551615",
            "--tasks",
            "crt",
        ])
        .await
        .expect_err("more than 7 days");
        let message = error.to_string();
        assert!(message.starts_with(&format!("use {flag}: ")), "{message}");
        assert!(message.contains("at most 604800"), "{message}");
    }
}

#[tokio::test]
async fn a_second_run_refuses_to_empty_the_first_runs_journal() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).expect("create out");
    let journal = out.join("journal.jsonl");
    std::fs::write(&journal, "{\"type\":\"header\"}\n").expect("write journal");
    let error = run_cli(&["hardsuite", "run", "--out", arg(&out), "--tasks", "crt"])
        .await
        .expect_err("the journal exists");
    assert!(
        matches!(error, HardsuiteError::Run(RunError::JournalExists { .. })),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "{} already exists; pass --resume {} to continue it, or choose another --out",
            journal.display(),
            journal.display()
        )),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(&journal).expect("read journal"),
        "{\"type\":\"header\"}\n"
    );
}

/// A simulated run's header over two tasks, one sample, default sampling, no re-run.
fn simulated_header() -> serde_json::Value {
    serde_json::json!({
        "type": "header", "journal_version": 1, "suite": "hardsuite", "suite_path": null,
        "task_ids": ["crt", "tool-none"], "model": "vernier-sim", "base_url": "http://127.0.0.1:1",
        "simulated": true,
        "sampling": {"temperature": 0.6, "top_p": 0.95, "top_k": null, "presence_penalty": null},
        "extra_body": null, "budget_flags": {"math": null, "code": null, "tools": null},
        "samples": 1, "rerun_budget": null, "self_checked": true, "grader_image": null,
        "command_line": ["hardsuite", "run"], "started_unix_ms": 0
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_refuses_flags_that_differ_from_the_journal() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).expect("create out");
    let journal = out.join("journal.jsonl");
    let header = format!("{}\n", simulated_header());
    std::fs::write(&journal, &header).expect("write journal");
    let other = dir.path().join("other");
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--resume",
        arg(&journal),
        "--samples",
        "3",
        "--tasks",
        "crt",
        "--temperature",
        "0.9",
        "--base-url",
        "http://127.0.0.1:9",
        "--rerun-cut-off",
        "32000",
        "--budget-math",
        "8000",
        "--extra-body",
        r#"{"seed": 1}"#,
        "--model",
        "other-model",
        "--out",
        arg(&other),
        "--quiet",
    ])
    .await
    .expect_err("every flag differs");
    assert!(
        matches!(error, HardsuiteError::Run(RunError::ConfigMismatch { .. })),
        "{error}"
    );
    let message = error.to_string();
    for expected in [
        "--samples 3 (the journal's run: 1)",
        "--tasks crt (the journal's run: crt,tool-none)",
        "--temperature 0.9 (the journal's run: 0.6)",
        "--base-url http://127.0.0.1:9 (the journal's run used the in-process simulator",
        "--rerun-cut-off 32000 (the journal's run: no re-run; the re-run budget is fixed when a run starts)",
        "--budget-math 8000 (the journal's run: the suite's budget)",
        r#"--extra-body {"seed":1} (the journal's run: {})"#,
        "--model other-model (the journal's run: vernier-sim)",
        "--out ",
        "leave them out (--resume alone continues the run as it was started, as: hardsuite run)",
    ] {
        assert!(
            message.contains(expected),
            "{expected:?} missing from {message}"
        );
    }
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--resume",
        arg(&journal),
        "--preset",
        "qwen-thinking",
    ])
    .await
    .expect_err("another preset");
    assert!(
        error.to_string().contains(
            "--preset qwen-thinking and the sampling flags give temperature 1, top_k 20, \
             presence_penalty 1.5 (the journal's run: temperature 0.6, top_p 0.95)"
        ),
        "{error}"
    );
    // Nothing was appended by the refusals.
    assert_eq!(
        std::fs::read_to_string(&journal).expect("read journal"),
        header
    );
    // The journal's own values, given again, are accepted (task order does not matter).
    let resumed = run_cli(&[
        "hardsuite",
        "run",
        "--resume",
        arg(&journal),
        "--samples",
        "1",
        "--tasks",
        "tool-none,crt",
        "--preset",
        "default",
        "--top-p",
        "0.95",
        "--out",
        arg(&out),
        "--quiet",
    ])
    .await
    .expect("the same settings resume");
    let CommandOutput::Run(resumed) = resumed else {
        panic!("run gives a run outcome");
    };
    assert_eq!(resumed.results.main.total.n_scored, 2);
}

#[test]
fn a_misspelt_suite_name_is_refused_with_the_name_it_meant() {
    // Before, `--suite contxt` was read as a suite file and failed on a missing file.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["run", "--suite", "contxt"])
        .output()
        .expect("run hardsuite");
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("did you mean context?"), "{text}");
}

#[test]
fn help_shows_examples_and_says_the_suite_is_self_checking() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .arg("--help")
        .output()
        .expect("run hardsuite --help");
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.lines().any(|l| l == "Examples:"), "{text}");
    assert!(text.contains("hardsuite compare "), "{text}");
    assert!(text.contains("proved before any model sees them"), "{text}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["run", "--help"])
        .output()
        .expect("run hardsuite run --help");
    let text = String::from_utf8_lossy(&output.stdout);
    for heading in [
        "Server:",
        "Suite:",
        "Budgets:",
        "Sampling:",
        "Output:",
        "Hosted endpoints:",
    ] {
        assert!(text.lines().any(|l| l == heading), "no {heading} in {text}");
    }
}

#[test]
fn a_folder_named_like_a_suite_does_not_take_over_the_suite() {
    let dir = tempfile::tempdir().expect("temporary folder");
    std::fs::create_dir(dir.path().join("context")).expect("a folder named context");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .current_dir(dir.path())
        .args(["tasks", "--suite", "context"])
        .output()
        .expect("run hardsuite tasks");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        text.contains("context-1k-d0"),
        "the bundled context suite: {text}"
    );
}

#[test]
fn completions_name_the_subcommands() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["completions", "bash"])
        .output()
        .expect("run hardsuite completions");
    assert_eq!(output.status.code(), Some(0));
    let script = String::from_utf8_lossy(&output.stdout);
    assert!(
        script.contains("self-check") && script.contains("compare"),
        "{script}"
    );
}
