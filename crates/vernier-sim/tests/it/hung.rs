//! The runtime "hung" switch: generation stops, `/health` and `/metrics` keep answering, and
//! the engine carries on when released.

use std::time::Duration;

use serde_json::json;

use crate::client::{get, post};
use crate::{chat, fast, start, token_chunks, wait_for};

#[tokio::test]
async fn a_hung_engine_answers_health_but_generates_nothing() {
    let sim = start(fast().build()).await;
    let addr = sim.addr();
    sim.set_hung(true);
    assert!(sim.is_hung());
    let request = tokio::spawn(async move {
        post(addr, "/v1/chat/completions", &chat("Hi", 5, &json!({}))).await
    });
    // While hung, the request is taken in but no token leaves.
    wait_for("the request to run", || {
        sim.metrics().num_requests_running == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(sim.metrics().generation_tokens_total, 0);
    assert!(!request.is_finished(), "a hung engine finished a request");
    assert_eq!(get(addr, "/health").await.status, 200);
    let metrics = get(addr, "/metrics").await;
    assert_eq!(metrics.status, 200);
    let text = String::from_utf8_lossy(&metrics.body).into_owned();
    assert!(
        text.contains("vllm:generation_tokens_total{") && text.contains("} 0.0"),
        "{text}"
    );

    sim.set_hung(false);
    let response = tokio::time::timeout(Duration::from_secs(10), request)
        .await
        .expect("the request finishes once released")
        .expect("request task");
    assert_eq!(token_chunks(&response.chunks()).len(), 5);
    assert_eq!(sim.metrics().generation_tokens_total, 5);
}

#[tokio::test]
async fn hanging_mid_stream_pauses_it_and_release_resumes_it() {
    let sim = start(fast().decode_step(Duration::from_millis(20)).build()).await;
    let addr = sim.addr();
    let request = tokio::spawn(async move {
        post(addr, "/v1/chat/completions", &chat("Hi", 40, &json!({}))).await
    });
    wait_for("the first tokens", || {
        sim.metrics().generation_tokens_total >= 2
    })
    .await;
    sim.set_hung(true);
    // One step may already be on its way; after that the counter must stand still.
    tokio::time::sleep(Duration::from_millis(60)).await;
    let frozen = sim.metrics().generation_tokens_total;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sim.metrics().generation_tokens_total, frozen);
    assert!(frozen < 40, "the stream ran to its end while hung");
    sim.set_hung(false);
    let response = tokio::time::timeout(Duration::from_secs(10), request)
        .await
        .expect("finishes")
        .expect("request task");
    assert_eq!(token_chunks(&response.chunks()).len(), 40);
    let truth = &sim.ground_truth()[0];
    let largest_gap = truth
        .event_offsets_ns
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .max()
        .expect("events");
    assert!(
        largest_gap >= 200_000_000,
        "the pause shows in the stream: {largest_gap}"
    );
}

#[tokio::test]
async fn a_hung_engine_holds_non_streamed_requests_too() {
    let sim = start(fast().build()).await;
    let addr = sim.addr();
    sim.set_hung(true);
    let mut body = chat("Hi", 3, &json!({}));
    body["stream"] = json!(false);
    let request = tokio::spawn(async move { post(addr, "/v1/chat/completions", &body).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!request.is_finished());
    sim.set_hung(false);
    let response = tokio::time::timeout(Duration::from_secs(10), request)
        .await
        .expect("finishes")
        .expect("request task");
    assert_eq!(response.status, 200);
    assert_eq!(sim.metrics().generation_tokens_total, 3);
}
