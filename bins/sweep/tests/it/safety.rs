//! Refusing a busy server, and flagging prefix-cache hits.

use std::time::Duration;

use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder};
use vernier_sim::{Sim, SimConfig};

use crate::args;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_server_is_refused_unless_allowed() {
    let sim = Sim::start(
        SimConfig::builder()
            .decode_step(Duration::from_millis(5))
            .build(),
    )
    .await
    .expect("start the simulator");
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
    let small = [
        "--workload",
        "prose",
        "--prompt-tokens",
        "64",
        "--output-tokens",
        "8",
        "--reps",
        "1",
        "--warmup",
        "0",
    ];
    let error = sweep::run(
        args(&sim.base_url(), &out.path().join("refused"), &small),
        vec!["sweep".to_owned()],
    )
    .await
    .expect_err("a busy server is refused");
    let message = error.to_string();
    assert!(
        matches!(error, sweep::SweepError::ServerBusy { running, .. } if running >= 1.0),
        "{message}"
    );
    assert!(message.contains("--allow-busy"), "{message}");
    assert!(
        !out.path().join("refused").join("journal.jsonl").exists(),
        "nothing is measured on refusal"
    );

    let mut allowed: Vec<&str> = small.to_vec();
    allowed.push("--allow-busy");
    let outcome = sweep::run(
        args(&sim.base_url(), &out.path().join("allowed"), &allowed),
        vec!["sweep".to_owned()],
    )
    .await
    .expect("--allow-busy proceeds");
    assert_eq!(outcome.run.cells[0].n_ok, 1);
    assert!(outcome.run.environment.metrics_at_start["vllm:num_requests_running"] >= 1.0);
    drop(other);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_cache_hits_are_flagged_when_not_defeated() {
    let sim = Sim::start(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .prefix_cache(true)
            .build(),
    )
    .await
    .expect("start the simulator");
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = sweep::run(
        args(
            &sim.base_url(),
            out.path(),
            &[
                "--workload",
                "code",
                "--prompt-tokens",
                "500",
                "--output-tokens",
                "8",
                "--reps",
                "2",
                "--unsafe-allow-prefix-cache",
            ],
        ),
        vec!["sweep".to_owned()],
    )
    .await
    .expect("the sweep runs");
    let cell = &outcome.run.cells[0];
    // The warm-up (and calibration) sent the same prompt before: every measured request hits.
    assert_eq!(cell.n_cache_hits, 2, "{cell:?}");
    assert!(cell.cached_prompt_tokens_max >= 400, "{cell:?}");
    let markdown = std::fs::read_to_string(&outcome.files.markdown).expect("report.md");
    assert!(
        markdown.contains("**Prefix cache hit:** 2 measured requests"),
        "{markdown}"
    );
    assert!(
        markdown.contains("nothing (testing mode: the cache may hit)"),
        "{markdown}"
    );
    sim.shutdown().await;
}
