//! The timing and rate definitions, on hand-built streams whose answers are worked out by hand.

use vernier_meter::{Final, Meter, Observation, TokenSource};

use crate::{assert_close, assert_rates, assert_warns, clock, content_event};

/// Role chunk at 5 ms, three reasoning events (50, 60, 70 ms), four content events (80..110 ms),
/// all carrying 2 token ids, then a usage-only chunk. Worked by hand:
/// TTFT 50 ms (not 5), first content 80 ms, 12 tokens after the first event over 60 ms = 200/s,
/// 6 event gaps over 60 ms = 100 events/s, each 10 ms gap spread over 2 tokens = 5 ms per token,
/// 100 prompt tokens over 50 ms = 2000/s.
#[test]
fn reasoning_stream_with_two_tokens_per_event() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 16);
    meter.headers_received(at(4));
    meter.observe(&Observation::new(at(5)).with_token_ids(0));
    for ms in [50, 60, 70] {
        meter.observe(
            &Observation::new(at(ms))
                .with_reasoning_bytes(7)
                .with_token_ids(2),
        );
    }
    for ms in [80, 90, 100, 110] {
        meter.observe(
            &Observation::new(at(ms))
                .with_content_bytes(6)
                .with_token_ids(2),
        );
    }
    meter.observe(&Observation::new(at(111)));
    let measurement = meter.finish(
        &Final::new(at(112))
            .with_usage_completion_tokens(14)
            .with_usage_prompt_tokens(100)
            .with_reasoning_tokens(6)
            .with_finish_reason("length")
            .with_requested_max_tokens(14),
    );

    assert_close(measurement.ttft_ms.expect("ttft"), 50.0, 1e-9);
    assert_close(
        measurement.time_to_first_byte_ms.expect("first byte"),
        4.0,
        1e-9,
    );
    assert_close(
        measurement.time_to_first_content_ms.expect("first content"),
        80.0,
        1e-9,
    );
    assert_close(measurement.end_to_end_ms, 112.0, 1e-9);
    assert_rates(&measurement, 200.0, 100.0);
    assert_close(
        measurement.prefill_tokens_per_s.expect("prefill"),
        2000.0,
        1e-6,
    );
    assert_close(
        measurement.tokens_per_event.expect("tokens per event"),
        2.0,
        1e-12,
    );
    assert_eq!(measurement.n_events, 9);
    assert_eq!(measurement.n_token_events, 7);
    assert_eq!(measurement.completion_tokens, 14);
    assert_eq!(measurement.prompt_tokens, Some(100));
    assert_eq!(measurement.reasoning_tokens, Some(6));
    assert_close(measurement.first_event_tokens, 2.0, 0.0);
    assert!(!measurement.first_event_tokens_estimated);
    assert_eq!(measurement.token_source, TokenSource::TokenIds);
    assert!(!measurement.token_count_is_lower_bound);
    let itl = measurement
        .inter_token_latency_ms
        .expect("inter-token latency");
    for value in [
        itl.median_ms,
        itl.p90_ms,
        itl.p99_ms,
        itl.mean_ms,
        itl.max_ms,
    ] {
        assert_close(value, 5.0, 1e-9);
    }
    let gaps = measurement.event_gap_ms.expect("event gaps");
    assert_close(gaps.median_ms, 10.0, 1e-9);
    assert_close(gaps.max_ms, 10.0, 1e-9);
    let histogram = measurement.tokens_per_event_histogram.expect("histogram");
    assert_eq!(histogram.events_with(2), 7);
    assert_eq!(histogram.total_events(), 7);
    assert_eq!(measurement.cross_checks.len(), 1);
    assert!(measurement.cross_checks.iter().all(|check| check.agrees));
    assert!(
        measurement.warnings.is_empty(),
        "unexpected warnings: {:?}",
        measurement.warnings
    );
    assert_eq!(measurement.finish_reason.as_deref(), Some("length"));
}

/// Token ids 1, 3, 1, 4 at 100, 110, 130, 150 ms. Per-token latencies: 10/3 ms ×3, 20 ms ×1,
/// 5 ms ×4, so the nearest-rank median over 8 tokens is 5 ms, p90 is 20 ms and the mean is
/// 50 ms / 8 = 6.25 ms. Decode: (9 − 1) / 0.05 s = 160/s; events: 3 / 0.05 s = 60/s.
#[test]
fn inter_token_latency_is_per_token_not_per_event() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 8);
    for (ms, tokens) in [(100, 1), (110, 3), (130, 1), (150, 4)] {
        meter.observe(
            &Observation::new(at(ms))
                .with_content_bytes(4 * tokens)
                .with_token_ids(tokens),
        );
    }
    let measurement = meter.finish(&Final::new(at(151)).with_usage_completion_tokens(9));
    assert_rates(&measurement, 160.0, 60.0);
    let itl = measurement
        .inter_token_latency_ms
        .expect("inter-token latency");
    assert_close(itl.median_ms, 5.0, 1e-9);
    assert_close(itl.p90_ms, 20.0, 1e-9);
    assert_close(itl.mean_ms, 6.25, 1e-9);
    let gaps = measurement.event_gap_ms.expect("event gaps");
    assert_close(gaps.median_ms, 20.0, 1e-9);
    assert_close(gaps.mean_ms, 50.0 / 3.0, 1e-9);
    let histogram = measurement.tokens_per_event_histogram.expect("histogram");
    assert_eq!(
        [1, 2, 3, 4].map(|tokens| histogram.events_with(tokens)),
        [2, 0, 1, 1],
        "histogram {histogram:?}"
    );
}

