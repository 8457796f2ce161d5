//! Counting problems: tilings, seatings, dice, coins, permutations, subsets, lattice paths and
//! bracket strings, each counted by a dynamic programme or by brute force over every arrangement.

use serde::Serialize;

use super::wording::{INTEGER_INSTRUCTION, UppercaseFirst, join_words, number_word};
use crate::answer::reduce;

/// Ways to tile a `width` × `length` rectangle with 1×2 dominoes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DominoTiling {
    /// Short side (rows); the dynamic programme is exponential in it, keep it small.
    pub width: u32,
    /// Long side (columns).
    pub length: u32,
}

impl DominoTiling {
    pub(super) fn prompt(&self) -> String {
        format!(
            "In how many ways can a {}×{} rectangle be tiled completely with 1×2 dominoes \
             (each domino may be placed horizontally or vertically)? {INTEGER_INSTRUCTION}",
            self.width, self.length
        )
    }

    /// Column-by-column profile dynamic programme: the state is the set of cells of the
    /// current column already covered by horizontal dominoes from the previous column.
    pub(super) fn solve(&self) -> i128 {
        let rows = self.width as usize;
        let full = (1_usize << rows) - 1;
        let mut ways = vec![0_i128; full + 1];
        ways[0] = 1;
        for _ in 0..self.length {
            let mut next = vec![0_i128; full + 1];
            for (covered, &count) in ways.iter().enumerate() {
                if count != 0 {
                    fill_column(rows, 0, covered, 0, count, &mut next);
                }
            }
            ways = next;
        }
        ways[0]
    }
}

/// Fills one column row by row; `covered` marks cells already filled from the left,
/// `sticking_out` the cells whose horizontal domino reaches into the next column.
fn fill_column(
    rows: usize,
    row: usize,
    covered: usize,
    sticking_out: usize,
    count: i128,
    next: &mut [i128],
) {
    if row == rows {
        next[sticking_out] += count;
        return;
    }
    if covered & (1 << row) != 0 {
        fill_column(rows, row + 1, covered, sticking_out, count, next);
        return;
    }
    fill_column(
        rows,
        row + 1,
        covered,
        sticking_out | (1 << row),
        count,
        next,
    );
    if row + 1 < rows && covered & (1 << (row + 1)) == 0 {
        fill_column(rows, row + 2, covered, sticking_out, count, next);
    }
}

/// Seatings of people around a round table, counted up to rotation, under constraints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundTable {
    /// The people, one letter each.
    pub people: Vec<char>,
    /// Pairs who sit next to each other.
    pub adjacent: Vec<(char, char)>,
    /// Pairs who do not sit next to each other.
    pub not_adjacent: Vec<(char, char)>,
    /// Pairs who sit directly opposite each other (even table size).
    pub opposite: Vec<(char, char)>,
}

impl RoundTable {
    pub(super) fn prompt(&self) -> String {
        let n = self.people.len();
        let names: Vec<String> = self.people.iter().map(char::to_string).collect();
        let mut rules = Vec::new();
        for (a, b) in &self.adjacent {
            rules.push(format!("{a} sits next to {b}"));
        }
        for (a, b) in &self.not_adjacent {
            rules.push(format!("{a} does not sit next to {b}"));
        }
        for (a, b) in &self.opposite {
            rules.push(format!("{a} sits directly opposite {b}"));
        }
        format!(
            "{} people, {}, sit at a round table with {n} equally spaced seats. Seatings that \
             differ only by a rotation of the whole table count as the same; mirror images count \
             as different. The rules: {}. How many seatings satisfy all the rules? \
             {INTEGER_INSTRUCTION}",
            number_word(u32::try_from(n).unwrap_or(0)).to_uppercase_first(),
            join_words(&names),
            rules.join("; ")
        )
    }

