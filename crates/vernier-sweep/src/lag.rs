//! The client's own lag: how late our code handled each event, and how late tokio ran a ready
//! task; beside them, how late tokio's timer fired (not client lag, reported apart).
//!
//! Both go into a [`LagHistogram`]: fixed log-spaced buckets (ten per decade from 100 ns to
//! 10 s), so recording never allocates and histograms from many streams merge exactly.
//! Quantiles are reported as the upper edge of their bucket, an over-estimate by at most 26%.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

const BUCKETS_PER_DECADE: usize = 10;
const DECADES: usize = 8;
const FIRST_EDGE_NS: f64 = 100.0;
/// Buckets: `[0, 100 ns)`, then ten per decade up to 10 s, then one for everything above.
const N_BUCKETS: usize = BUCKETS_PER_DECADE * DECADES + 2;

/// A mergeable histogram of delays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagHistogram {
    counts: [u64; N_BUCKETS],
}

impl Default for LagHistogram {
    fn default() -> Self {
        Self {
            counts: [0; N_BUCKETS],
        }
    }
}

fn upper_edge_ns(bucket: usize) -> f64 {
    if bucket == 0 {
        return FIRST_EDGE_NS;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        reason = "bucket < 100"
    )]
    let exponent = bucket as i32;
    FIRST_EDGE_NS * 10f64.powf(f64::from(exponent) / BUCKETS_PER_DECADE as f64)
}

impl LagHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one delay.
    pub fn record(&mut self, delay: Duration) {
        let nanos = delay.as_nanos() as f64;
        let bucket = if nanos < FIRST_EDGE_NS {
            0
        } else {
            let position = (nanos / FIRST_EDGE_NS).log10() * BUCKETS_PER_DECADE as f64;
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "position >= 0, clamped"
            )]
            let index = position.floor() as usize + 1;
            index.min(N_BUCKETS - 1)
        };
        self.counts[bucket] += 1;
    }

    /// Records the time from `arrived_at` to now.
    pub fn record_since(&mut self, arrived_at: Instant) {
        self.record(arrived_at.elapsed());
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &Self) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
    }

    /// Number of recorded delays.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The `q` quantile in microseconds (upper bucket edge), `None` when empty.
    pub fn quantile_us(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "q in [0, 1]"
        )]
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (bucket, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                // The overflow bucket reports its lower edge (10 s): JSON has no infinity.
                let edge = upper_edge_ns(bucket.min(N_BUCKETS - 2));
                return Some(edge / 1000.0);
            }
        }
        None
    }

    /// p50, p99 and max in microseconds.
    pub fn summary(&self) -> Option<LagSummary> {
        Some(LagSummary {
            n: self.count(),
            p50_us: self.quantile_us(0.5)?,
            p99_us: self.quantile_us(0.99)?,
            max_us: self.quantile_us(1.0)?,
        })
    }
}

/// Quantiles of a [`LagHistogram`], microseconds (bucket upper edges).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LagSummary {
    /// Number of delays recorded.
    pub n: u64,
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest (upper edge of the highest bucket used).
    pub max_us: f64,
}

/// Stored sparsely as `[[bucket, count], ...]`.
impl Serialize for LagHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(usize, u64)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
            .map(|(bucket, count)| (bucket, *count))
            .collect();
        pairs.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LagHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let pairs = Vec::<(usize, u64)>::deserialize(deserializer)?;
        let mut histogram = Self::new();
        for (bucket, count) in pairs {
            let slot = histogram.counts.get_mut(bucket).ok_or_else(|| {
                serde::de::Error::custom(format!("lag bucket {bucket} out of range"))
            })?;
            *slot += count;
        }
        Ok(histogram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_right_buckets() {
        let mut histogram = LagHistogram::new();
        for _ in 0..99 {
            histogram.record(Duration::from_micros(10));
        }
        histogram.record(Duration::from_millis(5));
        let summary = histogram.summary().expect("non-empty");
        assert_eq!(summary.n, 100);
        // 10 µs lies in the bucket [10 µs, 12.6 µs).
        assert!((10.0..=12.6).contains(&summary.p50_us), "{summary:?}");
        assert!((10.0..=12.6).contains(&summary.p99_us), "{summary:?}");
        assert!((5000.0..=6300.0).contains(&summary.max_us), "{summary:?}");
    }

    #[test]
    fn histograms_merge_and_round_trip_through_json() {
        let mut a = LagHistogram::new();
        a.record(Duration::from_nanos(50));
        let mut b = LagHistogram::new();
        b.record(Duration::from_secs(100));
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert_eq!(a.quantile_us(1.0), Some(10_000_000.0));
        let json = serde_json::to_string(&a).expect("serialise");
        let back: LagHistogram = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, a);
        assert!(serde_json::from_str::<LagHistogram>("[[999,1]]").is_err());
    }

    #[test]
    fn empty_histogram_has_no_quantiles() {
        assert!(LagHistogram::new().summary().is_none());
    }
}
