//! Every engine's runs (a study of each bundled seed holds sweeps, suites, a dataset, a swap,
//! a watch and a soak; an agent run besides) registered and read back field for field, in
//! SQLite and in a real PostgreSQL server; a deleted store rebuilt from the folders.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use vernier_store::RunRecord;
use vernier_test_support::Postgres;
use vernier_test_support::fault_matrix::SimChild;

use crate::{SERVE, listed, repository, runs, succeeded};

/// Runs the bundled study `name`, scaled, into `out` (against `base_url`, else the bundled
/// simulator), in-process.
fn study(name: &str, base_url: Option<&str>, out: &Path) {
    // The studies name their datasets from the repository's root, as the README runs them.
    std::env::set_current_dir(repository()).expect("the repository's root");
    let file = repository().join(format!("studies/{name}.toml"));
    let mut words = vec![
        "battery".to_owned(),
        "run".to_owned(),
        "--study".to_owned(),
        file.display().to_string(),
        "--scaled".to_owned(),
        "--quiet".to_owned(),
        "--out".to_owned(),
        out.display().to_string(),
    ];
    if let Some(base_url) = base_url {
        words.extend(["--base-url".to_owned(), base_url.to_owned()]);
    }
    let finished =
        battery::execute(battery::Cli::parse_from(&words), words.clone()).expect("the study runs");
    assert_eq!(
        finished.kind,
        vernier_cli::ExitKind::Success,
        "{name}: {finished:?}"
    );
    assert_eq!(
        finished.run_folder.as_deref().map(Path::is_file),
        Some(true),
        "the battery names the run it finished for the store"
    );
}

/// An agent run of two sessions of two turns against the bundled simulator.
fn agent(out: &Path) {
    let out_text = out.display().to_string();
    let words = [
        "sweep",
        "agent",
        "--sessions",
        "2",
        "--turns",
        "2",
        "--system-tokens",
        "64",
        "--tools",
        "0",
        "--user-tokens",
        "16",
        "--max-tokens",
        "24",
        "--think",
        "0.05s",
        "--quiet",
        "--out",
        &out_text,
    ];
    let finished = sweep::execute(sweep::Cli::parse_from(words), vec!["sweep".to_owned()])
        .expect("the agent run finishes");
    assert_eq!(
        finished.kind,
        vernier_cli::ExitKind::Success,
        "{finished:?}"
    );
}

/// Every run folder under `root`: each study and each of its parts, and the agent run.
fn run_folders(root: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for study in ["seed-000", "seed-003", "seed-004"] {
        let folder = root.join(study);
        folders.push(folder.clone());
        let mut parts: Vec<PathBuf> = std::fs::read_dir(&folder)
            .expect("the study's folder")
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        parts.sort();
        folders.extend(parts);
    }
    folders.push(root.join("agent"));
    folders
}

/// Asserts `got` holds exactly `expected`, naming the first field that differs.
fn assert_same(what: &str, got: Vec<RunRecord>, expected: &[RunRecord]) {
    let got = by_id(got);
    let expected = by_id(expected.to_vec());
    assert_eq!(
        got.iter().map(|run| &run.id).collect::<Vec<_>>(),
        expected.iter().map(|run| &run.id).collect::<Vec<_>>(),
        "{what}: the same runs"
    );
    for (a, b) in got.iter().zip(&expected) {
        let (a, b) = (
            serde_json::to_value(a).expect("JSON"),
            serde_json::to_value(b).expect("JSON"),
        );
        for (key, value) in a.as_object().expect("an object") {
            assert!(
                same(value, &b[key]),
                "{what}: {} field {key}: {value} against {}",
                b["id"],
                b[key]
            );
        }
    }
}

/// Equal, numbers to a relative 1e-12: a float read from a run file's decimal text may
/// differ in its last bit between two builds of `serde_json`'s parser (with and without its
/// exact round trip), which is the reading's, not the store's.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same(x, y)))
        }
        _ => a == b,
    }
}

fn by_id(mut records: Vec<RunRecord>) -> Vec<RunRecord> {
    records.sort_by(|a, b| a.id.cmp(&b.id));
    records
}

