//! Seeded bootstrap intervals: percentile, BCa and paired differences.
//!
//! Resampling draws indices with ChaCha8 (`rand_chacha`) seeded by `seed_from_u64(seed)` and
//! maps each 32-bit word to `0..n` with Lemire's unbiased multiply-and-reject method, so a
//! given seed gives the same interval on every platform and release of this crate.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use crate::descriptive::{check_finite, quantile_sorted};
use crate::error::{Result, StatsError};
use crate::interval::Interval;
use crate::proportion::{check_confidence, normal_cdf, normal_quantile};

/// A uniform index in `0..n` (n ≥ 1), without modulo bias: one 32-bit word per draw when n fits
/// in 32 bits, one 64-bit word otherwise.
/// Lemire, D. (2019), "Fast random integer generation in an interval", *ACM TOMACS* 29(1).
#[expect(
    clippy::cast_possible_truncation,
    reason = "the low and high halves of a widened product are taken on purpose"
)]
fn draw_index(rng: &mut ChaCha8Rng, n: usize) -> usize {
    if let Ok(range) = u32::try_from(n) {
        let mut product = u64::from(rng.next_u32()) * u64::from(range);
        if (product as u32) < range {
            let threshold = range.wrapping_neg() % range;
            while (product as u32) < threshold {
                product = u64::from(rng.next_u32()) * u64::from(range);
            }
        }
        // The high half is < range = n, so it fits in usize.
        return (product >> 32) as usize;
    }
    let range = n as u64;
    let mut product = u128::from(rng.next_u64()) * u128::from(range);
    if (product as u64) < range {
        let threshold = range.wrapping_neg() % range;
        while (product as u64) < threshold {
            product = u128::from(rng.next_u64()) * u128::from(range);
        }
    }
    (product >> 64) as usize
}

fn finite_statistic(value: f64, what: &'static str) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(StatsError::NonFiniteStatistic { what, value })
    }
}

fn check_inputs(data: &[f64], resamples: usize, confidence: f64, what: &'static str) -> Result<()> {
    check_finite(data, what)?;
    if resamples == 0 {
        return Err(StatsError::ZeroResamples { what });
    }
    check_confidence(confidence, what)
}

/// `resamples` finite values of `replicate`, each drawn with the one seeded generator, sorted.
fn sorted_replicates(
    resamples: usize,
    seed: u64,
    what: &'static str,
    mut replicate: impl FnMut(&mut ChaCha8Rng) -> f64,
) -> Result<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut replicates = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        replicates.push(finite_statistic(replicate(&mut rng), what)?);
    }
    replicates.sort_unstable_by(f64::total_cmp);
    Ok(replicates)
}

/// The sorted bootstrap distribution of `statistic` over `resamples` resamples of `data`.
fn bootstrap_distribution(
    data: &[f64],
    statistic: &impl Fn(&[f64]) -> f64,
    resamples: usize,
    seed: u64,
    what: &'static str,
) -> Result<Vec<f64>> {
    let mut buffer = vec![0.0; data.len()];
    sorted_replicates(resamples, seed, what, |rng| {
        for slot in &mut buffer {
            *slot = data[draw_index(rng, data.len())];
        }
        statistic(&buffer)
    })
}

fn percentile_interval(sorted_replicates: &[f64], confidence: f64) -> Interval {
    let alpha = 1.0 - confidence;
    Interval::new(
        quantile_sorted(sorted_replicates, alpha / 2.0),
        quantile_sorted(sorted_replicates, 1.0 - alpha / 2.0),
        confidence,
    )
}

