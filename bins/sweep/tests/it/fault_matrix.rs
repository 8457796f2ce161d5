//! The sweep's column of the fault matrix (`vernier_test_support::fault_matrix`): each fault ends
//! with a named outcome, the documented exit code, the resume command where resuming makes
//! sense, and a continued run that measures every repetition once.

use std::collections::BTreeSet;
use std::path::Path;

use vernier_test_support::fault_matrix as matrix;

use matrix::Tool;

const REPS: usize = 6;

fn args(base_url: &str, out: &Path) -> Vec<String> {
    matrix::words_then(
        &[
            "--base-url",
            base_url,
            "--workload",
            "prose",
            "--prompt-tokens",
            "32",
            "--output-tokens",
            "200",
            "--reps",
            "6",
            "--warmup",
            "0",
            "--idle-timeout-s",
            "2",
            "--quiet",
            "--out",
        ],
        out,
    )
}

fn resume(out: &Path, base_url: &str) -> Vec<String> {
    vec![
        "--resume".to_owned(),
        out.display().to_string(),
        "--base-url".to_owned(),
        base_url.to_owned(),
        "--quiet".to_owned(),
    ]
}

/// Every repetition measured once: one `rep_done` line per repetition, none twice.
fn complete(out: &Path, _base_url: &str) {
    let text = std::fs::read_to_string(out.join("journal.jsonl")).expect("journal");
    let reps: Vec<u64> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["type"] == "rep_done")
        .filter_map(|line| line["rep"].as_u64())
        .collect();
    let unique: BTreeSet<u64> = reps.iter().copied().collect();
    assert_eq!(
        reps.len(),
        unique.len(),
        "a repetition counted twice: {reps:?}"
    );
    assert_eq!(unique.len(), REPS, "repetitions lost: {reps:?}");
    assert!(out.join("run.json").is_file());
}

fn sweep() -> Tool<'static> {
    Tool {
        name: "sweep",
        exe: env!("CARGO_BIN_EXE_sweep"),
        serve: "fault_matrix::serve_simulator_when_asked",
        args: &args,
        resume: &resume,
        journal: "journal.jsonl",
        started: "\"type\":\"rep_done\"",
        derived: "run.json",
        stopped: (4, &["failed to keep measuring", "journal.jsonl"], true),
        errors: (4, &["in a row failed", "journal.jsonl"], true),
        refused: (2, &["--api-key-env"]),
        complete: &complete,
        stopped_leaves: None,
        refused_start_leaves_no_folder: false,
    }
}

vernier_test_support::matrix_cells!(sweep);
