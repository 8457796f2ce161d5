//! Exact statistics for counts of events over an exposure (a server's deaths per hour of
//! load): the Garwood interval of one rate, and the conditional test of two rates with the
//! interval of their ratio, as R's `poisson.test` computes them.

use serde::{Deserialize, Serialize};
use statrs::function::beta::beta_reg;
use statrs::function::factorial::ln_binomial;
use statrs::function::gamma::{gamma_lr, gamma_ur};

use crate::error::{Result, StatsError};

/// The most events [`poisson_rate_interval`] accepts: its bounds are checked against mpmath
/// to 2·10⁻¹⁰ relative up to here, and each call stays under 0.1 s.
const MAX_RATE_EVENTS: u64 = 10_000_000_000;

/// The most events in all [`compare_poisson_rates`] accepts: up to here the regularised
/// incomplete beta function it solves on is within 10⁻⁹ of mpmath; beyond, near the centre of
/// the distribution, its error grows to 10⁻³ at a million events.
const MAX_COMPARED_EVENTS: u64 = 100_000;

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
///
/// An infinite `upper` or `ratio` serialises to JSON as `null` (`serde_json` has no infinity),
/// which does not read back as a number.
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
    /// Whether equal rates are rejected at level `alpha` (0.05 for 5%): `p_value < alpha`.
    /// Never true with no event at all (p = 1), nor for a NaN `alpha`.
    pub fn distinguishable(&self, alpha: f64) -> bool {
        self.p_value < alpha
    }
}

