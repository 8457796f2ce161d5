//! Mean and standard error when each task is sampled several times.

use serde::{Deserialize, Serialize};

use crate::descriptive::check_finite;
use crate::error::{Result, StatsError};

/// A mean with its standard error and the number of clusters (tasks) behind it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MeanSe {
    /// Mean of the per-task means.
    pub mean: f64,
    /// Standard error of `mean`.
    pub se: f64,
    /// Number of tasks.
    pub n_clusters: usize,
}

/// Mean score and its standard error when each task has one or more samples (e.g. several
/// attempts at temperature > 0).
///
/// Each task is first averaged, m̄ₖ = mean of its samples; then mean = Σm̄ₖ/K and
/// se = s(m̄)/√K with s the sample standard deviation (n − 1) of the K task means. Treating
/// every sample as independent would understate the error. Each task weighs the same,
/// whatever its number of samples. Needs K ≥ 2.
/// Miller, E. (2024), "Adding Error Bars to Evals: A Statistical Approach to Language Model
/// Evaluations", arXiv:2411.00640, section on resampling.
pub fn clustered_mean_se(per_task_samples: &[Vec<f64>]) -> Result<MeanSe> {
    const WHAT: &str = "a task-clustered standard error";
    if per_task_samples.len() < 2 {
        return Err(StatsError::TooFewValues {
            what: WHAT,
            needed: 2,
            got: per_task_samples.len(),
        });
    }
    let mut task_means = Vec::with_capacity(per_task_samples.len());
    for (index, samples) in per_task_samples.iter().enumerate() {
        if samples.is_empty() {
            return Err(StatsError::EmptyTask { what: WHAT, index });
        }
        check_finite(samples, WHAT)?;
        task_means.push(samples.iter().sum::<f64>() / samples.len() as f64);
    }
    let k = task_means.len() as f64;
    let mean = task_means.iter().sum::<f64>() / k;
    let variance = task_means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0);
    Ok(MeanSe {
        mean,
        se: (variance / k).sqrt(),
        n_clusters: task_means.len(),
    })
}
