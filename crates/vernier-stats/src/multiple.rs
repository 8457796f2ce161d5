//! Many comparisons at once, and where the next run should fall: Holm's step-down adjustment
//! of p-values, the two-sided normal p-value, Student's t quantile and the prediction interval
//! of one new observation.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::error::{Result, StatsError};
use crate::interval::Interval;
use crate::proportion::check_confidence;

/// Holm's step-down adjusted p-values (Holm 1979, "A simple sequentially rejective multiple
/// test procedure"), in the order given: sort ascending, multiply the i-th smallest (from 0) by
/// m − i, carry the running maximum, cap at 1. Rejecting where the adjusted p is below α
/// controls the family-wise error at α.
pub fn holm(p_values: &[f64]) -> Result<Vec<f64>> {
    if let Some(&p) = p_values.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(StatsError::OutOfRange {
            what: "Holm's adjusted p-values",
            name: "p",
            value: p,
            range: "[0, 1]",
        });
    }
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p_values[*a].total_cmp(&p_values[*b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        let scaled = (p_values[index] * (m - rank) as f64).min(1.0);
        running = running.max(scaled);
        adjusted[index] = running;
    }
    Ok(adjusted)
}

/// The two-sided p-value of a standard normal statistic `z`: 2·(1 − Φ(|z|)).
pub fn normal_two_sided_p(z: f64) -> Result<f64> {
    if z.is_nan() {
        return Err(StatsError::NonFinite {
            what: "a two-sided normal p-value",
            index: 0,
            value: z,
        });
    }
    Ok((2.0 * (1.0 - crate::proportion::normal_cdf(z.abs()))).clamp(0.0, 1.0))
}

/// Student's t quantile with `df` degrees of freedom at probability `p` (0 < p < 1).
pub fn student_t_quantile(p: f64, df: f64) -> Result<f64> {
    crate::proportion::check_open_unit(p, "p", "a Student t quantile")?;
    let distribution = StudentsT::new(0.0, 1.0, df).map_err(|_| StatsError::OutOfRange {
        what: "a Student t quantile",
        name: "df",
        value: df,
        range: "(0, ∞)",
    })?;
    Ok(distribution.inverse_cdf(p))
}

/// Where one new observation of the process behind `earlier` should fall at `confidence`,
/// assuming the values are independent draws from one normal distribution: mean ± t(1 −
/// α/2, n − 1) · s · √(1 + 1/n) (the textbook prediction interval, e.g. NIST/SEMATECH
/// e-Handbook of Statistical Methods). Needs at least two values.
pub fn prediction_interval(earlier: &[f64], confidence: f64) -> Result<Interval> {
    check_confidence(confidence, "a prediction interval")?;
    if earlier.len() < 2 {
        return Err(StatsError::TooFewValues {
            what: "a prediction interval",
            needed: 2,
            got: earlier.len(),
        });
    }
    let mean = crate::mean(earlier)?;
    let sd = crate::std_dev(earlier)?;
    let n = earlier.len() as f64;
    let t = student_t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1.0)?;
    let half = t * sd * (1.0 + 1.0 / n).sqrt();
    Ok(Interval::new(mean - half, mean + half, confidence))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assert_close;

    #[test]
    fn holm_matches_the_step_down_rule_worked_by_hand() {
        // Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running
        // maximum 0.06 (Holm 1979's procedure, worked by hand).
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]).expect("a value");
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (got, want) in adjusted.iter().zip(expected) {
            assert_close(*got, want, 1e-12);
        }
        assert_eq!(holm(&[0.6, 0.9]).expect("a value"), vec![1.0, 1.0]);
        assert!(holm(&[1.5]).is_err());
    }

    #[test]
    fn t_quantiles_match_the_printed_table() {
        // NIST/SEMATECH e-Handbook, table 1.3.6.7.2 (upper critical values of t).
        assert_close(
            student_t_quantile(0.975, 4.0).expect("a value"),
            2.776,
            1e-3,
        );
        assert_close(
            student_t_quantile(0.975, 10.0).expect("a value"),
            2.228,
            1e-3,
        );
        assert_close(
            student_t_quantile(0.995, 4.0).expect("a value"),
            4.604,
            1e-3,
        );
        assert!(student_t_quantile(0.975, 0.0).is_err());
    }

    #[test]
    fn a_normal_p_value_of_1_96_is_five_percent() {
        assert_close(
            normal_two_sided_p(1.959_963_984_540_054).expect("a value"),
            0.05,
            1e-9,
        );
        assert_close(normal_two_sided_p(0.0).expect("a value"), 1.0, 1e-12);
    }

    #[test]
    fn a_prediction_interval_widens_the_spread_by_t_and_the_new_draw() {
        // Five values 9, 10, 10, 11, 10: mean 10, s = √0.5; t(0.975, 4) = 2.776445;
        // half-width = 2.776445 · 0.707107 · √1.2 = 2.150625 (worked by hand).
        let interval = prediction_interval(&[9.0, 10.0, 10.0, 11.0, 10.0], 0.95).expect("a value");
        assert_close(interval.low, 10.0 - 2.150_625, 1e-5);
        assert_close(interval.high, 10.0 + 2.150_625, 1e-5);
        assert!(prediction_interval(&[1.0], 0.95).is_err());
    }
}
