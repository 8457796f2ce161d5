use std::time::Duration;

use serde_json::json;
use vernier_sim::{Fault, Faults, Script, ScriptReply, ScriptRule};

use crate::client::post;
use crate::{chat, fast, post_chat, start, streamed_content, token_chunks};

#[tokio::test]
async fn configured_429_keeps_status_and_body() {
    let mut faults = Faults::default();
    faults.http_status = Some((429, r#"{"error":"slow down"}"#.to_owned()));
    let sim = start(fast().faults(faults).build()).await;
    let response = post_chat(sim.addr(), "Hi", 5).await;
    assert_eq!(response.status, 429);
    assert_eq!(response.body, br#"{"error":"slow down"}"#);
    let truth = sim.ground_truth();
    assert_eq!(
        truth[0].fault,
        Some(Fault::HttpStatus {
            status: 429,
            body: Some(r#"{"error":"slow down"}"#.to_owned())
        })
    );
    assert!(truth[0].tokens_per_event.is_empty());
}

#[tokio::test]
async fn request_fault_500_overrides_nothing_else() {
    let sim = start(fast().build()).await;
    let extra = json!({"sim_fault": {"kind": "http_status", "status": 500}});
    let failed = post(sim.addr(), "/v1/chat/completions", &chat("Hi", 5, &extra)).await;
    assert_eq!(failed.status, 500);
    let body = failed.json();
    assert_eq!(body["error"]["code"], 500);
    let fine = post_chat(sim.addr(), "Hi", 5).await;
    assert_eq!(fine.status, 200);
}

#[tokio::test]
async fn fail_first_n_requests_then_succeed() {
    let mut faults = Faults::default();
    faults.fail_first_n_requests = Some((
        2,
        Fault::HttpStatus {
            status: 503,
            body: None,
        },
    ));
    let sim = start(fast().faults(faults).build()).await;
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(post_chat(sim.addr(), "Hi", 2).await.status);
    }
    assert_eq!(statuses, [503, 503, 200]);
}

#[tokio::test]
async fn drop_after_events_cuts_the_connection() {
    let sim = start(fast().build()).await;
    let extra = json!({"sim_fault": {"kind": "drop_after_events", "events": 4}});
    let response = post(sim.addr(), "/v1/chat/completions", &chat("Hi", 50, &extra)).await;
    assert_eq!(response.status, 200);
    assert!(response.truncated, "no final chunk after a drop");
    assert_eq!(
        response.data_events().len(),
        4,
        "role chunk + 3 token events"
    );
    let truth = &sim.ground_truth()[0];
    assert!(!truth.completed);
    assert_eq!(truth.tokens_per_event, vec![1, 1, 1]);
    assert_eq!(truth.fault, Some(Fault::DropAfterEvents { events: 4 }));
}

#[tokio::test]
async fn stall_after_events_pauses_the_stream() {
    let sim = start(fast().build()).await;
    let extra = json!({"sim_fault": {"kind": "stall_after_events", "events": 3, "ms": 300}});
    let response = post(sim.addr(), "/v1/chat/completions", &chat("Hi", 6, &extra)).await;
    assert!(!response.truncated);
    let data = response.data_events();
    // A lower bound only: the stall guarantees at least 300 ms between events 3 and 4.
    let gap = data[3].at.duration_since(data[2].at);
    assert!(gap >= Duration::from_millis(300), "gap {gap:?}");
    assert_eq!(
        token_chunks(&response.chunks()).len(),
        6,
        "the stream carries on after the stall"
    );
    let truth = &sim.ground_truth()[0];
    let stall_ns = truth.event_offsets_ns[2] - truth.event_offsets_ns[1];
    assert!(stall_ns >= 300_000_000, "{stall_ns}");
}

#[tokio::test]
async fn malformed_and_overlong_lines_are_injected() {
    let sim = start(fast().build()).await;
    let extra = json!({"sim_fault": {"kind": "malformed_json_after_events", "events": 2}});
    let response = post(sim.addr(), "/v1/chat/completions", &chat("Hi", 4, &extra)).await;
    let data = response.data_events();
    assert!(
        serde_json::from_str::<serde_json::Value>(&data[2].data).is_err(),
        "{}",
        data[2].data
    );
    assert_eq!(data.last().map(|e| e.data.as_str()), Some("[DONE]"));

    let extra = json!({"sim_fault": {"kind": "overlong_line_after_events", "events": 1}});
    let response = post(sim.addr(), "/v1/chat/completions", &chat("Hi", 3, &extra)).await;
    let longest = response
        .body
        .split(|b| *b == b'\n')
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    assert!(longest > 4 * 1024 * 1024, "longest line {longest}");
}

#[tokio::test]
async fn script_fault_first_attempts_lets_a_retry_succeed() {
    let script = Script::new(vec![ScriptRule::new(
        "capital of France",
        ScriptReply::text("Paris.")
            .with_finish_reason("stop")
            .with_fault_first_attempts(1, Fault::DropAfterEvents { events: 1 }),
    )])
    .expect("valid script");
    let sim = start(fast().script(Some(script)).build()).await;
    let body = chat("What is the capital of France?", 50, &json!({}));
    let first = post(sim.addr(), "/v1/chat/completions", &body).await;
    assert!(first.truncated);
    let retry = post(sim.addr(), "/v1/chat/completions", &body).await;
    assert!(!retry.truncated);
    let chunks = retry.chunks();
    let text = streamed_content(&chunks);
    assert_eq!(text, "Paris.");
    assert_eq!(
        token_chunks(&chunks)
            .last()
            .map(|c| c["choices"][0]["finish_reason"].clone()),
        Some(json!("stop"))
    );
    // An unmatched prompt falls back to generated text of max_tokens tokens.
    let other = post_chat(sim.addr(), "Something else", 4).await;
    assert_eq!(token_chunks(&other.chunks()).len(), 4);
}