#[test]
fn role_only_and_keep_alive_events_are_not_token_bearing() {
    let (sent, at) = clock();
    let role_only = Observation::new(at(1))
        .with_token_ids(0)
        .with_cumulative_completion_tokens(0);
    assert!(!role_only.is_token_bearing());
    assert!(!Observation::new(at(1)).is_token_bearing());
    // A stop token that decodes to no text still carries a token id.
    assert!(Observation::new(at(1)).with_token_ids(1).is_token_bearing());
    assert!(
        Observation::new(at(1))
            .with_tool_call_bytes(3)
            .is_content_bearing()
    );
    assert!(
        !Observation::new(at(1))
            .with_reasoning_bytes(3)
            .is_content_bearing()
    );

    let mut meter = Meter::new(sent, 4);
    meter.observe(&role_only);
    meter.observe(&Observation::new(at(40)).with_content_bytes(3));
    let measurement = meter.finish(&Final::new(at(41)).with_usage_completion_tokens(1));
    assert_close(measurement.ttft_ms.expect("ttft"), 40.0, 1e-9);
}

#[test]
fn one_token_event_leaves_rates_undefined() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 4);
    meter.observe(&Observation::new(at(30)).with_content_bytes(5));
    let measurement = meter.finish(&Final::new(at(31)).with_usage_completion_tokens(1));
    assert_close(measurement.ttft_ms.expect("ttft"), 30.0, 1e-9);
    assert_eq!(measurement.decode_tokens_per_s, None);
    assert_eq!(measurement.event_rate_per_s, None);
    assert_eq!(measurement.inter_token_latency_ms, None);
    assert_eq!(measurement.event_gap_ms, None);
}

#[test]
fn zero_time_between_events_leaves_rates_undefined() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 4);
    meter.observe(&Observation::new(at(30)).with_content_bytes(5));
    meter.observe(&Observation::new(at(30)).with_content_bytes(5));
    let measurement = meter.finish(&Final::new(at(31)).with_usage_completion_tokens(2));
    assert_eq!(measurement.decode_tokens_per_s, None);
    assert_eq!(measurement.event_rate_per_s, None);
}

#[test]
fn empty_stream_is_measured_without_panicking() {
    let (sent, at) = clock();
    let meter = Meter::new(sent, 0);
    let measurement = meter.finish(&Final::new(at(250)));
    assert_eq!(measurement.ttft_ms, None);
    assert_eq!(measurement.tokens_per_event, None);
    assert_close(measurement.end_to_end_ms, 250.0, 1e-9);
    assert_eq!(measurement.completion_tokens, 0);
    assert_warns(&measurement, "no token-bearing event");
}

#[test]
fn output_shorter_than_requested_is_flagged() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 4);
    meter.observe(&content_event(at(10), 1));
    meter.observe(&content_event(at(20), 1));
    let measurement = meter.finish(
        &Final::new(at(21))
            .with_usage_completion_tokens(2)
            .with_requested_max_tokens(256)
            .with_finish_reason("stop"),
    );
    let warning = measurement
        .warnings
        .iter()
        .find(|warning| warning.contains("max_tokens"))
        .expect("a max_tokens warning");
    assert!(
        warning.contains("(2)") && warning.contains("(256)") && warning.contains("stop"),
        "{warning}"
    );
}

#[test]
fn prefix_cache_hit_is_flagged() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 4);
    meter.observe(&content_event(at(10), 1));
    let measurement = meter.finish(
        &Final::new(at(11))
            .with_usage_completion_tokens(1)
            .with_usage_prompt_tokens(500)
            .with_cached_prompt_tokens(480),
    );
    assert_eq!(measurement.cached_prompt_tokens, Some(480));
    assert_warns(&measurement, "480 of 500");
}

#[test]
fn measurement_serialises_with_the_documented_field_names() {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 4);
    meter.headers_received(at(1));
    meter.observe(&content_event(at(10), 1));
    meter.observe(&content_event(at(20), 2));
    let measurement = meter.finish(
        &Final::new(at(21))
            .with_usage_completion_tokens(3)
            .with_usage_prompt_tokens(7),
    );
    let json = serde_json::to_value(&measurement).expect("serialise");
    for field in [
        "ttft_ms",
        "time_to_first_byte_ms",
        "time_to_first_content_ms",
        "end_to_end_ms",
        "decode_tokens_per_s",
        "prefill_tokens_per_s",
        "event_rate_per_s",
        "tokens_per_event",
        "tokens_per_event_histogram",
        "inter_token_latency_ms",
        "event_gap_ms",
        "n_events",
        "n_token_events",
        "completion_tokens",
        "prompt_tokens",
        "cached_prompt_tokens",
        "reasoning_tokens",
        "first_event_tokens",
        "first_event_tokens_estimated",
        "token_source",
        "token_count_is_lower_bound",
        "cross_checks",
        "warnings",
        "finish_reason",
    ] {
        assert!(json.get(field).is_some(), "missing field {field} in {json}");
    }
    assert_eq!(json["token_source"], "token_ids");
    assert_eq!(json["cross_checks"][0]["source_b"], "final_usage");
    assert_eq!(json["cross_checks"][0]["agrees"], true);
    let back: vernier_meter::Measurement = serde_json::from_value(json).expect("deserialise");
    assert_eq!(back, measurement);
}

#[test]
fn token_sources_serialise_in_snake_case() {
    let names = [
        (TokenSource::TokenIds, "token_ids"),
        (TokenSource::ContinuousUsage, "continuous_usage"),
        (TokenSource::Logprobs, "logprobs"),
        (TokenSource::LlamaTimings, "llama_timings"),
        (TokenSource::FinalUsage, "final_usage"),
        (TokenSource::EventCount, "event_count"),
    ];
    for (source, name) in names {
        assert_eq!(serde_json::to_value(source).expect("serialise"), name);
        assert_eq!(source.to_string(), name);
    }
}
