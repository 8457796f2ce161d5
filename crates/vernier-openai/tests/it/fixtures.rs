//! Recorded transcripts of real servers (llama-server b11434, llama-cpp-python 0.3.36):
//! decoded byte for byte, and replayed over loopback TCP through the client.

use std::sync::Arc;

use serde_json::Value;
use vernier_openai::{
    ChatMessage, ChatRequest, Client, ClientBuilder, ClientError, CompletionRequest, ServerKind,
    SseDecoder, SseEvent,
};

use crate::support::{SERVERS, Step, chunked_response, read_fixture, serve, split_writes, stems};

fn decode(bytes: &[u8], piece: usize) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::default();
    let mut events = Vec::new();
    for chunk in bytes.chunks(piece.max(1)) {
        decoder.decode(chunk, &mut events).expect("fixture decodes");
    }
    decoder.finish(&mut events).expect("fixture finishes");
    events
}

#[test]
fn every_sse_fixture_reencodes_byte_for_byte() {
    let mut n_files = 0;
    for server in SERVERS {
        for stem in stems(server, "sse") {
            let bytes = read_fixture(server, &format!("{stem}.sse"));
            for piece in [bytes.len(), 1, 7, 4096] {
                let events = decode(&bytes, piece);
                let reencoded = events.iter().fold(String::new(), |mut out, event| {
                    out.push_str("data: ");
                    out.push_str(&event.data);
                    out.push_str(
                        "

",
                    );
                    out
                });
                assert_eq!(
                    reencoded.as_bytes(),
                    &bytes[..],
                    "{server}/{stem}.sse in pieces of {piece}"
                );
                assert!(
                    events
                        .iter()
                        .all(|event| event.event.is_none() && event.id.is_none())
                );
            }
            n_files += 1;
        }
    }
    assert!(n_files >= 20, "only {n_files} .sse fixtures found");
}

/// What an independent reading of the `.sse` file (plain `serde_json::Value`) says.
struct Expected {
    n_events: usize,
    content: String,
    finish_reason: Option<String>,
    usage: Option<Value>,
}

impl Expected {
    /// Asserts that `accumulated` sums to this reading: events, content, finish reason, and
    /// the last usage surviving a round trip.
    fn check(&self, accumulated: &vernier_openai::ChatAccumulator, what: &str) {
        assert_eq!(accumulated.n_events(), self.n_events, "{what} events");
        assert_eq!(accumulated.content(), self.content, "{what} content");
        assert_eq!(
            accumulated.finish_reason(),
            self.finish_reason.as_deref(),
            "{what} finish reason"
        );
        let usage = accumulated
            .usage()
            .map(|usage| serde_json::to_value(usage).expect("serialises"));
        assert_eq!(usage, self.usage, "{what} usage survives a round trip");
    }
}

fn expected_from_sse(bytes: &[u8], completions: bool) -> Expected {
    let text = std::str::from_utf8(bytes).expect("utf-8 fixture");
    let mut expected = Expected {
        n_events: 0,
        content: String::new(),
        finish_reason: None,
        usage: None,
    };
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        if data == "[DONE]" {
            continue;
        }
        expected.n_events += 1;
        let value: Value = serde_json::from_str(data).expect("fixture json");
        for choice in value["choices"].as_array().into_iter().flatten() {
            let piece = if completions {
                &choice["text"]
            } else {
                &choice["delta"]["content"]
            };
            if let Some(piece) = piece.as_str() {
                expected.content.push_str(piece);
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                expected.finish_reason = Some(reason.to_owned());
            }
        }
        if value.get("usage").is_some_and(|usage| !usage.is_null()) {
            expected.usage = Some(value["usage"].clone());
        }
    }
    expected
}

fn wire_handler(wire: Vec<u8>, seed: u64) -> crate::support::Handler {
    Arc::new(move |_| split_writes(&wire, seed, 300))
}

/// A client for a server that answers every request with `wire` (written with `seed`'s splits).
async fn client_for_wire(wire: Vec<u8>, seed: u64) -> Client {
    let (addr, _) = serve(wire_handler(wire, seed)).await;
    ClientBuilder::new(&format!("http://{addr}"))
        .build()
        .expect("client")
}

/// Reads a chat or completions `$stream` to its end, pushing each event's arrival into `$stamps`;
/// gives the outcome, the sum of the events, and when the request was sent and the headers came.
/// A macro because the two stream types share no trait.
macro_rules! read_stamped {
    ($stream:expr, $stamps:expr) => {{
        let mut stream = $stream;
        let outcome = loop {
            match stream.next_event().await {
                Some(Ok(event)) => $stamps.push(event.arrived_at),
                Some(Err(error)) => break Err(error),
                None => break Ok(()),
            }
        };
        (
            outcome,
            stream.accumulated().clone(),
            stream.request_sent_at(),
            stream.headers_at(),
        )
    }};
}

