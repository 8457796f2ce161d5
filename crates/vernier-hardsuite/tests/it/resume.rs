//! Resuming a run through the engine's API: the server must be the one the journal measured.

use vernier_cli::Failure as _;
use vernier_hardsuite::{
    HardsuiteError, RunConfig, RunTarget, SilentObserver, SuiteSelection,
    hardsuite_demo_simulator_config, load_suite, run_suite,
};
use vernier_run::RunError;
use vernier_sim::{Sim, SimConfig};

fn crt_only() -> SuiteSelection {
    let mut selection = SuiteSelection::default();
    selection.tasks = Some(vec!["crt".to_owned()]);
    selection
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_against_another_server_is_refused_and_the_journal_is_left_alone() {
    let suite = load_suite(&crt_only()).expect("the bundled suite");
    let first = Sim::start(hardsuite_demo_simulator_config(&suite).expect("demo config"))
        .await
        .expect("simulator");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let mut config = RunConfig::default();
    config.base_url = Some(first.base_url());
    config.suite = crt_only();
    config.skip_self_check = true;
    run_suite(
        &config,
        &RunTarget::new_run(&out),
        vec!["hardsuite".to_owned()],
        &SilentObserver,
    )
    .await
    .expect("the first run");
    first.shutdown().await;
    let journal = out.join("journal.jsonl");
    let written = std::fs::read_to_string(&journal).expect("journal");
    let header: serde_json::Value =
        serde_json::from_str(written.lines().next().expect("a header")).expect("JSON");
    assert_eq!(header["server"]["model"], "vernier-sim", "{header}");

    let other = Sim::start(SimConfig::builder().model("another-model").build())
        .await
        .expect("another simulator");
    let mut resumed = RunConfig::default();
    resumed.base_url = Some(other.base_url());
    let error = run_suite(
        &resumed,
        &RunTarget::resume(&journal),
        vec!["hardsuite".to_owned()],
        &SilentObserver,
    )
    .await
    .expect_err("another model is served");
    other.shutdown().await;
    assert!(
        matches!(error, HardsuiteError::Run(RunError::ServerChanged { .. })),
        "{error}"
    );
    assert!(error.to_string().contains("another-model"), "{error}");
    assert_eq!(error.exit_code(), 1);
    assert_eq!(
        std::fs::read_to_string(&journal).expect("journal"),
        written,
        "a refused resume appends nothing"
    );
}

/// A server upgraded while the suite runs (`/version` answers another version after the first
/// request) is caught by the end-of-run identity check: `results.json` says `invalid` and
/// names the change, and `report.md` opens with the same verdict. The same run on an unchanged
/// server is only `questionable` (the self-check skipped here, by name; the scripted dropped
/// stream's retry).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_upgraded_mid_run_makes_the_suite_invalid_and_says_why() {
    let mut one_clean_task = SuiteSelection::default();
    one_clean_task.tasks = Some(vec!["domino-tiling".to_owned()]);
    let suite = load_suite(&one_clean_task).expect("the bundled suite");
    let mut upgraded = hardsuite_demo_simulator_config(&suite).expect("demo config");
    upgraded.version_changes_after = Some(1);
    for (sim_config, expected) in [
        (
            hardsuite_demo_simulator_config(&suite).expect("demo config"),
            "questionable",
        ),
        (upgraded, "invalid"),
    ] {
        let sim = Sim::start(sim_config).await.expect("simulator");
        let dir = tempfile::tempdir().expect("temporary directory");
        let out = dir.path().join("out");
        let mut config = RunConfig::default();
        config.base_url = Some(sim.base_url());
        config.suite = one_clean_task.clone();
        config.skip_self_check = true;
        let outcome = run_suite(
            &config,
            &RunTarget::new_run(&out),
            vec!["hardsuite".to_owned()],
            &SilentObserver,
        )
        .await
        .expect("the run");
        sim.shutdown().await;
        let verdict = &outcome.results.validity;
        assert_eq!(verdict.verdict.as_str(), expected, "{verdict:?}");
        let codes: Vec<&str> = verdict.reasons.iter().map(|r| r.code.as_str()).collect();
        assert!(codes.contains(&"self_check_skipped"), "{codes:?}");
        if expected == "invalid" {
            assert_eq!(codes[0], "server_changed");
            assert!(
                verdict.reasons[0].detail.contains("(upgraded)"),
                "{verdict:?}"
            );
        } else {
            assert!(!codes.contains(&"server_changed"), "{codes:?}");
        }
        let written: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
        )
        .expect("JSON");
        assert_eq!(written["validity"]["verdict"], expected);
        let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
        assert!(
            report.contains(&format!("**verdict: {expected}: ")),
            "{report}"
        );
    }
}
