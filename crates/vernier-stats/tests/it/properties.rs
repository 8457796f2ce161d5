//! Properties every interval must have: it holds the point estimate, widens with the
//! confidence level and narrows with more data.

use proptest::prelude::*;
use vernier_stats::{
    bootstrap_percentile, mcnemar_exact, mcnemar_mid_p, min_detectable_difference,
    newcombe_independent, newcombe_paired, quantile, sample_size_for_half_width, wilson,
};

fn average(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

proptest! {
    #[test]
    fn wilson_contains_estimate_widens_and_narrows(
        (successes, n) in (1_u64..500).prop_flat_map(|n| (0..=n, Just(n))),
        low_level in 0.5_f64..0.9,
        extra in 0.01_f64..0.09,
    ) {
        let narrow = wilson(successes, n, low_level).expect("wilson");
        let wide = wilson(successes, n, low_level + extra).expect("wilson");
        let estimate = successes as f64 / n as f64;
        prop_assert!(narrow.contains(estimate));
        prop_assert!(wide.low <= narrow.low + 1e-12 && wide.high >= narrow.high - 1e-12);
        prop_assert!(wide.width() > narrow.width());
        // Same proportion, four times the trials: a narrower interval.
        let more = wilson(successes * 4, n * 4, low_level).expect("wilson");
        prop_assert!(more.width() < narrow.width());
        prop_assert!(narrow.low >= 0.0 && narrow.high <= 1.0);
    }

    #[test]
    fn newcombe_independent_contains_difference(
        (x1, n1) in (1_u64..300).prop_flat_map(|n| (0..=n, Just(n))),
        (x2, n2) in (1_u64..300).prop_flat_map(|n| (0..=n, Just(n))),
    ) {
        let difference = x1 as f64 / n1 as f64 - x2 as f64 / n2 as f64;
        let ninety = newcombe_independent(x1, n1, x2, n2, 0.90).expect("newcombe");
        let ninety_nine = newcombe_independent(x1, n1, x2, n2, 0.99).expect("newcombe");
        prop_assert!(ninety.contains(difference));
        prop_assert!(ninety_nine.low <= ninety.low && ninety_nine.high >= ninety.high);
        let more = newcombe_independent(x1 * 5, n1 * 5, x2 * 5, n2 * 5, 0.90).expect("newcombe");
        prop_assert!(more.width() < ninety.width());
    }

    #[test]
    fn newcombe_paired_contains_difference(
        both in 0_u64..100, only_a in 0_u64..40, only_b in 0_u64..40, neither in 0_u64..100,
    ) {
        prop_assume!(both + only_a + only_b + neither > 0);
        let n = (both + only_a + only_b + neither) as f64;
        let difference = (only_a as f64 - only_b as f64) / n;
        let ninety = newcombe_paired(both, only_a, only_b, neither, 0.90).expect("paired");
        let ninety_nine = newcombe_paired(both, only_a, only_b, neither, 0.99).expect("paired");
        prop_assert!(ninety.contains(difference), "{ninety:?} vs {difference}");
        prop_assert!(ninety_nine.low <= ninety.low + 1e-12);
        prop_assert!(ninety_nine.high >= ninety.high - 1e-12);
        prop_assert!(ninety.low >= -1.0 && ninety.high <= 1.0);
        let more = newcombe_paired(both * 4, only_a * 4, only_b * 4, neither * 4, 0.90)
            .expect("paired");
        prop_assert!(more.width() <= ninety.width() + 1e-12);
    }

    #[test]
    fn bootstrap_percentile_widens_with_confidence_and_is_reproducible(
        data in prop::collection::vec(-100.0_f64..100.0, 2..40),
        seed in any::<u64>(),
    ) {
        let ninety = bootstrap_percentile(&data, average, 300, 0.90, seed).expect("bootstrap");
        let again = bootstrap_percentile(&data, average, 300, 0.90, seed).expect("bootstrap");
        let ninety_nine = bootstrap_percentile(&data, average, 300, 0.99, seed).expect("bootstrap");
        prop_assert_eq!(ninety, again);
        prop_assert!(ninety_nine.low <= ninety.low && ninety_nine.high >= ninety.high);
        let lowest = data.iter().copied().fold(f64::MAX, f64::min);
        let highest = data.iter().copied().fold(f64::MIN, f64::max);
        // A mean of resampled values can leave [min, max] only by rounding (e.g. the mean
        // of three copies of x may be x + 1 ulp), so allow a few ulps of slack.
        let slack = 1e-12 * lowest.abs().max(highest.abs()).max(1.0);
        prop_assert!(ninety.low >= lowest - slack && ninety.high <= highest + slack);
    }

    #[test]
    fn quantile_is_monotone(
        data in prop::collection::vec(-1e6_f64..1e6, 1..50),
        q1 in 0.0_f64..=1.0, q2 in 0.0_f64..=1.0,
    ) {
        let (low, high) = if q1 <= q2 { (q1, q2) } else { (q2, q1) };
        prop_assert!(quantile(&data, low).expect("q") <= quantile(&data, high).expect("q"));
    }

    #[test]
    fn mid_p_is_at_most_exact(only_a in 0_u64..200, only_b in 0_u64..200) {
        let exact = mcnemar_exact(only_a, only_b).expect("exact");
        let mid_p = mcnemar_mid_p(only_a, only_b).expect("mid-p");
        prop_assert!((0.0..=1.0).contains(&exact) && (0.0..=1.0).contains(&mid_p));
        prop_assert!(mid_p <= exact + 1e-12);
        prop_assert!((exact - mcnemar_exact(only_b, only_a).expect("exact")).abs() < 1e-12);
    }

    #[test]
    fn planning_is_monotone(n in 2_u64..10_000, p in 0.05_f64..0.95, h in 0.01_f64..0.2) {
        let fewer = min_detectable_difference(n, p, 0.95, 0.8, None).expect("mdd");
        let more = min_detectable_difference(n * 2, p, 0.95, 0.8, None).expect("mdd");
        prop_assert!(more < fewer);
        let paired = min_detectable_difference(n, p, 0.95, 0.8, Some(0.5)).expect("mdd");
        prop_assert!(paired < fewer);
        let loose = sample_size_for_half_width(p, h, 0.95, None).expect("n");
        let tight = sample_size_for_half_width(p, h / 2.0, 0.95, None).expect("n");
        prop_assert!(tight >= loose * 3 && tight <= loose * 4 + 1);
        let psi = (2.0 * p.min(1.0 - p)).min(0.2);
        let paired_loose = sample_size_for_half_width(p, h, 0.95, Some(psi)).expect("n");
        let paired_tight = sample_size_for_half_width(p, h / 2.0, 0.95, Some(psi)).expect("n");
        prop_assert!(paired_tight >= paired_loose * 2);
    }
}