#[tokio::test]
async fn replayed_streams_match_an_independent_reading() {
    let mut n_streams = 0;
    for server in SERVERS {
        for (seed, stem) in (1_u64..).zip(stems(server, "sse")) {
            let wire = read_fixture(server, &format!("{stem}.wire"));
            let sse = read_fixture(server, &format!("{stem}.sse"));
            let completions = stem.starts_with("completions");
            let expected = expected_from_sse(&sse, completions);
            let (addr, _) = serve(wire_handler(wire, seed)).await;
            let client = ClientBuilder::new(&format!("http://{addr}/v1"))
                .build()
                .expect("client");

            let mut stamps = Vec::new();
            let (outcome, accumulated, sent_at, headers_at) = if completions {
                let stream = client
                    .completion_stream(&CompletionRequest::new("m", "Say"))
                    .await
                    .expect("stream opens");
                read_stamped!(stream, stamps)
            } else {
                let request = ChatRequest::new("m", vec![ChatMessage::user("Say hello")]);
                let stream = client.chat_stream(&request).await.expect("stream opens");
                read_stamped!(stream, stamps)
            };

            if sse.is_empty() {
                // llama-cpp-python answers a context overflow with 200 and an empty body.
                assert!(
                    matches!(
                        outcome,
                        Err(ClientError::StreamDropped {
                            events_received: 0,
                            source: None
                        })
                    ),
                    "{server}/{stem}: {outcome:?}"
                );
                continue;
            }
            outcome.unwrap_or_else(|error| panic!("{server}/{stem}: {error}"));
            assert_eq!(stamps.len(), expected.n_events, "{server}/{stem} events");
            expected.check(&accumulated, &format!("{server}/{stem}"));
            assert!(
                sent_at <= headers_at,
                "{server}/{stem}: headers before the request was sent"
            );
            assert!(stamps.first().is_some_and(|first| *first >= headers_at));
            assert!(
                stamps.windows(2).all(|pair| pair[0] <= pair[1]),
                "{server}/{stem}: stamps go back"
            );
            n_streams += 1;
        }
    }
    assert!(n_streams >= 18, "only {n_streams} streams replayed");
}

async fn chat_stream_of(server: &str, stem: &str) -> vernier_openai::ChatStream {
    let client = client_for_wire(read_fixture(server, &format!("{stem}.wire")), 7).await;
    let request = ChatRequest::new("m", vec![ChatMessage::user("x")]);
    client.chat_stream(&request).await.expect("stream opens")
}

#[tokio::test]
async fn llama_server_usage_timings_and_role_chunk() {
    let mut stream = chat_stream_of("llama-server-b11434", "chat-stream-usage").await;
    let first = stream.next_event().await.expect("an event").expect("ok");
    assert_eq!(
        first.chunk.choices[0].delta.role.as_deref(),
        Some("assistant")
    );
    assert!(
        !first.chunk.is_token_bearing(),
        "the role-only chunk carries no token"
    );
    let accumulated = stream.collect().await.expect("whole stream");
    // README: 64 one-token content events, then a finish chunk and a usage chunk.
    assert_eq!(accumulated.n_token_events(), 64);
    assert_eq!(accumulated.n_events(), 67);
    let usage = accumulated.usage().expect("usage chunk");
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (16, 64, 80)
    );
    assert_eq!(usage.cached_tokens(), Some(1));
    let timings = accumulated.timings().expect("timings");
    assert_eq!(
        (timings.prompt_n, timings.predicted_n),
        (Some(15), Some(64))
    );
    assert_eq!(accumulated.finish_reason(), Some("length"));
}

#[tokio::test]
async fn logprobs_one_entry_per_content_event() {
    for server in SERVERS {
        let mut stream = chat_stream_of(server, "chat-stream-logprobs").await;
        let mut n_content = 0;
        while let Some(event) = stream.next_event().await {
            let chunk = event.expect("ok").chunk;
            if chunk.content_len() > 0 {
                n_content += 1;
                assert_eq!(chunk.logprob_count(), Some(1), "{server}");
            }
        }
        assert_eq!(n_content, 6, "{server}: max_tokens 6, one token per event");
        assert_eq!(stream.accumulated().n_logprob_tokens(), Some(6), "{server}");
    }
}

