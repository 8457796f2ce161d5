//! Exact statistics for counts of events over an exposure (a server's deaths per hour of
//! load): the Garwood interval of one rate, and the conditional test of two rates with the
//! interval of their ratio, as R's `poisson.test` computes them.

use serde::{Deserialize, Serialize};
use statrs::function::beta::beta_reg;
use statrs::function::factorial::ln_binomial;
use statrs::function::gamma::{gamma_lr, gamma_ur};

use crate::error::{Result, StatsError};

/// A rate with its exact two-sided interval, in events per unit of exposure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RateInterval {
    /// Events over exposure.
    pub rate: f64,
    /// Lower end (0 with no event).
    pub lower: f64,
    /// Upper end.
    pub upper: f64,
}

/// Two rates compared: the rate ratio `a / b`, its exact interval and the two-sided p-value of
/// equal rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RateComparison {
    /// Events of `a`.
    pub events_a: u64,
    /// Exposure of `a`.
    pub exposure_a: f64,
    /// Events of `b`.
    pub events_b: u64,
    /// Exposure of `b`.
    pub exposure_b: f64,
    /// `(events_a / exposure_a) / (events_b / exposure_b)`: infinite when only `b` has none,
    /// `None` when neither has an event.
    pub ratio: Option<f64>,
    /// Lower end of the ratio's interval (0 when `a` has no event).
    pub lower: f64,
    /// Upper end (infinite when `b` has no event).
    pub upper: f64,
    /// Two-sided exact p-value (1 with no event at all).
    pub p_value: f64,
}

impl RateComparison {
    /// Whether equal rates are rejected at level `alpha` (0.05 for 5%).
    pub fn distinguishable(&self, alpha: f64) -> bool {
        self.p_value < alpha
    }
}

fn check_confidence(what: &'static str, confidence: f64) -> Result<f64> {
    if confidence.is_finite() && confidence > 0.0 && confidence < 1.0 {
        Ok(1.0 - confidence)
    } else {
        Err(StatsError::InvalidConfidence { what, confidence })
    }
}

fn check_exposure(what: &'static str, name: &'static str, exposure: f64) -> Result<()> {
    if exposure.is_finite() && exposure > 0.0 {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            what,
            name,
            value: exposure,
            range: "(0, ∞): the time the events were counted over",
        })
    }
}

/// Solves `f(x) = target` for an `f` decreasing on `[low, high]` by bisection (to the last
/// bits of a double).
fn solve_decreasing(f: impl Fn(f64) -> f64, target: f64, mut low: f64, mut high: f64) -> f64 {
    for _ in 0..200 {
        let middle = 0.5 * (low + high);
        if middle <= low || middle >= high {
            break;
        }
        if f(middle) > target {
            low = middle;
        } else {
            high = middle;
        }
    }
    0.5 * (low + high)
}

/// The exact (Garwood 1936) interval of a Poisson mean for `events`: the means whose
/// probability of `events` or fewer (or more) is `alpha / 2`, i.e. χ² quantiles
/// `χ²(α/2; 2k)/2` and `χ²(1−α/2; 2k+2)/2`, here found on the Poisson tails themselves
/// (`P(X ≤ k; μ) = Q(k+1, μ)`, the regularised upper incomplete gamma function).
fn poisson_mean_interval(events: u64, alpha: f64) -> (f64, f64) {
    let k = events as f64;
    let half = alpha / 2.0;
    let mut high = k + 10.0;
    while gamma_ur(k + 1.0, high) > half {
        high *= 2.0;
    }
    // P(X ≤ k; μ) falls as μ grows.
    let upper = solve_decreasing(|mu| gamma_ur(k + 1.0, mu), half, 0.0, high);
    let lower = if events == 0 {
        0.0
    } else {
        // P(X ≥ k; μ) = P(k, μ) rises with μ: solve 1 − P(k, μ) = 1 − α/2.
        solve_decreasing(|mu| 1.0 - gamma_lr(k, mu), 1.0 - half, 0.0, high)
    };
    (lower, upper)
}

/// The exact two-sided interval of a Poisson rate: `events` over `exposure` (Garwood 1936,
/// as R's `poisson.test(events, exposure)`).
///
/// # Errors
/// A `confidence` outside (0, 1); an `exposure` that is not positive and finite.
pub fn poisson_rate_interval(events: u64, exposure: f64, confidence: f64) -> Result<RateInterval> {
    const WHAT: &str = "a Poisson rate interval";
    let alpha = check_confidence(WHAT, confidence)?;
    check_exposure(WHAT, "exposure", exposure)?;
    let (lower, upper) = poisson_mean_interval(events, alpha);
    Ok(RateInterval {
        rate: events as f64 / exposure,
        lower: lower / exposure,
        upper: upper / exposure,
    })
}

