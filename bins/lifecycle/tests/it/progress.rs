//! What a person sees while `lifecycle` runs without a terminal (stderr is a pipe here): a
//! heartbeat line saying where the run is every `VERNIER_PROGRESS_EVERY_S` seconds, even while
//! a launched server takes its time, and none with `--quiet`.

use std::process::Output;

use vernier_sim::{Sim, SimConfig};

use crate::lifecycle;
use crate::ports::free_port;

/// The heartbeat lines of `label` on stderr.
fn heartbeats(output: &Output, label: &str) -> Vec<String> {
    let prefix = format!("{label}: ");
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.starts_with(&prefix) && line.ends_with(" elapsed"))
        .map(str::to_owned)
        .collect()
}

/// `lifecycle ready` of a server that never answers, given three seconds to: the launch is
/// all it does, and each line says so.
fn slow_launch(out: &std::path::Path, quiet: bool) -> Output {
    let mut command = lifecycle();
    command
        .args(["ready", "--launch", "sleep 30", "--reps", "1"])
        .args(["--ready-timeout", "3", "--stop-grace", "1"])
        .args(["--base-url", &format!("http://127.0.0.1:{}", free_port())])
        .arg("--out")
        .arg(out)
        .env(vernier_cli::PROGRESS_EVERY_VARIABLE, "1");
    if quiet {
        command.arg("--quiet");
    }
    command.output().expect("run")
}

#[test]
fn a_slow_launch_without_a_terminal_says_where_it_is_and_quiet_says_nothing() {
    let folder = tempfile::tempdir().expect("tempdir");
    let output = slow_launch(&folder.path().join("run"), false);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = heartbeats(&output, "lifecycle ready");
    assert!(
        lines
            .iter()
            .filter(|line| line.contains("repetition 1/1: launching"))
            .count()
            >= 2,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let quiet = slow_launch(&folder.path().join("quiet"), true);
    assert_eq!(quiet.status.code(), Some(1));
    assert_eq!(heartbeats(&quiet, "lifecycle ready"), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_without_a_terminal_counts_its_probes_on_stderr() {
    let sim = Sim::start(SimConfig::default()).await.expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("watch");
    let base_url = sim.base_url();
    let output = tokio::task::spawn_blocking(move || {
        lifecycle()
            .args(["watch", "--base-url", &base_url, "--max-probes", "7"])
            .args(["--interval", "0.5", "--timeout", "5", "--settle", "0.1"])
            .arg("--out")
            .arg(&out)
            .env(vernier_cli::PROGRESS_EVERY_VARIABLE, "1")
            .output()
            .expect("run")
    })
    .await
    .expect("join");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = heartbeats(&output, "lifecycle watch");
    let counted = lines
        .iter()
        .filter(|line| line.contains(" probes, last probe ok in "))
        .count();
    assert!(counted >= 2, "{}", String::from_utf8_lossy(&output.stderr));
    // stdout stays JSON Lines.
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "{line}"
        );
    }
}
