//! Arguments and the output folder are checked before any network or simulator work, so a typo
//! or a second run into the same folder fails at once, naming what to change.

use crate::support::run_sweep;
use vernier_cli::Failure as _;

/// A loopback URL nobody listens on: any request to it would fail with a connection error.
fn nobody_listening() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let addr = listener.local_addr().expect("its address");
    drop(listener);
    format!("http://{addr}")
}

#[tokio::test]
async fn a_bad_extra_body_or_wait_fails_before_the_server_is_asked() {
    let out = tempfile::tempdir().expect("temporary folder");
    let url = nobody_listening();
    for (flags, flag) in [
        (&["--extra-body", "{\"a\":"][..], "--extra-body"),
        (&["--idle-timeout-s", "1e20"], "--idle-timeout-s"),
        (&["--busy-wait-cap-s", "1e20"], "--busy-wait-cap-s"),
        // Flags that would do nothing in the run asked for are refused, not dropped.
        (&["--duration", "30"], "--duration"),
        (&["--arrival", "poisson"], "--arrival"),
        (&["--max-load", "8"], "--max-load"),
        (
            &["--load", "steady", "--rate", "2", "--duration", "5"],
            "--load",
        ),
        (
            &["--base-url-is-plain", "--ca-cert", "/nonexistent.pem"],
            "--ca-cert",
        ),
    ] {
        let flags: Vec<&str> = flags
            .iter()
            .copied()
            .filter(|flag| *flag != "--base-url-is-plain")
            .collect();
        let error = run_sweep(&url, out.path(), &flags)
            .await
            .expect_err("a bad argument is refused");
        assert_eq!(error.exit_code(), 2, "{flags:?}: {error}");
        assert!(
            matches!(&error, vernier_sweep::SweepError::Run(vernier_run::RunError::InvalidArgument { what, .. }) if what == flag),
            "{flags:?}: {error}"
        );
    }
    assert!(
        !out.path().join("journal.jsonl").exists(),
        "nothing is written"
    );
}

#[tokio::test]
async fn a_second_run_into_the_same_folder_says_how_to_resume_or_start_anew() {
    let out = tempfile::tempdir().expect("temporary folder");
    let journal = out.path().join("journal.jsonl");
    std::fs::write(&journal, "{}\n").expect("an earlier run's journal");
    let error = run_sweep(&nobody_listening(), out.path(), &[])
        .await
        .expect_err("an existing journal is not overwritten");
    let message = error.to_string();
    assert!(
        matches!(
            error,
            vernier_sweep::SweepError::Run(vernier_run::RunError::JournalExists { .. })
        ),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "pass --resume {} to continue it, or choose another --out",
            journal.display()
        )),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(&journal).expect("the journal"),
        "{}\n",
        "the journal is untouched"
    );
}

#[test]
fn the_binary_exits_with_2_for_a_refused_flag_and_names_it() {
    let out = tempfile::tempdir().expect("temporary folder");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(["--base-url", &nobody_listening(), "--out"])
        .arg(out.path())
        .args(["--extra-body", "{\"a\":", "--quiet"])
        .output()
        .expect("run the sweep binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--extra-body"), "{stderr}");
}

#[test]
fn an_api_key_variable_unset_or_empty_is_a_refused_flag() {
    for value in [None, Some(""), Some("   ")] {
        let out = tempfile::tempdir().expect("temporary folder");
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"));
        command
            .args(["--base-url", &nobody_listening(), "--out"])
            .arg(out.path())
            .args(["--api-key-env", "VERNIER_TEST_KEY_UNDER_TEST", "--quiet"]);
        match value {
            Some(value) => command.env("VERNIER_TEST_KEY_UNDER_TEST", value),
            None => command.env_remove("VERNIER_TEST_KEY_UNDER_TEST"),
        };
        let output = command.output().expect("run the sweep binary");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{value:?}: {stderr}");
        assert!(
            stderr.contains("--api-key-env") && stderr.contains("VERNIER_TEST_KEY_UNDER_TEST"),
            "{stderr}"
        );
        let why = if value.is_some() {
            "set but empty"
        } else {
            "not set"
        };
        assert!(stderr.contains(why), "{value:?}: {stderr}");
    }
}

#[test]
fn the_binary_exits_with_1_when_the_run_fails_and_0_when_it_finishes() {
    let out = tempfile::tempdir().expect("temporary folder");
    // A runtime failure: the journal to resume is not a sweep journal.
    let not_a_journal = out.path().join("notes.jsonl");
    std::fs::write(&not_a_journal, "{\"type\":\"something_else\"}\n").expect("write a file");
    let failed = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"))
        .arg("--resume")
        .arg(&not_a_journal)
        .arg("--quiet")
        .output()
        .expect("run the sweep binary");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("notes.jsonl"), "{stderr}");
    // Success: a one-cell sweep of the in-process simulator.
    let run_out = out.path().join("run");
    let finished = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args([
            "--workload",
            "prose",
            "--prompt-tokens",
            "64",
            "--output-tokens",
            "8",
        ])
        .args(["--reps", "1", "--warmup", "0", "--out"])
        .arg(&run_out)
        .output()
        .expect("run the sweep binary");
    let stderr = String::from_utf8_lossy(&finished.stderr);
    assert_eq!(finished.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("measuring the bundled simulator"),
        "{stderr}"
    );
    let table = String::from_utf8_lossy(&finished.stdout);
    assert!(table.contains("prose"), "{table}");
    assert!(run_out.join("run.json").exists());
}
