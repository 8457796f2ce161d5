//! Integration tests of vernier-meter: definitions, token sources, serialisation, allocation.

mod allocation;
mod definitions;
mod sources;

use std::time::{Duration, Instant};

/// A fixed origin and a helper giving `origin + ms` milliseconds.
pub(crate) fn clock() -> (Instant, impl Fn(u64) -> Instant) {
    let origin = Instant::now();
    (origin, move |ms: u64| origin + Duration::from_millis(ms))
}

/// Asserts two floats agree within `tolerance`.
#[track_caller]
pub(crate) fn assert_close(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "expected {expected} ± {tolerance}, got {actual}"
    );
}