/// `P(X = i)` for `X ~ Binomial(n, p)`.
fn binomial_pmf(i: u64, n: u64, p: f64) -> f64 {
    if p <= 0.0 {
        return if i == 0 { 1.0 } else { 0.0 };
    }
    if p >= 1.0 {
        return if i == n { 1.0 } else { 0.0 };
    }
    let ln_choose = ln_binomial(n, i);
    let (i, n) = (i as f64, n as f64);
    (ln_choose + i * p.ln() + (n - i) * (1.0 - p).ln()).exp()
}

/// Two-sided exact binomial p-value as R's `binom.test` computes it: the probability of
/// every outcome no more likely than the one observed (with R's relative tolerance 1e-7).
fn binomial_two_sided(x: u64, n: u64, p: f64) -> f64 {
    let observed = binomial_pmf(x, n, p) * (1.0 + 1e-7);
    let total: f64 = (0..=n)
        .map(|i| binomial_pmf(i, n, p))
        .filter(|probability| *probability <= observed)
        .sum();
    total.min(1.0)
}

/// The Clopper–Pearson interval of a binomial proportion, `x` of `n` (the probabilities whose
/// tails at `x` are `alpha / 2`, from the regularised incomplete beta function).
fn clopper_pearson(x: u64, n: u64, alpha: f64) -> (f64, f64) {
    let half = alpha / 2.0;
    let (xf, nf) = (x as f64, n as f64);
    let lower = if x == 0 {
        0.0
    } else {
        // P(X ≥ x; p) = I_p(x, n − x + 1) rises with p.
        solve_decreasing(
            |p| 1.0 - beta_reg(xf, nf - xf + 1.0, p),
            1.0 - half,
            0.0,
            1.0,
        )
    };
    let upper = if x == n {
        1.0
    } else {
        // P(X ≤ x; p) = 1 − I_p(x + 1, n − x) falls with p.
        solve_decreasing(|p| 1.0 - beta_reg(xf + 1.0, nf - xf, p), half, 0.0, 1.0)
    };
    (lower, upper)
}

