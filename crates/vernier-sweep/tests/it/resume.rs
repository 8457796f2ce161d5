//! A run cut short by a dead server resumes without measuring anything twice, and only against
//! the server it measured.

use std::collections::BTreeSet;
use std::time::Duration;

use vernier_sim::{Sim, SimConfig};
use vernier_sweep::Workload;

use crate::support::{config, journal_values, resume, run, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_server_mid_run_then_resuming_completes_every_cell_once() {
    let sim = start_sim(vernier_test_support::quick_sim_at(
        "127.0.0.1:0".parse().expect("address"),
        5,
    ))
    .await;
    let addr = sim.addr();
    let base_url = sim.base_url();
    let out = tempfile::tempdir().expect("temporary folder");
    let journal = out.path().join("journal.jsonl");
    let mut config = config(&[Workload::Prose, Workload::Code], &[100, 300], &[40], 3);
    config.concurrency = vec![1, 2];
    let first = tokio::spawn({
        let base_url = base_url.clone();
        let out = out.path().to_owned();
        async move { run(&base_url, &out, config).await }
    });
    // Let a few repetitions finish, then kill the server mid-run.
    vernier_test_support::wait_for_rep_done(&journal, 5, &first).await;
    sim.shutdown().await;
    let error = first
        .await
        .expect("the task ends")
        .expect_err("the run stops when the server dies");
    let message = error.to_string();
    assert!(
        matches!(
            error,
            vernier_sweep::SweepError::Run(vernier_run::RunError::ServerStopped { .. })
        ),
        "{message}"
    );
    assert!(
        message.contains(&format!("--resume {}", journal.display())),
        "{message}"
    );
    // Whatever was measured is on disk, reports included.
    assert!(out.path().join("run.json").exists());

    let sim = Sim::start(vernier_test_support::quick_sim_at(addr, 5))
        .await
        .expect("restart the simulator on the same port");
    // The configuration comes from the journal.
    let outcome = resume(&base_url, &journal)
        .await
        .expect("the resumed run finishes");
    assert!(outcome.run.complete);
    assert_eq!(outcome.run.cells.len(), 8);
    for cell in &outcome.run.cells {
        assert_eq!(cell.n_reps, 3, "{cell:?}");
        assert_eq!(cell.n_ok, 3 * cell.concurrency, "{cell:?}");
        assert_eq!(cell.n_failed, 0, "{cell:?}");
    }
    // No (cell, repetition) finished twice, and no (cell, repetition, stream) measured twice.
    let lines = journal_values(&journal);
    let mut done = BTreeSet::new();
    for line in lines.iter().filter(|l| l["type"] == "rep_done") {
        assert!(
            done.insert((line["cell"].to_string(), line["rep"].as_u64())),
            "repetition finished twice: {line}"
        );
    }
    let mut measured = BTreeSet::new();
    for line in lines
        .iter()
        .filter(|l| l["type"] == "attempt" && l["phase"] == "measured" && l["status"] == "ok")
    {
        let key = (
            line["cell"].to_string(),
            line["rep"].as_u64(),
            line["stream"].as_u64(),
        );
        assert!(measured.insert(key), "request measured twice: {line}");
    }
    assert_eq!(lines.iter().filter(|l| l["type"] == "header").count(), 1);
    assert_eq!(lines.iter().filter(|l| l["type"] == "resumed").count(), 1);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_back_at_another_address_resumes_but_another_model_is_refused() {
    let sim = start_sim(vernier_test_support::quick_sim_at(
        "127.0.0.1:0".parse().expect("address"),
        5,
    ))
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let journal = out.path().join("journal.jsonl");
    run(
        &sim.base_url(),
        out.path(),
        config(&[Workload::Prose], &[80], &[16], 2),
    )
    .await
    .expect("the first run finishes");
    sim.shutdown().await;
    // Another model at another address: refused, naming the model.
    let other = start_sim(
        SimConfig::builder()
            .model("another-model")
            .decode_step(Duration::from_millis(5))
            .build(),
    )
    .await;
    let error = resume(&other.base_url(), &journal)
        .await
        .expect_err("another model is refused");
    assert!(
        matches!(
            error,
            vernier_sweep::SweepError::Run(vernier_run::RunError::ServerChanged { .. })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("another-model"), "{error}");
    other.shutdown().await;
    // The same model at a new address: an operational change, recorded.
    let moved = start_sim(vernier_test_support::quick_sim_at(
        "127.0.0.1:0".parse().expect("address"),
        5,
    ))
    .await;
    let outcome = resume(&moved.base_url(), &journal)
        .await
        .expect("the same server at a new address resumes");
    assert!(outcome.run.complete);
    let lines = journal_values(&journal);
    let resumed: Vec<_> = lines.iter().filter(|l| l["type"] == "resumed").collect();
    assert_eq!(resumed.len(), 1);
    assert_eq!(
        resumed[0]["environment"]["server"]["base_url"].as_str(),
        Some(moved.base_url().as_str())
    );
    moved.shutdown().await;
}
