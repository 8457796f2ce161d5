//! The crash fault: the whole server dies once enough streams are deep enough, and not before.

use std::time::Duration;

use serde_json::json;
use vernier_sim::{CrashFault, Faults, Sim, SimConfig};

use crate::client::post;
use crate::{chat, fast, start};

fn crashing(min_streams: usize, min_depth: u64) -> Faults {
    let mut faults = Faults::default();
    // A rate this high fires at the first look once the condition holds.
    faults.crash = Some(CrashFault::new(min_streams, min_depth, 1e9));
    faults
}

/// `n` streamed chat requests of `max_tokens` each, sent at once.
fn streams(
    addr: std::net::SocketAddr,
    n: usize,
    max_tokens: u32,
) -> Vec<tokio::task::JoinHandle<crate::client::RawResponse>> {
    (0..n)
        .map(|i| {
            tokio::spawn(async move {
                post(
                    addr,
                    "/v1/chat/completions",
                    &chat(&format!("stream {i}"), max_tokens, &json!({})),
                )
                .await
            })
        })
        .collect()
}

#[tokio::test]
async fn the_server_dies_when_enough_streams_are_deep_enough() {
    let sim = start(fast().faults(crashing(3, 20)).build()).await;
    let addr = sim.addr();
    let requests = streams(addr, 3, 400);
    let report = tokio::time::timeout(Duration::from_secs(10), sim.crashed())
        .await
        .expect("the crash fault fires once three streams are 20 tokens deep");
    assert_eq!(report.streams.len(), 3, "{report:?}");
    assert_eq!(report.running, 3);
    for stream in &report.streams {
        // 2 ms steps, looked at every 5 ms: the crash comes within a few steps of the depth.
        assert!(
            (20..60).contains(&stream.tokens),
            "a stream {} tokens deep at the crash: {report:?}",
            stream.tokens
        );
    }
    for request in requests {
        let response = tokio::time::timeout(Duration::from_secs(10), request)
            .await
            .expect("the cut stream ends")
            .expect("request task");
        assert!(
            !response.events.iter().any(|event| event.data == "[DONE]"),
            "a stream finished though the server died"
        );
    }
    // The port is closed: a new connection is refused.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    let lines = report.log_lines();
    assert!(lines[0].contains("Xid") && lines[1].contains("illegal memory access"));
    let dump = lines[2]
        .strip_prefix("vernier-sim scheduler dump: ")
        .expect("the dump line");
    let parsed: serde_json::Value = serde_json::from_str(dump).expect("the dump is JSON");
    assert_eq!(parsed["streams"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn fewer_slots_than_the_crash_needs_never_crash() {
    // Three deep streams are needed, but only two can run at once.
    let sim = start(fast().faults(crashing(3, 5)).max_num_seqs(Some(2)).build()).await;
    let addr = sim.addr();
    let requests = streams(addr, 4, 60);
    for request in requests {
        let response = request.await.expect("request task");
        assert!(response.events.iter().any(|event| event.data == "[DONE]"));
    }
    assert_eq!(sim.crash_report(), None);
}

#[tokio::test]
async fn a_crash_fault_that_needs_no_stream_is_refused() {
    let mut faults = Faults::default();
    faults.crash = Some(CrashFault::new(0, 10, 1.0));
    let error = Sim::start(SimConfig::builder().faults(faults).build())
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("crash.min_streams"), "{error}");
}
