//! Real HTTP over loopback against `vernier-sim`, whose wire types are its own.

use std::time::Duration;

use serde_json::{Value, json};
use vernier_openai::{
    ChatMessage, ChatRequest, ChatStream, Client, ClientBuilder, ClientError, StreamOptions,
    TimeoutKind, Timeouts,
};
use vernier_sim::{Sim, SimConfig, SimHandle, TokensPerEvent, sim_tokenize};

async fn start(config: SimConfig) -> (SimHandle, Client) {
    let sim = Sim::start(config).await.expect("simulator starts");
    let client = ClientBuilder::new(&format!("{}/v1", sim.base_url()))
        .timeouts(Timeouts::default().idle(Some(Duration::from_millis(400))))
        .build()
        .expect("client");
    (sim, client)
}

fn request(max_tokens: u64) -> ChatRequest {
    let mut request = ChatRequest::new(
        "vernier-sim",
        vec![ChatMessage::user("Write about rivers and the sea.")],
    );
    request.max_tokens = Some(max_tokens);
    request.stream_options = Some(StreamOptions::usage(true));
    request
        .with_extra("return_token_ids", true)
        .with_extra("ignore_eos", true)
}

async fn drain(stream: &mut ChatStream) -> (Vec<usize>, Option<ClientError>) {
    let mut tokens_per_event = Vec::new();
    while let Some(event) = stream.next_event().await {
        match event {
            Ok(event) if event.chunk.is_token_bearing() => {
                tokens_per_event.push(event.chunk.token_id_count().unwrap_or(0));
            }
            Ok(_) => {}
            Err(error) => return (tokens_per_event, Some(error)),
        }
    }
    (tokens_per_event, None)
}

/// Streams 16 tokens under the simulator `fault`; returns the stream and the error that ended it.
async fn drain_with_fault(client: &Client, fault: Value) -> (ChatStream, Option<ClientError>) {
    let mut stream = client
        .chat_stream(&request(16).with_extra("sim_fault", fault))
        .await
        .expect("opens");
    let (_, error) = drain(&mut stream).await;
    (stream, error)
}

#[tokio::test]
async fn token_counts_per_event_match_the_ground_truth() {
    for k in 1..=4_u32 {
        let config = SimConfig::builder()
            .decode_step(Duration::from_millis(2))
            .tokens_per_event(TokensPerEvent::Fixed(k))
            .build();
        let (sim, client) = start(config).await;
        let mut stream = client
            .chat_stream(&request(24))
            .await
            .expect("stream opens");
        let (tokens_per_event, error) = drain(&mut stream).await;
        assert!(error.is_none(), "k={k}: {error:?}");
        let truth = sim.ground_truth().pop().expect("one request recorded");
        assert_eq!(
            truth.completion_tokens, 24,
            "k={k}: ignore_eos forces the length"
        );
        let expected: Vec<usize> = truth.tokens_per_event.iter().map(|&n| n as usize).collect();
        assert_eq!(
            expected,
            vec![k as usize; 24 / k as usize],
            "k={k}: the simulator's own plan"
        );
        assert_eq!(tokens_per_event, expected, "k={k}");
        let accumulated = stream.accumulated();
        let usage = accumulated.usage().expect("usage");
        assert_eq!(
            usage.completion_tokens,
            u64::from(truth.completion_tokens),
            "k={k}"
        );
        assert_eq!(
            accumulated.n_token_ids(),
            Some(truth.completion_tokens as usize),
            "k={k}"
        );
        assert_eq!(accumulated.n_token_events(), expected.len(), "k={k}");
        assert!(!accumulated.content().is_empty());
        assert!(stream.request_sent_at() <= stream.headers_at());
    }
}

#[tokio::test]
async fn split_writes_do_not_change_what_is_received() {
    let mut contents = Vec::new();
    for split in [false, true] {
        let config = SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .split_writes(split)
            .seed(9)
            .build();
        let (_sim, client) = start(config).await;
        let accumulated = client
            .chat_stream(&request(20))
            .await
            .expect("opens")
            .collect()
            .await
            .expect("whole");
        contents.push((accumulated.content().to_owned(), accumulated.n_events()));
    }
    assert_eq!(contents[0], contents[1]);
}

