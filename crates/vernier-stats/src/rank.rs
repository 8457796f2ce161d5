//! Rank methods for two independent samples: the exact null distribution of the Mann–Whitney
//! statistic and the distribution-free interval for the shift between the samples.

use crate::descriptive::check_finite;
use crate::error::{Result, StatsError};
use crate::interval::Interval;
use crate::proportion::{check_confidence, normal_quantile};

/// Largest `n + m` for which [`mann_whitney_critical`] counts the exact null distribution
/// (the counts fit in 128 bits up to C(125, 62)); above it the normal approximation is used.
pub const MANN_WHITNEY_EXACT_LIMIT: usize = 120;

/// How many of the C(n + m, n) equally likely orderings of two samples of sizes `n` and `m`
/// give the Mann–Whitney statistic U = u, for u = 0 … nm: the coefficients of the Gaussian
/// binomial [n + m, n]_q = ∏ᵢ₌₁ⁿ (1 − q^(m+i)) / (1 − q^i) (Andrews 1976, *The Theory of
/// Partitions*, ch. 3). Every intermediate value is a coefficient of some [m + i, i]_q, so
/// none exceeds C(n + m, n).
fn null_counts(n: usize, m: usize) -> Vec<i128> {
    let mut counts = vec![0_i128; n * m + 1];
    counts[0] = 1;
    for i in 1..=n {
        // × (1 − q^(m+i)), from the top so that each coefficient is read before it changes.
        let shift = m + i;
        for u in (shift..counts.len()).rev() {
            counts[u] -= counts[u - shift];
        }
        // ÷ (1 − q^i): the division is exact, a running sum with stride i.
        for u in i..counts.len() {
            counts[u] += counts[u - i];
        }
    }
    counts
}

/// The lower critical value of the two-sided Mann–Whitney test of two independent samples of
/// sizes `n` and `m` at `confidence`: the largest c with P(U ≤ c) ≤ (1 − confidence)/2 under
/// the null hypothesis that both come from one continuous distribution; `None` when even
/// P(U = 0) = 1/C(n + m, n) is larger (3 against 3 at 0.95: no test at that level exists).
///
/// Exact (the distribution counted, by the Gaussian binomial) for n + m ≤ [`MANN_WHITNEY_EXACT_LIMIT`];
/// above, the normal approximation with continuity correction,
/// c = ⌊nm/2 − ½ − z·√(nm(n + m + 1)/12)⌋ (Hollander and Wolfe 1999, *Nonparametric
/// Statistical Methods*, 2nd ed., §4.1). The tables' values: c = 2 for 5 against 5, 13 for 8
/// against 8, 23 for 10 against 10.
pub fn mann_whitney_critical(n: usize, m: usize, confidence: f64) -> Result<Option<u64>> {
    const WHAT: &str = "a Mann–Whitney critical value";
    check_confidence(confidence, WHAT)?;
    if n == 0 || m == 0 {
        return Err(StatsError::EmptyInput { what: WHAT });
    }
    let tail = (1.0 - confidence) / 2.0;
    if n + m <= MANN_WHITNEY_EXACT_LIMIT {
        let counts = null_counts(n, m);
        let total: i128 = counts.iter().sum();
        let mut below = 0_i128;
        let mut critical = None;
        for (u, count) in counts.iter().enumerate() {
            below += count;
            // P(U ≤ u) = below / total; a tail the level's own rounding puts a hair below
            // (1 − 0.9 is not 0.1 in binary) still counts as the level.
            if below as f64 > tail * total as f64 * (1.0 + 1e-12) {
                break;
            }
            critical = Some(u as u64);
        }
        return Ok(critical);
    }
    let (n, m) = (n as f64, m as f64);
    let spread = (n * m * (n + m + 1.0) / 12.0).sqrt();
    let bound = (n * m / 2.0 - 0.5 - normal_quantile(1.0 - tail) * spread).floor();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a non-negative whole number below nm, which fits"
    )]
    let critical = (bound >= 0.0).then_some(bound as u64);
    Ok(critical)
}

