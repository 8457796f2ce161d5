//! Statistics for honest benchmark reports.
//!
//! `vernier-stats` holds the estimators a careful reader of a benchmark report asks for, and
//! nothing else: no I/O, no async runtime, no network. Every function validates its input and
//! returns a [`StatsError`] instead of panicking; every formula is written out, with its source,
//! in the function's documentation.
//!
//! - Location and spread: [`median`], [`quantile`] (Hyndman–Fan type 7), [`mean`],
//!   [`std_dev`] (n − 1), [`mad`] (unscaled).
//! - Proportions: [`wilson`], [`newcombe_independent`], [`newcombe_paired`].
//! - Paired tests: [`mcnemar_exact`], [`mcnemar_mid_p`].
//! - Two independent samples, by rank: [`mann_whitney_critical`], [`shift_interval`] (the
//!   distribution-free interval of a shift; on logarithms, of a ratio).
//! - Event rates: [`poisson_rate_interval`] (Garwood), [`compare_poisson_rates`] (the exact
//!   conditional test of two Poisson rates and the interval of their ratio).
//! - Resampling with a seed: [`bootstrap_percentile`], [`bootstrap_bca`],
//!   [`paired_bootstrap_diff`].
//! - Repeated samples per task: [`clustered_mean_se`] returning [`MeanSe`], and
//!   [`clustered_paired_difference`] returning [`ClusteredDifference`].
//! - Normal approximations: [`normal_quantile`], [`z_for_confidence`], [`normal_interval`],
//!   [`paired_difference_half_width`].
//! - Many comparisons and the next run: [`holm`], [`normal_two_sided_p`],
//!   [`student_t_quantile`], [`prediction_interval`].
//! - Planning: [`min_detectable_difference`], [`sample_size_for_half_width`].
//! - Seeded draws that repeat on every machine: [`SplitMix64`].
//!
//! Intervals come back as [`Interval`], whose `Display` prints like `[−5.6, +7.0]`.
//!
//! # Example
//!
//! Two systems answered the same 28 questions; A alone solved 5, B alone solved 2:
//!
//! ```
//! use vernier_stats::{mcnemar_mid_p, newcombe_paired, wilson};
//!
//! # fn main() -> Result<(), vernier_stats::StatsError> {
//! let a_solved = wilson(20, 28, 0.95)?;
//! println!("A solved 20/28, 95% interval {:.1}", a_solved.scaled(100.0));
//!
//! let difference = newcombe_paired(15, 5, 2, 6, 0.95)?;
//! assert!(difference.contains(3.0 / 28.0));
//! println!("A − B: {} points", difference.scaled(100.0));
//! println!("mid-p McNemar: {:.3}", mcnemar_mid_p(5, 2)?);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod bootstrap;
mod close;
mod clustered;
mod descriptive;
mod error;
mod interval;
mod mcnemar;
mod multiple;
mod normal;
mod planning;
mod poisson;
mod proportion;
mod rank;
mod splitmix;

pub use bootstrap::{bootstrap_bca, bootstrap_percentile, paired_bootstrap_diff};
pub use close::{assert_close, is_close};
pub use clustered::{ClusteredDifference, MeanSe, clustered_mean_se, clustered_paired_difference};
pub use descriptive::{MAD_NORMAL_CONSISTENCY, mad, mean, median, quantile, std_dev};
pub use error::{Result, StatsError};
pub use interval::Interval;
pub use mcnemar::{mcnemar_exact, mcnemar_mid_p};
pub use multiple::{holm, normal_two_sided_p, prediction_interval, student_t_quantile};
pub use normal::{
    normal_interval, normal_quantile, paired_difference_half_width, z_for_confidence,
};
pub use planning::{
    min_detectable_difference, paired_sample_size_for_power, sample_size_for_half_width,
};
pub use poisson::{RateComparison, RateInterval, compare_poisson_rates, poisson_rate_interval};
pub use proportion::{newcombe_independent, newcombe_paired, wilson};
pub use rank::{MANN_WHITNEY_EXACT_LIMIT, mann_whitney_critical, mann_whitney_p, shift_interval};
pub use splitmix::SplitMix64;
