//! The rank interval of a shift: the Mann–Whitney critical values of the published tables, the
//! interval's bounds against every difference sorted, and its coverage over simulated samples.

use vernier_stats::{SplitMix64, mann_whitney_critical, shift_interval};

#[test]
fn critical_values_are_the_tables() {
    // Two-sided 0.05 critical values of U (reject when U ≤ c), as tabled in Zar (2010),
    // *Biostatistical Analysis*, 5th ed., Table B.11, and every Mann–Whitney table.
    for (n, m, expected) in [
        (3, 5, 0),
        (3, 8, 2),
        (4, 4, 0),
        (4, 6, 2),
        (4, 8, 4),
        (5, 5, 2),
        (5, 8, 6),
        (6, 6, 5),
        (7, 7, 8),
        (7, 8, 10),
        (8, 8, 13),
        (9, 9, 17),
        (10, 10, 23),
        (20, 20, 127),
    ] {
        assert_eq!(
            mann_whitney_critical(n, m, 0.95).expect("valid"),
            Some(expected),
            "{n} against {m}"
        );
        assert_eq!(
            mann_whitney_critical(m, n, 0.95).expect("valid"),
            Some(expected)
        );
    }
    // Too few values for any test at 95%: each ordering of 3 against 3 has chance 1/20.
    assert_eq!(mann_whitney_critical(3, 3, 0.95).expect("valid"), None);
    assert_eq!(mann_whitney_critical(2, 2, 0.95).expect("valid"), None);
    assert_eq!(mann_whitney_critical(3, 3, 0.90).expect("valid"), Some(0));
    // Where the exact count hands over to the normal approximation, the two agree.
    assert_eq!(
        mann_whitney_critical(60, 60, 0.95).expect("exact"),
        Some(1_426)
    );
    assert_eq!(
        mann_whitney_critical(61, 60, 0.95).expect("approximate"),
        Some(1_451)
    );
    assert!(mann_whitney_critical(0, 4, 0.95).is_err());
    assert!(mann_whitney_critical(4, 4, 1.0).is_err());
}

#[test]
fn the_interval_is_the_sorted_differences_at_the_critical_ranks() {
    let a = [12.1, 9.8, 14.0, 11.5, 13.2, 10.9, 12.7];
    let b = [8.4, 10.2, 9.1, 7.7, 11.0, 9.6];
    let mut differences: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| x - y))
        .collect();
    differences.sort_by(f64::total_cmp);
    // 7 against 6 at 0.95: c = 6, so the 7th smallest and the 7th largest of 42.
    let c = mann_whitney_critical(7, 6, 0.95)
        .expect("valid")
        .expect("a value");
    assert_eq!(c, 6);
    let interval = shift_interval(&a, &b, 0.95)
        .expect("valid")
        .expect("enough values");
    assert_eq!(interval.low.to_bits(), differences[6].to_bits());
    assert_eq!(interval.high.to_bits(), differences[42 - 7].to_bits());
    assert!(interval.low > 0.0, "A's values lie above B's: {interval:?}");
    // Too few values: no interval rather than a made-up one.
    assert_eq!(
        shift_interval(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.95).expect("valid"),
        None
    );
    assert!(shift_interval(&[1.0, f64::NAN], &[1.0], 0.95).is_err());
    assert!(shift_interval(&[], &[1.0], 0.95).is_err());
}

#[test]
fn the_interval_covers_the_true_shift_at_least_as_often_as_it_says() {
    // Skewed samples (exponential), shifted by 0.7; 2,000 trials at 5 against 6 and at 12
    // against 9. Exact coverage is at least 95%; 2,000 trials put 94% three standard errors
    // below it.
    let mut rng = SplitMix64::new(17);
    for (n, m) in [(5, 6), (12, 9)] {
        let mut covered = 0;
        for _ in 0..2_000 {
            let mut draw = |count: usize, shift: f64| -> Vec<f64> {
                (0..count).map(|_| -rng.next_unit().ln() + shift).collect()
            };
            let a = draw(n, 0.7);
            let b = draw(m, 0.0);
            let interval = shift_interval(&a, &b, 0.95)
                .expect("valid")
                .expect("enough");
            covered += usize::from(interval.contains(0.7));
        }
        assert!(
            covered >= 1_880,
            "{n} against {m}: covered {covered} of 2000"
        );
    }
}
