//! The built binary's exit codes (`vernier_cli::exit_code`): 0 success, 1 failure while
//! running, 2 usage error, 4 server stopped, 5 self-check failed, 130 interrupted.

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

/// A token budget of 0 leaves no room for an answer: refused with exit 2, naming the flag.
/// (Before, `--budget-dataset 0` was taken, and the run ended with exit 5.)
#[test]
fn a_budget_of_zero_tokens_is_refused_by_its_flag() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let output = hardsuite(&[
        "run",
        "--budget-dataset",
        "0",
        "--tasks",
        "crt",
        "--quiet",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    assert_exit(&output, exit_code::USAGE);
    assert!(
        stderr(&output).contains("--budget-dataset"),
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

#[cfg(unix)]
#[test]
fn sigterm_writes_the_files_prints_the_resume_command_and_exits_130() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["run", "--tasks", "crt,tool-none", "--samples", "200"])
        .args([
            "--concurrency",
            "1",
            "--skip-self-check",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the hardsuite binary runs");
    let journal = out.join("journal.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&journal).map_or(0, |text| text.lines().count()) < 3 {
        assert!(std::time::Instant::now() < deadline, "no attempt in 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let output = child.wait_with_output().expect("the run ends");
    assert_exit(&output, exit_code::INTERRUPTED);
    let stderr = stderr(&output);
    assert!(
        stderr.contains(&format!(
            "interrupted; continue with: {} run --resume {}",
            env!("CARGO_BIN_EXE_hardsuite"),
            journal.display()
        )),
        "{stderr}"
    );
    assert!(out.join("results.json").exists() && out.join("report.md").exists());
}
