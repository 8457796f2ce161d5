//! Intervals for proportions and their differences: Wilson and Newcombe.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::{Result, StatsError};
use crate::interval::Interval;

/// Checks 0 < confidence < 1.
pub(crate) fn check_confidence(confidence: f64, what: &'static str) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidConfidence { what, confidence })
    }
}

/// Checks that a probability-like argument lies strictly inside (0, 1).
pub(crate) fn check_open_unit(value: f64, name: &'static str, what: &'static str) -> Result<()> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            what,
            name,
            value,
            range: "(0, 1)",
        })
    }
}

/// Standard normal quantile Φ⁻¹(p).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// Standard normal distribution function Φ(x).
pub(crate) fn normal_cdf(x: f64) -> f64 {
    Normal::standard().cdf(x)
}

/// The two-sided critical value z = Φ⁻¹(1 − (1 − confidence)/2), e.g. 1.95996 at 0.95.
pub(crate) fn two_sided_z(confidence: f64, what: &'static str) -> Result<f64> {
    check_confidence(confidence, what)?;
    Ok(normal_quantile(1.0 - (1.0 - confidence) / 2.0))
}

/// Wilson bounds without validation; `successes <= trials`, `trials > 0`.
fn wilson_bounds(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    wilson_bounds_real(successes as f64, trials as f64, z)
}