    /// Brute force: the first person is fixed at seat 0 (this removes rotations) and every
    /// arrangement of the others is tested.
    pub(super) fn solve(&self) -> i128 {
        let n = self.people.len();
        if n < 2 {
            return 0;
        }
        let mut seats: Vec<char> = self.people.clone();
        let mut count = 0;
        permute(&mut seats, 1, &mut |arrangement| {
            let position = |person: char| arrangement.iter().position(|p| *p == person);
            let next_to = |a: char, b: char| match (position(a), position(b)) {
                (Some(x), Some(y)) => (x + n - y) % n == 1 || (y + n - x) % n == 1,
                _ => false,
            };
            let facing = |a: char, b: char| match (position(a), position(b)) {
                (Some(x), Some(y)) => n.is_multiple_of(2) && (x + n - y) % n == n / 2,
                _ => false,
            };
            if self.adjacent.iter().all(|(a, b)| next_to(*a, *b))
                && self.not_adjacent.iter().all(|(a, b)| !next_to(*a, *b))
                && self.opposite.iter().all(|(a, b)| facing(*a, *b))
            {
                count += 1;
            }
        });
        count
    }
}

/// Calls `visit` with every permutation of `items[start..]` (Heap-free swap recursion).
fn permute<T>(items: &mut [T], start: usize, visit: &mut impl FnMut(&[T])) {
    if start + 1 >= items.len() {
        visit(items);
        return;
    }
    for index in start..items.len() {
        items.swap(start, index);
        permute(items, start + 1, visit);
        items.swap(start, index);
    }
}

/// Probability that `dice` fair dice with `sides` faces sum to `target`, as a reduced fraction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiceProbability {
    /// Number of dice.
    pub dice: u32,
    /// Faces per die, numbered 1..=sides.
    pub sides: u32,
    /// The wanted sum.
    pub target: u32,
}

impl DiceProbability {
    pub(super) fn prompt(&self) -> String {
        format!(
            "{} fair {}-sided dice (faces 1 to {}) are rolled. What is the probability that \
             they sum to {}? Give it as a fraction p/q in lowest terms (a fraction that is not \
             reduced is marked wrong), on a last line of the form `ANSWER: p/q`.",
            number_word(self.dice).to_uppercase_first(),
            self.sides,
            self.sides,
            self.target
        )
    }

    /// Exact count of outcomes by convolution, over sides^dice, reduced.
    pub(super) fn solve(&self) -> (i128, i128) {
        let target = self.target as usize;
        let mut ways = vec![0_i128; target + 1];
        ways[0] = 1;
        for _ in 0..self.dice {
            let mut next = vec![0_i128; target + 1];
            for (sum, &count) in ways.iter().enumerate() {
                for face in 1..=self.sides as usize {
                    if sum + face <= target {
                        next[sum + face] += count;
                    }
                }
            }
            ways = next;
        }
        reduce(ways[target], i128::from(self.sides).pow(self.dice))
    }
}

/// Ways to make an amount from unlimited coins of the given values (order does not matter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoinChange {
    /// The amount.
    pub amount: u32,
    /// Coin values.
    pub coins: Vec<u32>,
}

impl CoinChange {
    pub(super) fn prompt(&self) -> String {
        let coins: Vec<String> = self.coins.iter().map(u32::to_string).collect();
        format!(
            "In how many ways can the amount {} be made from an unlimited supply of coins worth \
             {}? Two ways are the same if they use the same number of each coin (order does not \
             matter). {INTEGER_INSTRUCTION}",
            self.amount,
            join_words(&coins)
        )
    }

    pub(super) fn solve(&self) -> i128 {
        let amount = self.amount as usize;
        let mut ways = vec![0_i128; amount + 1];
        ways[0] = 1;
        for &coin in &self.coins {
            for total in coin as usize..=amount {
                ways[total] += ways[total - coin as usize];
            }
        }
        ways[amount]
    }
}

/// Permutations of 1..=n with exactly k fixed points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FixedPoints {
    /// Size of the permutation.
    pub n: u32,
    /// Exact number of fixed points.
    pub k: u32,
}

impl FixedPoints {
    pub(super) fn prompt(&self) -> String {
        format!(
            "How many permutations of the numbers 1, 2, …, {} have exactly {} fixed points \
             (positions i where the permutation maps i to itself)? {INTEGER_INSTRUCTION}",
            self.n,
            number_word(self.k)
        )
    }

