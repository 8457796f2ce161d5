//! The column of a sharded sweep and its merge in the fault matrix
//! (`vernier_test_support::fault_matrix`): shard 0 of 2 (`--shard 0/2 --start-at` a moment
//! ahead) of steady load, short repetitions, against the simulator in a process of its own.
//!
//! - server frozen or killed mid-run: exit 4, "failed to keep measuring", the journal and the
//!   command that continues the shard;
//! - every request answered 500: the first repetitions fail whole, and the shard ends with
//!   exit 4 ("in a row failed"), its journal and the command that continues it;
//! - every request answered 401: exit 2 naming `--api-key-env`;
//! - `run.json` cannot be written: exit 1 naming it, the journal and the resume command, which
//!   completes the shard once the file can be written;
//! - SIGTERM: exit 130 and the resume command, which run as printed completes the shard;
//! - kill −9, then `--resume OUT --base-url` of the server on another port: exit 0.
//!
//! Complete means the shard finished every repetition once, and merged with shard 1 (run
//! afterwards, for the same instant, against the server the shard last measured) it makes one
//! run: `sweep merge` exits 0, the verdict is valid or questionable, and the merged journal
//! holds every repetition of both shards once.
//!
//! Also: an instant more than seven days ahead is refused at once, naming `--start-at` and the
//! limit, before any folder is made.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use vernier_test_support::fault_matrix as matrix;

use matrix::Tool;

const SWEEP: &str = env!("CARGO_BIN_EXE_sweep");
const SERVE: &str = "fault_matrix_shard::serve_simulator_when_asked";
const REPS: usize = 3;

/// The load and sizes both shards share (without `--shard`, `--start-at` and `--out`).
fn load(base_url: &str) -> Vec<String> {
    [
        "--base-url",
        base_url,
        "--load",
        "steady",
        "--concurrency",
        "2",
        "--duration",
        "0.4",
        "--reps",
        "3",
        "--warmup",
        "0",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "24",
        "--workload",
        "prose",
        "--shard-gap",
        "0.2",
        // Shard 1 runs after shard 0 has finished, for the same instant, long past.
        "--start-tolerance",
        "3600",
        "--idle-timeout-s",
        "2",
        "--quiet",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The words of shard `index` of 2 for the instant `start_at`, into `out`.
fn shard(index: u32, base_url: &str, start_at: &str, out: &Path) -> Vec<String> {
    let mut words = load(base_url);
    words.extend([
        "--shard".to_owned(),
        format!("{index}/2"),
        "--start-at".to_owned(),
        start_at.to_owned(),
        "--out".to_owned(),
        out.display().to_string(),
    ]);
    words
}

fn args(base_url: &str, out: &Path) -> Vec<String> {
    let start_at = vernier_run::rfc3339_ms(vernier_run::unix_ms() + 1_500);
    shard(0, base_url, &start_at, out)
}

fn resume(out: &Path, base_url: &str) -> Vec<String> {
    // The pause between repetitions is a setting of the session, not of the journal: without
    // it a resumed shard pauses the default 10 s.
    [
        "--resume",
        &out.display().to_string(),
        "--base-url",
        base_url,
        "--shard-gap",
        "0.2",
        "--quiet",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The journal lines of `kind` in `folder`'s journal.
fn lines_of(folder: &Path, kind: &str) -> Vec<serde_json::Value> {
    vernier_test_support::journal_lines_of(&folder.join("journal.jsonl"), kind)
}

/// The repetitions a shard finished, each once.
fn reps_done(folder: &Path) -> Vec<u64> {
    let reps: Vec<u64> = lines_of(folder, "rep_done")
        .iter()
        .filter_map(|line| line["rep"].as_u64())
        .collect();
    let unique: BTreeSet<u64> = reps.iter().copied().collect();
    assert_eq!(
        reps.len(),
        unique.len(),
        "{}: a repetition counted twice: {reps:?}",
        folder.display()
    );
    assert_eq!(
        unique.len(),
        REPS,
        "{}: repetitions lost: {reps:?}",
        folder.display()
    );
    reps
}

/// Shard 0 finished every repetition once; shard 1, run now for the same instant against
/// `base_url`, finishes too; their merge is one run holding every repetition of both once.
fn complete(out: &Path, base_url: &str) {
    reps_done(out);
    assert!(out.join("run.json").is_file());
    let start_at = lines_of(out, "shard_start")
        .iter()
        .find_map(|line| line["start_at_unix_ms"].as_u64())
        .expect("shard 0's agreed instant");
    let start_at = vernier_run::rfc3339_ms(start_at);
    let other = out.with_file_name("shard-1");
    let second = matrix::run(
        SWEEP,
        &shard(1, base_url, &start_at, &other),
        &other,
        &matrix::During::Nothing,
    );
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        matrix::described(&second)
    );
    reps_done(&other);
    let merged = out.with_file_name("merged");
    let words: Vec<String> = ["merge", &merged.display().to_string()]
        .into_iter()
        .map(str::to_owned)
        .chain([out, &other].map(|folder| folder.display().to_string()))
        .collect();
    let merge = matrix::run(SWEEP, &words, &merged, &matrix::During::Nothing);
    assert_eq!(
        merge.status.code(),
        Some(0),
        "{}",
        matrix::described(&merge)
    );
    let run: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(merged.join("run.json")).expect("the merged run.json"),
    )
    .expect("run.json is JSON");
    let verdict = &run["validity"]["verdict"];
    assert!(
        verdict == "valid" || verdict == "questionable",
        "the merged run is {verdict}: {}",
        run["validity"]["reasons"]
    );
    // Every repetition once in the merged journal, and each one's requests from both shards.
    let merged_reps: Vec<u64> = lines_of(&merged, "rep_done")
        .iter()
        .filter_map(|line| line["rep"].as_u64())
        .collect();
    assert_eq!(
        merged_reps,
        (0..REPS as u64).collect::<Vec<_>>(),
        "the merged repetitions"
    );
    let mut sent: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for attempt in lines_of(&merged, "attempt") {
        if attempt["status"] == "ok" {
            sent.entry(attempt["rep"].as_u64().expect("rep"))
                .or_default()
                .insert(attempt["shard"].as_u64().expect("the shard"));
        }
    }
    for rep in 0..REPS as u64 {
        assert_eq!(
            sent.get(&rep),
            Some(&BTreeSet::from([0, 1])),
            "merged repetition {rep}: requests by shard"
        );
    }
}

fn sharded() -> Tool<'static> {
    Tool {
        name: "sweep --shard 0/2",
        exe: SWEEP,
        serve: SERVE,
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

vernier_test_support::matrix_cells!(sharded);

/// An agreed instant more than seven days ahead is a mistyped date, not a plan: refused at
/// once, naming the flag and the limit, before any folder is made. (Before, the shard set
/// itself up and waited for 2099: the run is given three minutes here.)
#[test]
fn a_start_more_than_seven_days_ahead_is_refused_at_once() {
    let sim = matrix::SimChild::start(SERVE, "");
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let output = matrix::run(
        SWEEP,
        &shard(0, &sim.base_url(), "2099-01-01T00:00:00Z", &out),
        &out,
        &matrix::During::Nothing,
    );
    matrix::assert_cell(
        "--start-at 2099",
        &output,
        2,
        &["--start-at", "7 days"],
        false,
    );
    assert!(!out.exists(), "{} was made", out.display());
}