/// The two-sided p of the Mann–Whitney test that `a` and `b` come from one continuous
/// distribution: U = #{(i, j): aᵢ > bⱼ} + ½ #{aᵢ = bⱼ}, p = 2 · min(P(U′ ≤ U), P(U′ ≥ U))
/// capped at 1. Exact (the null distribution counted, as in [`mann_whitney_critical`]) when
/// there are no ties and n + m ≤ [`MANN_WHITNEY_EXACT_LIMIT`]; otherwise the normal
/// approximation with continuity correction (Hollander and Wolfe 1999, §4.1). Mann and
/// Whitney's (1947) Table I gives P(U ≤ 2) = 0.016 for 5 against 5, so U = 2 there has
/// p = 0.032.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Result<f64> {
    const WHAT: &str = "a Mann–Whitney p";
    check_finite(a, WHAT)?;
    check_finite(b, WHAT)?;
    if a.is_empty() || b.is_empty() {
        return Err(StatsError::EmptyInput { what: WHAT });
    }
    let mut twice_u = 0_u64;
    let mut ties = false;
    for x in a {
        for y in b {
            match x.total_cmp(y) {
                std::cmp::Ordering::Greater => twice_u += 2,
                std::cmp::Ordering::Equal => {
                    twice_u += 1;
                    ties = true;
                }
                std::cmp::Ordering::Less => {}
            }
        }
    }
    let (n, m) = (a.len(), b.len());
    if !ties && n + m <= MANN_WHITNEY_EXACT_LIMIT {
        let counts = null_counts(n, m);
        let total: i128 = counts.iter().sum();
        let statistic = usize::try_from(twice_u / 2).unwrap_or(n * m).min(n * m);
        let below: i128 = counts[..=statistic].iter().sum();
        let above: i128 = counts[statistic..].iter().sum();
        let tail = below.min(above) as f64 / total as f64;
        return Ok((2.0 * tail).min(1.0));
    }
    let (n, m) = (n as f64, m as f64);
    let spread = (n * m * (n + m + 1.0) / 12.0).sqrt();
    let distance = ((twice_u as f64 / 2.0 - n * m / 2.0).abs() - 0.5).max(0.0);
    crate::multiple::normal_two_sided_p(distance / spread)
}

