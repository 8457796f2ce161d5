//! Decode rate, event rate, TTFT, time to first content and token source against ground truth.

use std::time::Duration;

use vernier_meter::TokenSource;
use vernier_sim::{SimConfig, TokensPerEvent};

use crate::{Ask, MAX_TOKENS, measure, only_ground_truth, relative_error, start};

async fn decode_rate_matches_ground_truth(tokens_per_event: u32) {
    let sim =
        start(SimConfig::builder().tokens_per_event(TokensPerEvent::Fixed(tokens_per_event))).await;
    let measurement = measure(&sim, Ask::TOKEN_IDS_AND_USAGE).await;
    let truth = only_ground_truth(&sim);
    let true_decode = truth
        .true_decode_tokens_per_s
        .expect("the simulator knows its decode rate");
    let k = f64::from(tokens_per_event);

    assert_eq!(measurement.token_source, TokenSource::TokenIds);
    assert_eq!(measurement.completion_tokens, MAX_TOKENS);
    assert_eq!(
        measurement.n_token_events,
        MAX_TOKENS / u64::from(tokens_per_event)
    );
    assert_eq!(measurement.tokens_per_event, Some(k));
    assert!((measurement.first_event_tokens - k).abs() < f64::EPSILON);

    let decode = measurement.decode_tokens_per_s.expect("decode rate");
    assert!(
        relative_error(decode, true_decode) < 0.01,
        "{tokens_per_event} tokens/event: measured {decode:.3} tokens/s, ground truth {true_decode:.3}"
    );
    let event_rate = measurement.event_rate_per_s.expect("event rate");
    assert!(
        relative_error(event_rate * k, true_decode) < 0.02,
        "{tokens_per_event} tokens/event: event rate {event_rate:.3}/s should be {true_decode:.3} / {k}"
    );
    assert!(
        relative_error(decode / event_rate, k) < 0.02,
        "decode {decode} / event rate {event_rate} should be {k}"
    );
    // The simulator is set to one event per 20 ms step: the true rate is k × 50 tokens/s.
    assert!(
        relative_error(true_decode, k * 1000.0 / 20.0) < 0.05,
        "simulator drifted: {true_decode}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decode_rate_within_one_percent_at_one_token_per_event() {
    decode_rate_matches_ground_truth(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decode_rate_within_one_percent_at_two_tokens_per_event() {
    decode_rate_matches_ground_truth(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decode_rate_within_one_percent_at_three_tokens_per_event() {
    decode_rate_matches_ground_truth(3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decode_rate_within_one_percent_at_four_tokens_per_event() {
    decode_rate_matches_ground_truth(4).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttft_ignores_the_role_only_chunk() {
    // The role-only chunk leaves at once; the first token only after a 150 ms prefill.
    let overhead = Duration::from_millis(150);
    let sim = start(
        SimConfig::builder()
            .fixed_overhead(overhead)
            .tokens_per_event(TokensPerEvent::Fixed(4)),
    )
    .await;
    let measurement = measure(
        &sim,
        Ask {
            include_usage: true,
            ..Ask::default()
        },
    )
    .await;
    let truth = only_ground_truth(&sim);

    let ttft = measurement.ttft_ms.expect("ttft");
    let first_byte = measurement
        .time_to_first_byte_ms
        .expect("time to first byte");
    assert!(
        measurement.n_events > measurement.n_token_events,
        "the role and usage chunks are events too"
    );
    assert!(
        ttft >= 150.0,
        "TTFT {ttft} ms must include the 150 ms prefill"
    );
    // Causal bound: the client sent before the server received, and read after it sent.
    let server_first_token_ms =
        truth.first_token_event_ns.expect("first token instant") as f64 / 1e6;
    assert!(
        ttft >= server_first_token_ms,
        "TTFT {ttft} ms before the server sent its first token"
    );
    assert!(
        first_byte < ttft,
        "headers ({first_byte} ms) arrive with the role chunk, before the first token"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_delays_the_first_content() {
    let sim = start(
        SimConfig::builder()
            .reasoning_tokens(40)
            .tokens_per_event(TokensPerEvent::Fixed(2)),
    )
    .await;
    let measurement = measure(&sim, Ask::TOKEN_IDS_AND_USAGE).await;
    let ttft = measurement.ttft_ms.expect("ttft");
    let first_content = measurement
        .time_to_first_content_ms
        .expect("time to first content");
    // 40 reasoning tokens at 2 per 20 ms step: content starts 20 steps (400 ms) after the first
    // reasoning event; ask for half of that to stay clear of scheduling noise.
    assert!(
        first_content - ttft >= 200.0,
        "first content {first_content} ms vs TTFT {ttft} ms"
    );
    assert_eq!(measurement.reasoning_tokens, Some(40));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_source_follows_what_the_server_sends() {
    let sim = start(SimConfig::builder().tokens_per_event(TokensPerEvent::Fixed(3))).await;
    let cases = [
        (Ask::TOKEN_IDS_AND_USAGE, TokenSource::TokenIds),
        (
            Ask {
                continuous_usage: true,
                ..Ask::default()
            },
            TokenSource::ContinuousUsage,
        ),
        (
            Ask {
                include_usage: true,
                ..Ask::default()
            },
            TokenSource::FinalUsage,
        ),
        (Ask::default(), TokenSource::EventCount),
    ];
    for (ask, expected) in cases {
        let measurement = measure(&sim, ask).await;
        assert_eq!(measurement.token_source, expected, "{ask:?}");
        assert!(
            measurement.cross_checks.iter().all(|check| check.agrees),
            "{:?}",
            measurement.cross_checks
        );
        if expected == TokenSource::EventCount {
            assert!(measurement.token_count_is_lower_bound);
            assert_eq!(
                measurement.completion_tokens,
                MAX_TOKENS / 3,
                "one token counted per event"
            );
        } else {
            assert_eq!(measurement.completion_tokens, MAX_TOKENS, "{ask:?}");
        }
        if expected == TokenSource::FinalUsage {
            assert!(measurement.first_event_tokens_estimated);
            assert!((measurement.first_event_tokens - 3.0).abs() < 1e-9);
        }
    }
    sim.shutdown().await;
}

/// With only a final `usage` (no per-event counts), the first event's tokens are estimated
/// from its text; the decode rate stays within 0.3% of the simulator's truth whether the first
/// event holds one token (vLLM: the token of the prefill) or as many as the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_final_usage_only_the_first_event_is_weighed_by_its_text() {
    let usage_only = Ask {
        token_ids: false,
        continuous_usage: false,
        include_usage: true,
    };
    for k in [1_u32, 3, 4] {
        for first in [1, k] {
            let sim = start(
                SimConfig::builder()
                    .tokens_per_event(TokensPerEvent::Fixed(k))
                    .first_step_tokens(Some(first)),
            )
            .await;
            let measurement = measure(&sim, usage_only).await;
            let truth = only_ground_truth(&sim);
            assert_eq!(
                truth.tokens_per_event[0], first,
                "the simulator's first event"
            );
            let true_decode = truth.true_decode_tokens_per_s.expect("a true rate");
            assert_eq!(measurement.token_source, TokenSource::FinalUsage);
            assert!(measurement.first_event_tokens_estimated);
            let (low, high) = measurement.first_event_tokens_bounds.expect("bounds");
            assert!(
                low <= measurement.first_event_tokens && measurement.first_event_tokens <= high
            );
            let decode = measurement.decode_tokens_per_s.expect("decode rate");
            let error = relative_error(decode, true_decode);
            assert!(
                error < 0.003,
                "k {k}, first event {first}: measured {decode:.3}, truth {true_decode:.3} (first event estimated at {:.2})",
                measurement.first_event_tokens
            );
            sim.shutdown().await;
        }
    }
}