fn check_confidence(what: &'static str, confidence: f64) -> Result<f64> {
    if confidence > 0.0 && confidence < 1.0 {
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

fn check_events(what: &'static str, name: &'static str, events: u64, limit: u64) -> Result<()> {
    if events <= limit {
        Ok(())
    } else {
        Err(StatsError::TooManyEvents {
            what,
            name,
            events,
            limit,
        })
    }
}

/// Solves `f(x) = target` for an `f` increasing on `[low, high]` by bisection, to the last
/// bits of a double (200 halvings place any root above 10⁻⁴⁵ to full precision).
fn solve_increasing(f: impl Fn(f64) -> f64, target: f64, mut low: f64, mut high: f64) -> f64 {
    for _ in 0..200 {
        let middle = 0.5 * (low + high);
        if middle <= low || middle >= high {
            break;
        }
        if f(middle) < target {
            low = middle;
        } else {
            high = middle;
        }
    }
    0.5 * (low + high)
}

/// The exact (Garwood 1936) interval of a Poisson mean for `events` = k: the means at which
/// `P(X ≥ k) = α/2` and `P(X ≤ k) = α/2`, equal to the χ² quantiles `χ²(α/2; 2k)/2` and
/// `χ²(1 − α/2; 2k + 2)/2`. Both tails are regularised incomplete gamma functions,
/// `P(X ≥ k; μ) = P(k, μ)` and `P(X ≤ k; μ) = Q(k + 1, μ)`, each solved where it is small.
fn poisson_mean_interval(events: u64, alpha: f64) -> (f64, f64) {
    let k = events as f64;
    let half = alpha / 2.0;
    let mut high = k + 10.0;
    while gamma_ur(k + 1.0, high) > half {
        high *= 2.0;
    }
    // P(X ≤ k; μ) falls as μ grows.
    let upper = solve_increasing(|mu| -gamma_ur(k + 1.0, mu), -half, 0.0, high);
    let lower = if events == 0 {
        0.0
    } else {
        // P(X ≥ k; μ) rises with μ.
        solve_increasing(|mu| gamma_lr(k, mu), half, 0.0, high)
    };
    (lower, upper)
}

/// The exact two-sided interval of a Poisson rate, `events` over `exposure`.
///
/// With k = `events`, t = `exposure` and α = 1 − `confidence`: rate k/t, interval
/// [χ²(α/2; 2k)/(2t), χ²(1 − α/2; 2k + 2)/(2t)], the lower end 0 when k = 0; 0 events in
/// 1 hour give [0, 3.689] per hour at 95% (−ln 0.025). Garwood, F. (1936), "Fiducial limits
/// for the Poisson distribution", *Biometrika* 28, 437–442; equals R's
/// `poisson.test(events, exposure, conf.level = confidence)$conf.int`.
///
/// # Errors
/// A `confidence` outside (0, 1); an `exposure` that is not positive and finite; more than
/// 10¹⁰ events ([`StatsError::TooManyEvents`]).
pub fn poisson_rate_interval(events: u64, exposure: f64, confidence: f64) -> Result<RateInterval> {
    const WHAT: &str = "a Poisson rate interval";
    let alpha = check_confidence(WHAT, confidence)?;
    check_exposure(WHAT, "exposure", exposure)?;
    check_events(WHAT, "events", events, MAX_RATE_EVENTS)?;
    let (lower, upper) = poisson_mean_interval(events, alpha);
    Ok(RateInterval {
        rate: events as f64 / exposure,
        lower: lower / exposure,
        upper: upper / exposure,
    })
}

/// `P(X = i)` for `X ~ Binomial(n, p)`, with `q = 1 − p` given separately so that a `p` close
/// to 1 loses nothing.
fn binomial_pmf(i: u64, n: u64, p: f64, q: f64) -> f64 {
    if p <= 0.0 {
        return if i == 0 { 1.0 } else { 0.0 };
    }
    if q <= 0.0 {
        return if i == n { 1.0 } else { 0.0 };
    }
    let (fi, fn_) = (i as f64, n as f64);
    (ln_binomial(n, i) + fi * p.ln() + (fn_ - fi) * q.ln()).exp()
}

/// Two-sided exact binomial p-value as R's `binom.test` computes it: 1 when `x` equals the
/// expected count n·p, otherwise the probability of every outcome no more likely than the one
/// observed, with R's relative tolerance 1 + 10⁻⁷ on "no more likely".
fn binomial_two_sided(x: u64, n: u64, p: f64, q: f64) -> f64 {
    #[allow(clippy::float_cmp)] // R's own test: x == n * p, exactly.
    if x as f64 == n as f64 * p {
        return 1.0;
    }
    let observed = binomial_pmf(x, n, p, q) * (1.0 + 1e-7);
    let total: f64 = (0..=n)
        .map(|i| binomial_pmf(i, n, p, q))
        .filter(|probability| *probability <= observed)
        .sum();
    total.min(1.0)
}

/// The Clopper–Pearson interval of a binomial proportion, `x` of `n`, as odds `p / (1 − p)`:
/// the p at which `P(X ≥ x) = α/2` and `P(X ≤ x) = α/2`. Both tails are regularised
/// incomplete beta functions, `P(X ≥ x; p) = I_p(x, n − x + 1)` and
/// `P(X ≤ x; p) = I_{1−p}(n − x, x + 1)`; the upper end is solved for 1 − p so that its odds
/// stay exact when p is close to 1.
fn clopper_pearson_odds(x: u64, n: u64, alpha: f64) -> (f64, f64) {
    let half = alpha / 2.0;
    let (xf, nf) = (x as f64, n as f64);
    let lower = if x == 0 {
        0.0
    } else {
        let p = solve_increasing(|p| beta_reg(xf, nf - xf + 1.0, p), half, 0.0, 1.0);
        p / (1.0 - p)
    };
    let upper = if x == n {
        f64::INFINITY
    } else {
        let q = solve_increasing(|q| beta_reg(nf - xf, xf + 1.0, q), half, 0.0, 1.0);
        (1.0 - q) / q
    };
    (lower, upper)
}

/// `a`'s and `b`'s shares of the total exposure, `ta / (ta + tb)` and `tb / (ta + tb)`, halved
/// first when the sum would overflow.
fn exposure_shares(exposure_a: f64, exposure_b: f64) -> (f64, f64) {
    let (ta, tb) = if (exposure_a + exposure_b).is_finite() {
        (exposure_a, exposure_b)
    } else {
        (exposure_a / 2.0, exposure_b / 2.0)
    };
    (ta / (ta + tb), tb / (ta + tb))
}

/// `odds × scale`, with 0 and ∞ kept as they are whatever the scale (no 0 × ∞).
fn scale_odds(odds: f64, scale: f64) -> f64 {
    if odds == 0.0 || odds.is_infinite() {
        odds
    } else {
        odds * scale
    }
}

/// Compares two Poisson rates exactly, as R's `poisson.test(c(ka, kb), c(ta, tb))` does.
///
/// Given the n = ka + kb events, `ka` is Binomial(n, p₀ = ta/(ta + tb)) when the rates are
/// equal. The p-value is that binomial's two-sided exact test as R's `binom.test` computes it
/// (the probability of every outcome no more likely than `ka`, with a relative tolerance of
/// 10⁻⁷; 1 when `ka` = n·p₀ and when n = 0). The rate ratio (ka/ta)/(kb/tb) has the interval
/// `[pL/(1 − pL), pU/(1 − pU)] × tb/ta` from the Clopper–Pearson interval (pL, pU) of `ka` of
/// n: the lower end 0 when ka = 0, the upper end ∞ when kb = 0, and [0, ∞) with no event.
/// Przyborowski, J. and Wilenski, H. (1940), "Homogeneity of results in testing samples from
/// Poisson series", *Biometrika* 31, 313–323; Clopper, C. J. and Pearson, E. S. (1934),
/// *Biometrika* 26, 404–413.
///
/// # Errors
/// A `confidence` outside (0, 1); an exposure that is not positive and finite; more than
/// 100,000 events in all ([`StatsError::TooManyEvents`]).
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
    let n = events_a.saturating_add(events_b);
    check_events(WHAT, "events_a + events_b", n, MAX_COMPARED_EVENTS)?;
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
    let (p, q) = exposure_shares(exposure_a, exposure_b);
    comparison.p_value = binomial_two_sided(events_a, n, p, q);
    // tb / ta may overflow or underflow; scale_odds keeps 0 and ∞ from meeting.
    let scale = exposure_b / exposure_a;
    let counts = if events_b == 0 {
        f64::INFINITY
    } else {
        events_a as f64 / events_b as f64
    };
    comparison.ratio = Some(scale_odds(counts, scale));
    let (low, high) = clopper_pearson_odds(events_a, n, alpha);
    comparison.lower = scale_odds(low, scale);
    comparison.upper = scale_odds(high, scale);
    Ok(comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, relative: f64) {
        assert!(
            (got - want).abs() <= relative * want.abs().max(1e-300),
            "got {got}, want {want}"
        );
    }

    // Golden values. R's documentation of `poisson.test` (package stats, `?poisson.test`)
    // prints the first case of each function to 7 figures; every value here, those included,
    // was recomputed at 50 digits with mpmath 1.3.0 by `tests/golden/poisson_rates.py`, which
    // agrees with R's printed figures to the last digit R prints. Values are written to 12 or
    // more figures and checked to 1e-9 relative unless the line says otherwise.

    #[test]
    fn one_rate_matches_r_and_mpmath() {
        // R: poisson.test(137, 24.19893): rate 5.661407, 95% CI 4.753125 6.692709.
        let interval = poisson_rate_interval(137, 24.19893, 0.95).expect("valid");
        close(interval.rate, 5.661_407_343_217_241, 1e-12);
        close(interval.lower, 4.753_124_804_848_751, 1e-9);
        close(interval.upper, 6.692_709_334_176_074, 1e-9);
        // No event in an hour: the rate is below 3.689 per hour (−ln 0.025).
        let none = poisson_rate_interval(0, 1.0, 0.95).expect("valid");
        assert!(none.lower == 0.0 && none.rate == 0.0);
        close(none.upper, 3.688_879_454_113_936, 1e-9);
        let three = poisson_rate_interval(3, 1.0, 0.95).expect("valid");
        close(three.lower, 0.618_672_122_895_601_3, 1e-9);
        close(three.upper, 8.767_273_069_742_326, 1e-9);
        let five = poisson_rate_interval(5, 2.5, 0.95).expect("valid");
        close(five.rate, 2.0, 1e-12);
        close(five.lower, 0.649_394_556_047_368_2, 1e-9);
        close(five.upper, 4.667_332_831_729_068, 1e-9);
    }

    #[test]
    fn one_rate_keeps_its_precision_at_extreme_levels_and_counts() {
        // One event at 99.9999%: the lower end is about α/2 = 5e-7.
        let rare = poisson_rate_interval(1, 1.0, 0.999_999).expect("valid");
        close(rare.lower, 5.000_001_250_000_417e-7, 1e-9);
        close(rare.upper, 17.422_215_012_530_71, 1e-9);
        // A million events at 1%: both ends close to the centre of the distribution.
        let many = poisson_rate_interval(1_000_000, 1.0, 0.01).expect("valid");
        close(many.lower, 999_987.133_251_978, 1e-9);
        close(many.upper, 1_000_013.200_192_387, 1e-9);
    }

    #[test]
    fn two_rates_match_r_and_mpmath() {
        // R: poisson.test(c(11, 6+8+7), c(800, 1083+1050+878)): p-value 0.07967, rate ratio
        // 1.971488, 95% CI 0.8584264 4.2772659.
        let r = compare_poisson_rates(11, 800.0, 21, 3011.0, 0.95).expect("valid");
        close(r.ratio.expect("ratio"), 1.971_488_095_238_095, 1e-12);
        close(r.lower, 0.858_426_403_391_639_7, 1e-9);
        close(r.upper, 4.277_265_943_654_074, 1e-9);
        close(r.p_value, 0.079_668_633_033_329_47, 1e-9);
        assert!(!r.distinguishable(0.05));
        // The seed's question: 0 deaths in an hour against 3 in an hour. p = 2·(1/2)³.
        let thin = compare_poisson_rates(0, 1.0, 3, 1.0, 0.95).expect("valid");
        close(thin.p_value, 0.25, 1e-12);
        assert_eq!(thin.ratio, Some(0.0));
        assert!(thin.lower == 0.0);
        close(thin.upper, 2.419_951_893_353_394, 1e-9);
        assert!(!thin.distinguishable(0.05));
        // 2 against 9 in equal hours: p = 2·P(X ≤ 2), X ~ Binomial(11, ½) = 134/2048.
        let two_nine = compare_poisson_rates(2, 1.0, 9, 1.0, 0.95).expect("valid");
        close(two_nine.ratio.expect("ratio"), 2.0 / 9.0, 1e-12);
        close(two_nine.p_value, 0.065_429_687_5, 1e-12);
        close(two_nine.lower, 0.023_364_641_053_049_2, 1e-9);
        close(two_nine.upper, 1.073_638_435_829_952, 1e-9);
        assert!(!two_nine.distinguishable(0.05));
        // Unequal exposures, equal rates: 4 in 2 h against 1 in 0.5 h; 4 is exactly the
        // expected 5 × 0.8, so R's p-value is exactly 1.
        let unequal = compare_poisson_rates(4, 2.0, 1, 0.5, 0.95).expect("valid");
        close(unequal.ratio.expect("ratio"), 1.0, 1e-12);
        assert!(
            unequal.p_value.total_cmp(&1.0).is_eq(),
            "{}",
            unequal.p_value
        );
        close(unequal.lower, 0.098_958_320_829_633_28, 1e-9);
        close(unequal.upper, 49.247_468_247_330_54, 1e-9);
        // Unequal exposures, different rates: 3 in 0.7 h against 8 in 2.9 h.
        let uneven = compare_poisson_rates(3, 0.7, 8, 2.9, 0.95).expect("valid");
        close(uneven.ratio.expect("ratio"), 1.553_571_428_571_429, 1e-12);
        close(uneven.p_value, 0.456_843_261_543_277_8, 1e-9);
        close(uneven.lower, 0.265_458_797_443_192_6, 1e-9);
        close(uneven.upper, 6.472_846_015_340_414, 1e-9);
        // Only `a` dies: 7 in 3 h against none in 3 h. p = 2·(1/2)⁷.
        let one_sided = compare_poisson_rates(7, 3.0, 0, 3.0, 0.95).expect("valid");
        assert_eq!(one_sided.ratio, Some(f64::INFINITY));
        assert!(one_sided.upper.is_infinite());
        close(one_sided.lower, 1.441_308_518_835_239, 1e-9);
        close(one_sided.p_value, 0.015_625, 1e-12);
        assert!(one_sided.distinguishable(0.05));
    }

    #[test]
    fn two_rates_keep_their_precision_at_extreme_levels_and_counts() {
        // One event each at 99.9999%: pL = 1 − √(1 − α/2), pU = √(1 − α/2) solved in closed
        // form by mpmath; the upper odds are near 4e6, where 1 − pU has only 7 figures left.
        let level = compare_poisson_rates(1, 1.0, 1, 1.0, 0.999_999).expect("valid");
        close(level.lower, 2.500_000_937_500_391e-7, 1e-9);
        close(level.upper, 3_999_998.499_999_937, 1e-9);
        // 100,000 events in all, the most accepted: 49,000 against 51,000 in equal hours.
        let many = compare_poisson_rates(49_000, 1.0, 51_000, 1.0, 0.95).expect("valid");
        close(many.p_value, 2.588_716_038_346_898e-10, 1e-9);
        close(many.lower, 0.948_926_328_961_007, 1e-9);
        close(many.upper, 0.972_789_736_157_560_9, 1e-9);
        // The same counts at 10%: the ends sit near the centre of the binomial.
        let narrow = compare_poisson_rates(49_000, 1.0, 51_000, 1.0, 0.10).expect("valid");
        close(narrow.lower, 0.960_001_798_971_548_3, 1e-9);
        close(narrow.upper, 0.961_567_718_478_268_9, 1e-9);
    }

    #[test]
    fn no_event_at_all_tells_nothing() {
        let nothing = compare_poisson_rates(0, 1.0, 0, 1.0, 0.95).expect("valid");
        assert_eq!(nothing.ratio, None);
        assert!(nothing.lower == 0.0 && nothing.upper.is_infinite());
        assert!(nothing.p_value.total_cmp(&1.0).is_eq());
        assert!(!nothing.distinguishable(0.05));
    }

    #[test]
    fn extreme_exposures_give_no_nan() {
        // Exposures so short that each rate overflows: the ratio is still 10/20.
        let tiny = f64::MIN_POSITIVE;
        let short = compare_poisson_rates(10, tiny, 20, tiny, 0.95).expect("valid");
        let plain = compare_poisson_rates(10, 1.0, 20, 1.0, 0.95).expect("valid");
        close(short.ratio.expect("ratio"), 0.5, 1e-12);
        close(short.p_value, plain.p_value, 1e-12);
        close(short.lower, plain.lower, 1e-12);
        close(short.upper, plain.upper, 1e-12);
        // Exposures whose sum overflows: the shares are still ½.
        let long = compare_poisson_rates(3, f64::MAX, 1, f64::MAX, 0.95).expect("valid");
        close(long.p_value, 0.625, 1e-12);
        // tb / ta overflows to ∞: 0 × ∞ must not appear.
        for (a, b) in [(0, 3), (3, 0), (2, 2)] {
            let skewed = compare_poisson_rates(a, 1e-300, b, 1e300, 0.95).expect("valid");
            let values = [skewed.lower, skewed.upper, skewed.p_value];
            assert!(values.iter().all(|v| !v.is_nan()), "{skewed:?}");
            assert!(skewed.ratio.is_some_and(|r| !r.is_nan()), "{skewed:?}");
        }
        let rate = poisson_rate_interval(5, tiny, 0.95).expect("valid");
        assert!(!rate.rate.is_nan() && !rate.upper.is_nan());
    }

    #[test]
    fn bad_inputs_are_refused_by_name() {
        for exposure in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let error = poisson_rate_interval(1, exposure, 0.95).expect_err("bad exposure");
            assert!(
                matches!(
                    error,
                    StatsError::OutOfRange {
                        name: "exposure",
                        ..
                    }
                ),
                "{error}"
            );
            let error = compare_poisson_rates(1, exposure, 1, 1.0, 0.95).expect_err("bad a");
            assert!(error.to_string().contains("exposure_a = "), "{error}");
            let error = compare_poisson_rates(1, 1.0, 1, exposure, 0.95).expect_err("bad b");
            assert!(error.to_string().contains("exposure_b = "), "{error}");
        }
        for confidence in [0.0, 1.0, -0.5, 95.0, f64::NAN] {
            assert!(matches!(
                poisson_rate_interval(1, 1.0, confidence),
                Err(StatsError::InvalidConfidence { .. })
            ));
            assert!(matches!(
                compare_poisson_rates(1, 1.0, 1, 1.0, confidence),
                Err(StatsError::InvalidConfidence { .. })
            ));
        }
        let message = poisson_rate_interval(1, 0.0, 0.95)
            .expect_err("no exposure")
            .to_string();
        assert_eq!(
            message,
            "compute a Poisson rate interval: exposure = 0 is outside (0, ∞): the time the \
             events were counted over; pass a value in that range"
        );
    }

    #[test]
    fn counts_beyond_the_checked_range_are_refused() {
        assert!(poisson_rate_interval(MAX_RATE_EVENTS, 1.0, 0.95).is_ok());
        assert!(matches!(
            poisson_rate_interval(MAX_RATE_EVENTS + 1, 1.0, 0.95),
            Err(StatsError::TooManyEvents { name: "events", .. })
        ));
        assert!(matches!(
            compare_poisson_rates(60_000, 1.0, 40_001, 1.0, 0.95),
            Err(StatsError::TooManyEvents {
                events: 100_001,
                limit: MAX_COMPARED_EVENTS,
                ..
            })
        ));
        let error = compare_poisson_rates(u64::MAX, 1.0, 1, 1.0, 0.95).expect_err("overflow");
        assert!(
            matches!(
                error,
                StatsError::TooManyEvents {
                    events: u64::MAX,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("events_a + events_b"), "{error}");
    }
}
