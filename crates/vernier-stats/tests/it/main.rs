//! Integration tests of vernier-stats: golden values from independent sources, error cases and
//! properties.

mod border;
mod errors;
mod golden;
mod normal;
mod properties;

/// Asserts |actual − expected| ≤ tolerance with a readable message.
#[track_caller]
pub(crate) fn assert_close(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "expected {expected}, got {actual} (tolerance {tolerance})"
    );
}
