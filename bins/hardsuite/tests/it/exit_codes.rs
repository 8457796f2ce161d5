//! The built binary's exit codes (`vernier_cli::exit_code`): 0 success, 1 failure while
//! running, 2 usage error, 4 server stopped, 5 self-check failed.

use std::path::Path;
use std::process::{Command, Output};

use vernier_cli::exit_code;

fn hardsuite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(args)
        .output()
        .expect("the hardsuite binary runs")
}

#[track_caller]
fn assert_exit(output: &Output, code: u8) {
    assert_eq!(
        output.status.code(),
        Some(i32::from(code)),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write_results_journal(path: &Path, model: &str, outcome: &str) {
    let header = serde_json::json!({
        "type": "header", "journal_version": 1, "suite": "synthetic", "suite_path": null,
        "task_ids": ["task-000"], "model": model, "base_url": "http://127.0.0.1:8000",
        "simulated": false,
        "sampling": {"temperature": 0.6, "top_p": 0.95, "top_k": null, "presence_penalty": null},
        "extra_body": null, "budget_flags": {"math": null, "code": null, "tools": null},
        "samples": 1, "rerun_budget": null, "self_checked": true, "grader_image": null,
        "command_line": ["hardsuite"], "started_unix_ms": 0
    });
    let attempt = serde_json::json!({
        "type": "attempt", "task_id": "task-000", "category": "math", "sample": 0,
        "phase": "main", "try_number": 1, "budget_tokens": 16000, "outcome": outcome,
        "detail": "", "answer": null, "finish_reason": "stop", "completion_tokens": 100,
        "token_source": "final_usage", "token_count_is_lower_bound": false,
        "reasoning_tokens": null, "content_chars": 10, "reasoning_chars": 0, "n_tool_calls": 0,
        "ended_in_reasoning": false, "hit_budget": false, "elapsed_ms": 1000.0,
        "ttft_ms": 10.0, "decode_tokens_per_s": 50.0, "grade_ms": 0.1
    });
    std::fs::write(path, format!("{header}\n{attempt}\n")).expect("write journal");
}

#[test]
fn usage_errors_exit_2() {
    // clap's own usage error.
    let output = hardsuite(&["run", "--no-such-flag"]);
    assert_exit(&output, exit_code::USAGE);
    // A value clap takes but hardsuite refuses.
    let output = hardsuite(&["run", "--samples", "0", "--tasks", "crt", "--quiet"]);
    assert_exit(&output, exit_code::USAGE);
    assert!(
        stderr(&output).starts_with("error: failed to use --samples: "),
        "{}",
        stderr(&output)
    );
}

#[test]
fn failures_while_running_exit_1() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let missing = dir.path().join("missing.json");
    let not_json = dir.path().join("results.json");
    std::fs::write(&not_json, "this is not JSON").expect("write");
    let missing = missing.to_str().expect("UTF-8 path");
    let not_json = not_json.to_str().expect("UTF-8 path");
    let output = hardsuite(&["compare", missing, missing]);
    assert_exit(&output, exit_code::FAILURE);
    assert!(
        stderr(&output).contains("missing.json"),
        "{}",
        stderr(&output)
    );
    let output = hardsuite(&["compare", not_json, not_json]);
    assert_exit(&output, exit_code::FAILURE);
}

#[test]
fn success_exits_0() {
    let output = hardsuite(&["self-check", "--tasks", "crt,tool-none"]);
    assert_exit(&output, exit_code::SUCCESS);
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("self-check passed: "));
    let dir = tempfile::tempdir().expect("temporary directory");
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    write_results_journal(&a, "model-a", "pass");
    write_results_journal(&b, "model-b", "wrong");
    let output = hardsuite(&[
        "compare",
        a.to_str().expect("UTF-8 path"),
        b.to_str().expect("UTF-8 path"),
    ]);
    assert_exit(&output, exit_code::SUCCESS);
    assert!(String::from_utf8_lossy(&output.stdout).contains("task-000"));
}

#[test]
fn a_failed_self_check_exits_5() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let suite = dir.path().join("broken.toml");
    std::fs::write(
        &suite,
        r#"
name = "broken"

[[tasks]]
id = "seating-puzzle"
category = "math"
prompt = "How many seatings satisfy every rule? End with a line `ANSWER: <integer>`."
answer = { integer = 0 }
positive = true
"#,
    )
    .expect("write suite");
    let output = hardsuite(&["self-check", "--suite", suite.to_str().expect("UTF-8 path")]);
    assert_exit(&output, exit_code::SELF_CHECK_FAILED);
    assert!(
        stderr(&output).contains("seating-puzzle"),
        "{}",
        stderr(&output)
    );
}
