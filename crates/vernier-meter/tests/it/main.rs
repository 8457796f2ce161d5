//! Integration tests of vernier-meter: definitions, token sources, serialisation, allocation.

mod allocation;
mod definitions;
mod receive_side;
mod sources;

use std::time::{Duration, Instant};

use vernier_meter::{Measurement, Observation};

/// A fixed origin and a helper giving `origin + ms` milliseconds.
pub(crate) fn clock() -> (Instant, impl Fn(u64) -> Instant) {
    let origin = Instant::now();
    (origin, move |ms: u64| origin + Duration::from_millis(ms))
}

pub(crate) use vernier_test_support::assert_close;

/// Asserts the decode rate (tokens/s) and the event rate (events/s), each within 1e-6.
#[track_caller]
pub(crate) fn assert_rates(measurement: &Measurement, decode_per_s: f64, events_per_s: f64) {
    assert_close(
        measurement.decode_tokens_per_s.expect("decode rate"),
        decode_per_s,
        1e-6,
    );
    assert_close(
        measurement.event_rate_per_s.expect("event rate"),
        events_per_s,
        1e-6,
    );
}

/// Asserts one of the measurement's warnings contains `needle`.
#[track_caller]
pub(crate) fn assert_warns(measurement: &Measurement, needle: &str) {
    assert!(
        measurement
            .warnings
            .iter()
            .any(|warning| warning.contains(needle)),
        "no warning contains {needle:?}: {:?}",
        measurement.warnings
    );
}

/// A content event at `at`: five bytes of text and `n_token_ids` token ids.
pub(crate) fn content_event(at: Instant, n_token_ids: u32) -> Observation {
    Observation::new(at)
        .with_content_bytes(5)
        .with_token_ids(n_token_ids)
}