    /// C(n, k) times the derangements of the other n - k.
    pub(super) fn solve(&self) -> i128 {
        if self.k > self.n {
            return 0;
        }
        let m = self.n - self.k;
        let mut derangements = [1_i128, 0];
        for size in 2..=m {
            derangements = [
                derangements[1],
                i128::from(size - 1) * (derangements[0] + derangements[1]),
            ];
        }
        let derangements = if m == 0 { 1 } else { derangements[1] };
        binomial(self.n, self.k) * derangements
    }
}

/// Subsets of {1, …, n} whose elements sum to `target`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubsetSum {
    /// The set is 1..=n.
    pub n: u32,
    /// Wanted sum.
    pub target: u32,
}

impl SubsetSum {
    pub(super) fn prompt(&self) -> String {
        format!(
            "How many subsets of {{1, 2, …, {}}} have elements that sum to exactly {}? \
             {INTEGER_INSTRUCTION}",
            self.n, self.target
        )
    }

    /// 0/1 knapsack count.
    pub(super) fn solve(&self) -> i128 {
        let target = self.target as usize;
        let mut ways = vec![0_i128; target + 1];
        ways[0] = 1;
        for element in 1..=self.n as usize {
            for total in (element..=target).rev() {
                ways[total] += ways[total - element];
            }
        }
        ways[target]
    }
}

/// Monotone lattice paths (unit steps right or up) from (0,0) to (width,height) avoiding points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LatticePaths {
    /// Target x.
    pub width: u32,
    /// Target y.
    pub height: u32,
    /// Points a path may not pass through.
    pub avoid: Vec<(u32, u32)>,
}

impl LatticePaths {
    pub(super) fn prompt(&self) -> String {
        let points: Vec<String> = self
            .avoid
            .iter()
            .map(|(x, y)| format!("({x},{y})"))
            .collect();
        format!(
            "How many paths from (0,0) to ({},{}) use only unit steps to the right (+1,0) or up \
             (0,+1) and never pass through any of the points {}? {INTEGER_INSTRUCTION}",
            self.width,
            self.height,
            join_words(&points)
        )
    }

    /// Grid dynamic programme.
    pub(super) fn solve(&self) -> i128 {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut paths = vec![vec![0_i128; h + 1]; w + 1];
        for x in 0..=w {
            for y in 0..=h {
                let blocked = self
                    .avoid
                    .iter()
                    .any(|(ax, ay)| *ax as usize == x && *ay as usize == y);
                paths[x][y] = if blocked {
                    0
                } else if x == 0 && y == 0 {
                    1
                } else {
                    (if x > 0 { paths[x - 1][y] } else { 0 })
                        + (if y > 0 { paths[x][y - 1] } else { 0 })
                };
            }
        }
        paths[w][h]
    }
}

/// Balanced bracket strings of `pairs` pairs whose nesting depth never exceeds `max_depth`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BracketDepth {
    /// Number of "()" pairs (the string has twice as many characters).
    pub pairs: u32,
    /// Maximum nesting depth.
    pub max_depth: u32,
}

impl BracketDepth {
    pub(super) fn prompt(&self) -> String {
        format!(
            "How many balanced strings of {} brackets, made of {} opening \"(\" and {} closing \
             \")\", have a nesting depth that never exceeds {}? (The depth after a prefix is the \
             number of unmatched opening brackets in it; \"(())\" has depth 2.) \
             {INTEGER_INSTRUCTION}",
            2 * self.pairs,
            self.pairs,
            self.pairs,
            self.max_depth
        )
    }

    /// Dynamic programme over (position, depth).
    pub(super) fn solve(&self) -> i128 {
        let top = self.max_depth as usize;
        let mut ways = vec![0_i128; top + 1];
        ways[0] = 1;
        for _ in 0..2 * self.pairs {
            let mut next = vec![0_i128; top + 1];
            for (depth, &count) in ways.iter().enumerate() {
                if depth < top {
                    next[depth + 1] += count;
                }
                if depth > 0 {
                    next[depth - 1] += count;
                }
            }
            ways = next;
        }
        ways[0]
    }
}

/// The binomial coefficient C(n, k), by the exact running product.
fn binomial(n: u32, k: u32) -> i128 {
    let mut result = 1_i128;
    for i in 0..k {
        result = result * i128::from(n - i) / i128::from(i + 1);
    }
    result
}
