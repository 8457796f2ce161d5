//! Normal quantiles and normal-approximation intervals: mean ± z·se, and the half-width of an
//! interval on a paired difference planned from an assumed discordance.

use crate::error::{Result, StatsError};
use crate::interval::Interval;
use crate::proportion::{check_confidence, check_open_unit, two_sided_z};

/// The standard normal quantile Φ⁻¹(p), for 0 < p < 1 (statrs' inverse of the normal
/// distribution function).
pub fn normal_quantile(p: f64) -> Result<f64> {
    check_open_unit(p, "p", "a normal quantile")?;
    Ok(crate::proportion::normal_quantile(p))
}

/// The two-sided critical value z = Φ⁻¹(1 − (1 − confidence)/2) of a confidence level,
/// e.g. 1.959963984540054 at 0.95.
pub fn z_for_confidence(confidence: f64) -> Result<f64> {
    two_sided_z(confidence, "a normal critical value")
}

fn check_finite_value(value: f64, index: usize, what: &'static str) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(StatsError::NonFinite { what, index, value })
    }
}

/// The normal interval mean ± z·se at `confidence`, each bound clamped to
/// `clamp_low..=clamp_high` (the range the estimate can take, e.g. [0, 1] for a rate).
///
/// `mean`, `se`, `clamp_low` and `clamp_high` must be finite (checked in that order; the
/// index of a [`StatsError::NonFinite`] is that position), `se ≥ 0` and
/// `clamp_low ≤ clamp_high`.
pub fn normal_interval(
    mean: f64,
    se: f64,
    confidence: f64,
    clamp_low: f64,
    clamp_high: f64,
) -> Result<Interval> {
    const WHAT: &str = "a normal interval";
    for (index, value) in [mean, se, clamp_low, clamp_high].into_iter().enumerate() {
        check_finite_value(value, index, WHAT)?;
    }
    if se < 0.0 {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "se",
            value: se,
            range: "[0, ∞)",
        });
    }
    if clamp_low > clamp_high {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "clamp_low",
            value: clamp_low,
            range: "(−∞, clamp_high]",
        });
    }
    let z = two_sided_z(confidence, WHAT)?;
    Ok(Interval::new(
        (mean - z * se).clamp(clamp_low, clamp_high),
        (mean + z * se).clamp(clamp_low, clamp_high),
        confidence,
    ))
}

/// Half-width, as a proportion, of a `confidence` interval on a paired difference of two
/// proportions over `n_items` independent items when a share `discordance` (ψ) of the items is
/// expected to be discordant: z·√(ψ/n) (Connor 1987, "Sample size for testing differences in
/// proportions for the paired-sample design", Biometrics 43(1), the variance of the difference
/// when the two marginal rates are equal). Multiply by 100 for points.
///
/// `n_items` must be finite and positive, `discordance` in (0, 1].
pub fn paired_difference_half_width(
    n_items: f64,
    discordance: f64,
    confidence: f64,
) -> Result<f64> {
    const WHAT: &str = "the half-width of a paired difference";
    check_finite_value(n_items, 0, WHAT)?;
    check_finite_value(discordance, 1, WHAT)?;
    if n_items <= 0.0 {
        return Err(StatsError::ZeroTrials {
            what: WHAT,
            name: "n_items",
        });
    }
    if !(discordance > 0.0 && discordance <= 1.0) {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "discordance",
            value: discordance,
            range: "(0, 1]",
        });
    }
    check_confidence(confidence, WHAT)?;
    let z = two_sided_z(confidence, WHAT)?;
    Ok(z * (discordance / n_items).sqrt())
}
