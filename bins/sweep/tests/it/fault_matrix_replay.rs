//! The column of `sweep replay` in the fault matrix (`vernier_test_support::fault_matrix`):
//! a trace of short records, one every 80 ms, against the simulator in a process of its own.
//!
//! - server frozen or killed mid-run: a record fails every try, the server no longer lists its
//!   models, and the replay ends with exit 4, "failed to keep measuring", the journal and the
//!   command that continues it;
//! - every request answered 500: the start sizes synthesised text with counted one-token
//!   requests, which fail every try on a server that still answers, so the replay refuses to
//!   start (exit 1, "size the texts", the status) and leaves no folder;
//! - every request answered 401: exit 2 naming `--api-key-env`, no folder;
//! - `replay.json` cannot be written: exit 1 naming it, the journal and the resume command,
//!   which completes the replay once the file can be written;
//! - SIGTERM: exit 130 and the resume command, which run as printed completes the replay;
//! - kill −9, then `--resume OUT --base-url` of the server on another port: exit 0.
//!
//! Complete means every record of the trace appears in the journal, its last line answered,
//! and answered once: none measured twice, none lost.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vernier_test_support::fault_matrix as matrix;

use matrix::Tool;

const RECORDS: u64 = 16;

/// The trace beside the output folder (in the cell's temporary folder), written once.
fn trace_beside(out: &Path) -> PathBuf {
    let trace = out.with_file_name("trace.jsonl");
    if !trace.exists() {
        let header = "{\"vernier_trace\": 1, \"block_tokens\": 16}\n".to_owned();
        let text = (0..RECORDS).fold(header, |text, index| {
            let offset = index * 80;
            text + &format!(
                "{{\"offset_ms\": {offset}, \"input_tokens\": 48, \"output_tokens\": 24, \"hash_ids\": [1]}}\n"
            )
        });
        std::fs::write(&trace, text).expect("write the trace");
    }
    trace
}

fn args(base_url: &str, out: &Path) -> Vec<String> {
    let trace = trace_beside(out).display().to_string();
    matrix::words_then(
        &[
            "replay",
            "--base-url",
            base_url,
            "--trace",
            &trace,
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
        "replay".to_owned(),
        "--resume".to_owned(),
        out.display().to_string(),
        "--base-url".to_owned(),
        base_url.to_owned(),
        "--quiet".to_owned(),
    ]
}

/// Every record once: its last line answered, one answered line.
fn complete(out: &Path, _base_url: &str) {
    let mut records: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in vernier_test_support::journal_lines_of(&out.join("journal.jsonl"), "replayed") {
        let status = line["status"].as_str().expect("status").to_owned();
        records
            .entry(line["index"].as_u64().expect("index"))
            .or_default()
            .push(status);
    }
    for (index, statuses) in &records {
        assert_eq!(
            statuses.last().map(String::as_str),
            Some("ok"),
            "record {index} ends unanswered: {statuses:?}"
        );
        let times = statuses.iter().filter(|status| *status == "ok").count();
        assert_eq!(
            times, 1,
            "record {index} answered {times} times: {statuses:?}"
        );
    }
    assert_eq!(
        records.keys().copied().collect::<Vec<_>>(),
        (0..RECORDS).collect::<Vec<_>>(),
        "records lost"
    );
    assert!(out.join("replay.json").is_file());
}

fn replay() -> Tool<'static> {
    Tool {
        name: "sweep replay",
        exe: env!("CARGO_BIN_EXE_sweep"),
        serve: "fault_matrix_replay::serve_simulator_when_asked",
        args: &args,
        resume: &resume,
        journal: "journal.jsonl",
        started: "\"type\":\"replayed\"",
        derived: "replay.json",
        stopped: (4, &["failed to keep measuring", "journal.jsonl"], true),
        errors: (1, &["size the texts", "500"], false),
        refused: (2, &["--api-key-env"]),
        complete: &complete,
        stopped_leaves: None,
        refused_start_leaves_no_folder: true,
    }
}

vernier_test_support::matrix_cells!(replay);

/// A trace record of 100,000,000 input tokens (beyond the 2^24 a record may ask for) is
/// refused with exit 2, naming the trace's line, before any request reaches the server and
/// before the output folder is made; in Vernier's JSONL and in Mooncake's format alike.
/// (Before, the record was read, a prompt of that length synthesised and the request sent:
/// the simulator saw it.)
#[test]
fn a_record_of_a_hundred_million_tokens_is_refused_before_any_request() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let truth = folder.path().join("truth.jsonl");
    let sim = matrix::SimChild::start(
        "fault_matrix_replay::serve_simulator_when_asked",
        &format!("--ground-truth {}", truth.display()),
    );
    for (name, record) in [
        (
            "vernier.jsonl",
            r#"{"offset_ms": 0, "input_tokens": 100000000, "output_tokens": 8}"#,
        ),
        (
            "mooncake.jsonl",
            r#"{"timestamp": 0, "input_length": 100000000, "output_length": 8}"#,
        ),
    ] {
        let trace = folder.path().join(name);
        std::fs::write(&trace, format!("{record}\n")).expect("write the trace");
        let out = folder.path().join(format!("out-{name}"));
        let words: Vec<String> = [
            "replay",
            "--base-url",
            &sim.base_url(),
            "--trace",
            &trace.display().to_string(),
            "--quiet",
            "--out",
            &out.display().to_string(),
        ]
        .map(str::to_owned)
        .to_vec();
        let output = matrix::run(
            env!("CARGO_BIN_EXE_sweep"),
            &words,
            &out,
            &matrix::During::Nothing,
        );
        matrix::assert_cell(
            &format!("replay of {name}"),
            &output,
            2,
            &["--trace", name, "line 1"],
            false,
        );
        assert!(!out.exists(), "{name}: {} was made", out.display());
        let seen = std::fs::read_to_string(&truth).unwrap_or_default();
        assert!(
            seen.trim().is_empty(),
            "{name}: the simulator saw requests: {seen}"
        );
    }
}
