//! A computed figure held to an expected one: what every golden test here (and in the
//! workspace) checks a statistic with.

/// Whether `actual` lies within `tolerance` (absolute) of `expected`; never for a value that
/// is not a number.
pub fn is_close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance
}

/// Fails, naming all three, unless `actual` lies within `tolerance` of `expected`.
///
/// # Panics
///
/// When it does not: it is an assertion, for tests that hold a computation to a published
/// value.
#[track_caller]
pub fn assert_close(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        is_close(actual, expected, tolerance),
        "{actual} is not within {tolerance} of {expected}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nan_is_never_close() {
        assert!(is_close(0.1 + 0.2, 0.3, 1e-15));
        assert!(!is_close(f64::NAN, 0.0, 1.0));
        assert!(!is_close(1.0, 1.1, 0.05));
    }
}
