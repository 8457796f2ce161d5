//! Refusing a busy server, and flagging prefix-cache hits.

use std::time::Duration;

use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder};
use vernier_sim::SimConfig;
use vernier_sweep::{SweepConfig, Workload};

use crate::support::{config, journal_values, read_markdown, run, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_server_is_refused_unless_allowed() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(5))
            .build(),
    )
    .await;
    // Someone else's long request: 2000 tokens at 5 ms each, still running during the test.
    let client = ClientBuilder::new(&sim.base_url()).build().expect("client");
    let mut request = ChatRequest::new(
        "vernier-sim",
        vec![ChatMessage::user("a long story please")],
    );
    request.max_tokens = Some(2000);
    let mut other = client
        .chat_stream(&request)
        .await
        .expect("the other request starts");
    other
        .next_event()
        .await
        .expect("an event")
        .expect("not an error");

    let out = tempfile::tempdir().expect("temporary folder");
    let mut small = config(&[Workload::Prose], &[64], &[8], 1);
    small.warmup = 0;
    let error = run(&sim.base_url(), &out.path().join("refused"), small.clone())
        .await
        .expect_err("a busy server is refused");
    let message = error.to_string();
    assert!(
        matches!(error, vernier_sweep::SweepError::Run(vernier_run::RunError::ServerBusy { running, .. }) if running >= 1.0),
        "{message}"
    );
    assert!(message.contains("--allow-busy"), "{message}");
    assert!(
        !out.path().join("refused").join("journal.jsonl").exists(),
        "nothing is measured on refusal"
    );

    let mut allowed = small;
    allowed.allow_busy = Some(true);
    let outcome = run(&sim.base_url(), &out.path().join("allowed"), allowed)
        .await
        .expect("--allow-busy proceeds");
    assert_eq!(outcome.run.cells[0].n_ok, 1);
    assert!(outcome.run.environment.metrics_at_start["vllm:num_requests_running"] >= 1.0);
    drop(other);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_cache_hits_are_flagged_when_not_defeated() {
    // What `--unsafe-allow-prefix-cache` sets: no nonce and no cache defeats.
    let (outcome, _truth, _out) = cached_sweep(|config| {
        config.defeat_prefix_cache = false;
        config.cache_salt = false;
        config.cache_prompt_field = false;
    })
    .await;
    let cell = &outcome.run.cells[0];
    // The warm-up (and calibration) sent the same prompt before: every measured request hits.
    assert_eq!(cell.n_cache_hits, 2, "{cell:?}");
    assert!(cell.cached_prompt_tokens_max >= 400, "{cell:?}");
    let markdown = read_markdown(&outcome);
    assert!(
        markdown.contains("**Prefix cache hit:** 2 measured requests"),
        "{markdown}"
    );
    assert!(
        markdown.contains("nothing (testing mode: the cache may hit)"),
        "{markdown}"
    );
}

/// A one-cell code sweep, changed by `change`, on a simulator with a prefix cache; returns the
/// outcome, the simulator's own record of every request, and the output folder (kept while it
/// lives).
async fn cached_sweep(
    change: impl FnOnce(&mut SweepConfig),
) -> (
    vernier_sweep::SweepOutcome,
    Vec<vernier_sim::GroundTruth>,
    tempfile::TempDir,
) {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .prefix_cache(true)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = config(&[Workload::Code], &[500], &[8], 2);
    change(&mut config);
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("the sweep runs");
    let truth = sim.ground_truth();
    sim.shutdown().await;
    (outcome, truth, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_opening_nonce_alone_defeats_the_prefix_cache_without_cache_salt() {
    let (outcome, truth, _out) = cached_sweep(|config| config.cache_salt = false).await;
    assert!(!outcome.run.config.cache_salt);
    // No request carried a salt: the nonce is the only thing keeping prompts apart.
    assert!(!truth.is_empty());
    assert!(truth.iter().all(|t| t.cache_salt.is_none()), "{truth:?}");
    // The simulator served every prompt (warm-up, calibration, measured) without a cache hit.
    assert!(truth.iter().all(|t| t.cached_tokens == 0), "{truth:?}");
    let cell = &outcome.run.cells[0];
    assert_eq!(cell.n_ok, 2, "{cell:?}");
    assert_eq!(cell.n_cache_hits, 0, "{cell:?}");
    assert_eq!(cell.cached_prompt_tokens_max, 0, "{cell:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suffix_nonce_does_not_defeat_the_prefix_cache() {
    let (outcome, truth, _out) = cached_sweep(|config| {
        config.cache_salt = false;
        config.nonce_as_suffix = true;
    })
    .await;
    assert!(outcome.run.config.nonce_as_suffix);
    assert!(truth.iter().all(|t| t.cache_salt.is_none()), "{truth:?}");
    let cell = &outcome.run.cells[0];
    // Every prompt still carries its own nonce, at the end: the shared prefix before it hits.
    assert_eq!(cell.n_cache_hits, 2, "{cell:?}");
    assert!(cell.cached_prompt_tokens_max >= 400, "{cell:?}");
    let journal = journal_values(&outcome.journal);
    let nonces: Vec<&str> = journal
        .iter()
        .filter(|l| l["type"] == "attempt" && l["phase"] == "measured")
        .map(|l| l["nonce"].as_str().expect("a measured attempt has a nonce"))
        .collect();
    assert_eq!(nonces.len(), 2);
    assert_ne!(nonces[0], nonces[1]);
    let markdown = read_markdown(&outcome);
    assert!(
        markdown.contains("**Prefix cache hit:** 2 measured requests"),
        "{markdown}"
    );
    assert!(
        markdown.contains("a unique nonce closing every prompt"),
        "{markdown}"
    );
}
