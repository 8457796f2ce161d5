//! The interval every median of a run carries.

use vernier_stats::Interval;

/// Bootstrap resamples for every interval on a median.
pub(crate) const BOOTSTRAP_RESAMPLES: usize = 2000;
/// The bootstrap's seed, fixed so a run file is the same each time it is derived.
pub(crate) const BOOTSTRAP_SEED: u64 = 0x5eed_cafe;

/// Percentile-bootstrap 95% interval on the median of `data`; `None` with fewer than 2 values.
pub(crate) fn median_interval(data: &[f64]) -> Option<Interval> {
    if data.len() < 2 {
        return None;
    }
    vernier_stats::bootstrap_percentile(
        data,
        |sample| vernier_stats::median(sample).unwrap_or(f64::NAN),
        BOOTSTRAP_RESAMPLES,
        0.95,
        BOOTSTRAP_SEED,
    )
    .ok()
}
