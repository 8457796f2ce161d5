//! Planning: the smallest detectable difference and the items needed for a given precision.

use crate::error::{Result, StatsError};
use crate::proportion::{check_open_unit, newcombe_paired_bounds, normal_quantile, two_sided_z};

fn check_correlation(value: f64, what: &'static str) -> Result<()> {
    if (-1.0..1.0).contains(&value) {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            what,
            name: "paired_correlation",
            value,
            range: "[-1, 1)",
        })
    }
}

/// The smallest true difference between two proportions near `p`, measured on `n` items per
/// arm, that a two-sided test at level 1 − `confidence` detects with probability `power`.
///
/// Returned as a proportion (multiply by 100 for points):
/// δ = (z₁₋α/₂ + z₁₋β)·√(2p(1 − p)(1 − ρ)/n) with 1 − β = `power`,
/// where ρ is `paired_correlation`, the correlation between the two arms' outcomes on the same
/// item (`None` for independent samples, ρ = 0). The normal approximation of Fleiss, Levin and
/// Paik (2003), *Statistical Methods for Rates and Proportions*, 3rd ed., ch. 4, with the
/// variance of a paired difference 2p(1 − p)(1 − ρ)/n.
///
/// For paired data the variance is taken at p under both hypotheses. Against the exact power of
/// McNemar's asymptotic test on pairs with margins p ± δ/2 and correlation ρ the result is
/// within 4% for n ≥ 100 (p 0.3 to 0.82, ρ 0 to 0.6, power 0.8 and 0.9), mostly slightly
/// above the exact difference; below about 50 items it can be 10% or more off.
pub fn min_detectable_difference(
    n: u64,
    p: f64,
    confidence: f64,
    power: f64,
    paired_correlation: Option<f64>,
) -> Result<f64> {
    const WHAT: &str = "a minimum detectable difference";
    if n == 0 {
        return Err(StatsError::ZeroTrials {
            what: WHAT,
            name: "n",
        });
    }
    check_open_unit(p, "p", WHAT)?;
    check_open_unit(power, "power", WHAT)?;
    let rho = paired_correlation.unwrap_or(0.0);
    check_correlation(rho, WHAT)?;
    let z_alpha = two_sided_z(confidence, WHAT)?;
    let z_power = normal_quantile(power);
    Ok((z_alpha + z_power) * (2.0 * p * (1.0 - p) * (1.0 - rho) / n as f64).sqrt())
}

/// Items per arm so that the interval on a difference of two proportions near `p` has
/// half-width at most `half_width` (a proportion: 0.02 for ±2 points).
///
/// Independent arms (`paired_discordance` = `None`): the normal-approximation (Wald) interval,
/// n = ⌈z²·2p(1 − p)/h²⌉.
///
/// Paired (both arms on the same items), with ψ = `paired_discordance` the expected share of
/// items on which the arms disagree: the smallest n at which [`newcombe_paired`], the interval
/// this crate reports for paired data, has half-width at most h when evaluated at the expected
/// table of n items with equal margins p: n(p − ψ/2) both right, nψ/2 only A, nψ/2 only B,
/// n(1 − p − ψ/2) neither, so ψ must lie in (0, 2·min(p, 1 − p)]. For large nψ this is close to
/// the normal approximation ⌈z²ψ/h²⌉, since Var(p̂₁ − p̂₂) = (ψ − δ²)/n ≤ ψ/n (Connor, R. J.
/// (1987), "Sample size for testing differences in proportions for the paired-sample design",
/// *Biometrics* 43, 207–211); when few discordant items are expected the score interval is far
/// wider than that approximation (about 1.5 times at p = 0.5, ψ = 0.02, h = 0.05), which would
/// then plan too few items.
///
/// [`newcombe_paired`]: crate::newcombe_paired
pub fn sample_size_for_half_width(
    p: f64,
    half_width: f64,
    confidence: f64,
    paired_discordance: Option<f64>,
) -> Result<u64> {
    const WHAT: &str = "a sample size";
    check_open_unit(p, "p", WHAT)?;
    if !(half_width > 0.0 && half_width <= 1.0) {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "half_width",
            value: half_width,
            range: "(0, 1]",
        });
    }
    if let Some(psi) = paired_discordance
        && !(psi > 0.0 && psi <= 2.0 * p.min(1.0 - p))
    {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "paired_discordance",
            value: psi,
            range: "(0, 2·min(p, 1 − p)]",
        });
    }
    let z = two_sided_z(confidence, WHAT)?;
    let variance_per_item = paired_discordance.unwrap_or(2.0 * p * (1.0 - p));
    let exact = z * z * variance_per_item / (half_width * half_width);
    // Guard against 1e-15 noise turning an exact integer into the next one.
    let normal = (exact - 1e-9).ceil().max(1.0);
    if normal >= MAX_ITEMS {
        return Err(StatsError::TooLarge {
            what: WHAT,
            value: normal,
        });
    }
    let size = match paired_discordance {
        None => normal,
        Some(psi) => paired_size(p, psi, half_width, z, normal).ok_or(StatsError::TooLarge {
            what: WHAT,
            value: normal,
        })?,
    };
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "size is a positive integer-valued float below 2^53"
    )]
    Ok(size as u64)
}