#[tokio::test]
async fn keepalive_comments_do_not_hold_off_the_idle_timeout() {
    // Comments every 50 ms through a 3 s stall: before the fix each one restarted the 400 ms
    // idle deadline and the stream finished after the stall.
    let config = SimConfig::builder()
        .decode_step(Duration::from_millis(1))
        .keepalive_comment_every(Some(Duration::from_millis(50)))
        .build();
    let (_sim, client) = start(config).await;
    let fault = json!({"kind": "stall_after_events", "events": 3, "ms": 3000});
    let (stream, error) = drain_with_fault(&client, fault).await;
    assert!(
        matches!(
            error,
            Some(ClientError::Timeout {
                which: TimeoutKind::Idle,
                events_received: 3
            })
        ),
        "{error:?}"
    );
    assert_eq!(stream.accumulated().n_events(), 3);
}

#[tokio::test]
async fn keepalive_comments_between_close_events_let_the_stream_finish() {
    // Events 150 ms apart with comments every 40 ms between them: every gap between events is
    // under the 400 ms idle bound, the whole stream (about 1.2 s) is not.
    let config = SimConfig::builder()
        .decode_step(Duration::from_millis(150))
        .keepalive_comment_every(Some(Duration::from_millis(40)))
        .build();
    let (sim, client) = start(config).await;
    let mut stream = client.chat_stream(&request(8)).await.expect("opens");
    let (tokens_per_event, error) = drain(&mut stream).await;
    assert!(error.is_none(), "{error:?}");
    let truth = sim.ground_truth().pop().expect("one request recorded");
    assert_eq!(truth.completion_tokens, 8);
    assert_eq!(tokens_per_event.iter().sum::<usize>(), 8);
    assert_eq!(
        stream
            .accumulated()
            .usage()
            .expect("usage")
            .completion_tokens,
        8
    );
}

#[tokio::test]
async fn http_faults_keep_status_and_body() {
    let (_sim, client) = start(SimConfig::builder().build()).await;
    let fault =
        json!({"kind": "http_status", "status": 429, "body": "{\"error\":\"rate limited\"}"});
    match client
        .chat_stream(&request(8).with_extra("sim_fault", fault))
        .await
    {
        Err(ClientError::Http { status, body, .. }) => assert_eq!(
            (status, body.as_str()),
            (429, "{\"error\":\"rate limited\"}")
        ),
        other => panic!("expected 429, got {other:?}"),
    }
    let fault = json!({"kind": "http_status", "status": 500});
    match client
        .chat(&request(8).with_extra("sim_fault", fault))
        .await
    {
        Err(ClientError::Http { status, body, .. }) => {
            assert_eq!(status, 500);
            assert!(body.contains("error"), "{body}");
        }
        other => panic!("expected 500, got {other:?}"),
    }
}