#[tokio::test]
async fn llama_server_streamed_tool_call_is_assembled() {
    let stream = chat_stream_of("llama-server-b11434", "tools-stream-tool-call").await;
    let accumulated = stream.collect().await.expect("whole stream");
    let calls = accumulated.tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].index, 0);
    assert_eq!(calls[0].id, "Xx3hbNcfVAVA22o7J3h6V4EAcVztvcjZ");
    assert_eq!(calls[0].name, "get_weather");
    let arguments: Value = serde_json::from_str(&calls[0].arguments).expect("arguments are JSON");
    assert_eq!(arguments, serde_json::json!({"city": "Paris"}));
    assert_eq!(accumulated.finish_reason(), Some("tool_calls"));
    assert_eq!(
        accumulated.usage().map(|usage| usage.completion_tokens),
        Some(35)
    );
}

#[tokio::test]
async fn error_fixtures_keep_status_and_body() {
    let mut n_errors = 0;
    for server in SERVERS {
        for stem in stems(server, "wire")
            .into_iter()
            .filter(|stem| stem.starts_with("error-"))
        {
            let wire = read_fixture(server, &format!("{stem}.wire"));
            let status_line = String::from_utf8_lossy(
                &wire[..wire.iter().position(|&b| b == b'\r').expect("status")],
            )
            .into_owned();
            let status: u16 = status_line
                .split_whitespace()
                .nth(1)
                .expect("code")
                .parse()
                .expect("number");
            if status < 400 {
                continue;
            }
            let body = ["json", "body"]
                .iter()
                .find_map(|ext| {
                    std::fs::read(
                        crate::support::fixtures_dir()
                            .join(server)
                            .join(format!("{stem}.{ext}")),
                    )
                    .ok()
                })
                .expect("error body fixture");
            let client = client_for_wire(wire, 3).await;
            let request = ChatRequest::new("m", vec![ChatMessage::user("x")]);
            match client.chat_stream(&request).await {
                Err(ClientError::Http {
                    status: got,
                    body: got_body,
                    ..
                }) => {
                    assert_eq!(got, status, "{server}/{stem}");
                    assert_eq!(got_body.as_bytes(), &body[..], "{server}/{stem}");
                }
                other => panic!("{server}/{stem}: expected an HTTP error, got {other:?}"),
            }
            n_errors += 1;
        }
    }
    assert!(n_errors >= 7, "only {n_errors} error fixtures");
}

#[tokio::test]
async fn non_streamed_chat_and_tool_call() {
    for server in SERVERS {
        let client = client_for_wire(read_fixture(server, "chat-nonstream.wire"), 5).await;
        let response = client
            .chat(&ChatRequest::new("m", vec![ChatMessage::user("x")]))
            .await
            .expect("answer");
        let expected: Value =
            serde_json::from_slice(&read_fixture(server, "chat-nonstream.json")).expect("json");
        assert_eq!(
            response.choices[0].message.text(),
            expected["choices"][0]["message"]["content"]
                .as_str()
                .expect("text")
        );
        assert_eq!(
            response.usage.as_ref().map(|usage| usage.completion_tokens),
            expected["usage"]["completion_tokens"].as_u64()
        );
        // Unknown fields survive: the round trip gives back the server's object.
        assert_eq!(
            serde_json::to_value(&response).expect("serialises")["id"],
            expected["id"]
        );
    }
    let server = "llama-server-b11434";
    let client = client_for_wire(read_fixture(server, "tools-nonstream-tool-call.wire"), 5).await;
    let response = client
        .chat(&ChatRequest::new("m", vec![ChatMessage::user("x")]))
        .await
        .expect("answer");
    let calls = response.choices[0]
        .message
        .tool_calls
        .as_ref()
        .expect("tool calls");
    assert_eq!(calls[0].function.name, "get_weather");
    assert_eq!(calls[0].function.arguments, r#"{"city": "Paris"}"#);
    assert_eq!(
        response.choices[0].finish_reason.as_deref(),
        Some("tool_calls")
    );
}

#[tokio::test]
async fn models_metrics_and_identity_of_llama_server() {
    let server = "llama-server-b11434";
    let routes: Vec<(&str, Vec<u8>)> = vec![
        ("/v1/models", read_fixture(server, "models.wire")),
        ("/metrics", read_fixture(server, "metrics.wire")),
        ("/props", read_fixture(server, "props.wire")),
        ("/health", read_fixture(server, "health.wire")),
    ];
    let not_found = read_fixture(server, "error-404-path.wire");
    let (addr, mut seen) = serve(Arc::new(move |request| {
        let wire = routes
            .iter()
            .find(|(path, _)| *path == request.path)
            .map_or(&not_found, |(_, wire)| wire);
        vec![Step::Write(wire.clone())]
    }))
    .await;
    let client = ClientBuilder::new(&format!("http://{addr}/v1/"))
        .build()
        .expect("client");

    let models = client.models().await.expect("models");
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].id, "gemma-3-270m-q4_k_m");
    assert_eq!(models[0].extra["owned_by"], "llamacpp");

    let metrics = client.metrics().await.expect("metrics");
    // Values as printed in metrics.body.
    assert_eq!(metrics.sum("llamacpp:prompt_tokens_total"), Some(26012.0));
    assert_eq!(metrics.sum("llamacpp:tokens_predicted_total"), Some(2176.0));

    client.health().await.expect("healthy");
    let identity = client.server_identity().await;
    assert_eq!(identity.kind, ServerKind::LlamaCpp);
    assert_eq!(identity.server_header.as_deref(), Some("llama.cpp"));
    assert!(
        identity.version_json.is_none(),
        "/version is a 404 on llama-server"
    );
    assert!(
        identity
            .props_json
            .as_ref()
            .is_some_and(|props| props.get("total_slots").is_some())
    );

    let mut paths = Vec::new();
    while let Ok(request) = seen.try_recv() {
        paths.push(request.path);
    }
    assert!(
        paths.contains(&"/v1/models".to_owned()) && paths.contains(&"/metrics".to_owned()),
        "{paths:?}"
    );
}

