//! A finished sweep registers itself in the run store `VERNIER_STORE` names; a store that
//! cannot be written is a warning with the command that registers the run later, never a
//! failed run.

use std::process::Command;

fn sweep(out: &std::path::Path, store: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args([
            "--workload",
            "prose",
            "--prompt-tokens",
            "32",
            "--output-tokens",
            "8",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--concurrency",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(out)
        .env("VERNIER_STORE", store)
        .output()
        .expect("run sweep")
}

#[test]
fn a_finished_sweep_registers_itself_and_an_unwritable_store_only_warns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("store").join("runs.sqlite");
    let out = dir.path().join("run");
    let run = sweep(&out, &store.display().to_string());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("run store: registered as sweep-"),
        "{stderr}"
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let runs = runtime.block_on(async {
        let store = vernier_store::Store::open(&vernier_store::Location::Sqlite(store.clone()))
            .await
            .expect("the store opens");
        store.runs().await.expect("the runs")
    });
    assert_eq!(runs.len(), 1, "{runs:?}");
    let expected = vernier_store::read_run(&out).expect("the run's folder");
    assert_eq!(runs[0].id, expected.id);
    assert_eq!(runs[0].kind, "sweep");

    // A store under a file cannot be made: the run still succeeds, and says how to register.
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").expect("a file");
    let out = dir.path().join("second");
    let run = sweep(&out, &blocker.join("runs.sqlite").display().to_string());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: the run was not registered"),
        "{stderr}"
    );
    assert!(stderr.contains("runs register"), "{stderr}");
    assert!(out.join("run.json").is_file(), "the run's files are whole");
}
