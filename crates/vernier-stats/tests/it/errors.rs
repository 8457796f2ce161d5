//! Bad input gives an error naming the problem, never a panic.

use vernier_stats::{
    StatsError, bootstrap_bca, bootstrap_percentile, clustered_mean_se, mad, mean, median,
    min_detectable_difference, newcombe_independent, newcombe_paired, paired_bootstrap_diff,
    quantile, sample_size_for_half_width, std_dev, wilson,
};

fn first(values: &[f64]) -> f64 {
    values[0]
}

#[test]
fn empty_and_nan_inputs_are_errors() {
    for result in [
        median(&[]),
        mean(&[]),
        std_dev(&[]),
        mad(&[]),
        quantile(&[], 0.5),
    ] {
        assert!(
            matches!(result, Err(StatsError::EmptyInput { .. })),
            "{result:?}"
        );
    }
    let with_nan = [1.0, f64::NAN, 3.0];
    for result in [
        median(&with_nan),
        mean(&with_nan),
        std_dev(&with_nan),
        mad(&with_nan),
    ] {
        assert!(
            matches!(result, Err(StatsError::NonFinite { index: 1, .. })),
            "{result:?}"
        );
    }
    assert!(matches!(
        mean(&[f64::INFINITY]),
        Err(StatsError::NonFinite { index: 0, .. })
    ));
    assert!(matches!(
        std_dev(&[1.0]),
        Err(StatsError::TooFewValues {
            needed: 2,
            got: 1,
            ..
        })
    ));
}

#[test]
fn messages_read_after_failed_to() {
    let message = median(&[]).expect_err("empty").to_string();
    assert_eq!(
        message,
        "compute the median: the input is empty; pass at least one value"
    );
    let message = wilson(3, 10, 95.0).expect_err("bad level").to_string();
    assert!(
        message.contains("confidence 95 is outside (0, 1)"),
        "{message}"
    );
}

#[test]
fn bad_counts_and_levels_are_errors() {
    assert!(matches!(
        wilson(1, 0, 0.95),
        Err(StatsError::ZeroTrials { .. })
    ));
    assert!(matches!(
        wilson(11, 10, 0.95),
        Err(StatsError::SuccessesExceedTrials {
            successes: 11,
            trials: 10,
            ..
        })
    ));
    for confidence in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(matches!(
            wilson(1, 10, confidence),
            Err(StatsError::InvalidConfidence { .. })
        ));
    }
    assert!(newcombe_independent(1, 10, 1, 0, 0.95).is_err());
    assert!(matches!(
        newcombe_paired(0, 0, 0, 0, 0.95),
        Err(StatsError::ZeroTrials { .. })
    ));
    assert!(matches!(
        newcombe_paired(u64::MAX, 1, 0, 0, 0.95),
        Err(StatsError::TooLarge { .. })
    ));
}

#[test]
fn bootstrap_rejects_bad_input() {
    let data = [1.0, 2.0, 3.0];
    assert!(matches!(
        bootstrap_percentile(&data, first, 0, 0.95, 1),
        Err(StatsError::ZeroResamples { .. })
    ));
    assert!(matches!(
        bootstrap_bca(&[1.0], first, 100, 0.95, 1),
        Err(StatsError::TooFewValues { .. })
    ));
    assert!(matches!(
        bootstrap_percentile(&data, |_| f64::NAN, 100, 0.95, 1),
        Err(StatsError::NonFiniteStatistic { .. })
    ));
    assert!(matches!(
        paired_bootstrap_diff(&data, &[1.0], first, 100, 0.95, 1),
        Err(StatsError::LengthMismatch {
            len_a: 3,
            len_b: 1,
            ..
        })
    ));
    // A statistic whose resamples all land above the estimate (here: 0 on the first call, the
    // estimate, and 1 after) makes the BCa bias correction infinite; that must be an error.
    let calls = std::cell::Cell::new(0_u32);
    let drifting = |_: &[f64]| {
        calls.set(calls.get() + 1);
        if calls.get() == 1 { 0.0 } else { 1.0 }
    };
    assert!(matches!(
        bootstrap_bca(&data, drifting, 200, 0.95, 1),
        Err(StatsError::DegenerateBootstrap { .. })
    ));
}

#[test]
fn planning_rejects_bad_input() {
    assert!(matches!(
        min_detectable_difference(0, 0.5, 0.95, 0.8, None),
        Err(StatsError::ZeroTrials { .. })
    ));
    assert!(min_detectable_difference(100, 1.0, 0.95, 0.8, None).is_err());
    assert!(min_detectable_difference(100, 0.5, 0.95, 1.0, None).is_err());
    assert!(min_detectable_difference(100, 0.5, 0.95, 0.8, Some(1.0)).is_err());
    assert!(sample_size_for_half_width(0.5, 0.0, 0.95, None).is_err());
    assert!(sample_size_for_half_width(0.5, 0.02, 0.95, Some(0.0)).is_err());
    // ψ = 0.3 disagreements cannot fit margins of 0.9: at most 2·0.1 of items are discordant.
    assert!(matches!(
        sample_size_for_half_width(0.9, 0.02, 0.95, Some(0.3)),
        Err(StatsError::OutOfRange {
            name: "paired_discordance",
            ..
        })
    ));
    assert!(sample_size_for_half_width(0.5, 1e-9, 0.95, Some(0.5)).is_err());
    assert!(clustered_mean_se(&[vec![1.0]]).is_err());
    assert!(matches!(
        clustered_mean_se(&[vec![1.0], vec![]]),
        Err(StatsError::EmptyTask { index: 1, .. })
    ));
}
