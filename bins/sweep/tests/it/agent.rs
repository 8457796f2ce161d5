//! `sweep agent` and `sweep replay` through the real binary: each runs against the bundled
//! simulator with no server given and writes its files, `--capture` keeps every response, a
//! bad flag or a trace that cannot be read is refused with exit 2 naming the fix, and `--json`
//! prints the run file.

use crate::support::{stderr, sweep_in as sweep};

#[test]
fn agent_runs_the_simulator_and_writes_its_run_report_chart_and_captures() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let output = sweep(
        dir.path(),
        &[
            "agent",
            "--sessions",
            "2",
            "--turns",
            "3",
            "--system-tokens",
            "200",
            "--think",
            "0s",
            "--baseline-no-cache",
            "--capture",
            "--out",
            "run",
            "--json",
            "--quiet",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the run file on stdout");
    assert_eq!(run["kind"], "agent");
    assert_eq!(run["passes"].as_array().map(Vec::len), Some(2), "{run}");
    assert!(
        run["cache_speedup"]["ttft_mean"]
            .as_f64()
            .is_some_and(|s| s > 1.0),
        "{run}"
    );
    for file in [
        "agent.json",
        "report.md",
        "ttft-by-turn.svg",
        "journal.jsonl",
    ] {
        assert!(dir.path().join("run").join(file).is_file(), "{file}");
    }
    // Two passes of two sessions of three turns, every response kept.
    let captures = std::fs::read_dir(dir.path().join("run/captures"))
        .expect("captures")
        .count();
    assert!(captures >= 12, "{captures} captures");
    assert!(stderr(&output).contains("run file:"), "{}", stderr(&output));
}

#[test]
fn replay_runs_the_bundled_trace_and_bad_input_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let output = sweep(
        dir.path(),
        &[
            "replay",
            "--time-scale",
            "50",
            "--limit",
            "20",
            "--out",
            "replay",
            "--quiet",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("# Trace replay"), "{report}");
    assert!(dir.path().join("replay/replay.json").is_file());

    let missing = sweep(
        dir.path(),
        &["replay", "--trace", "no-such-trace.jsonl", "--quiet"],
    );
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("no-such-trace.jsonl"),
        "{}",
        stderr(&missing)
    );

    let scale = sweep(dir.path(), &["replay", "--time-scale", "0", "--quiet"]);
    assert_eq!(scale.status.code(), Some(2), "{}", stderr(&scale));
    assert!(
        stderr(&scale).contains("--time-scale"),
        "{}",
        stderr(&scale)
    );

    let sessions = sweep(dir.path(), &["agent", "--sessions", "0", "--quiet"]);
    assert_eq!(sessions.status.code(), Some(2), "{}", stderr(&sessions));
    assert!(
        stderr(&sessions).contains("--sessions"),
        "{}",
        stderr(&sessions)
    );

    let capacity = sweep(dir.path(), &["agent", "--find-capacity", "8", "--quiet"]);
    assert_eq!(capacity.status.code(), Some(2), "{}", stderr(&capacity));
    assert!(
        stderr(&capacity).contains("--target"),
        "{}",
        stderr(&capacity)
    );
}
