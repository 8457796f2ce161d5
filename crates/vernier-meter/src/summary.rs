//! Weighted nearest-rank quantiles for latency summaries (finish time only; may allocate).

use crate::measurement::LatencySummary;

/// Summarises `(value, weight)` pairs. Returns `None` when there is no positive weight.
///
/// The q-quantile is the smallest value whose cumulative weight reaches `q` of the total
/// (nearest rank); with unit weights this is the textbook nearest-rank percentile.
pub(crate) fn summarise(mut samples: Vec<(f64, f64)>) -> Option<LatencySummary> {
    samples.retain(|&(value, weight)| weight > 0.0 && value.is_finite());
    if samples.is_empty() {
        return None;
    }
    // Ties share a value, so their order cannot change a quantile.
    samples.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let total_weight: f64 = samples.iter().map(|&(_, weight)| weight).sum();
    let weighted_sum: f64 = samples.iter().map(|&(value, weight)| value * weight).sum();
    let quantile = |q: f64| -> f64 {
        let target = q * total_weight;
        let tolerance = 1e-9 * total_weight;
        let mut cumulative = 0.0;
        for &(value, weight) in &samples {
            cumulative += weight;
            if cumulative + tolerance >= target {
                return value;
            }
        }
        samples.last().map_or(f64::NAN, |&(value, _)| value)
    };
    Some(LatencySummary {
        median_ms: quantile(0.5),
        p90_ms: quantile(0.9),
        p99_ms: quantile(0.99),
        mean_ms: weighted_sum / total_weight,
        max_ms: samples.last().map_or(f64::NAN, |&(value, _)| value),
    })
}

#[cfg(test)]
mod tests {
    use super::summarise;

    #[test]
    fn nearest_rank_matches_textbook_example() {
        // Nearest-rank example from the Wikipedia article "Percentile":
        // list 15, 20, 35, 40, 50 -> 30th percentile 20, 40th 20, 50th 35, 100th 50.
        let samples = [15.0, 20.0, 35.0, 40.0, 50.0]
            .iter()
            .map(|&value| (value, 1.0))
            .collect();
        let summary = summarise(samples).expect("non-empty");
        assert!((summary.median_ms - 35.0).abs() < f64::EPSILON);
        assert!((summary.p90_ms - 50.0).abs() < f64::EPSILON);
        assert!((summary.max_ms - 50.0).abs() < f64::EPSILON);
        assert!((summary.mean_ms - 32.0).abs() < 1e-12);
    }

    #[test]
    fn weights_act_as_repeated_values() {
        let weighted = summarise(vec![(10.0, 3.0), (1.0, 1.0)]).expect("non-empty");
        let repeated =
            summarise(vec![(10.0, 1.0), (10.0, 1.0), (10.0, 1.0), (1.0, 1.0)]).expect("non-empty");
        assert_eq!(weighted, repeated);
        assert!((weighted.median_ms - 10.0).abs() < f64::EPSILON);
        assert!((weighted.mean_ms - 7.75).abs() < 1e-12);
    }

    #[test]
    fn empty_or_weightless_is_none() {
        assert!(summarise(Vec::new()).is_none());
        assert!(summarise(vec![(5.0, 0.0)]).is_none());
    }
}
