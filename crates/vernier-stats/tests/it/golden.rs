//! Golden values. Each expected number names the program that produced it; the scripts were
//! run once with R 4.2.2 (sandwich 3.0.2), SciPy 1.17.1, NumPy 2.4.6 and statsmodels 0.15.0
//! and the output pasted here. Scripts longer than a line are in `tests/reference/`.
//!
//! R, `options(digits = 17)`:
//!   x <- c(2.5, 3.1, 4.7, 1.2, 8.9, 5.5, 3.3, 7.0, 2.2, 6.4); y <- c(1, 2, 2, 3, 10, 4, 2)
#![expect(
    clippy::excessive_precision,
    reason = "golden values are pasted with every digit the reference program printed"
)]

use vernier_stats::{
    MAD_NORMAL_CONSISTENCY, bootstrap_bca, bootstrap_percentile, clustered_mean_se, mad,
    mcnemar_exact, mcnemar_mid_p, mean, median, min_detectable_difference, newcombe_independent,
    newcombe_paired, paired_bootstrap_diff, quantile, sample_size_for_half_width, std_dev, wilson,
};

use crate::assert_close;

const X: [f64; 10] = [2.5, 3.1, 4.7, 1.2, 8.9, 5.5, 3.3, 7.0, 2.2, 6.4];
const Y: [f64; 7] = [1.0, 2.0, 2.0, 3.0, 10.0, 4.0, 2.0];