#[test]
fn every_engines_runs_are_registered_and_read_back_field_for_field_in_sqlite_and_postgresql() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("runs");
    study("seed-000", None, &root.join("seed-000"));
    {
        let sim = SimChild::start(SERVE, "--model model-a --alias model-b");
        study("seed-003", Some(&sim.base_url()), &root.join("seed-003"));
    }
    {
        let sim = SimChild::start(SERVE, "");
        study("seed-004", Some(&sim.base_url()), &root.join("seed-004"));
    }
    agent(&root.join("agent"));

    // The records as the folders give them: an independent read of each run file is what the
    // store must give back, field for field.
    let folders = run_folders(&root);
    let expected: Vec<RunRecord> = folders
        .iter()
        .map(|folder| {
            vernier_store::read_run(folder)
                .unwrap_or_else(|error| panic!("{}: {error}", folder.display()))
        })
        .collect();
    let kinds: BTreeSet<&str> = expected.iter().map(|run| run.kind.as_str()).collect();
    for kind in [
        "study", "sweep", "suite", "dataset", "swap", "watch", "soak", "agent",
    ] {
        assert!(kinds.contains(kind), "a {kind} run among {kinds:?}");
    }
    // What the run files say, checked against the files themselves.
    let sweep = expected
        .iter()
        .find(|run| run.kind == "sweep" && run.folder.ends_with("output-lengths"))
        .expect("seed-000's output-lengths sweep");
    let run_file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&sweep.folder).join("run.json")).expect("run.json"),
    )
    .expect("JSON");
    assert_eq!(
        sweep.started_unix_ms,
        run_file["started_unix_ms"].as_i64().expect("started")
    );
    assert_eq!(
        sweep.model,
        run_file["environment"]["model"]["id"]
            .as_str()
            .expect("model")
    );
    assert_eq!(sweep.target, "simulator");
    assert!(!sweep.figures.is_empty(), "{sweep:?}");
    let dataset = expected
        .iter()
        .find(|run| run.kind == "dataset")
        .expect("seed-003's MMLU-Pro part");
    assert!(
        dataset.scores.iter().any(|score| score.scored > 0),
        "{dataset:?}"
    );
    let mut ids: Vec<&str> = expected.iter().map(|run| run.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), expected.len(), "every run has an id of its own");

    let folder_args: Vec<String> = folders
        .iter()
        .map(|folder| folder.display().to_string())
        .collect();
    let postgres = Postgres::start();
    let sqlite = dir.path().join("store").join("runs.sqlite");
    for store in [sqlite.display().to_string(), postgres.url()] {
        let mut args = vec!["register"];
        args.extend(folder_args.iter().map(String::as_str));
        succeeded(&runs(&store, &args));
        assert_same(&store, listed(&store), &expected);
        // Registering again replaces, never doubles.
        succeeded(&runs(&store, &["register", &folder_args[0]]));
        assert_eq!(listed(&store).len(), expected.len(), "{store}");
    }

    // The store deleted and rebuilt from the folders gives the same rows.
    std::fs::remove_file(&sqlite).expect("delete the store");
    let store = sqlite.display().to_string();
    let reindexed = succeeded(&runs(&store, &["reindex", &root.display().to_string()]));
    assert!(reindexed.contains("reindexed"), "{reindexed}");
    assert_same("rebuilt", listed(&store), &expected);

    // A folder gone: the run stays, marked, and nothing is invented in its place.
    let agent_folder = root.join("agent");
    std::fs::remove_dir_all(&agent_folder).expect("remove the agent run");
    succeeded(&runs(&store, &["reindex", &root.display().to_string()]));
    let after = listed(&store);
    assert_eq!(after.len(), expected.len());
    let agent = after
        .iter()
        .find(|run| run.kind == "agent")
        .expect("the agent run is still listed");
    assert!(!agent.folder_present, "{agent:?}");
    assert!(
        after
            .iter()
            .filter(|run| run.kind != "agent")
            .all(|run| run.folder_present)
    );
    let table = succeeded(&runs(&store, &["list", "--kind", "agent"]));
    assert!(table.contains("(gone)"), "{table}");

    // `show` by the start of an id, and CSV with a row per run.
    let shown = succeeded(&runs(&store, &["show", &agent.id[..12]]));
    assert!(shown.contains(&agent.id), "{shown}");
    let csv = succeeded(&runs(&store, &["list", "--csv"]));
    assert_eq!(csv.lines().count(), expected.len() + 1, "{csv}");
}

#[test]
fn a_store_that_cannot_be_opened_is_refused_with_the_fix() {
    let output = runs("ftp://example.invalid/store", &["list"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("postgres:// URL"), "{stderr}");
    let dir = tempfile::tempdir().expect("temp dir");
    let output = runs(
        &dir.path().join("store.sqlite").display().to_string(),
        &["show", "no-such-run"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("runs list"));
}
