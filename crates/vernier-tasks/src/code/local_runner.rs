//! Test-only: runs a submission against a task's cases with the local `python3`, the
//! way the sandbox runner does (same harness, and the grader's own guard check and
//! comparison), so the references and negative controls are proven in seconds without
//! Docker.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use vernier_grader::{Case, Expected, Guard, compare, violated_guard};

const RUNNER: &str = include_str!("python/local_runner.py");

/// How a local run ended.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LocalOutcome {
    /// Every case gave its expected result.
    Passed,
    /// The named cases failed; `raised` lists exception classes seen in any case.
    FailedCases {
        failed: Vec<String>,
        raised: Vec<String>,
    },
    /// Killed at the limit.
    Timeout,
    /// A forbidden name was found in the submission.
    Guard(String),
    /// The runner itself died (stderr excerpt).
    Crashed(String),
}

/// A finished local run.
#[derive(Debug)]
pub(super) struct LocalRun {
    pub(super) outcome: LocalOutcome,
    pub(super) elapsed: Duration,
}

fn work_dir() -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "vernier-code-local-{}-{unique}",
        std::process::id()
    ))
}

/// Runs `code` against `cases` with `harness`, killing it after `limit`.
pub(super) fn run(
    code: &str,
    harness: &str,
    cases: &[Case],
    guards: &[Guard],
    limit: Duration,
) -> LocalRun {
    if let Some(name) = violated_guard(code, guards) {
        return LocalRun {
            outcome: LocalOutcome::Guard(name),
            elapsed: Duration::ZERO,
        };
    }
    let dir = work_dir();
    std::fs::create_dir_all(&dir).expect("create the local work directory");
    let inputs: Vec<&Value> = cases.iter().map(|case| &case.input).collect();
    std::fs::write(
        dir.join("inputs.json"),
        serde_json::to_vec(&inputs).expect("inputs serialise"),
    )
    .expect("write inputs");
    std::fs::write(dir.join("solution.py"), code).expect("write solution");
    std::fs::write(dir.join("harness.py"), harness).expect("write harness");
    std::fs::write(dir.join("runner.py"), RUNNER).expect("write runner");
    let started = Instant::now();
    let mut child = Command::new("python3")
        .arg("runner.py")
        .arg(&dir)
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 must be installed to run the coding-task tests");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for python3") {
            break Some(status);
        }
        if started.elapsed() >= limit {
            child.kill().expect("kill python3");
            child.wait().expect("reap python3");
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let outcome = match status {
        None => LocalOutcome::Timeout,
        Some(status) => {
            let output = child.wait_with_output().expect("collect stderr");
            let results = std::fs::read(dir.join("results.json")).ok();
            match results.and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok()) {
                None => {
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    let tail: String = stderr
                        .chars()
                        .rev()
                        .take(600)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    LocalOutcome::Crashed(format!("{status}: {tail}"))
                }
                Some(results) => judge(cases, &results),
            }
        }
    };
    std::fs::remove_dir_all(&dir).expect("remove the local work directory");
    LocalRun { outcome, elapsed }
}

fn judge(cases: &[Case], results: &Value) -> LocalOutcome {
    let empty = Vec::new();
    let results = results
        .get("results")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut failed = Vec::new();
    let mut raised = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let result = results.get(index);
        if let Some(name) = result
            .and_then(|result| result.get("raised"))
            .and_then(Value::as_str)
        {
            raised.push(name.to_owned());
        }
        let passed = match (&case.expected, result) {
            (Expected::Value(expected), Some(result)) => result
                .get("value")
                .is_some_and(|actual| compare(expected, actual).is_ok()),
            (Expected::Raises(exception), Some(result)) => result
                .get("mro")
                .and_then(Value::as_array)
                .is_some_and(|mro| {
                    mro.iter()
                        .any(|class| class.as_str() == Some(exception.as_str()))
                }),
            _ => false,
        };
        if !passed {
            failed.push(case.name.clone());
        }
    }
    if failed.is_empty() {
        LocalOutcome::Passed
    } else {
        LocalOutcome::FailedCases { failed, raised }
    }
}
