//! Flags typed beside `--resume`: those that would change what the journal's run measures are
//! refused by name (exit 2), and `--base-url` is used and recorded.

use std::path::{Path, PathBuf};

use lifecycle::{Cli, Done, run};
use vernier_lifecycle::{LifecycleError, ReadyJournalLine, read_journal};
use vernier_run::RunError;
use vernier_sim::{Sim, SimConfig};

async fn lifecycle(words: &[&str]) -> Result<Done, LifecycleError> {
    let words: Vec<String> = std::iter::once("lifecycle")
        .chain(words.iter().copied())
        .map(str::to_owned)
        .collect();
    run(Cli::parse_from(&words), words).await
}

/// A two-repetition run against the server at `base_url`, its journal cut after the first
/// repetition (as if it had been killed during the second); the journal's path.
async fn half_done_run(out: &Path, base_url: &str) -> PathBuf {
    // The server is the simulator already listening; the launch is a stand-in process.
    let done = lifecycle(&[
        "ready",
        "--launch",
        "sleep 30",
        "--base-url",
        base_url,
        "--reps",
        "2",
        "--warm-requests",
        "1",
        "--max-tokens",
        "4",
        "--stop-grace",
        "2",
        "--quiet",
        "--out",
        &out.display().to_string(),
    ])
    .await
    .expect("ready run");
    assert_eq!(done.failed_reps, 0);
    let journal = out.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).expect("journal");
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&journal, kept.join("\n") + "\n").expect("cut the journal");
    journal
}

/// The operational changes each `resumed` line of the journal records.
fn resumed_lines(journal: &Path) -> Vec<Vec<String>> {
    read_journal(journal)
        .expect("journal")
        .into_iter()
        .filter_map(|line| match line {
            ReadyJournalLine::Resumed {
                changed_settings, ..
            } => Some(changed_settings),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_beside_resume_that_change_the_measurement_are_refused_by_name() {
    let server = Sim::start(SimConfig::default()).await.expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let journal = half_done_run(&folder.path().join("run"), &server.base_url()).await;
    let elsewhere = folder.path().join("elsewhere").display().to_string();
    let error = lifecycle(&[
        "ready",
        "--resume",
        &journal.display().to_string(),
        "--reps",
        "5",
        "--max-tokens",
        "8",
        "--warm-requests",
        "1",
        "--out",
        &elsewhere,
        "--base-url",
        "http://127.0.0.1:9",
        "--quiet",
    ])
    .await
    .expect_err("the measurement flags differ");
    assert_eq!(error.exit_code(), 2);
    let LifecycleError::Run(RunError::ConfigMismatch {
        differences,
        original_command,
        ..
    }) = &error
    else {
        panic!("not a refused resume: {error}");
    };
    for refused in [
        "--reps 5 (the journal's run: 2)",
        "--max-tokens 8 (the journal's run: 4)",
        &format!("--out {elsewhere} (a resumed run writes next to its journal"),
    ] {
        assert!(differences.contains(refused), "{differences}");
    }
    // A value equal to the journal's, and the operational address, are not refusals.
    for accepted in ["--warm-requests", "--base-url"] {
        assert!(!differences.contains(accepted), "{differences}");
    }
    assert!(
        original_command
            .as_deref()
            .is_some_and(|command| command.contains("--launch 'sleep 30'")),
        "{original_command:?}"
    );
    assert!(
        resumed_lines(&journal).is_empty(),
        "a refused resume writes nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_base_url_beside_resume_is_used_and_recorded() {
    let first_server = Sim::start(SimConfig::default()).await.expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("run");
    let first_url = first_server.base_url();
    let journal = half_done_run(&out, &first_url).await;
    // The first server goes away; the run continues at another address of the same server
    // software and model. Flags equal to the journal's settings are accepted too.
    first_server.shutdown().await;
    let second_server = Sim::start(SimConfig::default()).await.expect("simulator");
    let second_url = second_server.base_url();
    let done = lifecycle(&[
        "ready",
        "--resume",
        &journal.display().to_string(),
        "--base-url",
        &second_url,
        "--reps",
        "2",
        "--out",
        &out.display().to_string(),
        "--quiet",
    ])
    .await
    .expect("the new address is used");
    assert_eq!(done.failed_reps, 0);
    assert!(
        done.summary
            .contains("2 repetitions reached every milestone"),
        "{}",
        done.summary
    );
    assert_eq!(
        resumed_lines(&journal),
        vec![vec![format!(
            "--base-url {second_url} (the journal's run: {first_url})"
        )]]
    );
}
