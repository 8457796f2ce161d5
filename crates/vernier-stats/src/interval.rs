//! The interval type every estimator returns.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A two-sided confidence interval `[low, high]` at level `confidence`.
///
/// `Display` prints the bounds with an explicit sign (U+2212 MINUS SIGN for negatives, `+` for
/// positives, none for a bound that rounds to zero) and one decimal unless a precision is given:
///
/// ```
/// use vernier_stats::Interval;
/// let difference = Interval::new(-0.0561, 0.0702, 0.95);
/// assert_eq!(difference.scaled(100.0).to_string(), "[−5.6, +7.0]");
/// assert_eq!(format!("{:.2}", difference.scaled(100.0)), "[−5.61, +7.02]");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Confidence level in (0, 1), e.g. 0.95.
    pub confidence: f64,
}

impl Interval {
    /// An interval from its bounds and level.
    pub fn new(low: f64, high: f64, confidence: f64) -> Self {
        Self {
            low,
            high,
            confidence,
        }
    }

    /// The same interval with both bounds multiplied by `factor`; `scaled(100.0)` turns a
    /// proportion into percentage points.
    #[must_use]
    pub fn scaled(self, factor: f64) -> Self {
        let (a, b) = (self.low * factor, self.high * factor);
        Self {
            low: a.min(b),
            high: a.max(b),
            confidence: self.confidence,
        }
    }

    /// `high − low`.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }

    /// Whether `value` lies in the closed interval.
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

/// Formats `value` with an explicit sign at `precision` decimals.
fn signed(value: f64, precision: usize) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    let magnitude = format!("{:.precision$}", value.abs());
    let rounds_to_zero = magnitude.chars().all(|c| c == '0' || c == '.');
    if rounds_to_zero {
        magnitude
    } else if value < 0.0 {
        format!("\u{2212}{magnitude}")
    } else {
        format!("+{magnitude}")
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let precision = f.precision().unwrap_or(1);
        write!(
            f,
            "[{}, {}]",
            signed(self.low, precision),
            signed(self.high, precision)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Interval;

    #[test]
    fn display_uses_minus_sign_plus_sign_and_one_decimal() {
        assert_eq!(Interval::new(-5.6, 7.0, 0.95).to_string(), "[−5.6, +7.0]");
        assert_eq!(Interval::new(-0.04, 0.04, 0.95).to_string(), "[0.0, 0.0]");
        assert_eq!(
            format!("{:.3}", Interval::new(0.5, 1.0, 0.9)),
            "[+0.500, +1.000]"
        );
        assert_eq!(format!("{:.0}", Interval::new(-2.4, 2.6, 0.9)), "[−2, +3]");
    }

    #[test]
    fn scaled_keeps_order_and_level() {
        let scaled = Interval::new(-0.056, 0.07, 0.95).scaled(100.0);
        assert!((scaled.low + 5.6).abs() < 1e-12 && (scaled.high - 7.0).abs() < 1e-12);
        assert!((scaled.confidence - 0.95).abs() < f64::EPSILON);
        let flipped = Interval::new(1.0, 2.0, 0.9).scaled(-1.0);
        assert!(flipped.low < flipped.high);
        assert!(flipped.contains(-1.5) && !flipped.contains(1.5));
        assert!((flipped.width() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn serde_round_trips() {
        let interval = Interval::new(0.25, 0.75, 0.95);
        let json = serde_json::to_string(&interval).expect("serialize");
        assert_eq!(json, r#"{"low":0.25,"high":0.75,"confidence":0.95}"#);
        let back: Interval = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, interval);
    }
}
