//! Choosing the best token source, cross-checking the others, and flagging what is missing.

use vernier_meter::{Final, LlamaTimings, Meter, Observation, TokenSource};

use crate::{assert_close, assert_rates, assert_warns, clock};

/// Ten events of 3 tokens, 10 ms apart from 100 ms, each carrying the given per-chunk fields.
fn three_token_stream(decorate: impl Fn(Observation, u64) -> Observation) -> Meter {
    let (sent, at) = clock();
    let mut meter = Meter::new(sent, 16);
    meter.observe(&decorate(Observation::new(at(2)), 0));
    for index in 1..=10 {
        let event = Observation::new(at(90 + 10 * index)).with_content_bytes(11);
        meter.observe(&decorate(event, index));
    }
    meter
}

fn ended(meter: &Meter) -> Final {
    Final::new(meter.request_sent_at() + std::time::Duration::from_millis(200))
}

#[test]
fn continuous_usage_gives_per_event_counts() {
    // vLLM's continuous_usage_stats: the role chunk reports 0, then the running total.
    let meter =
        three_token_stream(|event, index| event.with_cumulative_completion_tokens(3 * index));
    let measurement = meter.finish(&ended(&meter).with_usage_completion_tokens(30));
    assert_eq!(measurement.token_source, TokenSource::ContinuousUsage);
    assert_eq!(measurement.completion_tokens, 30);
    assert_close(measurement.first_event_tokens, 3.0, 0.0);
    // (30 − 3) tokens over 90 ms.
    assert_close(
        measurement.decode_tokens_per_s.expect("decode"),
        300.0,
        1e-6,
    );
    assert_eq!(
        measurement
            .tokens_per_event_histogram
            .expect("histogram")
            .events_with(3),
        10
    );
    assert!(measurement.cross_checks.iter().all(|check| check.agrees));
}

#[test]
fn logprobs_are_used_without_ids_or_usage_per_chunk() {
    let meter = three_token_stream(|event, index| {
        if index == 0 {
            event
        } else {
            event.with_logprob_tokens(3)
        }
    });
    let measurement = meter.finish(&ended(&meter).with_usage_completion_tokens(30));
    assert_eq!(measurement.token_source, TokenSource::Logprobs);
    assert_close(
        measurement.decode_tokens_per_s.expect("decode"),
        300.0,
        1e-6,
    );
}

#[test]
fn token_ids_win_and_every_other_source_is_cross_checked() {
    let meter = three_token_stream(|event, index| {
        let event = event.with_cumulative_completion_tokens(3 * index);
        if index == 0 {
            event
        } else {
            event.with_token_ids(3).with_logprob_tokens(3)
        }
    });
    let measurement = meter.finish(
        &ended(&meter)
            .with_usage_completion_tokens(30)
            .with_llama_timings(LlamaTimings::new(5, 1.0, 30, 9.0)),
    );
    assert_eq!(measurement.token_source, TokenSource::TokenIds);
    let compared: Vec<TokenSource> = measurement
        .cross_checks
        .iter()
        .map(|check| check.source_b)
        .collect();
    assert_eq!(
        compared,
        [
            TokenSource::ContinuousUsage,
            TokenSource::Logprobs,
            TokenSource::LlamaTimings,
            TokenSource::FinalUsage
        ]
    );
    assert!(
        measurement
            .cross_checks
            .iter()
            .all(|check| check.agrees && check.source_a == TokenSource::TokenIds)
    );
    assert!(
        measurement.warnings.is_empty(),
        "{:?}",
        measurement.warnings
    );
}

#[test]
fn disagreeing_sources_are_reported_not_hidden() {
    let meter = three_token_stream(|event, index| {
        if index == 0 {
            event
        } else {
            event.with_token_ids(3)
        }
    });
    let measurement = meter.finish(&ended(&meter).with_usage_completion_tokens(29));
    assert_eq!(measurement.completion_tokens, 30);
    let check = measurement.cross_checks.first().expect("a cross-check");
    assert_eq!(
        (check.source_b, check.tokens_a, check.tokens_b, check.agrees),
        (TokenSource::FinalUsage, 30, 29, false)
    );
    assert!(
        measurement
            .warnings
            .iter()
            .any(|warning| warning.contains("disagree") && warning.contains("29")),
        "{:?}",
        measurement.warnings
    );
}

#[test]
fn partial_per_chunk_counts_are_not_trusted() {
    let meter = three_token_stream(|event, index| {
        if index % 2 == 1 {
            event.with_token_ids(3)
        } else {
            event
        }
    });
    let measurement = meter.finish(&ended(&meter).with_usage_completion_tokens(30));
    assert_eq!(measurement.token_source, TokenSource::FinalUsage);
    assert_warns(&measurement, "token_ids present on only 5 of 10");
}

#[test]
fn final_usage_only_estimates_the_first_event() {
    let meter = three_token_stream(|event, _| event);
    let measurement = meter.finish(&ended(&meter).with_usage_completion_tokens(30));
    assert_eq!(measurement.token_source, TokenSource::FinalUsage);
    assert!(measurement.first_event_tokens_estimated);
    assert_close(measurement.first_event_tokens, 3.0, 1e-12);
    assert_rates(&measurement, 300.0, 100.0);
    assert_close(
        measurement.inter_token_latency_ms.expect("itl").median_ms,
        10.0 / 3.0,
        1e-9,
    );
    assert_eq!(measurement.tokens_per_event_histogram, None);
    assert_warns(&measurement, "estimated");
}

#[test]
fn llama_timings_count_tokens_and_prompt_when_usage_is_missing() {
    let meter = three_token_stream(|event, _| event);
    let measurement =
        meter.finish(&ended(&meter).with_llama_timings(LlamaTimings::new(64, 20.0, 30, 90.0)));
    assert_eq!(measurement.token_source, TokenSource::LlamaTimings);
    assert_eq!(measurement.completion_tokens, 30);
    assert_eq!(measurement.prompt_tokens, Some(64));
    assert_warns(&measurement, "final usage missing");
}

#[test]
fn event_count_is_a_flagged_lower_bound() {
    let meter = three_token_stream(|event, _| event);
    let measurement = meter.finish(&ended(&meter).with_finish_reason("stop"));
    assert_eq!(measurement.token_source, TokenSource::EventCount);
    assert!(measurement.token_count_is_lower_bound);
    assert_eq!(measurement.completion_tokens, 10);
    assert!(measurement.cross_checks.is_empty());
    assert_warns(&measurement, "lower bound");
    // With one token per event assumed, decode rate equals the event rate.
    assert_eq!(
        measurement.decode_tokens_per_s,
        measurement.event_rate_per_s
    );
}

#[test]
fn a_count_below_the_event_count_is_suspect() {
    let meter = three_token_stream(|event, _| event);
    let measurement = meter.finish(&ended(&meter).with_usage_completion_tokens(4));
    assert_warns(&measurement, "suspect");
}
