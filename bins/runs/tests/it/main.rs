//! `runs` against real run folders: every engine's runs registered in SQLite and in a real
//! PostgreSQL server and read back field for field, a store rebuilt from its folders, a board
//! of five simulated servers of known speed and pass rate, and the history of one simulator.

mod board;
mod browser;
mod history;
mod store;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support {
    vernier_test_support::simulator_entry_point!();
}

/// The test path of the simulator's entry point in this binary.
const SERVE: &str = "support::serve_simulator_when_asked";

/// `runs ARGS --store STORE`.
fn runs(store: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runs"))
        .args(args)
        .args(["--store", store])
        .env_remove("VERNIER_STORE")
        .output()
        .expect("run runs")
}

/// Its stdout, after asserting exit 0.
fn succeeded(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every run in the store, as `runs list --json` gives them.
fn listed(store: &str) -> Vec<vernier_store::RunRecord> {
    let text = succeeded(&runs(store, &["list", "--json"]));
    serde_json::from_str(&text).expect("runs list --json")
}

/// The repository's root (the bundled studies' and the datasets' paths are read from there).
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A sweep of one cell at one stream against `base_url`, into `out`, in-process.
fn sweep_once(base_url: &str, out: &Path) {
    let out_text = out.display().to_string();
    let cli = sweep::Cli::parse_from([
        "sweep",
        "--base-url",
        base_url,
        "--workload",
        "prose",
        "--prompt-tokens",
        "64",
        "--output-tokens",
        "48",
        "--reps",
        "5",
        "--concurrency",
        "1",
        "--quiet",
        "--out",
        &out_text,
    ]);
    let finished = sweep::execute(cli, vec!["sweep".to_owned()]).expect("the sweep runs");
    assert_eq!(
        finished.kind,
        vernier_cli::ExitKind::Success,
        "{finished:?}"
    );
}
