//! `sweep show`: one request of a run captured with `--capture`, printed event by event by the
//! binary, and an unknown cell refused as a usage error.

use std::time::Duration;

use vernier_sim::{SimConfig, TokensPerEvent};

use crate::support::{journal_values, run_sweep, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_show_prints_a_captured_requests_events_and_exits_2_for_an_unknown_cell() {
    let sim = start_sim(
        SimConfig::builder()
            .tokens_per_event(TokensPerEvent::Fixed(3))
            .decode_step(Duration::from_millis(2))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run_sweep(
        &sim.base_url(),
        out.path(),
        &[
            "--workload",
            "prose",
            "--prompt-tokens",
            "64",
            "--output-tokens",
            "30",
            "--reps",
            "2",
            "--capture",
            "1",
        ],
    )
    .await
    .expect("the sweep runs");
    sim.shutdown().await;
    let captured: Vec<serde_json::Value> = journal_values(&outcome.journal)
        .into_iter()
        .filter(|l| l["type"] == "attempt" && l["capture"].is_string())
        .collect();
    assert_eq!(
        captured.len(),
        1,
        "the first measured stream of the one cell"
    );
    let line = &captured[0];
    // `sweep show` prints the request's events with their times and tokens.
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"))
        .arg("show")
        .arg(out.path())
        // Cells and repetitions counted from 1: the journal's rep 0 is repetition 1.
        .args([
            "1",
            (line["rep"].as_u64().unwrap_or(0) + 1).to_string().as_str(),
        ])
        .output()
        .expect("run sweep show");
    let text = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(
        shown.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(
        text.contains("capture ") && text.contains("tokens"),
        "{text}"
    );
    // Figures for people, not Rust's debug form (it printed `ttft Some(750.020127) ms`).
    assert!(!text.contains("Some("), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("ttft ") && l.contains(" ms, decode ")),
        "{text}"
    );
    // One line per event with three tokens each (the simulator's k), after the header lines.
    assert!(
        text.lines()
            .filter(|l| l.trim_end().contains("       3  "))
            .count()
            >= 9,
        "{text}"
    );
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"))
        .arg("show")
        .arg(out.path())
        .args(["7", "1"])
        .output()
        .expect("run sweep show");
    assert_eq!(
        missing.status.code(),
        Some(2),
        "an unknown cell is a usage error"
    );
}
