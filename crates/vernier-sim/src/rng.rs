//! A tiny seeded generator (`SplitMix64`), so runs repeat exactly for a given seed.

#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// Uniform in `0..bound` (`bound` > 0; 0 gives 0).
    pub(crate) fn below(&mut self, bound: u32) -> u32 {
        if bound == 0 {
            return 0;
        }
        u32::try_from(self.next_u64() % u64::from(bound)).unwrap_or(0)
    }

    /// An index drawn from a discrete distribution (the last index absorbs rounding).
    pub(crate) fn categorical(&mut self, probabilities: &[f64]) -> usize {
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
    fn matches_reference_sequence() {
        // Rosetta Code, "Pseudo-random numbers/Splitmix64": seed 1234567 gives
        // 6457827717110365317, 3203168211198807973, ...
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
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
