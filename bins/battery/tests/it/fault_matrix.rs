//! The column of `battery run` in the fault matrix (`vernier_test_support::fault_matrix`): a
//! quick battery of two parts, the sweep (one short prompt, one stream and two, two
//! repetitions) and the suite's math and tool tasks (no Docker), against the simulator in a
//! process of its own.
//!
//! - server frozen or killed mid-run (in the sweep part): exit 4, "failed to keep measuring",
//!   the part's journal and the command that continues the battery (`battery run ...
//!   --resume FOLDER`);
//! - every request answered 500: the sweep part's first repetitions fail whole and it ends
//!   with exit 4 ("in a row failed", its journal); the battery goes on to the suite, and ends
//!   with the first failed part's code and the command that continues it;
//! - every request answered 401: exit 2 naming `--api-key-env`;
//! - the sweep part's `run.json` cannot be written: exit 1 naming it, the part's journal and
//!   the command that continues the battery, which completes it once the file can be written;
//! - SIGTERM: exit 130 and the resume command, which run as printed completes the battery;
//! - kill −9, then `--resume FOLDER --base-url` of the server on another port: exit 0.
//!
//! Complete means every part is `done` in `battery.json`, the sweep part finished every
//! repetition of every cell once, and the suite part scored every sample of every task once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use vernier_test_support::fault_matrix as matrix;

use matrix::Tool;

/// Sweep cells: prose and code, one stream and two.
const CELLS: usize = 4;
const REPS: usize = 2;

fn args(base_url: &str, out: &Path) -> Vec<String> {
    matrix::words_then(
        &[
            "run",
            "--base-url",
            base_url,
            "--preset",
            "quick",
            "--parts",
            "sweep,suite",
            "--suite-categories",
            "math,tools",
            "--prompt-tokens",
            "32",
            "--output-tokens",
            "48",
            "--concurrency",
            "2",
            "--reps",
            "2",
            "--samples",
            "1",
            "--suite-budget",
            "200",
            "--quiet",
            "--out",
        ],
        out,
    )
}

fn resume(out: &Path, base_url: &str) -> Vec<String> {
    [
        "run",
        "--resume",
        &out.display().to_string(),
        "--base-url",
        base_url,
        "--quiet",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The sweep part: every repetition of every cell once.
fn sweep_complete(folder: &Path) {
    let mut reps: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for line in vernier_test_support::journal_lines_of(&folder.join("journal.jsonl"), "rep_done") {
        reps.entry(line["cell"].to_string())
            .or_default()
            .push(line["rep"].as_u64().expect("rep"));
    }
    assert_eq!(reps.len(), CELLS, "cells lost: {reps:?}");
    for (cell, done) in &reps {
        let unique: BTreeSet<u64> = done.iter().copied().collect();
        assert_eq!(
            done.len(),
            unique.len(),
            "{cell}: a repetition counted twice"
        );
        assert_eq!(unique.len(), REPS, "{cell}: repetitions lost: {done:?}");
    }
}

/// The suite part: every sample of every task scored once.
fn suite_complete(folder: &Path) {
    let text = std::fs::read_to_string(folder.join("results.json")).expect("results.json");
    let results: serde_json::Value = serde_json::from_str(&text).expect("results parse");
    let tasks = results["tasks"].as_array().expect("tasks");
    assert!(!tasks.is_empty(), "no task scored");
    for task in tasks {
        let samples: Vec<u64> = task["samples"]
            .as_array()
            .expect("samples")
            .iter()
            .filter_map(|sample| sample["sample"].as_u64())
            .collect();
        assert_eq!(samples, [0], "each task's one sample, once: {task}");
    }
    assert_eq!(
        results["main"]["total"]["n_scored"].as_u64(),
        Some(tasks.len() as u64)
    );
}

/// Every part done, and each part's own journal complete.
fn complete(out: &Path, _base_url: &str) {
    let index = crate::battery_json(out);
    for part in index["parts"].as_array().expect("parts") {
        assert_eq!(part["status"], "done", "{part}");
    }
    sweep_complete(&out.join("sweep"));
    suite_complete(&out.join("suite"));
}

fn battery() -> Tool<'static> {
    Tool {
        name: "battery run",
        exe: env!("CARGO_BIN_EXE_battery"),
        serve: "fault_matrix::serve_simulator_when_asked",
        args: &args,
        resume: &resume,
        journal: "sweep/journal.jsonl",
        started: "\"type\":\"rep_done\"",
        derived: "sweep/run.json",
        stopped: (4, &["failed to keep measuring", "journal.jsonl"], true),
        errors: (4, &["in a row failed", "journal.jsonl"], true),
        refused: (2, &["--api-key-env"]),
        complete: &complete,
        stopped_leaves: None,
        refused_start_leaves_no_folder: false,
    }
}

vernier_test_support::matrix_cells!(battery);
