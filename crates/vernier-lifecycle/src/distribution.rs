//! Small statistics of a set of values: median, smallest and largest.

use serde::{Deserialize, Serialize};

/// Median, smallest and largest of a set of values (seconds or milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Distribution {
    /// Values summarised.
    pub n: usize,
    /// The median (type 7).
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// Every value, in the order measured.
    pub values: Vec<f64>,
}

impl Distribution {
    /// `None` for no (finite) values.
    pub fn of(values: &[f64]) -> Option<Self> {
        let values: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let median = vernier_stats::median(&values).ok()?;
        Some(Self {
            n: values.len(),
            median,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            values,
        })
    }
}
