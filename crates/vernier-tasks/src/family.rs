//! Task families: every bundled task is drawn from a (level, seed) pair.
//!
//! Level 2 with seed 0 is the bundled suite, task for task and byte for byte. Any other
//! pair draws fresh parameters from the level's ranges (documented per family in
//! `docs/hardsuite.md`); a drawn puzzle that is not well posed (no seating satisfies the
//! rules, the knight cannot reach its target, two Collatz starts tie) is drawn again, and
//! the rejected parameters are kept in the task's [`Instance::redraws`].

use vernier_stats::SplitMix64;

#[cfg(doc)]
use crate::draw::Instance;
use crate::draw::{Draw, MAX_LEVEL, MIN_LEVEL, Redraw};
use crate::math::{
    BracketDepth, CoinChange, Collatz, Crt, DiceProbability, DigitSum, DominoTiling, FixedPoints,
    Friday13, KnightPath, LastDigits, LatticePaths, Problem, RoundTable, SubsetSum,
    bundled_problems,
};

/// How many times a family draws before it gives up (and the self-check reports the last,
/// ill-posed draw).
const MAX_ATTEMPTS: u32 = 64;

/// Draws one family's parameters at a level.
type DrawFamily = fn(u8, &mut SplitMix64) -> Problem;

/// The 14 math problems of a draw, with their ids and redraws, in catalogue order.
pub(crate) fn draw_problems(draw: Draw) -> Vec<(&'static str, Problem, Vec<Redraw>)> {
    if draw.is_bundled() {
        return bundled_problems()
            .into_iter()
            .map(|(id, problem)| (id, problem, Vec::new()))
            .collect();
    }
    let families: [(&'static str, DrawFamily); 14] = [
        ("domino-tiling", draw_domino),
        ("last-digits", draw_last_digits),
        ("knight-path", draw_knight),
        ("round-table", draw_round_table),
        ("dice-probability", draw_dice),
        ("coin-change", draw_coins),
        ("fixed-points", draw_fixed_points),
        ("crt", draw_crt),
        ("digit-sum", draw_digit_sum),
        ("collatz", draw_collatz),
        ("subset-sum", draw_subset_sum),
        ("lattice-paths", draw_lattice),
        ("friday-13", draw_friday),
        ("bracket-depth", draw_brackets),
    ];
    families
        .into_iter()
        .enumerate()
        .map(|(index, (id, draw_one))| {
            let mut redraws = Vec::new();
            let mut attempt = 0;
            loop {
                let mut generator = draw.generator(index as u64, attempt);
                let problem = draw_one(draw.level, &mut generator);
                match problem.validate() {
                    Err(reason) if attempt + 1 < MAX_ATTEMPTS => redraws.push(Redraw {
                        parameters: problem.parameters(),
                        reason,
                    }),
                    // Valid, or out of attempts: the self-check reports an ill-posed last draw.
                    _ => break (id, problem, redraws),
                }
                attempt += 1;
            }
        })
        .collect()
}

impl Problem {
    /// The parameters as JSON (the fields of the family's struct).
    pub fn parameters(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// Picks from `values` by level (index level − 1).
fn by_level<T: Copy>(level: u8, values: [T; 5]) -> T {
    values[usize::from(level.clamp(MIN_LEVEL, MAX_LEVEL) - 1)]
}

fn pick(generator: &mut SplitMix64, (low, high): (u64, u64)) -> u32 {
    u32::try_from(generator.range(low, high)).unwrap_or(u32::MAX)
}

fn draw_domino(level: u8, generator: &mut SplitMix64) -> Problem {
    let width = by_level(level, [2, 3, 4, 5, 6]);
    let length_range = by_level(level, [(6, 10), (8, 14), (8, 12), (8, 12), (9, 13)]);
    let mut length = pick(generator, length_range);
    if width % 2 == 1 && length % 2 == 1 {
        length += 1;
    }
    Problem::DominoTiling(DominoTiling { width, length })
}

fn draw_last_digits(level: u8, generator: &mut SplitMix64) -> Problem {
    let base_range = by_level(level, [(2, 9), (3, 19), (11, 99), (101, 999), (1001, 9999)]);
    let exponent_range = by_level(
        level,
        [
            (100, 999),
            (1_000, 9_999),
            (10_000, 99_999),
            (100_000, 999_999),
            (1_000_000, 9_999_999),
        ],
    );
    let mut base = generator.range(base_range.0, base_range.1);
    if base.is_multiple_of(10) {
        base += 1;
    }
    Problem::LastDigits(LastDigits {
        base,
        exponent: generator.range(exponent_range.0, exponent_range.1),
        digits: by_level(level, [2, 3, 4, 5, 6]),
    })
}

fn square_name(file: u64, rank: u64) -> String {
    let letter = char::from(b'a' + u8::try_from(file).unwrap_or(0));
    format!("{letter}{}", rank + 1)
}

fn draw_knight(level: u8, generator: &mut SplitMix64) -> Problem {
    let board: u8 = by_level(level, [6, 8, 10, 12, 16]);
    let n_blocked = by_level(level, [2, 5, 10, 18, 36]);
    let side = u64::from(board);
    let cell = |generator: &mut SplitMix64| (generator.below(side), generator.below(side));
    // The start near one corner, the target near the opposite one.
    let quarter = (side / 4).max(1);
    let from = (generator.below(quarter), generator.below(quarter));
    let to = (
        side - 1 - generator.below(quarter),
        side - 1 - generator.below(quarter),
    );
    let mut blocked: Vec<(u64, u64)> = Vec::new();
    while blocked.len() < n_blocked {
        let candidate = cell(generator);
        if candidate != from && candidate != to && !blocked.contains(&candidate) {
            blocked.push(candidate);
        }
    }
    blocked.sort_unstable_by_key(|&(file, rank)| (file, rank));
    Problem::KnightPath(KnightPath {
        board,
        from: square_name(from.0, from.1),
        to: square_name(to.0, to.1),
        blocked: blocked
            .into_iter()
            .map(|(file, rank)| square_name(file, rank))
            .collect(),
    })
}

fn draw_round_table(level: u8, generator: &mut SplitMix64) -> Problem {
    let n: u8 = by_level(level, [5, 6, 7, 8, 9]);
    let (n_adjacent, n_not_adjacent, n_opposite) = by_level(
        level,
        [(1, 1, 0), (1, 2, 1), (2, 3, 0), (2, 3, 1), (2, 4, 0)],
    );
    let people: Vec<char> = (0..n).map(|i| char::from(b'A' + i)).collect();
    let mut used: Vec<(char, char)> = Vec::new();
    let mut pair = |generator: &mut SplitMix64| loop {
        let a = people[generator.index(people.len())];
        let b = people[generator.index(people.len())];
        if a != b && !used.contains(&(a, b)) && !used.contains(&(b, a)) {
            used.push((a, b));
            break (a, b);
        }
    };
    let adjacent = (0..n_adjacent).map(|_| pair(generator)).collect();
    let not_adjacent = (0..n_not_adjacent).map(|_| pair(generator)).collect();
    let opposite = (0..n_opposite).map(|_| pair(generator)).collect();
    Problem::RoundTable(RoundTable {
        people,
        adjacent,
        not_adjacent,
        opposite,
    })
}

fn draw_dice(level: u8, generator: &mut SplitMix64) -> Problem {
    let dice = by_level(level, [2, 4, 5, 7, 10]);
    let sides = by_level(level, [6, 6, 8, 10, 12]);
    // A target in the middle half of the range, where the counts are largest.
    let (low, high) = (u64::from(dice), u64::from(dice * sides));
    let quarter = (high - low) / 4;
    let target = pick(generator, (low + quarter, high - quarter));
    Problem::DiceProbability(DiceProbability {
        dice,
        sides,
        target,
    })
}

fn draw_coins(level: u8, generator: &mut SplitMix64) -> Problem {
    let amount = pick(
        generator,
        by_level(
            level,
            [
                (20, 60),
                (100, 200),
                (200, 500),
                (500, 2_000),
                (2_000, 5_000),
            ],
        ),
    );
    let n_coins = by_level(level, [4, 6, 7, 8, 9]);
    let largest = by_level(level, [20, 60, 100, 200, 500]);
    let mut coins = vec![1_u32];
    while coins.len() < n_coins {
        let coin = pick(generator, (2, largest));
        if !coins.contains(&coin) {
            coins.push(coin);
        }
    }
    coins.sort_unstable();
    Problem::CoinChange(CoinChange { amount, coins })
}

fn draw_fixed_points(level: u8, generator: &mut SplitMix64) -> Problem {
    let n = pick(
        generator,
        by_level(level, [(5, 7), (8, 10), (11, 13), (14, 17), (18, 25)]),
    );
    let k = pick(
        generator,
        by_level(level, [(1, 2), (1, 3), (2, 4), (2, 5), (3, 6)]),
    );
    Problem::FixedPoints(FixedPoints { n, k })
}

fn draw_crt(level: u8, generator: &mut SplitMix64) -> Problem {
    // Pairwise coprime pools: primes, then prime powers at the higher levels.
    let pool: &[u64] = by_level(
        level,
        [
            &[3, 5, 7, 11][..],
            &[3, 5, 7, 11, 13][..],
            &[3, 5, 7, 11, 13, 17, 19, 23][..],
            &[4, 8, 9, 25, 7, 11, 13, 17, 19, 23, 29, 31][..],
            &[8, 16, 32, 9, 27, 25, 7, 11, 13, 17, 19, 23, 29, 31, 37][..],
        ],
    );
    let n_moduli = by_level(level, [3, 4, 5, 5, 6]);
    let mut moduli: Vec<u64> = Vec::new();
    while moduli.len() < n_moduli {
        let candidate = pool[generator.index(pool.len())];
        if moduli.iter().all(|&m| gcd_u64(m, candidate) == 1) {
            moduli.push(candidate);
        }
    }
    moduli.sort_unstable();
    Problem::Crt(Crt {
        congruences: moduli
            .into_iter()
            .map(|m| (generator.below(m), m))
            .collect(),
    })
}

fn gcd_u64(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd_u64(b, a % b) }
}

fn draw_digit_sum(level: u8, generator: &mut SplitMix64) -> Problem {
    let exponent = by_level(level, [4_u32, 6, 6, 8, 11]);
    let leading = by_level(level, [(1, 9), (1, 1), (2, 9), (2, 9), (2, 9)]);
    let limit = generator.range(leading.0, leading.1) * 10_u64.pow(exponent);
    let digits = exponent + 1;
    // A sum near the middle of the possible range, where the counts are largest.
    let middle = 9 * digits / 2;
    let spread: u64 = by_level(level, [6, 8, 10, 12, 14]);
    let sum = pick(
        generator,
        (
            u64::from(middle).saturating_sub(spread).max(2),
            u64::from(middle) + spread,
        ),
    );
    Problem::DigitSum(DigitSum { limit, sum })
}

fn draw_collatz(level: u8, generator: &mut SplitMix64) -> Problem {
    let range = by_level(
        level,
        [
            (1_000, 5_000),
            (5_000, 20_000),
            (50_000, 200_000),
            (200_000, 600_000),
            (1_000_000, 2_000_000),
        ],
    );
    Problem::Collatz(Collatz {
        below: generator.range(range.0, range.1),
    })
}

fn draw_subset_sum(level: u8, generator: &mut SplitMix64) -> Problem {
    let n = pick(
        generator,
        by_level(level, [(10, 12), (18, 22), (24, 28), (30, 34), (36, 40)]),
    );
    let total = u64::from(n * (n + 1) / 2);
    let target = pick(generator, (total / 5, total / 2));
    Problem::SubsetSum(SubsetSum { n, target })
}

fn draw_lattice(level: u8, generator: &mut SplitMix64) -> Problem {
    let side = by_level(level, [(5, 7), (9, 11), (13, 16), (18, 22), (26, 30)]);
    let width = pick(generator, side);
    let height = pick(generator, side);
    let n_holes = by_level(level, [2, 3, 5, 8, 12]);
    let mut avoid: Vec<(u32, u32)> = Vec::new();
    while avoid.len() < n_holes {
        let point = (
            pick(generator, (0, u64::from(width))),
            pick(generator, (0, u64::from(height))),
        );
        if point != (0, 0) && point != (width, height) && !avoid.contains(&point) {
            avoid.push(point);
        }
    }
    avoid.sort_unstable();
    Problem::LatticePaths(LatticePaths {
        width,
        height,
        avoid,
    })
}

fn draw_friday(level: u8, generator: &mut SplitMix64) -> Problem {
    let span = by_level(
        level,
        [
            (8, 15),
            (80, 120),
            (200, 500),
            (1_000, 3_000),
            (5_000, 8_000),
        ],
    );
    let start = by_level(
        level,
        [
            (1990, 2030),
            (1801, 2201),
            (1600, 2400),
            (1583, 3000),
            (1583, 2000),
        ],
    );
    let from_year = i32::try_from(generator.range(start.0, start.1)).unwrap_or(2001);
    let to_year = from_year + i32::try_from(generator.range(span.0, span.1)).unwrap_or(0) - 1;
    Problem::Friday13(Friday13 { from_year, to_year })
}

fn draw_brackets(level: u8, generator: &mut SplitMix64) -> Problem {
    let pairs = pick(
        generator,
        by_level(level, [(6, 8), (8, 12), (14, 18), (20, 30), (35, 50)]),
    );
    let max_depth = pick(
        generator,
        by_level(level, [(2, 2), (2, 4), (3, 5), (4, 7), (5, 9)]),
    );
    Problem::BracketDepth(BracketDepth { pairs, max_depth })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_draw_is_the_bundled_problems() {
        let drawn: Vec<Problem> = draw_problems(Draw::BUNDLED)
            .into_iter()
            .map(|(_, problem, _)| problem)
            .collect();
        let bundled: Vec<Problem> = bundled_problems().into_iter().map(|(_, p)| p).collect();
        assert_eq!(drawn, bundled);
    }

    #[test]
    fn levels_outside_one_to_five_are_refused() {
        assert!(Draw::new(0, 1).is_err());
        assert!(Draw::new(6, 1).is_err());
        assert!(Draw::new(5, 1).is_ok());
    }

    #[test]
    fn draws_are_reproducible_and_seeds_differ() {
        let a = draw_problems(Draw::new(3, 7).expect("level"));
        let b = draw_problems(Draw::new(3, 7).expect("level"));
        let c = draw_problems(Draw::new(3, 8).expect("level"));
        let params = |set: &[(&str, Problem, Vec<Redraw>)]| {
            set.iter()
                .map(|(_, p, _)| p.parameters())
                .collect::<Vec<_>>()
        };
        assert_eq!(params(&a), params(&b));
        assert_ne!(params(&a), params(&c));
    }
}