/// Compares two Poisson rates exactly, as R's `poisson.test(c(ka, kb), c(ta, tb))` does:
/// given `n = ka + kb` events, `ka` is Binomial(n, ta / (ta + tb)) when the rates are equal;
/// the p-value is that binomial's two-sided exact test, and the interval of the rate ratio
/// comes from the Clopper–Pearson interval `(pL, pU)` of `ka` of `n` as
/// `[pL / (1 − pL), pU / (1 − pU)] × tb / ta`.
///
/// # Errors
/// A `confidence` outside (0, 1); an exposure that is not positive and finite.
pub fn compare_poisson_rates(
    events_a: u64,
    exposure_a: f64,
    events_b: u64,
    exposure_b: f64,
    confidence: f64,
) -> Result<RateComparison> {
    const WHAT: &str = "a comparison of two Poisson rates";
    let alpha = check_confidence(WHAT, confidence)?;
    check_exposure(WHAT, "exposure_a", exposure_a)?;
    check_exposure(WHAT, "exposure_b", exposure_b)?;
    let n = events_a + events_b;
    let mut comparison = RateComparison {
        events_a,
        exposure_a,
        events_b,
        exposure_b,
        ratio: None,
        lower: 0.0,
        upper: f64::INFINITY,
        p_value: 1.0,
    };
    if n == 0 {
        return Ok(comparison);
    }
    let p = exposure_a / (exposure_a + exposure_b);
    comparison.p_value = binomial_two_sided(events_a, n, p);
    comparison.ratio = Some(if events_b == 0 {
        f64::INFINITY
    } else {
        (events_a as f64 / exposure_a) / (events_b as f64 / exposure_b)
    });
    let (low, high) = clopper_pearson(events_a, n, alpha);
    let odds = |q: f64| {
        if q >= 1.0 {
            f64::INFINITY
        } else {
            q / (1.0 - q)
        }
    };
    comparison.lower = odds(low) * exposure_b / exposure_a;
    comparison.upper = odds(high) * exposure_b / exposure_a;
    Ok(comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, relative: f64) {
        assert!(
            (got - want).abs() <= relative * want.abs().max(1e-12),
            "got {got}, want {want}"
        );
    }

    // Golden values: R's documentation of `poisson.test` (package stats) prints the first two
    // cases of each function; every value here was recomputed independently at 50 digits with
    // mpmath 1.3.0 by `tests/golden/poisson_rates.py`, which agrees with R's printed figures.

    #[test]
    fn one_rate_matches_r_and_mpmath() {
        // R: poisson.test(137, 24.19893): 5.661407, 95% CI 4.753125 6.692709.
        let interval = poisson_rate_interval(137, 24.19893, 0.95).expect("valid");
        close(interval.rate, 5.661_407_343_22, 1e-9);
        close(interval.lower, 4.753_124_804_85, 1e-8);
        close(interval.upper, 6.692_709_334_18, 1e-8);
        // No event in an hour: the rate is below 3.689 per hour (−ln 0.025).
        let none = poisson_rate_interval(0, 1.0, 0.95).expect("valid");
        assert!(none.lower == 0.0 && none.rate == 0.0);
        close(none.upper, 3.688_879_454_113_94, 1e-9);
        let three = poisson_rate_interval(3, 1.0, 0.95).expect("valid");
        close(three.lower, 0.618_672_122_895_601, 1e-8);
        close(three.upper, 8.767_273_069_742_33, 1e-8);
        let five = poisson_rate_interval(5, 2.5, 0.95).expect("valid");
        close(five.rate, 2.0, 1e-12);
        close(five.lower, 0.649_394_556_047, 1e-8);
        close(five.upper, 4.667_332_831_73, 1e-8);
    }

    #[test]
    fn two_rates_match_r_and_mpmath() {
        // R: poisson.test(c(11, 6+8+7), c(800, 1083+1050+878)): p-value 0.07967, rate ratio
        // 1.971488, 95% CI 0.8584264 4.2772659.
        let r = compare_poisson_rates(11, 800.0, 21, 3011.0, 0.95).expect("valid");
        close(r.ratio.expect("ratio"), 1.971_488_095_24, 1e-9);
        close(r.lower, 0.858_426_403_391_64, 1e-7);
        close(r.upper, 4.277_265_943_654_08, 1e-7);
        close(r.p_value, 0.079_668_633_033_3, 1e-7);
        assert!(!r.distinguishable(0.05));
        // The seed's question: 0 deaths in an hour against 3 in an hour.
        let thin = compare_poisson_rates(0, 1.0, 3, 1.0, 0.95).expect("valid");
        close(thin.p_value, 0.25, 1e-12);
        assert_eq!(thin.ratio, Some(0.0));
        assert!(thin.lower == 0.0);
        close(thin.upper, 2.419_951_893_353_40, 1e-7);
        assert!(!thin.distinguishable(0.05));
        let two_nine = compare_poisson_rates(2, 1.0, 9, 1.0, 0.95).expect("valid");
        close(two_nine.p_value, 0.065_429_687_5, 1e-9);
        close(two_nine.lower, 0.023_364_641_053_049_2, 1e-6);
        close(two_nine.upper, 1.073_638_435_829_95, 1e-7);
        let unequal = compare_poisson_rates(4, 2.0, 1, 0.5, 0.95).expect("valid");
        close(unequal.ratio.expect("ratio"), 1.0, 1e-12);
        close(unequal.p_value, 1.0, 1e-9);
        close(unequal.lower, 0.098_958_320_829_6, 1e-7);
        close(unequal.upper, 49.247_468_247_3, 1e-7);
        let one_sided = compare_poisson_rates(7, 3.0, 0, 3.0, 0.95).expect("valid");
        assert_eq!(one_sided.ratio, Some(f64::INFINITY));
        assert!(one_sided.upper.is_infinite());
        close(one_sided.lower, 1.441_308_518_835_24, 1e-7);
        close(one_sided.p_value, 0.015_625, 1e-12);
        assert!(one_sided.distinguishable(0.05));
    }

    #[test]
    fn no_event_at_all_tells_nothing() {
        let nothing = compare_poisson_rates(0, 1.0, 0, 1.0, 0.95).expect("valid");
        assert_eq!(nothing.ratio, None);
        assert!(nothing.lower == 0.0 && nothing.upper.is_infinite());
        assert!((nothing.p_value - 1.0).abs() < 1e-15);
        assert!(!nothing.distinguishable(0.05));
    }

    #[test]
    fn bad_inputs_are_refused_by_name() {
        let error = poisson_rate_interval(1, 0.0, 0.95).expect_err("no exposure");
        assert!(error.to_string().contains("exposure"), "{error}");
        let error = compare_poisson_rates(1, 1.0, 1, f64::NAN, 0.95).expect_err("NaN");
        assert!(error.to_string().contains("exposure_b"), "{error}");
        assert!(matches!(
            compare_poisson_rates(1, 1.0, 1, 1.0, 1.0),
            Err(StatsError::InvalidConfidence { .. })
        ));
    }
}
