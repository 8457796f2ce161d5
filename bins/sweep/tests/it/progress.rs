//! What a person sees while a sweep runs without a terminal (a CI log, `nohup`, a pipe): the
//! binary's stderr is a pipe here, so the progress bar draws nothing and a heartbeat line
//! saying where the run is comes every `VERNIER_PROGRESS_EVERY_S` seconds; `--quiet` prints
//! none. Each run lasts several intervals; no assertion depends on timing beyond "at least two
//! lines".

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use vernier_test_support::quick_sim;

use crate::support::{start_sim, stderr};

/// `sweep` with `args` in `dir`, a heartbeat line due every second.
fn sweep_piped(dir: &Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweep"))
        .current_dir(dir)
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env(vernier_cli::PROGRESS_EVERY_VARIABLE, "1")
        .output()
        .expect("run sweep")
}

/// The heartbeat lines of `label` (`sweep`, `sweep replay`) on stderr.
fn heartbeats(output: &Output, label: &str) -> Vec<String> {
    let prefix = format!("{label}: ");
    stderr(output)
        .lines()
        .filter(|line| line.starts_with(&prefix) && line.ends_with(" elapsed"))
        .map(str::to_owned)
        .collect()
}

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| (*word).to_owned()).collect()
}

/// A sweep against a simulator slow enough (100 ms a request, 20 ms a token) to take about
/// four seconds: its words, the heartbeat on or `--quiet`.
async fn slow_sweep(dir: &Path, quiet: bool) -> Output {
    let sim = start_sim(
        quick_sim(20)
            .fixed_overhead(Duration::from_millis(100))
            .build(),
    )
    .await;
    let mut args = words(&[
        "--prompt-tokens",
        "100",
        "--output-tokens",
        "16",
        "--reps",
        "4",
        "--warmup",
        "0",
        "--out",
        "run",
    ]);
    args.extend(["--base-url".to_owned(), sim.base_url()]);
    if quiet {
        args.push("--quiet".to_owned());
    }
    let dir = dir.to_path_buf();
    let output = tokio::task::spawn_blocking(move || sweep_piped(&dir, &args))
        .await
        .expect("the sweep's thread");
    sim.shutdown().await;
    output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_without_a_terminal_says_where_it_is_every_interval() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let output = slow_sweep(dir.path(), false).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = heartbeats(&output, "sweep");
    assert!(lines.len() >= 2, "{}", stderr(&output));
    // Each names its place: how many of the planned requests are done, or what it is doing.
    for line in &lines {
        let place = line
            .trim_start_matches("sweep: ")
            .trim_end_matches(" elapsed");
        assert!(place.contains(", "), "a line with only the time: {line}");
    }
    assert!(
        lines.iter().any(|line| line.contains(" of 8 requests, ")
            && (line.contains("rep ") || line.contains("calibrating"))),
        "{}",
        stderr(&output)
    );
    // No progress-bar drawing reached the pipe.
    assert!(!stderr(&output).contains("ETA"), "{}", stderr(&output));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_sweep_prints_no_heartbeat() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let output = slow_sweep(dir.path(), true).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(heartbeats(&output, "sweep"), Vec::<String>::new());
    assert!(stderr(&output).contains("run file:"), "{}", stderr(&output));
}

/// A trace of seven records half a second apart: three seconds of arrivals at time scale 1.
fn slow_trace(dir: &Path) -> String {
    let header = "{\"vernier_trace\": 1, \"block_tokens\": 16}\n".to_owned();
    let text = (0..7).fold(header, |text, index| {
        text + &format!(
            "{{\"offset_ms\": {}, \"input_tokens\": 48, \"output_tokens\": 8}}\n",
            index * 500
        )
    });
    let path = dir.join("trace.jsonl");
    std::fs::write(&path, text).expect("write the trace");
    path.display().to_string()
}

#[test]
fn a_replay_without_a_terminal_says_where_it_is_and_quiet_says_nothing() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let trace = slow_trace(dir.path());
    let output = sweep_piped(
        dir.path(),
        &words(&["replay", "--trace", &trace, "--out", "replay"]),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Each says how many of the trace's requests are done (after a first one, perhaps, that
    // came while the texts were sized).
    let lines = heartbeats(&output, "sweep replay");
    let counted = lines
        .iter()
        .filter(|line| line.contains(" of 7 requests, "))
        .count();
    assert!(counted >= 2, "{}", stderr(&output));

    let quiet = sweep_piped(
        dir.path(),
        &words(&["replay", "--trace", &trace, "--out", "quiet", "--quiet"]),
    );
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    assert_eq!(heartbeats(&quiet, "sweep replay"), Vec::<String>::new());
}

#[test]
fn an_agent_run_without_a_terminal_counts_its_turns() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let output = sweep_piped(
        dir.path(),
        &words(&[
            "agent",
            "--sessions",
            "1",
            "--turns",
            "6",
            "--system-tokens",
            "100",
            "--think",
            "0.6s",
            "--out",
            "agent",
        ]),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = heartbeats(&output, "sweep agent");
    assert!(lines.len() >= 2, "{}", stderr(&output));
    assert!(
        lines.iter().any(|line| line.contains(" of 6 turns, ")),
        "{}",
        stderr(&output)
    );
}
