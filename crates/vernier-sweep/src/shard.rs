//! Shards: one configuration run by `N` processes, each sending its share of the one-machine
//! load (`--shard I/N`), started together at one wall-clock instant (`--start-at`), and merged
//! back into one run (`sweep merge`). The split is deterministic: shard `I` sends every
//! open-loop arrival whose index in the seeded schedule is `≡ I (mod N)` and runs the steady
//! slots numbered `≡ I (mod N)`, so the shards' union is exactly the one-machine run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The most shards one run may have.
pub const MAX_SHARDS: u32 = 4096;

/// Shard `index` of `count` (`--shard I/N`, `0 ≤ I < N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Shard {
    /// This shard, from 0.
    pub index: u32,
    /// How many shards run the configuration.
    pub count: u32,
}

impl Shard {
    /// Shard `index` of `count`; `None` unless `index < count ≤` [`MAX_SHARDS`].
    pub fn new(index: u32, count: u32) -> Option<Self> {
        (index < count && count <= MAX_SHARDS).then_some(Self { index, count })
    }

    /// Whether this shard sends the arrival numbered `arrival` (from 0) of the schedule.
    pub fn owns(&self, arrival: usize) -> bool {
        arrival % self.count as usize == self.index as usize
    }

    /// The steady-load slots of `concurrency` this shard runs, by their one-machine numbers.
    pub fn slots(&self, concurrency: u32) -> Vec<u32> {
        (0..concurrency)
            .filter(|slot| slot % self.count == self.index)
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!(
                "{text:?} is not a shard: give I/N, shard I (from 0) of N, e.g. 0/4 … 3/4 (N at most {MAX_SHARDS})"
            )
        };
        let (index, count) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        Self::new(index, count).ok_or_else(bad)
    }
}

/// A shard's clock against the server's, from the server's `Date` headers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClockOffset {
    /// How it was estimated: `date_header_second_edge` (requests close together until the
    /// server's `Date` header turns to its next second; the edge lies between the last request
    /// sent before it and the first answer after it).
    pub method: String,
    /// The server's clock minus this shard's, milliseconds.
    pub offset_ms: f64,
    /// Half the width of the interval the edge was found in, milliseconds.
    pub uncertainty_ms: f64,
    /// Requests sent to find it.
    pub n_probes: u32,
}

/// A shard's start: journalled once it has reached the agreed instant (or failed to).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ShardStart {
    /// The shard.
    pub shard: Shard,
    /// The agreed instant (`--start-at`), ms since the Unix epoch; `None` without one.
    pub start_at_unix_ms: Option<u64>,
    /// When this shard began its measured work.
    pub began_unix_ms: u64,
    /// How late it began, ms (0 when it waited for the instant).
    pub late_ms: f64,
    /// The lateness allowed (`--start-tolerance`), ms.
    pub tolerance_ms: f64,
    /// Seconds between one measured repetition's sending and the next one's start
    /// (`--shard-gap`): the repetitions of every shard start on one grid.
    pub gap_s: f64,
    /// This shard's clock against the server's, when the server dates its answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockOffset>,
    /// Why there is no offset, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_note: Option<String>,
}

/// One shard of a merged run: where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ShardSource {
    /// The shard's number.
    pub index: u32,
    /// Its run folder, as given to `sweep merge`.
    pub folder: String,
    /// Its start line (absent when it never reached its start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<ShardStart>,
    /// Whether it ran every repetition of every cell.
    pub complete: bool,
}

/// A merged run's sources and what the merge found wrong with them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MergedFrom {
    /// How many shards the configuration was split into.
    pub count: u32,
    /// The shards found, by number.
    pub shards: Vec<ShardSource>,
    /// Shard numbers no folder held.
    pub missing: Vec<u32>,
    /// What makes the merged run invalid (a shard missing, failed or of another run).
    pub invalid: Vec<String>,
    /// What a reader must weigh (clocks apart, late starts).
    pub questionable: Vec<String>,
    /// Wall clock of the merge.
    pub unix_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_is_not_one() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(" 0 / 1 ".parse::<Shard>(), Ok(Shard { index: 0, count: 1 }));
        for bad in ["4/4", "1", "-1/4", "a/b", "0/0", "0/5000"] {
            let error = bad.parse::<Shard>().expect_err(bad);
            assert!(error.contains("0/4 … 3/4"), "{error}");
        }
        assert_eq!(Shard { index: 3, count: 8 }.to_string(), "3/8");
    }

    #[test]
    fn the_shards_split_the_arrivals_and_slots_into_exactly_the_whole() {
        let shards: Vec<Shard> = (0..3).filter_map(|i| Shard::new(i, 3)).collect();
        let mut arrivals: Vec<usize> = shards
            .iter()
            .flat_map(|shard| (0..100).filter(|a| shard.owns(*a)))
            .collect();
        arrivals.sort_unstable();
        assert_eq!(arrivals, (0..100).collect::<Vec<_>>());
        let slots: Vec<Vec<u32>> = shards.iter().map(|shard| shard.slots(8)).collect();
        assert_eq!(slots, vec![vec![0, 3, 6], vec![1, 4, 7], vec![2, 5]]);
    }
}