fn average(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn median_matches_r() {
    // R: median(x) → 4; median(y) → 2
    assert_close(median(&X).expect("median"), 4.0, 1e-12);
    assert_close(median(&Y).expect("median"), 2.0, 1e-12);
}

#[test]
fn quantile_matches_r_type_7() {
    // R: quantile(x, c(0, .1, .25, .5, .9, 1), type = 7)
    //   → 1.2 2.1000000000000001 2.6499999999999999 4 7.1899999999999995 8.9
    for (q, expected) in [
        (0.0, 1.2),
        (0.1, 2.100_000_000_000_000_1),
        (0.25, 2.649_999_999_999_999_9),
        (0.5, 4.0),
        (0.9, 7.189_999_999_999_999_5),
        (1.0, 8.9),
    ] {
        assert_close(quantile(&X, q).expect("quantile"), expected, 1e-12);
    }
    // R: quantile(y, c(0.05, .33, .75), type = 7) → 1.3 2.0 3.5
    for (q, expected) in [(0.05, 1.3), (0.33, 2.0), (0.75, 3.5)] {
        assert_close(quantile(&Y, q).expect("quantile"), expected, 1e-12);
    }
}

#[test]
fn mean_and_std_dev_match_r() {
    // R: mean(x) → 4.4800000000000004; mean(y) → 3.4285714285714284
    assert_close(mean(&X).expect("mean"), 4.48, 1e-12);
    assert_close(mean(&Y).expect("mean"), 3.428_571_428_571_428_4, 1e-12);
    // R: sd(x) → 2.4457673188138274; sd(y) → 3.0472470011002204
    assert_close(std_dev(&X).expect("sd"), 2.445_767_318_813_827_4, 1e-12);
    assert_close(std_dev(&Y).expect("sd"), 3.047_247_001_100_220_4, 1e-12);
}

#[test]
fn mad_is_unscaled_and_matches_r() {
    // R: mad(x, constant = 1) → 1.6499999999999999; mad(y, constant = 1) → 1
    assert_close(mad(&X).expect("mad"), 1.65, 1e-12);
    assert_close(mad(&Y).expect("mad"), 1.0, 1e-12);
    // R's default scaling: mad(x) → 2.4462899999999999; mad(y) → 1.4825999999999999
    assert_close(
        mad(&X).expect("mad") * MAD_NORMAL_CONSISTENCY,
        2.446_29,
        1e-12,
    );
    assert_close(
        mad(&Y).expect("mad") * MAD_NORMAL_CONSISTENCY,
        1.4826,
        1e-12,
    );
}

#[test]
fn wilson_matches_r_prop_test() {
    // R: prop.test(x, n, conf.level = c, correct = FALSE)$conf.int
    let cases = [
        (
            81,
            263,
            0.95,
            0.255_288_519_878_274_28,
            0.366_209_576_982_800_16,
        ),
        (0, 10, 0.95, 0.0, 0.277_532_799_862_889_15),
        (10, 10, 0.95, 0.722_467_200_137_110_85, 1.0),
        (
            230,
            280,
            0.95,
            0.772_311_082_616_430_22,
            0.861_845_748_270_308_02,
        ),
        (
            15,
            28,
            0.90,
            0.384_494_286_720_005_91,
            0.680_640_531_785_648_76,
        ),
        (1, 1, 0.99, 0.130_977_543_280_185_9, 1.0),
    ];
    for (successes, n, confidence, low, high) in cases {
        let interval = wilson(successes, n, confidence).expect("wilson");
        assert_close(interval.low, low, 1e-9);
        assert_close(interval.high, high, 1e-9);
    }
    // Exactly 0 and 1 at the ends, not 1e-17 away.
    assert_eq!(
        wilson(0, 10, 0.95).expect("wilson").low.to_bits(),
        0.0_f64.to_bits()
    );
    assert_eq!(
        wilson(10, 10, 0.95).expect("wilson").high.to_bits(),
        1.0_f64.to_bits()
    );
}

#[test]
fn newcombe_independent_matches_paper_and_statsmodels() {
    // Newcombe (1998), Statistics in Medicine 17:873–890, Table II, method 10, printed to 4
    // decimals; the full digits are statsmodels:
    //   confint_proportions_2indep(x1, n1, x2, n2, method='newcomb', compare='diff', alpha=0.05)
    let cases = [
        (
            56,
            70,
            48,
            80,
            0.052_431_472_402_364_98,
            0.333_872_654_036_906_14,
        ), // 0.0524, 0.3339
        (9, 10, 3, 10, 0.170_522_723_934_502_9, 0.809_017_973_535_488), // 0.1705, 0.8090
        (
            6,
            7,
            2,
            7,
            0.058_227_927_482_312_09,
            0.806_249_637_524_227_8,
        ), // 0.0582, 0.8062
        (
            5,
            56,
            0,
            29,
            -0.038_137_147_903_536_936,
            0.192_560_013_855_111_65,
        ), // −0.0381, 0.1926
        (
            0,
            10,
            0,
            20,
            -0.161_125_158_052_819_4,
            0.277_532_799_862_889_26,
        ), // −0.1611, 0.2775
        (
            0,
            10,
            0,
            10,
            -0.277_532_799_862_889_26,
            0.277_532_799_862_889_26,
        ), // −0.2775, 0.2775
        (10, 10, 0, 20, 0.679_086_037_141_914_5, 1.0),                  // 0.6791, 1.0000
        (10, 10, 0, 10, 0.607_509_350_430_524_1, 1.0),                  // 0.6075, 1.0000
        // The seed article's counts: 230/280 vs 228/280.
        (
            230,
            280,
            228,
            280,
            -0.056_957_106_310_887_89,
            0.071_196_965_330_118_16,
        ),
    ];
    for (x1, n1, x2, n2, low, high) in cases {
        let interval = newcombe_independent(x1, n1, x2, n2, 0.95).expect("newcombe");
        assert_close(interval.low, low, 1e-9);
        assert_close(interval.high, high, 1e-9);
    }
    // statsmodels, alpha=0.10: (-0.04661377663081306, 0.06086745077618504)
    let ninety = newcombe_independent(230, 280, 228, 280, 0.90).expect("newcombe");
    assert_close(ninety.low, -0.046_613_776_630_813_06, 1e-9);
    assert_close(ninety.high, 0.060_867_450_776_185_04, 1e-9);
}

#[test]
fn newcombe_paired_matches_published_examples() {
    // Fagerland, Lydersen and Laake (2017), ch. 8, Cavo et al. (2012) data, table 59, 6, 16, 80:
    // "estimate = -0.0621 (95% CI -0.1186 to -0.0046)" (also asserted by the authors' R
    // package contingencytables, tests/testthat/test-ch8.R).
    let cavo = newcombe_paired(59, 6, 16, 80, 0.95).expect("paired");
    assert_close(cavo.low, -0.1186, 5e-5);
    assert_close(cavo.high, -0.0046, 5e-5);
    // With no correlation term (φ = 0, here both·neither = only_a·only_b), method 10 reduces to
    // the square-and-add of the margins' Wilson intervals, i.e. Newcombe's independent method
    // 10 on the margins, whose values statsmodels gives:
    //   confint_proportions_2indep(10, 20, 10, 20, method='newcomb', compare='diff')
    //   → (-0.28383547880138194, 0.28383547880138194)
    let independent_margins = newcombe_independent(10, 20, 10, 20, 0.95).expect("independent");
    let paired = newcombe_paired(5, 5, 5, 5, 0.95).expect("paired");
    assert_close(paired.low, independent_margins.low, 1e-12);
    assert_close(paired.high, independent_margins.high, 1e-12);
    assert_close(paired.low, -0.283_835_478_801_381_94, 1e-9);
    assert_close(paired.high, 0.283_835_478_801_381_94, 1e-9);
}

#[test]
fn mcnemar_matches_r() {
    // R: binom.test(b, b + c, 0.5)$p.value and
    //    2 * (pbinom(min(b, c), b + c, .5) - 0.5 * dbinom(min(b, c), b + c, .5))
    let cases = [
        (1, 7, 0.070_312_500_000_000_028, 0.039_062_500_000_000_014),
        (6, 16, 0.052_478_790_283_203_16, 0.034_689_664_840_698_284),
        (
            12,
            2,
            0.012_939_453_125_000_003,
            0.007_385_253_906_249_997_4,
        ),
        (5, 5, 1.0, 0.999_999_999_999_999_78),
        (0, 3, 0.250_000_000_000_000_06, 0.125_000_000_000_000_03),
        (40, 60, 0.056_887_933_640_980_867, 0.046_044_066_929_342_903),
        (0, 0, 1.0, 1.0),
    ];
    for (only_a, only_b, exact, mid_p) in cases {
        assert_close(mcnemar_exact(only_a, only_b).expect("exact"), exact, 1e-10);
        assert_close(mcnemar_mid_p(only_a, only_b).expect("mid-p"), mid_p, 1e-10);
    }
    // Fagerland, Lydersen and Laake (2013), BMC Med Res Methodol 13:91, Bentur et al. data
    // (b = 1, c = 7): exact conditional p = 0.070, mid-p = 0.039.
    assert_close(mcnemar_exact(1, 7).expect("exact"), 0.070, 5e-4);
    assert_close(mcnemar_mid_p(1, 7).expect("mid-p"), 0.039, 5e-4);
}

/// 25 skewed values; golden intervals from SciPy with 400,000 resamples:
/// `scipy.stats.bootstrap((boot,), np.mean, n_resamples=400000, confidence_level=0.95,
///  method=M, random_state=np.random.default_rng(12345))`. Different generators give
/// different Monte Carlo noise, so the tolerance is 0.15 bootstrap standard errors
/// (SciPy: `standard_error` = 0.1787).
const SKEWED: [f64; 25] = [
    0.12, 0.35, 0.51, 0.08, 1.9, 0.77, 0.23, 2.8, 0.41, 0.66, 0.05, 1.2, 0.31, 0.94, 0.18, 3.6,
    0.57, 0.27, 0.83, 0.15, 1.45, 0.39, 0.09, 0.71, 2.2,
];
const BOOTSTRAP_TOLERANCE: f64 = 0.15 * 0.1787;

#[test]
fn bootstrap_percentile_matches_scipy() {
    // SciPy method='percentile': (0.5115999999999999, 1.2076)
    let interval = bootstrap_percentile(&SKEWED, average, 40_000, 0.95, 3).expect("percentile");
    assert_close(interval.low, 0.5116, BOOTSTRAP_TOLERANCE);
    assert_close(interval.high, 1.2076, BOOTSTRAP_TOLERANCE);
}

#[test]
fn bootstrap_bca_matches_scipy() {
    // SciPy method='BCa': (0.5516, 1.2875999999999999). BCa shifts this skewed sample's
    // interval up by about 0.04 and 0.08 from the percentile one; the tolerance is tighter
    // than that shift, so a missing correction fails.
    let interval = bootstrap_bca(&SKEWED, average, 40_000, 0.95, 3).expect("bca");
    assert_close(interval.low, 0.5516, BOOTSTRAP_TOLERANCE);
    assert_close(interval.high, 1.2876, BOOTSTRAP_TOLERANCE);
    assert!(
        interval.high - 1.2076 > 0.05,
        "BCa did not shift the upper bound: {interval:?}"
    );
}

#[test]
fn paired_bootstrap_diff_matches_scipy() {
    // SciPy: bootstrap((a, b), lambda a, b, axis=-1: a.mean(axis) - b.mean(axis), paired=True,
    //   n_resamples=400000, confidence_level=0.95, method='percentile',
    //   random_state=np.random.default_rng(7))
    //   → (0.017333333333333423, 0.05466666666666675), standard_error 0.009584
    let a = [
        0.81, 0.62, 0.95, 0.40, 0.77, 0.58, 0.91, 0.66, 0.72, 0.49, 0.85, 0.60, 0.70, 0.55, 0.88,
    ];
    let b = [
        0.75, 0.60, 0.90, 0.45, 0.70, 0.50, 0.93, 0.61, 0.65, 0.47, 0.80, 0.52, 0.71, 0.50, 0.84,
    ];
    let tolerance = 0.15 * 0.009_584;
    let interval = paired_bootstrap_diff(&a, &b, average, 40_000, 0.95, 11).expect("paired");
    assert_close(interval.low, 0.017_333, tolerance);
    assert_close(interval.high, 0.054_667, tolerance);
    // Ignoring the pairing would give a far wider interval (the arms' own spread is ~0.15).
    assert!(interval.width() < 0.05);
}

#[test]
fn clustered_mean_se_matches_cluster_robust_regression() {
    // Cluster-robust (sandwich) standard error of a regression on a constant, clusters = tasks,
    // weights 1/n_k so every task weighs the same (tests/reference/clustered_se.R and .py):
    //   R 4.2.2, sandwich 3.0.2: sqrt(vcovCL(lm(y ~ 1, weights = w), cluster = task,
    //     type = "HC1")) → 0.16955824957813165; coef → 0.59999999999999976
    //   statsmodels 0.15.0: WLS(y, 1, weights=w).fit(cov_type='cluster',
    //     cov_kwds={'groups': task}).bse → 0.16955824957813162
    // Both scale the sandwich by G/(G − 1)·(N − 1)/(N − k); with k = 1 regressor that is
    // G/(G − 1), and G/(G − 1)·Σ(m̄ₖ − μ)²/G² = s(m̄)²/G, the crate's formula, exactly. Without
    // the correction statsmodels gives 0.15165750888103094 (= the above · √(4/5)).
    let tasks = vec![
        vec![1.0, 1.0, 0.0, 1.0],
        vec![0.0, 0.0, 0.0],
        vec![1.0, 1.0, 1.0, 1.0, 1.0],
        vec![0.5, 1.0],
        vec![0.0, 1.0, 0.0, 0.0, 1.0, 1.0],
    ];
    let result = clustered_mean_se(&tasks).expect("clustered");
    assert_close(result.mean, 0.6, 1e-12);
    assert_close(result.se, 0.169_558_249_578_131_65, 1e-12);
    assert_eq!(result.n_clusters, 5);
    // The pooled mean of all 20 samples (unweighted lm: 0.625) is a different estimator.
    assert!((result.mean - 0.625).abs() > 0.02);
}

#[test]
fn min_detectable_difference_matches_statsmodels() {
    // Independent arms, statsmodels 0.15.0:
    //   NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=1-c, power=w, ratio=1.0,
    //   alternative='two-sided') * sqrt(p * (1 - p))
    // statsmodels also counts the far tail's tiny power; that moves the sixth decimal at most.
    let cases = [
        (280, 0.82, 0.95, 0.8, 0.090_966_816_482_780_28),
        (28, 0.5, 0.95, 0.8, 0.374_376_919_727_277_7),
    ];
    for (n, p, confidence, power, expected) in cases {
        let mdd = min_detectable_difference(n, p, confidence, power, None).expect("mdd");
        assert_close(mdd, expected, 1e-6);
    }
}

#[test]
fn paired_min_detectable_difference_matches_mcnemar_power() {
    // The difference at which McNemar's asymptotic test (no continuity correction) reaches the
    // power asked for, on pairs of Bernoulli outcomes with margins p ± d/2 and correlation ρ:
    // power summed exactly over the discordant counts, solved with brentq, and checked by a
    // Monte Carlo of 200,000 data sets of correlated pairs (default_rng(20240601)), SciPy 1.17.1:
    //   python3 tests/reference/paired_power.py
    //   n 280, p 0.82, 95%, power 0.8, ρ 0.6 → 0.05680538414464921 (simulated power 0.7993)
    //   n 1000, p 0.3, 90%, power 0.9, ρ 0.25 → 0.051910332297792926 (simulated power 0.9005)
    // The crate's normal approximation evaluates the variance at p under both hypotheses; it
    // must land within 2% of the exact difference (it gives 0.05753, +1.3%, and 0.05194,
    // +0.05%). Dropping the (1 − ρ) factor, or using a one-sided z, misses by over 10%.
    let cases = [
        (280, 0.82, 0.95, 0.8, 0.6, 0.056_805_384_144_649_21),
        (1000, 0.3, 0.90, 0.9, 0.25, 0.051_910_332_297_792_926),
    ];
    for (n, p, confidence, power, rho, exact) in cases {
        let mdd = min_detectable_difference(n, p, confidence, power, Some(rho)).expect("mdd");
        assert_close(mdd, exact, 0.02 * exact);
    }
}

#[test]
fn sample_size_matches_statsmodels() {
    // statsmodels: samplesize_confint_proportion(p, h / sqrt(2), alpha=1-c)  (two arms with
    // equal n have twice one arm's variance), rounded up:
    //   2834.9966 → 2835; 768.2918 → 769; 113.6328 → 114
    assert_eq!(
        sample_size_for_half_width(0.82, 0.02, 0.95, None).expect("n"),
        2835
    );
    assert_eq!(
        sample_size_for_half_width(0.5, 0.05, 0.95, None).expect("n"),
        769
    );
    assert_eq!(
        sample_size_for_half_width(0.3, 0.1, 0.90, None).expect("n"),
        114
    );
}

#[test]
fn paired_sample_size_matches_simulated_newcombe_half_width() {
    // The smallest n whose Newcombe paired interval has a mean realised half-width ≤ h, by
    // simulation (200,000 multinomial tables per n, default_rng(1987), equal margins p,
    // discordance ψ; the interval written from Newcombe (1998) and checked on the Cavo example),
    // SciPy 1.17.1: python3 tests/reference/paired_sample_size.py
    //   (p, h, ψ) = (0.82, 0.02, 0.1) → 979; (0.5, 0.05, 0.3) → 459; (0.7, 0.05, 0.25) → 386;
    //   (0.5, 0.05, 0.02) → 54; (0.82, 0.05, 0.05) → 107   (all at 95%)
    // The crate's n must be at least that (the half-width is met on average) and at most 3%
    // above it. The normal approximation ⌈z²ψ/h²⌉ (961, 461, 385, 31, 77) falls short in four
    // of the five: with few discordant items the score interval is wider than Wald's.
    let cases = [
        (0.82, 0.02, 0.1, 979),
        (0.5, 0.05, 0.3, 459),
        (0.7, 0.05, 0.25, 386),
        (0.5, 0.05, 0.02, 54),
        (0.82, 0.05, 0.05, 107),
    ];
    for (p, h, psi, simulated) in cases {
        let n = sample_size_for_half_width(p, h, 0.95, Some(psi)).expect("n");
        assert!(
            n >= simulated && n * 100 <= simulated * 103,
            "p {p}, h {h}, ψ {psi}: planned {n}, simulated smallest {simulated}"
        );
    }
}

#[test]
fn readme_example_prints_what_it_claims() {
    // The numbers in README.md's example.
    assert_eq!(
        format!("{:.1}", wilson(20, 28, 0.95).expect("wilson").scaled(100.0)),
        "[+52.9, +84.7]"
    );
    let difference = newcombe_paired(15, 5, 2, 6, 0.95).expect("paired");
    assert_eq!(difference.scaled(100.0).to_string(), "[−8.4, +28.8]");
    assert_eq!(
        format!("{:.2}", mcnemar_mid_p(5, 2).expect("mid-p")),
        "0.29"
    );
    assert_eq!(
        sample_size_for_half_width(0.7, 0.05, 0.95, Some(0.25)).expect("n"),
        387
    );
}

#[test]
fn paired_sample_size_for_power_matches_connors_formula_by_hand() {
    // Connor (1987) eq. 3 by hand (python3, statistics.NormalDist): z(0.975) = 1.959964,
    // z(0.8) = 0.841621; ψ = 0.2, δ = 0.05: (1.959964·√0.2 + 0.841621·√0.1975)² / 0.0025
    // = (0.876523 + 0.374028)² / 0.0025 = 625.55 → 626 items per arm.
    assert_eq!(
        vernier_stats::paired_sample_size_for_power(0.05, 0.2, 0.95, 0.8).expect("valid"),
        626
    );
    assert!(vernier_stats::paired_sample_size_for_power(0.05, 0.002, 0.95, 0.8).is_err());
}

#[test]
fn the_seeds_700_per_arm_is_a_four_point_interval_not_a_two_point_one() {
    // The seed (003): 280 MMLU-Pro questions per model gave a 95% interval on the difference of
    // [−5.6, +7.0] points, half-width 6.3; "narrowing it to something like two points would
    // need roughly 700 questions per arm". The interval's half-width is z·√(ψ/n), so the
    // discordance it implies is ψ = 280·(0.063/1.959964)² = 0.2893 (python3, by hand).
    let psi = 280.0 * (0.063_f64 / 1.959_963_984_540_054).powi(2);
    // Narrowing the interval to ±2 points takes z²ψ/0.02² = 2,779 questions per arm, and
    // detecting a 2-point difference with 80% power 5,675; 700 per arm gives ±4 points (695).
    let z = 1.959_963_984_540_054_f64;
    assert!(((z * z * psi / 0.02_f64.powi(2)).ceil() - 2779.0).abs() < 0.5);
    assert!(((z * z * psi / 0.04_f64.powi(2)).ceil() - 695.0).abs() < 0.5);
    assert_eq!(
        vernier_stats::paired_sample_size_for_power(0.02, psi, 0.95, 0.8).expect("valid"),
        5675
    );
}
