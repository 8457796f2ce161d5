//! Flags typed beside `--resume`: those that would change what the journal's run measures are
//! refused by name (exit 2), and `--base-url` is used and recorded.

use std::path::{Path, PathBuf};
use vernier_cli::Failure as _;

use lifecycle::{Cli, Done, run};
use vernier_lifecycle::{LifecycleError, ReadyJournalLine, read_journal};
use vernier_run::RunError;

use crate::ports::free_port;

/// A launched simulator whose port is read from a file when it starts, so a resume can move it.
struct Launch {
    port_file: PathBuf,
    command: String,
}

impl Launch {
    fn new(folder: &Path, port: u16) -> Self {
        let port_file = folder.join("port");
        std::fs::write(&port_file, port.to_string()).expect("port file");
        let command = vernier_test_support::launch_command(
            "fault_matrix::serve_simulator_when_asked",
            &format!(
                "--port $(cat '{}') --model vernier-sim --decode-step-ms 1",
                port_file.display()
            ),
            0,
            0,
        );
        Self { port_file, command }
    }

    fn move_to(&self, port: u16) -> String {
        std::fs::write(&self.port_file, port.to_string()).expect("port file");
        format!("http://127.0.0.1:{port}")
    }
}

async fn lifecycle(words: &[&str]) -> Result<Done, LifecycleError> {
    let words: Vec<String> = std::iter::once("lifecycle")
        .chain(words.iter().copied())
        .map(str::to_owned)
        .collect();
    run(Cli::parse_from(&words), words).await
}

/// A two-repetition run of `launch` at `base_url`, its journal cut after the first
/// repetition (as if it had been killed during the second); the journal's path.
async fn half_done_run(out: &Path, launch: &Launch, base_url: &str) -> PathBuf {
    let done = lifecycle(&[
        "ready",
        "--launch",
        &launch.command,
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
    let folder = tempfile::tempdir().expect("tempdir");
    let launch = Launch::new(folder.path(), 0);
    let base_url = launch.move_to(free_port());
    let journal = half_done_run(&folder.path().join("run"), &launch, &base_url).await;
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
            .is_some_and(|command| command.contains("--launch 'VERNIER_TEST_SIM=")),
        "{original_command:?}"
    );
    assert!(
        resumed_lines(&journal).is_empty(),
        "a refused resume writes nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_base_url_beside_resume_is_used_and_recorded() {
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("run");
    let launch = Launch::new(folder.path(), 0);
    let first_url = launch.move_to(free_port());
    let journal = half_done_run(&out, &launch, &first_url).await;
    // The run continues at another address of the same server software and model: the launch
    // command reads its port when it starts. Flags equal to the journal's are accepted too.
    let second_url = launch.move_to(free_port());
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
