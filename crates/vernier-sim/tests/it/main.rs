//! Integration tests: real HTTP over loopback with a plain `TcpStream` client.

mod agent;
mod client;
mod crash;
mod endpoints;
mod faults;
mod hung;
mod streaming;
mod timing;
mod vllm;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use vernier_sim::{Sim, SimConfig, SimConfigBuilder, SimHandle};

/// Fast defaults for tests: 1 ms overhead, 2 ms steps.
fn fast() -> SimConfigBuilder {
    SimConfig::builder()
        .fixed_overhead(Duration::from_millis(1))
        .decode_step(Duration::from_millis(2))
}

async fn start(config: SimConfig) -> SimHandle {
    Sim::start(config).await.expect("simulator starts")
}

fn chat(prompt: &str, max_tokens: u32, extra: &Value) -> Value {
    let mut body = json!({
        "model": "vernier-sim",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        for (key, value) in extra {
            body.insert(key.clone(), value.clone());
        }
    }
    body
}

/// Polls `done` every millisecond until it holds; fails the test naming `what` if it does not
/// hold within 10 seconds, so a missed condition cannot hang the test.
async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "gave up after 10 s waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Posts a streamed chat request for `prompt` with no extra fields.
async fn post_chat(addr: SocketAddr, prompt: &str, max_tokens: u32) -> client::RawResponse {
    client::post(
        addr,
        "/v1/chat/completions",
        &chat(prompt, max_tokens, &json!({})),
    )
    .await
}

/// The content text of a chat stream's token-bearing chunks, joined.
fn streamed_content(chunks: &[Value]) -> String {
    token_chunks(chunks)
        .iter()
        .map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap_or_default()
        })
        .collect()
}

/// Content, reasoning and token counts of a chat stream's token-bearing chunks.
fn token_chunks(chunks: &[Value]) -> Vec<&Value> {
    chunks
        .iter()
        .filter(|c| {
            let Some(delta) = c["choices"].get(0).map(|choice| &choice["delta"]) else {
                return false;
            };
            delta["content"].as_str().is_some_and(|s| !s.is_empty())
                || delta["reasoning_content"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
                || delta.get("tool_calls").is_some()
        })
        .collect()
}
