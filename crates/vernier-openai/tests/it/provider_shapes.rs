//! Stream shapes of hosted providers, written from their documented formats
//! (`fixtures/provider-shapes/README.md` names each source), served over loopback and read
//! through the client and the metered stream (feature `meter`, on in a workspace build).

use std::path::PathBuf;
use std::sync::Arc;

use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder, ClientError, StreamOptions};

use crate::support::{chunked_response, serve, split_writes};

fn shape(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/provider-shapes")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

/// Serves `body` as an SSE stream written in small pieces.
async fn client_for(body: Vec<u8>) -> vernier_openai::Client {
    let handler: crate::support::Handler = Arc::new(move |_| {
        let wire = chunked_response("200 OK", "text/event-stream", &[&body], true);
        split_writes(&wire, 3, 23)
    });
    let (addr, _seen) = serve(handler).await;
    ClientBuilder::new(&format!("http://{addr}"))
        .build()
        .expect("client")
}

fn request() -> ChatRequest {
    let mut request = ChatRequest::new("m", vec![ChatMessage::user("2+2?")]);
    request.max_tokens = Some(64);
    request.stream_options = Some(StreamOptions::usage(false));
    request
}

#[tokio::test]
async fn reasoning_in_reasoning_details_lists_is_reasoning_not_content() {
    let client = client_for(shape("reasoning-details.sse")).await;
    let (metered, error) = client.measure_chat(&request()).await.expect("opens");
    assert!(error.is_none(), "{error:?}");
    assert_eq!(metered.accumulated.reasoning(), "Two plus two is four.");
    assert_eq!(metered.accumulated.content(), "ANSWER: 4");
    let m = metered.measurement;
    assert_eq!(m.completion_tokens, 9);
    assert_eq!(m.reasoning_tokens, Some(6));
    // The first token-bearing event is reasoning, so TTFT is earlier than time to content.
    assert!(m.ttft_ms.expect("ttft") <= m.time_to_first_content_ms.expect("content"));
    assert_eq!(m.n_token_events, 3);
}

#[tokio::test]
async fn usage_only_in_the_last_chunk_counts_the_tokens() {
    let client = client_for(shape("usage-last-chunk.sse")).await;
    let (metered, error) = client.measure_chat(&request()).await.expect("opens");
    assert!(error.is_none(), "{error:?}");
    assert_eq!(metered.accumulated.content(), "Hello there");
    assert_eq!(metered.measurement.completion_tokens, 2);
    assert_eq!(metered.measurement.prompt_tokens, Some(8));
    assert_eq!(metered.measurement.token_source.as_str(), "final_usage");
}

#[tokio::test]
async fn keep_alive_comments_are_not_events() {
    let client = client_for(shape("keepalive-comments.sse")).await;
    let (metered, error) = client.measure_chat(&request()).await.expect("opens");
    assert!(error.is_none(), "{error:?}");
    assert_eq!(metered.accumulated.content(), "Hi!");
    assert_eq!(metered.measurement.n_events, 2);
}

#[tokio::test]
async fn an_error_inside_a_200_stream_is_an_error_and_keeps_what_came_before() {
    let client = client_for(shape("error-mid-stream.sse")).await;
    let (metered, error) = client.measure_chat(&request()).await.expect("opens");
    match error {
        Some(ClientError::ServerErrorEvent {
            events_received, ..
        }) => {
            assert_eq!(events_received, 1);
        }
        other => panic!("not a mid-stream error: {other:?}"),
    }
    assert!(metered.broken);
    assert_eq!(metered.accumulated.content(), "Partial");
    assert!(
        metered
            .measurement
            .warnings
            .iter()
            .any(|w| w.contains("broke off"))
    );
}
