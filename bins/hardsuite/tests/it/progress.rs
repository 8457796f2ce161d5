//! What a person sees while `hardsuite run` goes without a terminal (stderr is a pipe here): a
//! heartbeat line saying where the run is every `VERNIER_PROGRESS_EVERY_S` seconds beside the
//! per-task lines, none with `--quiet`; and a dataset run's end, a row per category rather than
//! one per question (and a count, not a line per question, while it runs) unless `--per-task`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use vernier_sim::Sim;
use vernier_test_support::quick_sim;

use crate::{arg, json_lines};

/// `hardsuite` with `args`, stdout and stderr piped, a heartbeat line due every second.
fn hardsuite_piped<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env(vernier_cli::PROGRESS_EVERY_VARIABLE, "1")
        .output()
        .expect("run hardsuite")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The heartbeat lines on stderr.
fn heartbeats(output: &Output) -> Vec<String> {
    stderr(output)
        .lines()
        .filter(|line| line.starts_with("hardsuite: ") && line.ends_with(" elapsed"))
        .map(str::to_owned)
        .collect()
}

/// The per-task progress lines on stderr (`[  3/20] task ...`).
fn per_task_lines(output: &Output) -> usize {
    stderr(output)
        .lines()
        .filter(|line| line.starts_with('[') && line.contains("] "))
        .count()
}

/// Three math tasks, one at a time, against a simulator that takes a second before each
/// answer: about three seconds of run, no Docker needed.
async fn slow_run(out: &Path, quiet: bool) -> Output {
    let sim = Sim::start(quick_sim(1).fixed_overhead(Duration::from_secs(1)).build())
        .await
        .expect("the simulator starts");
    let mut args = vec![
        "run".to_owned(),
        "--base-url".to_owned(),
        sim.base_url(),
        "--tasks".to_owned(),
        "domino-tiling,crt,last-digits".to_owned(),
        "--budget-math".to_owned(),
        "16".to_owned(),
        "--concurrency".to_owned(),
        "1".to_owned(),
        "--out".to_owned(),
        arg(out).to_owned(),
    ];
    if quiet {
        args.push("--quiet".to_owned());
    }
    let output = tokio::task::spawn_blocking(move || hardsuite_piped(&args))
        .await
        .expect("the run's thread");
    sim.shutdown().await;
    output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_a_terminal_says_where_it_is_every_interval() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let output = slow_run(&folder.path().join("run"), false).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = heartbeats(&output);
    assert!(lines.len() >= 2, "{}", stderr(&output));
    // Each names its place: starting, or how many of the attempts are done and the last one.
    for line in &lines {
        assert!(
            line.contains("starting") || line.contains(" of 3 attempts, last: "),
            "{line}"
        );
    }
    assert!(
        lines.iter().any(|line| line.contains(" of 3 attempts, ")),
        "{}",
        stderr(&output)
    );
    // The per-task lines are still there.
    assert_eq!(per_task_lines(&output), 3, "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_run_prints_no_heartbeat() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let output = slow_run(&folder.path().join("run"), true).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(heartbeats(&output), Vec::<String>::new());
    assert_eq!(per_task_lines(&output), 0, "{}", stderr(&output));
}

/// The bundled MMLU-Pro sample (20 questions from each of 14 categories).
fn sample_280() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/datasets/mmlu-pro/sample-280.jsonl")
}

/// A simulated dataset run of 20 questions drawn from the sample, plus `extra`.
fn dataset_run(out: &Path, extra: &[&str]) -> Output {
    let file = sample_280();
    let mut args = vec![
        "run",
        "--dataset",
        "mmlu-pro",
        "--dataset-file",
        arg(&file),
        "--sample",
        "20",
        "--seed",
        "3",
        "--out",
        arg(out),
    ];
    args.extend_from_slice(extra);
    hardsuite_piped(&args)
}

/// The rows of the per-category table: the lines after its `category` heading, up to and
/// without its `total` row.
fn category_rows(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|line| !line.starts_with("category "))
        .skip(1)
        .take_while(|line| !line.starts_with("total "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_dataset_run_ends_with_a_row_per_category_not_per_question() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("run");
    let run = dataset_run(&out, &[]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).expect("results"))
            .expect("JSON");
    let subjects: Vec<&str> = results["dataset"]["subjects"]
        .as_array()
        .expect("the categories")
        .iter()
        .map(|subject| subject["name"].as_str().expect("a name"))
        .collect();
    let questions = json_lines(&out.join("journal.jsonl"))[0]["dataset"]["questions"]
        .as_array()
        .map(Vec::len);
    assert_eq!(questions, Some(20));
    assert!(subjects.len() < 20, "{subjects:?}");

    let text = stdout(&run);
    let rows = category_rows(&text);
    assert_eq!(rows.len(), subjects.len(), "{text}");
    for (row, subject) in rows.iter().zip(&subjects) {
        assert!(row.starts_with(subject), "{row} is not {subject}");
    }
    let total = text
        .lines()
        .find(|line| line.starts_with("total "))
        .expect("the total row");
    let n_pass = results["dataset"]["total"]["n_pass"]
        .as_u64()
        .expect("a count");
    assert!(total.contains(&format!("{n_pass}/")), "{total}");
    assert!(text.contains("--per-task"), "{text}");
    assert!(text.contains("verdict: "), "{text}");
    // Without a terminal, no line per question on stderr either.
    assert_eq!(per_task_lines(&run), 0, "{}", stderr(&run));

    // --per-task: the row and the progress line of every question.
    let out = folder.path().join("per-task");
    let run = dataset_run(&out, &["--per-task"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(per_task_lines(&run), 20, "{}", stderr(&run));
    let text = stdout(&run);
    assert!(category_rows(&text).is_empty(), "{text}");
    let question_rows = text
        .lines()
        .filter(|line| line.split_whitespace().nth(1) == Some("dataset"))
        .count();
    assert_eq!(question_rows, 20, "{text}");
}