/// Ordered key of a finite float: the keys sort as the floats do.
fn key(value: f64) -> u64 {
    let bits = value.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

fn from_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

/// How many differences `a[i] − b[j]` are at most `t`; both slices sorted ascending. For each
/// `a[i]` the differences fall as `j` grows, and the first `j` within `t` never moves back as
/// `i` grows: one pass over each slice.
fn count_at_most(a: &[f64], b: &[f64], t: f64) -> u64 {
    let mut first = 0;
    let mut count = 0_u64;
    for &x in a {
        while first < b.len() && x - b[first] > t {
            first += 1;
        }
        count += (b.len() - first) as u64;
    }
    count
}

/// The `k`-th smallest (from 1) of the n·m differences `a[i] − b[j]`, both slices sorted
/// ascending and finite, without forming them: the smallest float t with at least `k`
/// differences at most t, found by bisection over the floats' order (at most 64 passes).
fn kth_difference(a: &[f64], b: &[f64], k: u64) -> f64 {
    let (mut low, mut high) = (key(a[0] - b[b.len() - 1]), key(a[a.len() - 1] - b[0]));
    while low < high {
        let middle = low + (high - low) / 2;
        if count_at_most(a, b, from_key(middle)) >= k {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    // −0.0 and 0.0 count alike; report 0.0.
    from_key(low) + 0.0
}

/// Distribution-free confidence interval for the shift Δ between two independent samples,
/// where `a` is distributed as `b` + Δ: the order statistics d₍c₊₁₎ and d₍nm−c₎ of the n·m
/// differences aᵢ − bⱼ, with c the Mann–Whitney critical value ([`mann_whitney_critical`]).
/// Its coverage is at least `confidence` for continuous data whatever their distribution
/// (Moses 1965; Lehmann 1975, *Nonparametrics*, §2.6; R's `wilcox.test(a, b, conf.int = TRUE)`
/// computes the same bounds). On logarithms it is the interval of a ratio of scales.
///
/// `Ok(None)` when the samples are too small for any such interval at this confidence (each
/// side needs 4 values at 0.95 when they are as many).
pub fn shift_interval(a: &[f64], b: &[f64], confidence: f64) -> Result<Option<Interval>> {
    const WHAT: &str = "a rank interval for a shift";
    check_finite(a, WHAT)?;
    check_finite(b, WHAT)?;
    let Some(critical) = mann_whitney_critical(a.len(), b.len(), confidence)? else {
        return Ok(None);
    };
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_unstable_by(f64::total_cmp);
    b.sort_unstable_by(f64::total_cmp);
    let pairs = (a.len() as u64) * (b.len() as u64);
    let low = kth_difference(&a, &b, critical + 1);
    let high = kth_difference(&a, &b, pairs - critical);
    Ok(Some(Interval::new(low, high, confidence)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// U's distribution by listing every choice of which n of the n + m ranks are A's.
    fn brute_counts(n: usize, m: usize) -> Vec<i128> {
        let mut counts = vec![0_i128; n * m + 1];
        for mask in 0_u32..(1 << (n + m)) {
            if mask.count_ones() as usize != n {
                continue;
            }
            // U = pairs (A, B) with A's rank above B's.
            let mut u = 0;
            let mut bs_below = 0;
            for rank in 0..n + m {
                if mask >> rank & 1 == 1 {
                    u += bs_below;
                } else {
                    bs_below += 1;
                }
            }
            counts[u] += 1;
        }
        counts
    }

    #[test]
    fn the_counted_distribution_is_the_listed_one() {
        for n in 1..=6 {
            for m in 1..=7 {
                assert_eq!(null_counts(n, m), brute_counts(n, m), "n {n}, m {m}");
            }
        }
    }

    #[test]
    fn ordered_keys_sort_as_the_floats_do() {
        let values = [-3.5, -1e-300, -0.0, 0.0, 1e-300, 2.0, 7e10];
        for pair in values.windows(2) {
            assert!(key(pair[0]) <= key(pair[1]), "{pair:?}");
            assert_eq!(from_key(key(pair[0])).to_bits(), pair[0].to_bits());
        }
    }

    #[test]
    fn the_kth_difference_is_the_sorted_differences_kth() {
        let a = [0.3, 1.7, 1.7, 4.0, 9.25];
        let b = [-2.0, 0.5, 1.7, 3.0];
        let mut all: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| x - y))
            .collect();
        all.sort_by(f64::total_cmp);
        for (index, expected) in all.iter().enumerate() {
            let found = kth_difference(&a, &b, index as u64 + 1);
            assert_eq!(
                found.to_bits(),
                (expected + 0.0).to_bits(),
                "k {}",
                index + 1
            );
        }
    }

    #[test]
    fn mann_whitney_p_matches_the_1947_table_and_falls_back_to_the_normal() {
        // Mann and Whitney (1947), Table I, n = m = 5: P(U <= 2) = 0.016, P(U <= 4) = 0.048
        // (8/252 and 12/252 counted).
        let b = [10.0, 11.0, 12.0, 13.0, 14.0];
        // a beats b in exactly 2 of the 25 pairs: U = 2.
        let a = [0.0, 1.0, 2.0, 10.5, 10.7];
        crate::assert_close(mann_whitney_p(&a, &b).expect("p"), 2.0 * 4.0 / 252.0, 1e-12);
        let a4 = [0.0, 1.0, 2.0, 12.5, 10.5];
        crate::assert_close(
            mann_whitney_p(&a4, &b).expect("p"),
            2.0 * 12.0 / 252.0,
            1e-12,
        );
        // Symmetric: swapping the samples gives U' = nm − U and the same p.
        crate::assert_close(mann_whitney_p(&b, &a).expect("p"), 2.0 * 4.0 / 252.0, 1e-12);
        // Six against six wholly apart: 2/C(12, 6) = 2/924.
        let low = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let high = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        crate::assert_close(mann_whitney_p(&high, &low).expect("p"), 2.0 / 924.0, 1e-12);
        // Ties: the normal approximation, never below the exact extreme's order.
        let tied = mann_whitney_p(&[1.0, 1.0, 2.0], &[1.0, 3.0, 4.0]).expect("p");
        assert!(tied > 0.1 && tied <= 1.0, "{tied}");
        assert!(mann_whitney_p(&[], &[1.0]).is_err());
    }
}
