//! Faults from a loopback server: HTTP errors, drops, stalls, malformed JSON, long lines, and
//! what the request looks like on the wire.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use vernier_openai::{
    ChatAccumulator, ChatMessage, ChatRequest, ChatStream, ClientBuilder, ClientError,
    StreamOptions, TimeoutKind, Timeouts,
};

use crate::support::{Step, chunked_response, serve};

const EVENT: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"},\"finish_reason\":null}]}\n\n";

fn request() -> ChatRequest {
    ChatRequest::new("m", vec![ChatMessage::user("hello")])
}

/// Opens a chat stream for [`request`] and reads it to the end.
async fn collect_chat(client: &vernier_openai::Client) -> Result<ChatAccumulator, ClientError> {
    client
        .chat_stream(&request())
        .await
        .expect("opens")
        .collect()
        .await
}

/// The next event of `stream`, which must be an error.
async fn next_error(stream: &mut ChatStream, why: &str) -> ClientError {
    stream.next_event().await.expect("an error").expect_err(why)
}

async fn client_for(steps: Vec<Step>, timeouts: Timeouts) -> vernier_openai::Client {
    let (addr, _) = serve(Arc::new(move |_| steps.clone())).await;
    ClientBuilder::new(&format!("http://{addr}"))
        .timeouts(timeouts)
        .build()
        .expect("client")
}

