//! Resuming a run through the engine's API: the server must be the one the journal measured.

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