#[tokio::test]
async fn stream_faults_keep_what_arrived() {
    let config = SimConfig::builder()
        .decode_step(Duration::from_millis(1))
        .build();
    let (_sim, client) = start(config).await;

    let fault = json!({"kind": "drop_after_events", "events": 3});
    let (stream, error) = drain_with_fault(&client, fault).await;
    assert!(
        matches!(
            error,
            Some(ClientError::StreamDropped {
                events_received: 3,
                ..
            })
        ),
        "{error:?}"
    );
    assert_eq!(stream.accumulated().n_events(), 3);

    let fault = json!({"kind": "stall_after_events", "events": 2, "ms": 3000});
    let (_, error) = drain_with_fault(&client, fault).await;
    assert!(
        matches!(
            error,
            Some(ClientError::Timeout {
                which: TimeoutKind::Idle,
                events_received: 2
            })
        ),
        "{error:?}"
    );

    let fault = json!({"kind": "malformed_json_after_events", "events": 2});
    let (_, error) = drain_with_fault(&client, fault).await;
    let Some(ClientError::Json {
        events_received,
        snippet,
        offset,
        ..
    }) = error
    else {
        panic!("{error:?}")
    };
    assert_eq!(events_received, 2);
    assert!(!snippet.is_empty() && offset > 0, "{snippet:?} at {offset}");

    let fault = json!({"kind": "overlong_line_after_events", "events": 2});
    let (_, error) = drain_with_fault(&client, fault).await;
    assert!(
        matches!(
            error,
            Some(ClientError::LineTooLong {
                limit: vernier_openai::DEFAULT_MAX_LINE_BYTES,
                events_received: 2
            })
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn models_tokenize_and_metrics() {
    let (_sim, client) = start(SimConfig::builder().max_model_len(4096).build()).await;
    let models = client.models().await.expect("models");
    assert_eq!(models[0].id, "vernier-sim");
    assert_eq!(models[0].max_model_len, Some(4096));
    let text = "The quick brown fox jumps over the lazy dog.";
    let tokenized = client
        .tokenize("vernier-sim", text)
        .await
        .expect("tokenize");
    assert_eq!(tokenized.tokens, sim_tokenize(text));
    assert_eq!(tokenized.count, tokenized.tokens.len());
    assert_eq!(tokenized.max_model_len, Some(4096));
    client
        .chat_stream(&request(4))
        .await
        .expect("opens")
        .collect()
        .await
        .expect("whole");
    let metrics = client.metrics().await.expect("metrics");
    assert_eq!(metrics.sum("vllm:num_requests_running"), Some(0.0));
    assert!(
        metrics
            .sum("vllm:generation_tokens_total")
            .is_some_and(|n| n >= 4.0),
        "{:?}",
        metrics.samples()
    );
}

/// A client that reads late: the socket is read when the stream is polled, so the events that
/// arrived while the task stalled come in one socket read. With the kernel's receive stamps
/// (Linux) they are timed by the arrival of that read's last segment, before our read and no
/// earlier than the events themselves (an upper bound, said so), the read is counted, and the
/// events after the stall are timed by their own arrival.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_client_that_reads_late_gets_upper_bounds_said_so_and_exact_times_after() {
    // One decode step, the stall, and how late an arrival may be stamped after the simulator's
    // send (a quarter step: still far from the neighbouring token).
    const STEP_MS: u64 = 120;
    const STALL_MS: u64 = 210;
    const SLACK_MS: f64 = 30.0;
    let config = SimConfig::builder()
        .fixed_overhead(Duration::from_millis(30))
        .decode_step(Duration::from_millis(STEP_MS))
        .tokens_per_event(TokensPerEvent::Fixed(1))
        .build();
    let (sim, client) = start(config).await;
    // A first request, so that the machine's receive stamping is already on.
    let warm = client.measure_chat(&request(2)).await.expect("warm-up");
    assert!(warm.1.is_none());
    let mut stream = client
        .metered_chat_stream(&request(5))
        .await
        .expect("opens");
    let sent = stream.stream().request_sent_at();
    // The role chunk leaves at once; then the task stalls 210 ms while the first token (after
    // 30 ms of prefill) and the second (120 ms later) arrive; the rest follow every 120 ms. The
    // steps are long so that a loaded machine's delays (tens of milliseconds) cannot move the
    // second token past our read or the third before it.
    let first = stream
        .next_event()
        .await
        .expect("an event")
        .expect("role chunk");
    assert!(!first.chunk.is_token_bearing());
    tokio::time::sleep(Duration::from_millis(STALL_MS)).await;
    let resumed_ms = sent.elapsed().as_secs_f64() * 1e3;
    let mut token_events = Vec::new();
    while let Some(event) = stream.next_event().await {
        let event = event.expect("a clean stream");
        if event.chunk.is_token_bearing() {
            token_events.push(event.arrived_at.duration_since(sent).as_secs_f64() * 1e3);
        }
    }
    let metered = stream.finish();
    let measurement = &metered.measurement;
    let truth = sim.ground_truth().pop().expect("recorded");
    let sent_ms: Vec<f64> = truth
        .event_offsets_ns
        .iter()
        .map(|&ns| ns as f64 / 1e6)
        .collect();
    assert_eq!(measurement.clock.as_str(), "kernel_rx", "{measurement:?}");
    assert_eq!(token_events.len(), 5, "{token_events:?}");
    // The first two came in one read, stamped with the second's arrival: an upper bound for
    // the first, said so, and earlier than our read by the kernel's clock.
    let ttft = measurement.ttft_ms.expect("a TTFT");
    assert!(
        ttft >= sent_ms[1] && ttft < sent_ms[1] + SLACK_MS && ttft < resumed_ms - 10.0,
        "TTFT {ttft} ms: the simulator sent the first two tokens at {:?} ms, we read at \
         {resumed_ms} ms",
        &sent_ms[..2]
    );
    assert_eq!(measurement.first_token_read_shared, Some(true));
    assert!(measurement.n_coalesced_reads.is_some_and(|n| n >= 1));
    let lag = measurement.client_lag_ms.expect("the client's lag");
    assert!(lag.max_ms >= 10.0, "{lag:?}");
    // After the stall every event is timed by its own arrival.
    for (ours, theirs) in token_events.iter().zip(&sent_ms).skip(2) {
        assert!(
            ours >= theirs && *ours < theirs + SLACK_MS,
            "{token_events:?} against {sent_ms:?}"
        );
    }
}
