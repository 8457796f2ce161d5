//! The hard suite's column of the fault matrix (`vernier_test_support::fault_matrix`): each fault
//! ends with a named outcome, the documented exit code, the resume command where resuming makes
//! sense, and a continued run that scores every sample once.

use std::collections::BTreeSet;
use std::path::Path;

use vernier_test_support::fault_matrix as matrix;

use matrix::Tool;

const TASKS: [&str; 3] = ["domino-tiling", "last-digits", "knight-path"];
const SAMPLES: usize = 4;

fn args(base_url: &str, out: &Path) -> Vec<String> {
    matrix::words_then(
        &[
            "run",
            "--base-url",
            base_url,
            "--tasks",
            &TASKS.join(","),
            "--samples",
            "4",
            "--budget-math",
            "300",
            "--idle-timeout",
            "2",
            "--quiet",
            "--out",
        ],
        out,
    )
}

fn resume(out: &Path, base_url: &str) -> Vec<String> {
    vec![
        "run".to_owned(),
        "--resume".to_owned(),
        out.join("journal.jsonl").display().to_string(),
        "--base-url".to_owned(),
        base_url.to_owned(),
        "--quiet".to_owned(),
    ]
}

/// Every sample of every task scored once.
fn complete(out: &Path, _base_url: &str) {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    let results: serde_json::Value = serde_json::from_str(&text).expect("results parse");
    let tasks = results["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), TASKS.len());
    for task in tasks {
        let samples: Vec<u64> = task["samples"]
            .as_array()
            .expect("samples")
            .iter()
            .filter_map(|sample| sample["sample"].as_u64())
            .collect();
        let unique: BTreeSet<u64> = samples.iter().copied().collect();
        assert_eq!(
            samples.len(),
            unique.len(),
            "a sample counted twice: {task}"
        );
        assert_eq!(unique.len(), SAMPLES, "samples lost: {task}");
    }
    assert_eq!(
        results["main"]["total"]["n_scored"].as_u64(),
        Some((TASKS.len() * SAMPLES) as u64)
    );
}

fn hardsuite() -> Tool<'static> {
    Tool {
        name: "hardsuite",
        exe: env!("CARGO_BIN_EXE_hardsuite"),
        serve: "fault_matrix::serve_simulator_when_asked",
        args: &args,
        resume: &resume,
        journal: "journal.jsonl",
        started: "\"type\":\"attempt\"",
        derived: "results.json",
        stopped: (4, &["journal.jsonl"], true),
        errors: (4, &["journal.jsonl"], true),
        refused: (2, &["--api-key-env"]),
        complete: &complete,
        stopped_leaves: None,
        refused_start_leaves_no_folder: false,
    }
}

vernier_test_support::matrix_cells!(hardsuite);
