//! Drawing a context spec from a cell's seed: the corpus and slice, made-up keys and 7-digit
//! values that occur nowhere in the corpora, and the depths of the distractors.

use vernier_stats::SplitMix64;

use super::spec::{ContextPlan, ContextSpec, Corpus, Haystack, Needle};

/// Syllables of the made-up needle keys.
const SYLLABLES: [&str; 24] = [
    "ba", "ce", "di", "fo", "gu", "ka", "le", "mi", "no", "pu", "ra", "se", "ti", "vo", "zu",
    "bra", "cle", "dri", "flo", "gru", "kro", "pla", "sti", "tre",
];
/// Endings of the made-up needle keys.
const ENDINGS: [&str; 8] = ["n", "x", "th", "r", "l", "sk", "nd", "m"];

/// A made-up key: three syllables and an ending, capitalised.
fn draw_key(rng: &mut SplitMix64) -> String {
    let mut key = String::new();
    for _ in 0..3 {
        key.push_str(SYLLABLES[rng.index(SYLLABLES.len())]);
    }
    key.push_str(ENDINGS[rng.index(ENDINGS.len())]);
    let mut chars = key.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_ascii_uppercase().to_string() + chars.as_str()
    })
}

/// The keys and values one spec has drawn so far, and the generator it draws them from.
struct Draws {
    rng: SplitMix64,
    keys: Vec<String>,
    values: Vec<u32>,
}

impl Draws {
    fn key(&mut self) -> String {
        loop {
            let key = draw_key(&mut self.rng);
            let lower = key.to_ascii_lowercase();
            let in_corpus = [Haystack::Prose, Haystack::Code]
                .iter()
                .any(|h| h.text().to_ascii_lowercase().contains(&lower));
            // No key may hold another (a count of one would find the other).
            let clashes = self
                .keys
                .iter()
                .any(|other| other.contains(&key) || key.contains(other.as_str()));
            if !in_corpus && !clashes {
                self.keys.push(key.clone());
                return key;
            }
        }
    }

    fn value(&mut self) -> u32 {
        loop {
            let value = u32::try_from(self.rng.range(1_000_000, 9_999_999)).unwrap_or(1_234_567);
            let text = value.to_string();
            let in_corpus = [Haystack::Prose, Haystack::Code]
                .iter()
                .any(|h| h.text().contains(&text));
            // No value may hold another (a search for one would find the other).
            let clashes = self.values.iter().any(|other| {
                let other = other.to_string();
                other.contains(&text) || text.contains(&other)
            });
            if !in_corpus && !clashes {
                self.values.push(value);
                return value;
            }
        }
    }
}

/// The depth of distractor `index` of `n`: drawn inside the `index`-th of `n` equal parts of
/// the haystack (so distractors spread over it), at least 10 points from every asked needle;
/// anywhere in the haystack when its part leaves no room.
fn distractor_depth(rng: &mut SplitMix64, index: u32, n: u32, asked: &[u8]) -> u8 {
    let n = u64::from(n.max(1));
    let low = u64::from(index) * 101 / n;
    let high = (u64::from(index) + 1) * 101 / n;
    for attempt in 0..64 {
        let drawn = if attempt < 32 {
            low + rng.below((high - low).max(1))
        } else {
            rng.below(101)
        };
        let depth = u8::try_from(drawn.min(100)).unwrap_or(50);
        if asked.iter().all(|a| depth.abs_diff(*a) >= 10) {
            return depth;
        }
    }
    50
}

/// The spec of one cell, drawn from its seed: the corpus, the slice of it, and the asked needles
/// and distractors with their keys, values and depths.
pub(super) fn spec(
    rng_seed: u64,
    target_tokens: u32,
    depth_pct: Option<u8>,
    plan: &ContextPlan,
) -> ContextSpec {
    let mut draws = Draws {
        rng: SplitMix64::new(rng_seed),
        keys: Vec::new(),
        values: Vec::new(),
    };
    let haystack = if draws.rng.below(2) == 0 {
        Haystack::Prose
    } else {
        Haystack::Code
    };
    let start_unit = draws.rng.index(Corpus::of(haystack).units.len());
    let asked_depths: Vec<u8> = if let Some(depth) = depth_pct {
        vec![depth]
    } else {
        let n = plan.multi_needles.max(2);
        (0..n)
            .map(|i| {
                // Spread over the haystack: the middle of each of n equal parts.
                let middle = (2 * i + 1) * 100 / (2 * n);
                u8::try_from(middle).unwrap_or(50)
            })
            .collect()
    };
    let mut needles: Vec<Needle> = asked_depths
        .iter()
        .map(|depth| Needle {
            key: draws.key(),
            value: draws.value(),
            depth_pct: *depth,
            asked: true,
        })
        .collect();
    for index in 0..plan.distractors {
        let depth = distractor_depth(&mut draws.rng, index, plan.distractors, &asked_depths);
        needles.push(Needle {
            key: draws.key(),
            value: draws.value(),
            depth_pct: depth,
            asked: false,
        });
    }
    ContextSpec {
        target_tokens,
        depth_pct,
        haystack,
        start_unit,
        needles,
    }
}

/// The seed of one cell of a plan, from the plan's seed, the length, the depth and the sample.
pub(super) fn cell_seed(seed: u64, target: u32, depth: Option<u8>, sample: u32) -> u64 {
    let mut mixer = SplitMix64::new(seed);
    mixer.next_u64()
        ^ u64::from(target).wrapping_mul(0xA076_1D64_78BD_642F)
        ^ u64::from(depth.map_or(255, u16::from)).wrapping_mul(0xE703_7ED1_A0B4_28DB)
        ^ u64::from(sample).wrapping_mul(0x8EBC_6AF0_9C88_C6E3)
}