/// Wilson bounds for real-valued counts (expected counts when planning); `0 <= successes <=
/// trials`, `trials > 0`. The bound at 0 successes is exactly 0 and at `trials` exactly 1.
fn wilson_bounds_real(successes: f64, n: f64, z: f64) -> (f64, f64) {
    let p = successes / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let low = if successes <= 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if successes >= n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

fn check_counts(successes: u64, trials: u64, name: &'static str, what: &'static str) -> Result<()> {
    if trials == 0 {
        return Err(StatsError::ZeroTrials { what, name });
    }
    if successes > trials {
        return Err(StatsError::SuccessesExceedTrials {
            what,
            successes,
            trials,
        });
    }
    Ok(())
}

/// Wilson score interval for a binomial proportion `successes / n`.
///
/// With p̂ = x/n and z = Φ⁻¹(1 − α/2):
/// (p̂ + z²/2n ± z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n).
/// The bound at 0 successes is exactly 0 and at n successes exactly 1.
/// Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical inference",
/// *JASA* 22, 209–212. Equals R's `prop.test(x, n, correct = FALSE)$conf.int`.
pub fn wilson(successes: u64, n: u64, confidence: f64) -> Result<Interval> {
    const WHAT: &str = "a Wilson interval";
    check_counts(successes, n, "n", WHAT)?;
    let z = two_sided_z(confidence, WHAT)?;
    let (low, high) = wilson_bounds(successes, n, z);
    Ok(Interval::new(low, high, confidence))
}

/// Interval for the difference p₁ − p₂ of two independent proportions x₁/n₁ and x₂/n₂:
/// Newcombe's hybrid score method (method 10, no continuity correction).
///
/// With Wilson intervals (l₁, u₁) and (l₂, u₂) and δ = p̂₁ − p̂₂:
/// L = δ − √((p̂₁ − l₁)² + (u₂ − p̂₂)²), U = δ + √((u₁ − p̂₁)² + (p̂₂ − l₂)²).
/// Newcombe, R. G. (1998), "Interval estimation for the difference between independent
/// proportions: comparison of eleven methods", *Statistics in Medicine* 17, 873–890.
pub fn newcombe_independent(
    x1: u64,
    n1: u64,
    x2: u64,
    n2: u64,
    confidence: f64,
) -> Result<Interval> {
    const WHAT: &str = "a Newcombe interval for independent proportions";
    check_counts(x1, n1, "n1", WHAT)?;
    check_counts(x2, n2, "n2", WHAT)?;
    let z = two_sided_z(confidence, WHAT)?;
    let (p1, p2) = (x1 as f64 / n1 as f64, x2 as f64 / n2 as f64);
    let (l1, u1) = wilson_bounds(x1, n1, z);
    let (l2, u2) = wilson_bounds(x2, n2, z);
    let delta = p1 - p2;
    let low = delta - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = delta + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    Ok(Interval::new(low.max(-1.0), high.min(1.0), confidence))
}

/// Interval for the difference p₁ − p₂ of two proportions measured on the same items (p₁ for
/// system A, p₂ for system B): Newcombe's method 10 for paired data (square-and-add of Wilson
/// intervals, corrected for the correlation between the two margins).
///
/// The 2×2 table is a = `both` (A and B right), b = `only_a`, c = `only_b`, d = `neither`;
/// N = a + b + c + d, p₁ = (a + b)/N, p₂ = (a + c)/N, θ = p₁ − p₂ = (b − c)/N.
/// With Wilson intervals (l₁, u₁) for p₁ and (l₂, u₂) for p₂, D = ad − bc and P the product of
/// the four margins (a + b)(c + d)(a + c)(b + d):
/// φ = (D − N/2)/√P if D > N/2, 0 if 0 ≤ D ≤ N/2, D/√P if D < 0, and 0 if any margin is 0.
/// L = θ − √((p₁ − l₁)² − 2φ(p₁ − l₁)(u₂ − p₂) + (u₂ − p₂)²),
/// U = θ + √((u₁ − p₁)² − 2φ(u₁ − p₁)(p₂ − l₂) + (p₂ − l₂)²).
/// Newcombe, R. G. (1998), "Improved confidence intervals for the difference between binomial
/// proportions based on paired data", *Statistics in Medicine* 17, 2635–2650; the φ rule as in
/// Fagerland, Lydersen and Laake (2017), *Statistical Analysis of Contingency Tables*, ch. 8.
pub fn newcombe_paired(
    both: u64,
    only_a: u64,
    only_b: u64,
    neither: u64,
    confidence: f64,
) -> Result<Interval> {
    const WHAT: &str = "a Newcombe interval for paired proportions";
    let total = [both, only_a, only_b, neither]
        .iter()
        .try_fold(0_u64, |sum, &count| sum.checked_add(count))
        .ok_or(StatsError::TooLarge {
            what: WHAT,
            value: both as f64 + only_a as f64 + only_b as f64 + neither as f64,
        })?;
    if total == 0 {
        return Err(StatsError::ZeroTrials {
            what: WHAT,
            name: "both + only_a + only_b + neither",
        });
    }
    let z = two_sided_z(confidence, WHAT)?;
    let (low, high) =
        newcombe_paired_bounds(both as f64, only_a as f64, only_b as f64, neither as f64, z);
    Ok(Interval::new(low, high, confidence))
}

/// The bounds of [`newcombe_paired`] for real-valued cell counts (the expected table when
/// planning), without validation: counts ≥ 0 with a positive sum.
pub(crate) fn newcombe_paired_bounds(
    both: f64,
    only_a: f64,
    only_b: f64,
    neither: f64,
    z: f64,
) -> (f64, f64) {
    let n = both + only_a + only_b + neither;
    let (a_right, a_wrong) = (both + only_a, only_b + neither);
    let (b_right, b_wrong) = (both + only_b, only_a + neither);
    let p_a = a_right / n;
    let p_b = b_right / n;
    let theta = p_a - p_b;
    let (l1, u1) = wilson_bounds_real(a_right, n, z);
    let (l2, u2) = wilson_bounds_real(b_right, n, z);

    let margins = [a_right, a_wrong, b_right, b_wrong];
    let phi = if margins.iter().any(|&m| m <= 0.0) {
        0.0
    } else {
        let root = margins.iter().map(|m| m.sqrt()).product::<f64>();
        let d = both * neither - only_a * only_b;
        if d > n / 2.0 {
            (d - n / 2.0) / root
        } else if d >= 0.0 {
            0.0
        } else {
            d / root
        }
    };
    // Distances from each estimate to its Wilson bounds.
    let (a_below, b_above) = (p_a - l1, u2 - p_b);
    let (a_above, b_below) = (u1 - p_a, p_b - l2);
    let low_reach = a_below * a_below - 2.0 * phi * a_below * b_above + b_above * b_above;
    let high_reach = a_above * a_above - 2.0 * phi * a_above * b_below + b_below * b_below;
    let low = theta - low_reach.max(0.0).sqrt();
    let high = theta + high_reach.max(0.0).sqrt();
    (low.max(-1.0), high.min(1.0))
}
