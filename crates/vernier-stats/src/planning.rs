//! Planning: the smallest detectable difference and the items needed for a given precision.

use crate::error::{Result, StatsError};
use crate::proportion::{check_open_unit, normal_quantile, two_sided_z};

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

/// Items per arm so that the normal-approximation interval on a difference of two proportions
/// near `p` has half-width at most `half_width` (a proportion: 0.02 for ±2 points).
///
/// Independent arms (`paired_discordance` = `None`): n = ⌈z²·2p(1 − p)/h²⌉.
/// Paired (both arms on the same items), with ψ = `paired_discordance` the expected share of
/// items on which the arms disagree: n = ⌈z²·ψ/h²⌉, since Var(p̂₁ − p̂₂) = (ψ − δ²)/n ≤ ψ/n
/// (Connor, R. J. (1987), "Sample size for testing differences in proportions for the
/// paired-sample design", *Biometrics* 43, 207–211). `p` is still validated but unused then.
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
    let variance_per_item = match paired_discordance {
        None => 2.0 * p * (1.0 - p),
        Some(psi) if psi > 0.0 && psi <= 1.0 => psi,
        Some(psi) => {
            return Err(StatsError::OutOfRange {
                what: WHAT,
                name: "paired_discordance",
                value: psi,
                range: "(0, 1]",
            });
        }
    };
    let z = two_sided_z(confidence, WHAT)?;
    let exact = z * z * variance_per_item / (half_width * half_width);
    // Guard against 1e-15 noise turning an exact integer into the next one.
    let size = (exact - 1e-9).ceil().max(1.0);
    if size >= u64::MAX as f64 {
        return Err(StatsError::TooLarge {
            what: WHAT,
            value: size,
        });
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "size is a positive integer-valued float below u64::MAX"
    )]
    Ok(size as u64)
}
