//! Mean and standard error when each task is sampled several times.

use serde::{Deserialize, Serialize};

use crate::descriptive::check_finite;
use crate::error::{Result, StatsError};
use crate::interval::Interval;
use crate::normal::normal_interval;
use crate::proportion::check_confidence;

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

/// A paired difference A − B over tasks sampled one or more times: the mean over tasks of each
/// task's mean per-sample difference, with errors clustered by task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClusteredDifference {
    /// Mean of the per-task differences.
    pub mean: f64,
    /// Standard error of `mean`: the sample standard deviation (n − 1) of the per-task
    /// differences over √(tasks) (absent with fewer than two tasks).
    pub se: Option<f64>,
    /// Paired tasks (the clusters).
    pub n_tasks: usize,
    /// Normal interval mean ± z·se at the confidence asked for, clamped to [−1, 1] (absent
    /// without `se`).
    pub interval: Option<Interval>,
}

/// The task-clustered paired difference of per-task, per-sample differences (each in
/// [−1, 1], e.g. pass A − pass B): each task's differences are averaged first, then the mean
/// and standard error over tasks are those of [`clustered_mean_se`], and the interval is the
/// normal one, mean ± z·se, clamped to [−1, 1] ([`crate::normal_interval`]).
///
/// With one task, the mean is that task's mean difference and there is no spread between
/// tasks to estimate an error from (`se` and `interval` are `None`). No task, or a task with no
/// difference, is an error.
/// Miller, E. (2024), "Adding Error Bars to Evals", arXiv:2411.00640, section 2.3.
pub fn clustered_paired_difference(
    task_differences: &[Vec<f64>],
    confidence: f64,
) -> Result<ClusteredDifference> {
    const WHAT: &str = "a task-clustered paired difference";
    check_confidence(confidence, WHAT)?;
    match task_differences {
        [] => Err(StatsError::TooFewValues {
            what: WHAT,
            needed: 1,
            got: 0,
        }),
        [only] => {
            if only.is_empty() {
                return Err(StatsError::EmptyTask {
                    what: WHAT,
                    index: 0,
                });
            }
            check_finite(only, WHAT)?;
            Ok(ClusteredDifference {
                mean: only.iter().sum::<f64>() / only.len() as f64,
                se: None,
                n_tasks: 1,
                interval: None,
            })
        }
        _ => {
            let estimate = clustered_mean_se(task_differences)?;
            Ok(ClusteredDifference {
                mean: estimate.mean,
                se: Some(estimate.se),
                n_tasks: estimate.n_clusters,
                interval: Some(normal_interval(
                    estimate.mean,
                    estimate.se,
                    confidence,
                    -1.0,
                    1.0,
                )?),
            })
        }
    }
}