#[tokio::test]
async fn mid_stream_error_objects_are_surfaced_with_what_came_before() {
    let sse = read_fixture("llama-server-b11434", "chat-stream-length.sse");
    let text = String::from_utf8(sse).expect("utf-8");
    let first_three: Vec<String> = text
        .split("\n\n")
        .take(3)
        .map(|event| format!("{event}\n\n"))
        .collect();
    let expected = expected_from_sse(first_three.concat().as_bytes(), false);
    let shapes: [&[u8]; 3] = [
        // vLLM: a data event holding {"error": {...}}.
        b"data: {\"error\": {\"object\": \"error\", \"message\": \"engine dead\", \"type\": \"InternalServerError\", \"param\": null, \"code\": 500}}\n\n",
        // llama.cpp: a data event with its error object.
        b"data: {\"error\":{\"code\":500,\"message\":\"slot failed\",\"type\":\"server_error\"}}\n\n",
        // Older llama.cpp builds: an `error:` line instead of `data:`.
        b"error: {\"code\":500,\"message\":\"slot failed\",\"type\":\"server_error\"}\n\n",
    ];
    for shape in shapes {
        let mut pieces: Vec<&[u8]> = first_three.iter().map(String::as_bytes).collect();
        pieces.push(shape);
        let wire = chunked_response("200 OK", "text/event-stream", &pieces, true);
        let client = client_for_wire(wire, 11).await;
        let mut stream = client
            .chat_stream(&ChatRequest::new("m", vec![ChatMessage::user("x")]))
            .await
            .expect("opens");
        let mut n_ok = 0;
        let error = loop {
            match stream.next_event().await {
                Some(Ok(_)) => n_ok += 1,
                Some(Err(error)) => break error,
                None => panic!("the error was swallowed"),
            }
        };
        assert_eq!(n_ok, 3);
        let ClientError::ServerErrorEvent {
            error,
            events_received,
        } = error
        else {
            panic!("{error:?}")
        };
        assert_eq!(events_received, 3);
        assert_eq!(error["code"], 500);
        assert_eq!(stream.accumulated().content(), expected.content);
        assert!(
            stream.next_event().await.is_none(),
            "the stream ends after the error"
        );
    }
}

/// Whether `ours` (a typed chunk written back out) holds every field of `theirs` (the server's
/// object read as plain JSON) with the same value. A `null` may be left out (optional fields are
/// not written when absent); numbers compare by value (`100` and `100.0` are one number).
fn holds(theirs: &Value, ours: &Value, path: &str) -> Result<(), String> {
    match (theirs, ours) {
        (Value::Object(theirs), Value::Object(ours)) => {
            for (key, value) in theirs {
                let at = format!("{path}.{key}");
                match ours.get(key) {
                    Some(mine) => holds(value, mine, &at)?,
                    None if value.is_null() => {}
                    None => return Err(format!("{at} is missing")),
                }
            }
            Ok(())
        }
        (Value::Array(theirs), Value::Array(ours)) if theirs.len() == ours.len() => theirs
            .iter()
            .zip(ours)
            .enumerate()
            .try_for_each(|(i, (a, b))| holds(a, b, &format!("{path}[{i}]"))),
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{path}: the server sent {a}, the chunk holds {b}")),
    }
}

