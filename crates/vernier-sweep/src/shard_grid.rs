//! The wall-clock grid a sharded run's measured repetitions start on, and the monotonic
//! instant of a wall-clock time.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The wall-clock instants the measured repetitions of a sharded run start at: one gap after
/// the start, then one period (the duration and the gap) after another, in the order the
/// repetitions run, the same in every shard.
#[derive(Debug)]
pub(crate) struct RepGrid {
    base_unix_ns: OnceLock<u64>,
    period: Duration,
    next: AtomicU32,
}

impl RepGrid {
    /// The grid of repetitions lasting `duration` with `gap` between them.
    pub(crate) fn new(duration: Duration, gap: Duration) -> Self {
        Self {
            base_unix_ns: OnceLock::new(),
            period: duration + gap,
            next: AtomicU32::new(0),
        }
    }

    /// Starts the grid: the first repetition at `base_unix_ns` (only the first call counts).
    pub(crate) fn start_at(&self, base_unix_ns: u64) {
        let _ = self.base_unix_ns.set(base_unix_ns);
    }

    /// The instant the next measured repetition starts at; `None` for a run on one machine.
    pub(crate) fn next_origin(&self) -> Option<Instant> {
        let base = *self.base_unix_ns.get()?;
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        let at = base.saturating_add(u64::try_from((self.period * k).as_nanos()).ok()?);
        Some(instant_of_unix_ns(at))
    }
}

pub(crate) fn now_unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The monotonic instant of a wall-clock time (a past time maps to a past instant).
pub(crate) fn instant_of_unix_ns(unix_ns: u64) -> Instant {
    let (now, now_ns) = (Instant::now(), now_unix_ns());
    if unix_ns >= now_ns {
        now + Duration::from_nanos(unix_ns - now_ns)
    } else {
        now.checked_sub(Duration::from_nanos(now_ns - unix_ns))
            .unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_starts_each_repetition_one_period_after_the_last() {
        let grid = RepGrid::new(Duration::from_secs(3), Duration::from_secs(2));
        assert!(grid.next_origin().is_none(), "no grid before the start");
        let base = now_unix_ns() + 60_000_000_000;
        grid.start_at(base);
        let first = grid.next_origin().expect("first");
        let second = grid.next_origin().expect("second");
        let apart = second.duration_since(first).as_secs_f64();
        assert!((apart - 5.0).abs() < 0.01, "{apart}");
        let lead = first.duration_since(Instant::now()).as_secs_f64();
        assert!((lead - 60.0).abs() < 0.5, "{lead}");
    }
}