/// Percentile bootstrap interval for `statistic(data)`.
///
/// Draws `resamples` samples of size n with replacement, computes the statistic on each, and
/// returns the α/2 and 1 − α/2 quantiles (type 7) of those values.
/// Efron, B. and Tibshirani, R. J. (1993), *An Introduction to the Bootstrap*, ch. 13.
/// Reproducible: the same `seed` gives the same interval.
pub fn bootstrap_percentile(
    data: &[f64],
    statistic: impl Fn(&[f64]) -> f64,
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Result<Interval> {
    const WHAT: &str = "a percentile bootstrap interval";
    check_inputs(data, resamples, confidence, WHAT)?;
    let replicates = bootstrap_distribution(data, &statistic, resamples, seed, WHAT)?;
    Ok(percentile_interval(&replicates, confidence))
}

/// Bias-corrected and accelerated (BCa) bootstrap interval for `statistic(data)`; needs n ≥ 2.
///
/// With θ̂ the statistic on the data and θ*ᵦ on the resamples:
/// bias correction z₀ = Φ⁻¹((#{θ* < θ̂} + #{θ* ≤ θ̂}) / 2B) (ties count half, as SciPy does);
/// acceleration a = Σ(θ̄₍.₎ − θ₍ᵢ₎)³ / (6·(Σ(θ̄₍.₎ − θ₍ᵢ₎)²)^{3/2}) from the jackknife values θ₍ᵢ₎
/// (0 when they are all equal); the bounds are the quantiles of θ* at
/// α₁,₂ = Φ(z₀ + (z₀ + z_{α/2, 1−α/2}) / (1 − a(z₀ + z_{α/2, 1−α/2}))).
/// Efron, B. (1987), "Better bootstrap confidence intervals", *JASA* 82, 171–185;
/// Efron and Tibshirani (1993), ch. 14. Fails with [`StatsError::DegenerateBootstrap`] when
/// every θ* lies on one side of θ̂.
pub fn bootstrap_bca(
    data: &[f64],
    statistic: impl Fn(&[f64]) -> f64,
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Result<Interval> {
    const WHAT: &str = "a BCa bootstrap interval";
    check_inputs(data, resamples, confidence, WHAT)?;
    if data.len() < 2 {
        return Err(StatsError::TooFewValues {
            what: WHAT,
            needed: 2,
            got: data.len(),
        });
    }
    let estimate = finite_statistic(statistic(data), WHAT)?;
    let replicates = bootstrap_distribution(data, &statistic, resamples, seed, WHAT)?;

    let below = replicates.partition_point(|&value| value < estimate);
    let at_or_below = replicates.partition_point(|&value| value <= estimate);
    let share = (below + at_or_below) as f64 / (2.0 * replicates.len() as f64);
    if share <= 0.0 || share >= 1.0 {
        return Err(StatsError::DegenerateBootstrap { what: WHAT });
    }
    let z0 = normal_quantile(share);

    let mut leave_one_out = Vec::with_capacity(data.len() - 1);
    let mut jackknife = Vec::with_capacity(data.len());
    for skip in 0..data.len() {
        leave_one_out.clear();
        leave_one_out.extend_from_slice(&data[..skip]);
        leave_one_out.extend_from_slice(&data[skip + 1..]);
        jackknife.push(finite_statistic(statistic(&leave_one_out), WHAT)?);
    }
    let jackknife_mean = jackknife.iter().sum::<f64>() / jackknife.len() as f64;
    let (mut squares, mut cubes) = (0.0, 0.0);
    for value in &jackknife {
        let deviation = jackknife_mean - value;
        squares += deviation * deviation;
        cubes += deviation * deviation * deviation;
    }
    let acceleration = if squares > 0.0 {
        cubes / (6.0 * squares.powf(1.5))
    } else {
        0.0
    };

    let alpha = 1.0 - confidence;
    let adjusted = |tail: f64| -> Result<f64> {
        let z = z0 + normal_quantile(tail);
        let level = normal_cdf(z0 + z / (1.0 - acceleration * z));
        if level.is_finite() {
            Ok(level.clamp(0.0, 1.0))
        } else {
            Err(StatsError::DegenerateBootstrap { what: WHAT })
        }
    };
    let (low_level, high_level) = (adjusted(alpha / 2.0)?, adjusted(1.0 - alpha / 2.0)?);
    Ok(Interval::new(
        quantile_sorted(&replicates, low_level),
        quantile_sorted(&replicates, high_level),
        confidence,
    ))
}

/// Percentile bootstrap interval for `statistic(a) − statistic(b)` on matched samples.
///
/// Each resample draws n item indices with replacement and applies them to both `a` and `b`,
/// so the pairing (the same question answered by two systems) is kept; the interval is the
/// α/2 and 1 − α/2 quantiles of statistic(a*) − statistic(b*).
/// Efron and Tibshirani (1993), ch. 13; the paired design as in SciPy's
/// `bootstrap(..., paired=True, method="percentile")`.
pub fn paired_bootstrap_diff(
    a: &[f64],
    b: &[f64],
    statistic: impl Fn(&[f64]) -> f64,
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Result<Interval> {
    const WHAT: &str = "a paired bootstrap interval";
    if a.len() != b.len() {
        return Err(StatsError::LengthMismatch {
            what: WHAT,
            len_a: a.len(),
            len_b: b.len(),
        });
    }
    check_inputs(a, resamples, confidence, WHAT)?;
    check_finite(b, WHAT)?;
    let (mut buffer_a, mut buffer_b) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let differences = sorted_replicates(resamples, seed, WHAT, |rng| {
        for (slot_a, slot_b) in buffer_a.iter_mut().zip(buffer_b.iter_mut()) {
            let index = draw_index(rng, a.len());
            *slot_a = a[index];
            *slot_b = b[index];
        }
        statistic(&buffer_a) - statistic(&buffer_b)
    })?;
    Ok(percentile_interval(&differences, confidence))
}

#[cfg(test)]
mod tests {
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    use super::draw_index;

    #[test]
    fn indices_stay_in_range_and_cover_it() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seen = [0_u32; 7];
        for _ in 0..7000 {
            seen[draw_index(&mut rng, 7)] += 1;
        }
        // Each cell expects 1000; 6 standard deviations is about 170.
        assert!(
            seen.iter().all(|&count| (830..=1170).contains(&count)),
            "{seen:?}"
        );
        assert_eq!(draw_index(&mut rng, 1), 0);
    }
}
