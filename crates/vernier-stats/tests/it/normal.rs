//! Golden values of the normal approximations: quantiles, mean ± z·se, the planned half-width
//! of a paired difference, and the task-clustered paired difference.
//!
//! SciPy is not available where these were written; the quantiles come from Python's standard
//! library (`statistics.NormalDist`, Wichura's AS 241, accurate to about 1e-16), and every other
//! value is written out by hand from them below.

use vernier_stats::{
    StatsError, clustered_paired_difference, normal_interval, normal_quantile,
    paired_difference_half_width, z_for_confidence,
};

use crate::assert_close;

#[test]
fn normal_quantiles_match_python_statistics() {
    // python3 -c "from statistics import NormalDist; print(repr(NormalDist().inv_cdf(0.975)))"
    //   → 1.9599639845400536
    assert_close(
        z_for_confidence(0.95).expect("z"),
        1.959_963_984_540_053_6,
        1e-15,
    );
    assert_close(
        normal_quantile(0.975).expect("quantile"),
        1.959_963_984_540_053_6,
        1e-15,
    );
    // NormalDist().inv_cdf(0.995) → 2.5758293035489; NormalDist().inv_cdf(0.05)
    //   → -1.6448536269514726
    assert_close(
        z_for_confidence(0.99).expect("z"),
        2.575_829_303_548_9,
        1e-14,
    );
    assert_close(
        normal_quantile(0.05).expect("quantile"),
        -1.644_853_626_951_472_6,
        1e-14,
    );
    assert!(matches!(
        normal_quantile(1.0),
        Err(StatsError::OutOfRange { .. })
    ));
    assert!(matches!(
        z_for_confidence(1.0),
        Err(StatsError::InvalidConfidence { .. })
    ));
}

#[test]
#[expect(clippy::float_cmp, reason = "the clamp gives exactly its bound")]
fn normal_interval_is_mean_plus_minus_z_se_clamped() {
    // By hand with z = 1.9599639845400536: 0.2 ∓ 0.1·z → 0.004003601545994634,
    // 0.39599639845400536 (python3: 0.2 - z*0.1, 0.2 + z*0.1).
    let interval = normal_interval(0.2, 0.1, 0.95, 0.0, 1.0).expect("interval");
    assert_close(interval.low, 0.004_003_601_545_994_634, 1e-15);
    assert_close(interval.high, 0.395_996_398_454_005_36, 1e-15);
    assert_close(interval.confidence, 0.95, 0.0);
    // 0.875 ∓ 0.125·z → 0.6300045019324934 and 1.1199..., clamped to 1.
    let clamped = normal_interval(0.875, 0.125, 0.95, 0.0, 1.0).expect("interval");
    assert_close(clamped.low, 0.630_004_501_932_493_4, 1e-15);
    assert_eq!(clamped.high, 1.0);
    assert!(matches!(
        normal_interval(f64::NAN, 0.1, 0.95, 0.0, 1.0),
        Err(StatsError::NonFinite { index: 0, .. })
    ));
    assert!(normal_interval(0.5, -0.1, 0.95, 0.0, 1.0).is_err());
    assert!(normal_interval(0.5, 0.1, 0.95, 1.0, 0.0).is_err());
}

#[test]
fn paired_difference_half_width_is_z_sqrt_psi_over_n() {
    // By hand: z·√(0.15/28) = 1.9599639845400536 · 0.07319250547113999 = 0.1434546746616852
    // (python3 -c "import math; from statistics import NormalDist;
    //  print(repr(NormalDist().inv_cdf(0.975) * math.sqrt(0.15 / 28)))"), ±14.3 points.
    assert_close(
        paired_difference_half_width(28.0, 0.15, 0.95).expect("half-width"),
        0.143_454_674_661_685_2,
        1e-15,
    );
    assert!(matches!(
        paired_difference_half_width(0.0, 0.15, 0.95),
        Err(StatsError::ZeroTrials { .. })
    ));
    assert!(matches!(
        paired_difference_half_width(f64::INFINITY, 0.15, 0.95),
        Err(StatsError::NonFinite { .. })
    ));
    assert!(paired_difference_half_width(28.0, 0.0, 0.95).is_err());
}

#[test]
fn clustered_paired_difference_matches_numpy() {
    // NumPy 2.4.6, per-task means first, se = std(ddof=1)/√tasks, mean ± 1.959963984540054·se:
    //   a = [[1,1],[1,0],[0,0],[1,1],[1,0],[1,1]]; b = [[1,0],[0,0],[0,1],[1,1],[0,0],[0,1]]
    //   m = np.array([np.mean(np.subtract(x, y)) for x, y in zip(a, b)])
    //   → 0.25 0.17078251276599332 -0.0847275742105989 0.5847275742105988
    let differences = vec![
        vec![0.0, 1.0],
        vec![1.0, 0.0],
        vec![0.0, -1.0],
        vec![0.0, 0.0],
        vec![1.0, 0.0],
        vec![1.0, 0.0],
    ];
    let result = clustered_paired_difference(&differences, 0.95).expect("difference");
    assert_close(result.mean, 0.25, 1e-12);
    assert_close(
        result.se.expect("six tasks"),
        0.170_782_512_765_993_32,
        1e-12,
    );
    assert_eq!(result.n_tasks, 6);
    let interval = result.interval.expect("six tasks");
    assert_close(interval.low, -0.084_727_574_210_598_9, 1e-12);
    assert_close(interval.high, 0.584_727_574_210_598_8, 1e-12);
    // One task: its mean difference, (1 + 0 + 0 − 1)/4 = 0, and no error estimate.
    let one = clustered_paired_difference(&[vec![1.0, 0.0, 0.0, -1.0]], 0.95).expect("one task");
    assert_close(one.mean, 0.0, 0.0);
    assert_eq!((one.se, one.n_tasks, one.interval), (None, 1, None));
    assert!(clustered_paired_difference(&[], 0.95).is_err());
    assert!(clustered_paired_difference(&[vec![]], 0.95).is_err());
}
