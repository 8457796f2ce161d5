//! Location and spread: median, quantiles, mean, standard deviation, MAD.

use crate::error::{Result, StatsError};

/// Checks that `data` is non-empty and finite.
pub(crate) fn check_finite(data: &[f64], what: &'static str) -> Result<()> {
    if data.is_empty() {
        return Err(StatsError::EmptyInput { what });
    }
    match data.iter().position(|value| !value.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            what,
            index,
            value: data[index],
        }),
        None => Ok(()),
    }
}

/// A sorted copy of `data` after [`check_finite`].
fn sorted_copy(data: &[f64], what: &'static str) -> Result<Vec<f64>> {
    check_finite(data, what)?;
    let mut sorted = data.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    Ok(sorted)
}

/// Hyndman–Fan type 7 quantile of an already sorted, non-empty, finite slice; `q` in [0, 1].
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "h = (n - 1) q lies in [0, n - 1], so its floor is a valid index"
)]
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let below = h.floor();
    let index = below as usize;
    let fraction = h - below;
    match sorted.get(index + 1) {
        Some(&next) if fraction > 0.0 => sorted[index] + fraction * (next - sorted[index]),
        _ => sorted[index],
    }
}

/// The sample quantile of `data` at probability `q` ∈ [0, 1], Hyndman–Fan type 7 (R's default,
/// NumPy's `linear`).
///
/// With the sorted values x₁ ≤ … ≤ xₙ and h = (n − 1)q, the quantile is
/// x₍⌊h⌋₊₁₎ + (h − ⌊h⌋)(x₍⌊h⌋₊₂₎ − x₍⌊h⌋₊₁₎).
/// Hyndman, R. J. and Fan, Y. (1996), "Sample quantiles in statistical packages",
/// *The American Statistician* 50(4), 361–365.
pub fn quantile(data: &[f64], q: f64) -> Result<f64> {
    const WHAT: &str = "a quantile";
    if !(0.0..=1.0).contains(&q) {
        return Err(StatsError::OutOfRange {
            what: WHAT,
            name: "q",
            value: q,
            range: "[0, 1]",
        });
    }
    let sorted = sorted_copy(data, WHAT)?;
    Ok(quantile_sorted(&sorted, q))
}

/// The median: the middle value, or the mean of the two middle values (type 7 at q = 0.5).
pub fn median(data: &[f64]) -> Result<f64> {
    let sorted = sorted_copy(data, "the median")?;
    Ok(quantile_sorted(&sorted, 0.5))
}

/// The arithmetic mean Σxᵢ / n.
pub fn mean(data: &[f64]) -> Result<f64> {
    check_finite(data, "the mean")?;
    Ok(data.iter().sum::<f64>() / data.len() as f64)
}

/// The sample standard deviation with Bessel's correction,
/// s = √(Σ(xᵢ − x̄)² / (n − 1)); needs n ≥ 2. Two-pass for accuracy.
pub fn std_dev(data: &[f64]) -> Result<f64> {
    const WHAT: &str = "the standard deviation";
    check_finite(data, WHAT)?;
    if data.len() < 2 {
        return Err(StatsError::TooFewValues {
            what: WHAT,
            needed: 2,
            got: data.len(),
        });
    }
    let centre = data.iter().sum::<f64>() / data.len() as f64;
    let squares: f64 = data.iter().map(|x| (x - centre).powi(2)).sum();
    Ok((squares / (data.len() - 1) as f64).sqrt())
}

/// The factor that makes [`mad`] a consistent estimator of σ for normal data: 1 / Φ⁻¹(3/4),
/// rounded as R's `mad()` rounds it.
pub const MAD_NORMAL_CONSISTENCY: f64 = 1.4826;

/// The **unscaled** median absolute deviation, median(|xᵢ − median(x)|).
///
/// This equals R's `mad(x, constant = 1)` and SciPy's `median_abs_deviation(x)`. R's default
/// `mad(x)` multiplies by [`MAD_NORMAL_CONSISTENCY`] (1.4826); do the same to compare with it.
/// Hampel, F. R. (1974), "The influence curve and its role in robust estimation", *JASA* 69, 383–393.
pub fn mad(data: &[f64]) -> Result<f64> {
    const WHAT: &str = "the median absolute deviation";
    let sorted = sorted_copy(data, WHAT)?;
    let centre = quantile_sorted(&sorted, 0.5);
    let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - centre).abs()).collect();
    deviations.sort_unstable_by(f64::total_cmp);
    Ok(quantile_sorted(&deviations, 0.5))
}

#[cfg(test)]
mod tests {
    use super::{mad, median, quantile};
    use crate::StatsError;

    fn same(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() < 1e-12
    }

    #[test]
    fn median_of_even_and_odd_lengths() {
        assert!(same(median(&[3.0, 1.0, 2.0]).expect("median"), 2.0));
        assert!(same(median(&[4.0, 1.0, 3.0, 2.0]).expect("median"), 2.5));
        assert!(same(median(&[7.0]).expect("median"), 7.0));
    }

    #[test]
    fn quantile_ends_are_min_and_max() {
        let data = [5.0, -1.0, 3.0];
        assert!(same(quantile(&data, 0.0).expect("q0"), -1.0));
        assert!(same(quantile(&data, 1.0).expect("q1"), 5.0));
        assert!(matches!(
            quantile(&data, 1.5),
            Err(StatsError::OutOfRange { name: "q", .. })
        ));
    }

    #[test]
    fn mad_ignores_one_wild_value() {
        assert!(same(mad(&[1.0, 2.0, 3.0, 4.0, 1000.0]).expect("mad"), 1.0));
    }
}
