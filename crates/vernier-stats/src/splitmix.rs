//! A small seeded generator (`SplitMix64`), so that generated cases, simulated runs and arrival
//! schedules repeat exactly for a given seed on every machine.
//!
//! A ten-line generator with a published algorithm beats a dependency whose stream may change
//! between versions. Reference: Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014; constants as in Vigna's `splitmix64.c`.

/// The `SplitMix64` generator: a 64-bit state advanced by a fixed odd increment and mixed.
///
/// Every method draws from the same stream, so the sequence of calls, not only the seed, fixes
/// what comes out.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// `2^53`, the number of distinct values a uniform `f64` draw takes.
const TWO_POW_53: f64 = (1_u64 << 53) as f64;

impl SplitMix64 {
    /// A generator whose first output is the mix of `seed + 0x9E37_79B9_7F4A_7C15`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 bits of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`: the top 53 bits divided by `2^53`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / TWO_POW_53
    }

    /// Uniform in `(0, 1]`: the top 53 bits plus one, divided by `2^53`. Never zero, so its
    /// logarithm is finite (exponential inter-arrival times).
    pub fn next_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / TWO_POW_53
    }

    /// A number in `0..bound` (`bound > 0`; 0 gives 0), by multiply-shift: the high 64 bits of
    /// `next_u64() * bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        let wide = u128::from(self.next_u64()) * u128::from(bound);
        u64::try_from(wide >> 64).unwrap_or(0)
    }

    /// A number in `0..bound` (`bound > 0`; 0 gives 0), as `next_u64() % bound`.
    ///
    /// Slightly biased and otherwise no better than [`below`](Self::below); it is kept because
    /// the simulator's recorded runs were drawn with it, and switching would change them.
    pub fn below_mod(&mut self, bound: u32) -> u32 {
        if bound == 0 {
            return 0;
        }
        u32::try_from(self.next_u64() % u64::from(bound)).unwrap_or(0)
    }

    /// A `usize` in `0..bound` (`bound > 0`), by [`below`](Self::below).
    pub fn index(&mut self, bound: usize) -> usize {
        let bound = u64::try_from(bound).unwrap_or(u64::MAX);
        usize::try_from(self.below(bound)).unwrap_or(0)
    }

    /// One of `items`, each as likely.
    ///
    /// # Panics
    ///
    /// If `items` is empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// A number in `low..=high` (`low <= high`, and not the whole `u64` range).
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high - low + 1)
    }

    /// True with probability `numerator / denominator`.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// Shuffles `items` in place (Fisher–Yates, from the last item down).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for last in (1..items.len()).rev() {
            let other = self.index(last + 1);
            items.swap(last, other);
        }
    }

    /// An index drawn from a discrete distribution with the given `probabilities`, by one
    /// [`next_f64`](Self::next_f64) draw against the running sum; the last index absorbs
    /// rounding, and an empty slice gives 0.
    pub fn categorical(&mut self, probabilities: &[f64]) -> usize {
        let draw = self.next_f64();
        let mut cumulative = 0.0;
        for (index, p) in probabilities.iter().enumerate() {
            cumulative += p;
            if draw < cumulative {
                return index;
            }
        }
        probabilities.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

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
    fn floats_are_the_top_53_bits_of_the_stream() {
        // Same Rosetta Code stream: the first output is 6457827717110365317.
        let top = (6_457_827_717_110_365_317_u64 >> 11) as f64;
        let scale = (1_u64 << 53) as f64;
        assert_eq!(
            SplitMix64::new(1_234_567).next_f64().to_bits(),
            (top / scale).to_bits()
        );
        assert_eq!(
            SplitMix64::new(1_234_567).next_unit().to_bits(),
            ((top + 1.0) / scale).to_bits()
        );
        let mut generator = SplitMix64::new(11);
        for _ in 0..10_000 {
            let half_open = generator.next_f64();
            assert!((0.0..1.0).contains(&half_open));
            let unit = generator.next_unit();
            assert!(unit > 0.0 && unit <= 1.0);
        }
    }

    #[test]
    fn below_mod_is_the_remainder_of_the_stream() {
        // Rosetta Code seed 1234567: 6457827717110365317 % 1000 = 317.
        let mut generator = SplitMix64::new(1_234_567);
        assert_eq!(generator.below_mod(1000), 317);
        assert_eq!(generator.below_mod(0), 0);
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

    #[test]
    fn categorical_follows_probabilities() {
        let mut rng = SplitMix64::new(3);
        let mut counts = [0_u32; 3];
        for _ in 0..30_000 {
            counts[rng.categorical(&[0.2, 0.5, 0.3])] += 1;
        }
        assert!((5_400..6_600).contains(&counts[0]), "{counts:?}");
        assert!((14_200..15_800).contains(&counts[1]), "{counts:?}");
    }
}
