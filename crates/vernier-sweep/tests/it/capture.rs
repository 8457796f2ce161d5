//! `capture_streams` (`--capture N`): the first measured streams of each cell kept byte for
//! byte, replayable through the client with the same events and token counts, and rendered
//! event by event by `render_show` (what `sweep show` prints).

use std::io::{Read as _, Write as _};
use std::time::Duration;

use vernier_openai::{ChatRequest, ClientBuilder};
use vernier_sim::{SimConfig, TokensPerEvent};
use vernier_sweep::Workload;

use crate::support::{config, journal_values, run, start_sim};

/// Serves `capture` to every connection: its status and headers, then each captured body
/// frame as one HTTP chunk, as it was read.
fn replay_server(capture: vernier_sweep::StreamCapture) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            let mut head = Vec::new();
            let mut byte = [0_u8; 1];
            while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0);
            let mut body = vec![0_u8; length];
            let _ = socket.read_exact(&mut body);
            let mut response = format!("HTTP/1.1 {} OK\r\n", capture.status);
            for (name, value) in &capture.headers {
                if !["transfer-encoding", "content-length", "connection"].contains(&name.as_str()) {
                    response.push_str(name);
                    response.push_str(": ");
                    response.push_str(value);
                    response.push_str("\r\n");
                }
            }
            response.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
            let _ = socket.write_all(response.as_bytes());
            for frame in &capture.frames {
                let bytes = frame.bytes();
                let _ = socket.write_all(format!("{:x}\r\n", bytes.len()).as_bytes());
                let _ = socket.write_all(&bytes);
                let _ = socket.write_all(b"\r\n");
                let _ = socket.flush();
            }
            let _ = socket.write_all(b"0\r\n\r\n");
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_replays_through_the_client_with_the_same_events_and_tokens() {
    let sim = start_sim(
        SimConfig::builder()
            .tokens_per_event(TokensPerEvent::Fixed(3))
            .decode_step(Duration::from_millis(2))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = config(&[Workload::Prose], &[64], &[30], 2);
    config.capture_streams = Some(1);
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("the sweep runs");
    sim.shutdown().await;
    let captured: Vec<serde_json::Value> = journal_values(&outcome.journal)
        .into_iter()
        .filter(|l| l["type"] == "attempt" && l["capture"].is_string())
        .collect();
    assert_eq!(
        captured.len(),
        1,
        "the first measured stream of the one cell"
    );
    let line = &captured[0];
    let file = out.path().join(line["capture"].as_str().expect("a path"));
    let capture: vernier_sweep::StreamCapture =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("the capture file"))
            .expect("a capture");
    assert!(capture.frames.len() > 5, "{} frames", capture.frames.len());
    // Replayed through the client, the same events and the same token counts.
    let request: ChatRequest =
        serde_json::from_value(capture.request.clone()).expect("the request");
    let addr = replay_server(capture);
    let client = ClientBuilder::new(&format!("http://{addr}"))
        .build()
        .expect("client");
    let (replayed, error) = client
        .measure_chat(&request)
        .await
        .expect("the replay opens");
    assert!(error.is_none(), "{error:?}");
    let recorded = &line["measurement"];
    let m = replayed.measurement;
    assert_eq!(Some(m.n_events), recorded["n_events"].as_u64());
    assert_eq!(Some(m.n_token_events), recorded["n_token_events"].as_u64());
    assert_eq!(
        Some(m.completion_tokens),
        recorded["completion_tokens"].as_u64()
    );
    assert_eq!(m.completion_tokens, 30);
    assert_eq!(
        Some(m.token_source.as_str()),
        recorded["token_source"].as_str()
    );
    // `render_show` lists the request's events with their times and tokens.
    // Counted from 1, as people count: the journal's rep 0 is repetition 1.
    let rep = u32::try_from(line["rep"].as_u64().unwrap_or(0)).expect("a repetition") + 1;
    let text = vernier_sweep::render_show(out.path(), "1", rep, 1).expect("the request is shown");
    assert!(
        text.contains(&format!("repetition {rep}, stream 1")),
        "{text}"
    );
    assert!(text.contains("try 1: ok"), "{text}");
    assert!(
        text.contains("capture ") && text.contains("tokens"),
        "{text}"
    );
    // One line per event with three tokens each (the simulator's k), after the header lines.
    assert!(
        text.lines()
            .filter(|l| l.trim_end().contains("       3  "))
            .count()
            >= 9,
        "{text}"
    );
    let error = vernier_sweep::render_show(out.path(), "7", 1, 1).expect_err("no cell 7");
    assert!(
        matches!(&error, vernier_sweep::SweepError::Run(vernier_run::RunError::InvalidArgument { what, .. }) if what == "CELL"),
        "{error}"
    );
}
