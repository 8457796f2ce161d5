//! The soak's watch against an in-process simulator (a running server, no launch): a hang the
//! generation counter confirms is a death, and the soak waits for the server to come back; a
//! stall while another client's request generates is busy, never a death.

use std::time::Duration;
use vernier_cli::Failure as _;

use vernier_lifecycle::{
    DeathKind, QuietObserver, SoakConfig, SoakJournalLine, SoakServer, SoakStart,
    read_soak_journal, run_soak,
};
use vernier_sim::{Sim, SimConfig};

fn running(base_url: &str) -> SoakConfig {
    let mut config = SoakConfig::default();
    base_url.clone_into(&mut config.base_url);
    config.servers = vec![SoakServer::new("running", None)];
    config.concurrency = vec![2];
    config.max_tokens = 20_000;
    config.probe_interval_s = 0.1;
    config.hang_after_s = 0.5;
    config.settle_s = 0.3;
    config.ready_timeout_s = 20.0;
    config
}

/// A new soak of `config` into `out`, quiet, with no interrupt.
pub(crate) async fn soak_new(
    config: SoakConfig,
    out: &std::path::Path,
) -> Result<vernier_lifecycle::SoakOutcome, vernier_lifecycle::LifecycleError> {
    run_soak(
        SoakStart::New {
            config,
            out: out.to_owned(),
        },
        &["lifecycle".to_owned()],
        &QuietObserver,
        None,
    )
    .await
}

/// Waits until the soak's journal says the server was found ready.
async fn wait_for_ready(journal: &std::path::Path) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(journal)
        .unwrap_or_default()
        .contains("\"type\":\"ready\"")
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the soak never got ready"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_the_counter_confirms_is_a_death_and_the_soak_waits_for_the_server() {
    let sim = Sim::start(
        SimConfig::builder()
            .decode_step(Duration::from_millis(2))
            .build(),
    )
    .await
    .expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("soak");
    let mut config = running(&sim.base_url());
    config.duration_s = 3.0;
    let sim = std::sync::Arc::new(sim);
    let hang = {
        let sim = std::sync::Arc::clone(&sim);
        let journal = out.join("journal.jsonl");
        tokio::spawn(async move {
            wait_for_ready(&journal).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            sim.set_hung(true);
            tokio::time::sleep(Duration::from_secs(2)).await;
            sim.set_hung(false);
        })
    };
    let outcome = soak_new(config, &out).await.expect("soak");
    hang.await.expect("join");
    let run = &outcome.run;
    assert!(run.gave_up.is_none(), "{:?}", run.gave_up);
    assert_eq!(
        run.deaths.len(),
        1,
        "{}",
        std::fs::read_to_string(out.join("journal.jsonl")).unwrap_or_default()
    );
    let death = &run.deaths[0];
    match &death.how {
        DeathKind::Hung { stalled_s, counter } => {
            assert!(*stalled_s >= 0.5, "{stalled_s}");
            assert!(counter.contains("stood at"), "{counter}");
        }
        other => panic!("expected a hang, got {other:?}"),
    }
    assert_eq!(death.in_flight.len(), 2);
    // It hung about a second into the load.
    assert!(
        (0.9..2.0).contains(&death.since_ready_s),
        "{}",
        death.since_ready_s
    );
    // The server came back by itself and the soak held its duration.
    assert!(
        (run.arms[0].loaded_s - 3.0).abs() < 0.5,
        "{}",
        run.arms[0].loaded_s
    );
    let readies = read_soak_journal(&out.join("journal.jsonl"))
        .expect("journal")
        .into_iter()
        .filter(|line| matches!(line, SoakJournalLine::Ready { ready: true, .. }))
        .count();
    assert_eq!(readies, 2, "ready at the start, and again after the hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_server_refuses_stops_the_soak_naming_the_flag() {
    // Before, every request was refused with 400 (over the context) and the soak went on
    // holding no load at all.
    let sim = Sim::start(SimConfig::default()).await.expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let mut config = running(&sim.base_url());
    config.max_tokens = 100_000;
    config.duration_s = 5.0;
    let error = soak_new(config, &folder.path().join("soak"))
        .await
        .expect_err("refused");
    assert_eq!(error.exit_code(), 2);
    let message = error.to_string();
    assert!(
        message.contains("--max-tokens") && message.contains("400"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_behind_another_clients_request_is_busy_not_a_death() {
    // One slot, held by another client's long request: the soak's own request waits with no
    // token while the generation counter moves.
    let sim = Sim::start(
        SimConfig::builder()
            .decode_step(Duration::from_millis(2))
            .max_num_seqs(Some(1))
            .build(),
    )
    .await
    .expect("simulator");
    let client = vernier_openai::ClientBuilder::new(&sim.base_url())
        .build()
        .expect("client");
    let mut request = vernier_openai::ChatRequest::new(
        "vernier-sim",
        vec![vernier_openai::ChatMessage::user("another client")],
    );
    request.max_tokens = Some(1500);
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("soak");
    let mut config = running(&sim.base_url());
    config.concurrency = vec![1];
    config.max_tokens = 50;
    config.duration_s = 2.5;
    // Ready first (the probe needs the slot), then the other client takes it.
    let journal = out.join("journal.jsonl");
    let other = tokio::spawn(async move {
        wait_for_ready(&journal).await;
        client.chat(&request).await
    });
    let outcome = soak_new(config, &out).await.expect("soak");
    let _ = other.await;
    let run = &outcome.run;
    assert!(run.deaths.is_empty(), "{:?}", run.deaths);
    assert!(run.arms[0].busy >= 1, "{:?}", run.arms[0]);
}
