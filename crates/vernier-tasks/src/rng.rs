//! A small seeded generator for the large cases (`SplitMix64`).
//!
//! The cases must be identical on every machine and every run, and the crate needs
//! no more than a few million well-mixed numbers, so a ten-line generator with a
//! published algorithm beats a dependency whose stream may change between versions.
//! Reference: Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014; constants as in Vigna's `splitmix64.c`.

/// `SplitMix64`.
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`), by multiply-shift.
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        let wide = u128::from(self.next_u64()) * u128::from(bound);
        u64::try_from(wide >> 64).unwrap_or(0)
    }

    /// A `usize` in `0..bound` (`bound > 0`).
    pub(crate) fn index(&mut self, bound: usize) -> usize {
        let bound = u64::try_from(bound).unwrap_or(u64::MAX);
        usize::try_from(self.below(bound)).unwrap_or(0)
    }

    /// One of `items` (not empty), each as likely.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// A number in `low..=high` (`low <= high`).
    pub(crate) fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high - low + 1)
    }

    /// True with probability `numerator / denominator`.
    pub(crate) fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// Fisher–Yates shuffle.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for last in (1..items.len()).rev() {
            let other = self.index(last + 1);
            items.swap(last, other);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_splitmix64_stream() {
        // The first five outputs for seed 1234567 published on Rosetta Code,
        // "Pseudo-random numbers/Splitmix64".
        let mut generator = SplitMix64::new(1_234_567);
        let expected = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for value in expected {
            assert_eq!(generator.next_u64(), value);
        }
    }

    #[test]
    fn below_stays_in_range_and_shuffle_permutes() {
        let mut generator = SplitMix64::new(7);
        for bound in [1, 2, 3, 10, 1000] {
            for _ in 0..1000 {
                assert!(generator.below(bound) < bound);
            }
        }
        let mut items: Vec<u32> = (0..100).collect();
        generator.shuffle(&mut items);
        assert_ne!(items, (0..100).collect::<Vec<_>>());
        items.sort_unstable();
        assert_eq!(items, (0..100).collect::<Vec<_>>());
    }
}