/// Items per arm (both arms on the same items) for a two-sided test at level 1 − `confidence`
/// to detect a true difference `difference` (a proportion: 0.02 for two points) with
/// probability `power`, when the arms disagree on a share `discordance` of the items:
///
/// n = ⌈(z₁₋α/₂·√ψ + z₁₋β·√(ψ − δ²))² / δ²⌉
///
/// (Connor, R. J. (1987), "Sample size for testing differences in proportions for the
/// paired-sample design", *Biometrics* 43, 207–211, eq. 3), the power of `McNemar`'s test.
/// The discordance must exceed δ² (the arms must disagree on more items than the difference
/// needs).
pub fn paired_sample_size_for_power(
    difference: f64,
    discordance: f64,
    confidence: f64,
    power: f64,
) -> Result<u64> {
    const WHAT: &str = "a paired sample size";
    check_open_unit(power, "power", WHAT)?;
    if !(difference > 0.0 && difference < 1.0) {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "difference",
            value: difference,
            range: "(0, 1)",
        });
    }
    if !(discordance > difference * difference && discordance <= 1.0) {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "discordance",
            value: discordance,
            range: "(difference², 1]",
        });
    }
    let z_alpha = two_sided_z(confidence, WHAT)?;
    let z_power = normal_quantile(power);
    let root =
        z_alpha * discordance.sqrt() + z_power * (discordance - difference * difference).sqrt();
    let exact = root * root / (difference * difference);
    let size = (exact - 1e-9).ceil().max(1.0);
    if size >= MAX_ITEMS {
        return Err(StatsError::TooLarge {
            what: WHAT,
            value: size,
        });
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "size is a positive integer-valued float below 2^53"
    )]
    Ok(size as u64)
}

/// Sizes above 2⁵³ are not exact in `f64`; no benchmark plans that many items.
const MAX_ITEMS: f64 = 9_007_199_254_740_992.0;

/// The smallest n ≥ 1 whose expected-table Newcombe paired half-width is at most `half_width`,
/// searched from `start` (the normal approximation); `None` past [`MAX_ITEMS`]. The half-width
/// falls as n grows: the Wilson bounds narrow and φ's N/2 correction fades.
fn paired_size(p: f64, psi: f64, half_width: f64, z: f64, start: f64) -> Option<f64> {
    let half_width_at = |n: f64| {
        let (low, high) = newcombe_paired_bounds(
            n * (p - psi / 2.0),
            n * psi / 2.0,
            n * psi / 2.0,
            n * (1.0 - p - psi / 2.0),
            z,
        );
        (high - low) / 2.0
    };
    // The same 1e-9 slack as the normal formula: rounding must not add an item.
    let fits = |n: f64| half_width_at(n) <= half_width * (1.0 + 1e-9);
    let (mut too_few, mut enough) = (0.0, start);
    while !fits(enough) {
        too_few = enough;
        enough *= 2.0;
        if enough >= MAX_ITEMS {
            return None;
        }
    }
    while enough - too_few > 1.0 {
        let middle = f64::midpoint(too_few, enough).floor();
        if fits(middle) {
            enough = middle;
        } else {
            too_few = middle;
        }
    }
    Some(enough)
}