#[test]
fn every_recorded_chunk_keeps_every_field_it_was_sent() {
    // The golden is each server's own JSON, read as a plain `serde_json::Value`: every field
    // (known ones into their fields, unknown ones into `extra`) must come back out unchanged.
    let mut n_chunks = 0;
    for server in SERVERS {
        for stem in stems(server, "sse") {
            let bytes = read_fixture(server, &format!("{stem}.sse"));
            for event in decode(&bytes, bytes.len()) {
                if event.is_done() {
                    continue;
                }
                let theirs: Value = serde_json::from_str(&event.data).expect("fixture json");
                let ours = if stem.starts_with("completions") {
                    let chunk: vernier_openai::CompletionChunk =
                        serde_json::from_str(&event.data).expect("a completions chunk");
                    serde_json::to_value(&chunk)
                } else {
                    let chunk: vernier_openai::ChatChunk =
                        serde_json::from_str(&event.data).expect("a chat chunk");
                    serde_json::to_value(&chunk)
                }
                .expect("serialises");
                if let Err(problem) = holds(&theirs, &ours, "") {
                    panic!("{server}/{stem}: {problem}\n{}", event.data);
                }
                n_chunks += 1;
            }
        }
    }
    assert!(n_chunks >= 200, "only {n_chunks} chunks checked");
}

/// The counts the meter takes from one event, without its instants (two replays of a stream
/// arrive at different times).
fn counts(observation: &vernier_meter::Observation) -> [Option<u64>; 6] {
    [
        Some(u64::from(observation.content_bytes)),
        Some(u64::from(observation.reasoning_bytes)),
        Some(u64::from(observation.tool_call_bytes)),
        observation.token_ids.map(u64::from),
        observation.cumulative_completion_tokens,
        observation.logprob_tokens.map(u64::from),
    ]
}

#[tokio::test]
async fn the_metered_stream_reads_every_recording_alike_chunk_by_chunk_or_by_counts() {
    // `next_observation` reads most chunks leanly (borrowed, only the metered fields) and the
    // rest whole; `next_event` reads every chunk whole. Over every recorded chat stream the two
    // must give the meter the same counts, event by event, and the same sum, and that sum must
    // be the independent reading of the recording (each event read as a plain JSON value).
    let mut n_streams = 0;
    for server in SERVERS {
        for (seed, stem) in (1_u64..).zip(stems(server, "sse")) {
            if stem.starts_with("completions") {
                continue;
            }
            let wire = read_fixture(server, &format!("{stem}.wire"));
            let sse = read_fixture(server, &format!("{stem}.sse"));
            let expected = expected_from_sse(&sse, false);
            let client = client_for_wire(wire, seed).await;
            let request = ChatRequest::new("m", vec![ChatMessage::user("Say hello")]);

            let mut whole = client.metered_chat_stream(&request).await.expect("opens");
            let mut whole_counts = Vec::new();
            let mut whole_error = None;
            while let Some(event) = whole.next_event().await {
                match event {
                    Ok(event) => whole_counts.push(counts(&vernier_openai::observation(&event))),
                    Err(error) => whole_error = Some(error.to_string()),
                }
            }
            let mut lean = client.metered_chat_stream(&request).await.expect("opens");
            let mut lean_counts = Vec::new();
            let mut lean_error = None;
            while let Some(event) = lean.next_observation().await {
                match event {
                    Ok(observation) => lean_counts.push(counts(&observation)),
                    Err(error) => lean_error = Some(error.to_string()),
                }
            }
            assert_eq!(lean_error, whole_error, "{server}/{stem}");
            assert_eq!(lean_counts, whole_counts, "{server}/{stem}");
            let (lean, whole) = (lean.finish(), whole.finish());
            assert_eq!(lean.accumulated, whole.accumulated, "{server}/{stem}");
            assert_eq!(
                lean.measurement.decode_tokens_per_s.is_some(),
                whole.measurement.decode_tokens_per_s.is_some(),
                "{server}/{stem}"
            );
            if sse.is_empty() {
                continue;
            }
            expected.check(&lean.accumulated, &format!("{server}/{stem}"));
            n_streams += 1;
        }
    }
    assert!(n_streams >= 12, "only {n_streams} chat streams replayed");
}