#[tokio::test]
async fn http_429_and_500_keep_status_and_body() {
    for (status, body) in [
        ("429 Too Many Requests", "{\"error\":\"slow down\"}"),
        ("500 Internal Server ClientError", "boom"),
    ] {
        let wire = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let client = client_for(vec![Step::Write(wire.into_bytes())], Timeouts::default()).await;
        let code: u16 = status[..3].parse().expect("code");
        match client.chat_stream(&request()).await {
            Err(ClientError::Http {
                status, body: got, ..
            }) => {
                assert_eq!((status, got.as_str()), (code, body));
            }
            other => panic!("expected HTTP {code}, got {other:?}"),
        }
        match client.chat(&request()).await {
            Err(ClientError::Http { status, .. }) => assert_eq!(status, code),
            other => panic!("expected HTTP {code}, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn dropped_connection_keeps_the_partial_stream() {
    // Three events, then the connection closes inside the chunked body.
    let mut wire = chunked_response("200 OK", "text/event-stream", &[EVENT, EVENT, EVENT], false);
    wire.extend_from_slice(b"40\r\ndata: {\"choi");
    let client = client_for(vec![Step::Write(wire)], Timeouts::default()).await;
    let mut stream = client.chat_stream(&request()).await.expect("opens");
    let mut n_ok = 0;
    let error = loop {
        match stream.next_event().await {
            Some(Ok(_)) => n_ok += 1,
            Some(Err(error)) => break error,
            None => panic!("a dropped stream must be an error"),
        }
    };
    assert_eq!(n_ok, 3);
    assert!(
        matches!(
            error,
            ClientError::StreamDropped {
                events_received: 3,
                source: Some(_)
            }
        ),
        "{error:?}"
    );
    assert_eq!(stream.accumulated().content(), "ababab");
    assert!(stream.finished_at().is_some());
    // The transport error is the cause, printed by the chain, not repeated in the message.
    let cause = std::error::Error::source(&error)
        .expect("a cause")
        .to_string();
    let message = error.to_string();
    assert!(!message.contains(&cause), "{message} repeats {cause}");
    assert!(message.ends_with("after 3 events"), "{message}");
}

#[tokio::test]
async fn clean_close_before_done_is_a_drop_without_cause() {
    let wire = chunked_response("200 OK", "text/event-stream", &[EVENT, EVENT], true);
    let client = client_for(vec![Step::Write(wire)], Timeouts::default()).await;
    let result = collect_chat(&client).await;
    assert!(
        matches!(
            result,
            Err(ClientError::StreamDropped {
                events_received: 2,
                source: None
            })
        ),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_stall_hits_the_idle_timeout() {
    let head = chunked_response("200 OK", "text/event-stream", &[EVENT, EVENT], false);
    let steps = vec![Step::Write(head), Step::Sleep(Duration::from_secs(5))];
    let timeouts = Timeouts::default().idle(Some(Duration::from_millis(200)));
    let client = client_for(steps, timeouts).await;
    let mut stream = client.chat_stream(&request()).await.expect("opens");
    assert!(stream.next_event().await.expect("first").is_ok());
    assert!(stream.next_event().await.expect("second").is_ok());
    let error = next_error(&mut stream, "stalled").await;
    assert!(
        matches!(
            error,
            ClientError::Timeout {
                which: TimeoutKind::Idle,
                events_received: 2
            }
        ),
        "{error:?}"
    );
    assert_eq!(stream.accumulated().n_events(), 2);
}

#[tokio::test]
async fn keepalives_before_the_first_event_do_not_end_the_first_byte_phase() {
    // Headers at once, then only `: ping` comments every 50 ms for 2 s: the first-byte deadline
    // (300 ms) still runs, as no event has come.
    let mut steps = vec![Step::Write(chunked_response(
        "200 OK",
        "text/event-stream",
        &[b": ping\n\n"],
        false,
    ))];
    for _ in 0..40 {
        steps.push(Step::Sleep(Duration::from_millis(50)));
        steps.push(Step::Write(b"8\r\n: ping\n\n\r\n".to_vec()));
    }
    let timeouts = Timeouts::default()
        .first_byte(Some(Duration::from_millis(300)))
        .idle(Some(Duration::from_secs(30)));
    let client = client_for(steps, timeouts).await;
    let result = collect_chat(&client).await;
    assert!(
        matches!(
            result,
            Err(ClientError::Timeout {
                which: TimeoutKind::FirstByte,
                events_received: 0
            })
        ),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_silent_server_hits_the_first_byte_timeout() {
    let steps = vec![Step::Sleep(Duration::from_secs(5))];
    let client = client_for(
        steps,
        Timeouts::default().first_byte(Some(Duration::from_millis(150))),
    )
    .await;
    let result = client.chat_stream(&request()).await;
    assert!(
        matches!(
            result,
            Err(ClientError::Timeout {
                which: TimeoutKind::FirstByte,
                events_received: 0
            })
        ),
        "{result:?}"
    );
    let client = client_for(
        vec![Step::Sleep(Duration::from_secs(5))],
        Timeouts::none().total(Some(Duration::from_millis(150))),
    )
    .await;
    let result = client.chat(&request()).await;
    assert!(
        matches!(
            result,
            Err(ClientError::Timeout {
                which: TimeoutKind::Total,
                ..
            })
        ),
        "{result:?}"
    );
}

#[tokio::test]
async fn malformed_json_names_the_offset_and_shows_a_snippet() {
    let bad: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}},]}\n\n";
    let wire = chunked_response("200 OK", "text/event-stream", &[EVENT, bad], true);
    let client = client_for(vec![Step::Write(wire)], Timeouts::default()).await;
    let mut stream = client.chat_stream(&request()).await.expect("opens");
    assert!(stream.next_event().await.expect("first").is_ok());
    let error = next_error(&mut stream, "malformed").await;
    let ClientError::Json {
        offset,
        snippet,
        events_received,
        ..
    } = &error
    else {
        panic!("{error:?}")
    };
    let payload = &bad[6..bad.len() - 2];
    assert_eq!(
        payload[*offset], b']',
        "offset {offset} should point at the stray ']'"
    );
    assert!(snippet.contains("}},]}"), "{snippet}");
    assert_eq!(*events_received, 1);
    let message = error.to_string();
    assert!(message.contains(&format!("byte {offset}")), "{message}");
}

#[tokio::test]
async fn an_over_long_line_is_refused() {
    let long = format!("data: {}\n\n", "x".repeat(4096));
    let wire = chunked_response(
        "200 OK",
        "text/event-stream",
        &[EVENT, long.as_bytes()],
        true,
    );
    let (addr, _) = serve(Arc::new(move |_| vec![Step::Write(wire.clone())])).await;
    let client = ClientBuilder::new(&format!("http://{addr}"))
        .max_line_bytes(1024)
        .build()
        .expect("client");
    let mut stream = client.chat_stream(&request()).await.expect("opens");
    assert!(stream.next_event().await.expect("first").is_ok());
    let error = next_error(&mut stream, "too long").await;
    assert!(
        matches!(
            error,
            ClientError::LineTooLong {
                limit: 1024,
                events_received: 1
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_request_on_the_wire() {
    let wire = chunked_response(
        "200 OK",
        "text/event-stream",
        &[EVENT, b"data: [DONE]\n\n"],
        true,
    );
    let (addr, mut seen) = serve(Arc::new(move |_| vec![Step::Write(wire.clone())])).await;
    let client = ClientBuilder::new(&format!("http://{addr}/v1/"))
        .api_key("sk-test-123".to_owned())
        .user_agent("vernier-test")
        .build()
        .expect("client");
    assert!(
        !format!("{client:?}").contains("sk-test-123"),
        "Debug must not print the key"
    );
    let mut request = request().with_extra("cache_salt", "nonce-1").with_extra(
        "chat_template_kwargs",
        serde_json::json!({"enable_thinking": false}),
    );
    request.stream_options = Some(StreamOptions::usage(true));
    request.max_tokens = Some(8);
    let stream = client.chat_stream(&request).await.expect("opens");
    let sent_at = stream.request_sent_at();
    assert!(stream.headers_at() >= sent_at);
    // The stream is Send: it can be driven from a spawned task (concurrent sweeps do).
    let accumulated = tokio::spawn(stream.collect())
        .await
        .expect("joins")
        .expect("whole");
    assert_eq!(accumulated.content(), "ab");

    let seen = seen.recv().await.expect("the server saw the request");
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    let head = seen.head.to_ascii_lowercase();
    assert!(
        head.contains("authorization: bearer sk-test-123\r\n"),
        "{head}"
    );
    assert!(head.contains(&format!("host: {addr}\r\n")), "{head}");
    assert!(head.contains("user-agent: vernier-test\r\n"), "{head}");
    assert!(
        head.contains(&format!("content-length: {}\r\n", seen.body.len())),
        "{head}"
    );
    let body: Value = serde_json::from_slice(&seen.body).expect("json body");
    assert_eq!(body["stream"], true);
    assert_eq!(body["cache_salt"], "nonce-1");
    assert_eq!(body["chat_template_kwargs"]["enable_thinking"], false);
    assert_eq!(
        body["stream_options"],
        serde_json::json!({"include_usage": true, "continuous_usage_stats": true})
    );
    assert_eq!(body["max_tokens"], 8);
    assert!(
        body.get("temperature").is_none(),
        "unset options are not sent"
    );
}

#[tokio::test]
async fn a_plain_http_server_is_reached_through_a_proxy_in_absolute_form() {
    let wire = chunked_response(
        "200 OK",
        "text/event-stream",
        &[EVENT, b"data: [DONE]\n\n"],
        true,
    );
    // The "proxy" answers itself: what is checked is what the client sends it.
    let (proxy, mut seen) = serve(Arc::new(move |_| vec![Step::Write(wire.clone())])).await;
    // A name that resolves nowhere: only the proxy is ever connected to.
    let client = ClientBuilder::new("http://inference.invalid:8000/v1")
        .proxy(&format!("http://{proxy}"))
        .build()
        .expect("client");
    assert_eq!(client.proxy(), Some(proxy.to_string()));
    let accumulated = collect_chat(&client).await.expect("through the proxy");
    assert_eq!(accumulated.content(), "ab");
    let seen = seen.recv().await.expect("the proxy saw the request");
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("POST", "http://inference.invalid:8000/v1/chat/completions")
    );
    let head = seen.head.to_ascii_lowercase();
    assert!(head.contains("host: inference.invalid:8000\r\n"), "{head}");
    // Without one, the same client connects to the server itself (and finds no such host).
    let direct = ClientBuilder::new("http://inference.invalid:8000/v1")
        .no_proxy()
        .build()
        .expect("client");
    assert_eq!(direct.proxy(), None);
    assert!(matches!(
        direct.models().await,
        Err(ClientError::Connect { .. })
    ));
}

#[tokio::test]
async fn tokenize_falls_back_to_the_llama_cpp_shape() {
    let (addr, _) = serve(Arc::new(|request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        // llama.cpp ignores `prompt` and answers an empty token list without `count`.
        let answer = if body.get("content").is_some() { "{\"tokens\":[10,20,30]}" } else { "{\"tokens\":[]}" };
        let wire = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}", answer.len());
        vec![Step::Write(wire.into_bytes())]
    }))
    .await;
    let client = ClientBuilder::new(&format!("http://{addr}"))
        .build()
        .expect("client");
    let tokenized = client.tokenize("m", "a b c").await.expect("tokenizes");
    assert_eq!((tokenized.count, tokenized.tokens), (3, vec![10, 20, 30]));
}

#[tokio::test]
async fn missing_key_variable_and_bad_url_are_named() {
    let error = ClientBuilder::new("http://127.0.0.1:1")
        .api_key_from_env("VERNIER_TEST_SURELY_UNSET_KEY")
        .build()
        .expect_err("unset");
    assert!(
        matches!(&error, ClientError::MissingApiKey { var } if var == "VERNIER_TEST_SURELY_UNSET_KEY")
    );
    assert!(error.to_string().contains("VERNIER_TEST_SURELY_UNSET_KEY"));
    assert!(matches!(
        ClientBuilder::new("localhost:8000").build(),
        Err(ClientError::InvalidUrl { .. })
    ));
}

#[tokio::test]
async fn header_values_that_cannot_be_sent_are_named_without_the_key() {
    let error = ClientBuilder::new("http://127.0.0.1:1")
        .api_key("sk-secret\nvalue".to_owned())
        .build()
        .expect_err("a line break cannot be sent");
    assert!(
        matches!(
            error,
            ClientError::InvalidHeader {
                what: "the API key"
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("the API key"), "{message}");
    assert!(
        !message.contains("sk-secret"),
        "the key must not be printed"
    );
    assert!(!message.contains("base url"), "{message}");

    let error = ClientBuilder::new("http://127.0.0.1:1")
        .user_agent("agent\r\nX-Injected: 1")
        .build()
        .expect_err("a line break cannot be sent");
    assert!(
        matches!(
            error,
            ClientError::InvalidHeader {
                what: "the user agent"
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("the user agent"), "{error}");
}

#[tokio::test]
async fn huge_timeouts_mean_no_deadline() {
    let wire = chunked_response(
        "200 OK",
        "text/event-stream",
        &[EVENT, EVENT, b"data: [DONE]\n\n"],
        true,
    );
    let huge = Some(Duration::MAX);
    let timeouts = Timeouts::none()
        .connect(huge)
        .first_byte(huge)
        .idle(huge)
        .total(huge);
    let client = client_for(vec![Step::Write(wire)], timeouts).await;
    let accumulated = collect_chat(&client)
        .await
        .expect("no deadline can overflow");
    assert_eq!(accumulated.content(), "abab");
}

#[tokio::test]
async fn refused_connection_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let client = ClientBuilder::new(&format!("http://{addr}"))
        .build()
        .expect("client");
    let result = client.models().await;
    assert!(
        matches!(result, Err(ClientError::Connect { .. })),
        "{result:?}"
    );
}
