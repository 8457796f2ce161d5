//! The lifecycle column of the fault matrix (`vernier_test_support::fault_matrix`), on `soak`
//! against a running server: each fault ends with a named outcome, the documented exit code,
//! the resume command where resuming makes sense, and a continued soak that holds exactly its
//! duration of load. (`ready` launches its own server; its faults are in `resume.rs` and
//! `main.rs`: a server that exits before ready, kill −9, Ctrl-C, a port already answering.)

use std::path::Path;

use vernier_test_support::fault_matrix as matrix;

use matrix::Tool;

const DURATION_S: f64 = 3.0;

fn args(base_url: &str, out: &Path) -> Vec<String> {
    matrix::words_then(
        &[
            "soak",
            "--base-url",
            base_url,
            "--concurrency",
            "2",
            "--max-tokens",
            "2000",
            "--duration",
            "3s",
            "--probe-interval",
            "0.2",
            "--hang-after",
            "1",
            "--settle",
            "0.3",
            "--ready-timeout",
            "3",
            "--quiet",
            "--out",
        ],
        out,
    )
}

fn resume(out: &Path, base_url: &str) -> Vec<String> {
    vec![
        "soak".to_owned(),
        "--resume".to_owned(),
        out.display().to_string(),
        "--base-url".to_owned(),
        base_url.to_owned(),
        "--quiet".to_owned(),
    ]
}

/// The soak held its duration of load, once (a resumed slice adds to the first, never twice).
fn complete(out: &Path, _base_url: &str) {
    let text = std::fs::read_to_string(out.join("run.json")).expect("run.json");
    let run: serde_json::Value = serde_json::from_str(&text).expect("run.json parses");
    let held = run["arms"][0]["loaded_s"].as_f64().expect("loaded_s");
    assert!(
        (held - DURATION_S).abs() < 0.6,
        "held {held} s of {DURATION_S}"
    );
    let requests: Vec<u64> = std::fs::read_to_string(out.join("journal.jsonl"))
        .expect("journal")
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["type"] == "request")
        .filter_map(|line| line["request"].as_u64())
        .collect();
    let unique: std::collections::BTreeSet<u64> = requests.iter().copied().collect();
    assert_eq!(requests.len(), unique.len(), "a request journalled twice");
}

fn soak() -> Tool<'static> {
    Tool {
        name: "lifecycle soak",
        exe: env!("CARGO_BIN_EXE_lifecycle"),
        serve: "fault_matrix::serve_simulator_when_asked",
        args: &args,
        resume: &resume,
        journal: "journal.jsonl",
        started: "\"type\":\"ready\"",
        derived: "run.json",
        // A soak records the death, waits --ready-timeout for the server, then gives up.
        stopped: (1, &["could not go on", "--ready-timeout"], true),
        errors: (1, &["could not go on", "HTTP 500"], true),
        refused: (2, &["--api-key-env"]),
        complete: &complete,
        stopped_leaves: Some("\"type\":\"death\""),
        refused_start_leaves_no_folder: false,
    }
}

vernier_test_support::matrix_cells!(soak);
