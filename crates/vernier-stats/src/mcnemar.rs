//! McNemar's test for paired binary outcomes, exact and mid-p.

use statrs::function::beta::beta_reg;
use statrs::function::factorial::ln_binomial;

use crate::error::{Result, StatsError};

/// P(X ≤ k) and P(X = k) for X ~ Binomial(n, ½), with k ≤ n/2 < n.
fn lower_tail_and_mass(k: u64, n: u64) -> (f64, f64) {
    // P(X ≤ k) = I_{1/2}(n − k, k + 1), the regularized incomplete beta function.
    let tail = beta_reg((n - k) as f64, (k + 1) as f64, 0.5);
    let mass = (ln_binomial(n, k) - n as f64 * std::f64::consts::LN_2).exp();
    (tail, mass)
}

fn discordant_total(only_a: u64, only_b: u64, what: &'static str) -> Result<u64> {
    only_a.checked_add(only_b).ok_or(StatsError::TooLarge {
        what,
        value: only_a as f64 + only_b as f64,
    })
}

/// Two-sided exact (conditional) McNemar p-value from the discordant counts.
///
/// Write b = `only_a` and c = `only_b`. Under H₀ the b wins of A among the n = b + c discordant
/// pairs follow Binomial(n, ½), so p = min(1, 2·P(X ≤ min(b, c))); 1 when n = 0.
/// McNemar, Q. (1947), *Psychometrika* 12, 153–157; equals R's
/// `binom.test(only_a, only_a + only_b)$p.value`.
pub fn mcnemar_exact(only_a: u64, only_b: u64) -> Result<f64> {
    let n = discordant_total(only_a, only_b, "an exact McNemar p-value")?;
    if n == 0 {
        return Ok(1.0);
    }
    let (tail, _) = lower_tail_and_mass(only_a.min(only_b), n);
    Ok((2.0 * tail).min(1.0))
}

/// Two-sided mid-p McNemar p-value: p = 2·(P(X ≤ k) − ½·P(X = k)) with b = `only_a`,
/// c = `only_b`, k = min(b, c) and X ~ Binomial(b + c, ½); 1 when there are no discordant pairs.
///
/// Less conservative than [`mcnemar_exact`] with close to nominal size.
/// Fagerland, M. W., Lydersen, S. and Laake, P. (2013), "The McNemar test for binary
/// matched-pairs data: mid-p and asymptotic are better than exact conditional",
/// *BMC Medical Research Methodology* 13:91.
pub fn mcnemar_mid_p(only_a: u64, only_b: u64) -> Result<f64> {
    let n = discordant_total(only_a, only_b, "a mid-p McNemar p-value")?;
    if n == 0 {
        return Ok(1.0);
    }
    let (tail, mass) = lower_tail_and_mass(only_a.min(only_b), n);
    Ok((2.0 * (tail - 0.5 * mass)).clamp(0.0, 1.0))
}
