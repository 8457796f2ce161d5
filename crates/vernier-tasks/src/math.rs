//! The math and logic problems: each struct holds the parameters that are rendered into the
//! prompt, and computes its gold answer from the same parameters by brute force or exact
//! arithmetic.

use std::collections::VecDeque;

use serde::Serialize;

use crate::answer::reduce;
use crate::task::Checker;

/// The closing instruction of every integer-answer prompt.
const INTEGER_INSTRUCTION: &str =
    "Give the final answer as an integer on a last line of the form `ANSWER: <integer>`.";

/// Ways to tile a `width` × `length` rectangle with 1×2 dominoes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DominoTiling {
    /// Short side (rows); the dynamic programme is exponential in it, keep it small.
    pub width: u32,
    /// Long side (columns).
    pub length: u32,
}

impl DominoTiling {
    fn prompt(&self) -> String {
        format!(
            "In how many ways can a {}×{} rectangle be tiled completely with 1×2 dominoes \
             (each domino may be placed horizontally or vertically)? {INTEGER_INSTRUCTION}",
            self.width, self.length
        )
    }

    /// Column-by-column profile dynamic programme: the state is the set of cells of the
    /// current column already covered by horizontal dominoes from the previous column.
    fn solve(&self) -> i128 {
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

/// The last `digits` decimal digits of `base`^`exponent`, as an integer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastDigits {
    /// The base.
    pub base: u64,
    /// The exponent.
    pub exponent: u64,
    /// How many trailing digits (1..=18).
    pub digits: u32,
}

impl LastDigits {
    fn prompt(&self) -> String {
        format!(
            "What are the last {} digits of {}^{}? Give them as a number (leading zeros may be \
             dropped). {INTEGER_INSTRUCTION}",
            number_word(self.digits),
            self.base,
            self.exponent
        )
    }

    /// Square-and-multiply modulo 10^digits.
    fn solve(&self) -> i128 {
        let modulus = 10_u128.pow(self.digits);
        let mut result = 1_u128 % modulus;
        let mut base = u128::from(self.base) % modulus;
        let mut exponent = self.exponent;
        while exponent > 0 {
            if exponent & 1 == 1 {
                result = result * base % modulus;
            }
            base = base * base % modulus;
            exponent >>= 1;
        }
        i128::try_from(result).unwrap_or(-1)
    }
}

/// Fewest knight moves between two squares of an n×n board with some squares occupied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KnightPath {
    /// Board side (at most 26).
    pub board: u8,
    /// Start square in algebraic notation, e.g. `a1`.
    pub from: String,
    /// Target square, e.g. `h8`.
    pub to: String,
    /// Occupied squares that may not be landed on.
    pub blocked: Vec<String>,
}

impl KnightPath {
    fn prompt(&self) -> String {
        format!(
            "On a {n}×{n} chessboard, what is the fewest number of knight moves needed to go \
             from {} to {} when the squares {} are occupied and may not be landed on (the knight \
             jumps over pieces as usual)? {INTEGER_INSTRUCTION}",
            self.from,
            self.to,
            join_words(&self.blocked),
            n = self.board
        )
    }

    /// Breadth-first search; -1 when the target cannot be reached or a square is invalid.
    fn solve(&self) -> i128 {
        let n = i32::from(self.board);
        let (Some(from), Some(to)) = (square(&self.from, n), square(&self.to, n)) else {
            return -1;
        };
        let side = usize::from(self.board);
        let index = |(file, rank): (i32, i32)| {
            usize::try_from(rank).unwrap_or(0) * side + usize::try_from(file).unwrap_or(0)
        };
        let mut blocked = vec![false; side * side];
        for name in &self.blocked {
            match square(name, n) {
                Some(cell) => blocked[index(cell)] = true,
                None => return -1,
            }
        }
        let mut distance = vec![-1_i128; side * side];
        distance[index(from)] = 0;
        let mut queue = VecDeque::from([from]);
        while let Some((file, rank)) = queue.pop_front() {
            let here = distance[index((file, rank))];
            if (file, rank) == to {
                return here;
            }
            for (df, dr) in [
                (1, 2),
                (2, 1),
                (2, -1),
                (1, -2),
                (-1, -2),
                (-2, -1),
                (-2, 1),
                (-1, 2),
            ] {
                let next = (file + df, rank + dr);
                if (0..n).contains(&next.0)
                    && (0..n).contains(&next.1)
                    && !blocked[index(next)]
                    && distance[index(next)] < 0
                {
                    distance[index(next)] = here + 1;
                    queue.push_back(next);
                }
            }
        }
        -1
    }
}

/// Parses `a1`-style notation into zero-based (file, rank).
fn square(name: &str, side: i32) -> Option<(i32, i32)> {
    let mut chars = name.chars();
    let file = chars.next()?;
    if !file.is_ascii_lowercase() {
        return None;
    }
    let file = i32::from(u8::try_from(file).ok()? - b'a');
    let rank: i32 = chars.as_str().parse().ok()?;
    ((0..side).contains(&file) && (1..=side).contains(&rank)).then_some((file, rank - 1))
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
    fn prompt(&self) -> String {
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
    fn solve(&self) -> i128 {
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
    fn prompt(&self) -> String {
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
    fn solve(&self) -> (i128, i128) {
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
    fn prompt(&self) -> String {
        let coins: Vec<String> = self.coins.iter().map(u32::to_string).collect();
        format!(
            "In how many ways can the amount {} be made from an unlimited supply of coins worth \
             {}? Two ways are the same if they use the same number of each coin (order does not \
             matter). {INTEGER_INSTRUCTION}",
            self.amount,
            join_words(&coins)
        )
    }

    fn solve(&self) -> i128 {
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
    fn prompt(&self) -> String {
        format!(
            "How many permutations of the numbers 1, 2, …, {} have exactly {} fixed points \
             (positions i where the permutation maps i to itself)? {INTEGER_INSTRUCTION}",
            self.n,
            number_word(self.k)
        )
    }

    /// C(n, k) times the derangements of the other n - k.
    fn solve(&self) -> i128 {
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

/// Smallest positive integer satisfying a system of congruences x ≡ r (mod m).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Crt {
    /// (remainder, modulus) pairs.
    pub congruences: Vec<(u64, u64)>,
}

impl Crt {
    fn prompt(&self) -> String {
        let lines: Vec<String> = self
            .congruences
            .iter()
            .map(|(r, m)| format!("x ≡ {r} (mod {m})"))
            .collect();
        format!(
            "Find the smallest positive integer x such that {}. {INTEGER_INSTRUCTION}",
            join_words(&lines)
        )
    }

    /// Search over 1..=product of the moduli, visiting only the values that already satisfy
    /// the congruence of the largest modulus; -1 when no solution exists there.
    fn solve(&self) -> i128 {
        let limit: u64 = self.congruences.iter().map(|(_, m)| *m).product();
        let Some(&(remainder, step)) = self.congruences.iter().max_by_key(|(_, m)| *m) else {
            return -1;
        };
        let first = match remainder % step {
            0 => step,
            r => r,
        };
        (first..=limit)
            .step_by(usize::try_from(step).unwrap_or(1))
            .find(|x| self.congruences.iter().all(|(r, m)| x % m == r % m))
            .map_or(-1, i128::from)
    }
}

/// Integers 1..=limit whose decimal digits sum to `sum`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DigitSum {
    /// Upper bound, inclusive.
    pub limit: u64,
    /// Wanted digit sum.
    pub sum: u32,
}

impl DigitSum {
    fn prompt(&self) -> String {
        format!(
            "How many integers from 1 to {} inclusive have decimal digits that sum to {}? \
             {INTEGER_INSTRUCTION}",
            grouped(self.limit),
            self.sum
        )
    }

    /// Brute force over every integer up to 10^7; above that (levels 4 and 5), a dynamic
    /// programme over the digit positions, from the most significant, with a flag for
    /// "still equal to the limit's prefix".
    fn solve(&self) -> i128 {
        if self.limit <= BRUTE_FORCE_DIGIT_SUM_LIMIT {
            let count = (1..=self.limit)
                .filter(|value| digit_sum(*value) == self.sum)
                .count();
            return i128::try_from(count).unwrap_or(-1);
        }
        let digits: Vec<usize> = self
            .limit
            .to_string()
            .bytes()
            .map(|b| usize::from(b - b'0'))
            .collect();
        let target = self.sum as usize;
        // free[s]: prefixes already below the limit's prefix with digit sum s.
        let mut free = vec![0_i128; target + 1];
        let mut tight_sum = 0_usize;
        for &digit in &digits {
            let mut next = vec![0_i128; target + 1];
            for (s, &count) in free.iter().enumerate() {
                for d in 0..=9 {
                    if s + d <= target {
                        next[s + d] += count;
                    }
                }
            }
            for d in 0..digit {
                if tight_sum + d <= target {
                    next[tight_sum + d] += 1;
                }
            }
            tight_sum += digit;
            free = next;
        }
        let mut count = free[target] + i128::from(tight_sum == target);
        if target == 0 {
            count -= 1;
        }
        count
    }
}

/// Above this limit the digit-sum family counts by digit positions instead of one by one.
const BRUTE_FORCE_DIGIT_SUM_LIMIT: u64 = 10_000_000;

fn digit_sum(mut value: u64) -> u32 {
    let mut total = 0;
    while value > 0 {
        total += u32::try_from(value % 10).unwrap_or(0);
        value /= 10;
    }
    total
}

/// The starting value below a bound with the longest Collatz sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collatz {
    /// Starting values are 1..below.
    pub below: u64,
}

impl Collatz {
    fn prompt(&self) -> String {
        format!(
            "The Collatz sequence of n repeats n → n/2 when n is even and n → 3n+1 when n is \
             odd, until it reaches 1. Which starting value below {} has the longest Collatz \
             sequence? {INTEGER_INSTRUCTION}",
            grouped(self.below)
        )
    }

    /// Brute force; also returns whether the longest length is reached by a single start.
    fn solve_with_uniqueness(&self) -> (i128, bool) {
        let mut best = (0_u64, 0_u64);
        let mut unique = true;
        for start in 1..self.below {
            let length = collatz_steps(start);
            if length > best.1 {
                best = (start, length);
                unique = true;
            } else if length == best.1 {
                unique = false;
            }
        }
        (i128::from(best.0), unique)
    }
}

fn collatz_steps(mut value: u64) -> u64 {
    let mut steps = 0;
    while value != 1 {
        value = if value.is_multiple_of(2) {
            value / 2
        } else {
            3 * value + 1
        };
        steps += 1;
    }
    steps
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
    fn prompt(&self) -> String {
        format!(
            "How many subsets of {{1, 2, …, {}}} have elements that sum to exactly {}? \
             {INTEGER_INSTRUCTION}",
            self.n, self.target
        )
    }

    /// 0/1 knapsack count.
    fn solve(&self) -> i128 {
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
    fn prompt(&self) -> String {
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
    fn solve(&self) -> i128 {
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

/// Friday-the-13ths between 1 January of `from_year` and 31 December of `to_year` (Gregorian).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Friday13 {
    /// First year, inclusive.
    pub from_year: i32,
    /// Last year, inclusive.
    pub to_year: i32,
}

impl Friday13 {
    fn prompt(&self) -> String {
        format!(
            "How many Friday-the-13ths are there from {}-01-01 to {}-12-31 inclusive, in the \
             Gregorian calendar? {INTEGER_INSTRUCTION}",
            self.from_year, self.to_year
        )
    }

    /// Weekday of every 13th from the days-since-epoch formula of the proleptic Gregorian calendar.
    fn solve(&self) -> i128 {
        let mut count = 0;
        for year in self.from_year..=self.to_year {
            for month in 1..=12 {
                // 1970-01-01 was a Thursday (weekday 4 with Sunday = 0).
                let weekday = (days_from_civil(year, month, 13) + 4).rem_euclid(7);
                if weekday == 5 {
                    count += 1;
                }
            }
        }
        count
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the era-based civil-date algorithm).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let year = i64::from(if month <= 2 { year - 1 } else { year });
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
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
    fn prompt(&self) -> String {
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
    fn solve(&self) -> i128 {
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

/// A math or logic problem whose prompt and gold answer come from the same parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Problem {
    /// See [`DominoTiling`].
    DominoTiling(DominoTiling),
    /// See [`LastDigits`].
    LastDigits(LastDigits),
    /// See [`KnightPath`].
    KnightPath(KnightPath),
    /// See [`RoundTable`].
    RoundTable(RoundTable),
    /// See [`DiceProbability`].
    DiceProbability(DiceProbability),
    /// See [`CoinChange`].
    CoinChange(CoinChange),
    /// See [`FixedPoints`].
    FixedPoints(FixedPoints),
    /// See [`Crt`].
    Crt(Crt),
    /// See [`DigitSum`].
    DigitSum(DigitSum),
    /// See [`Collatz`].
    Collatz(Collatz),
    /// See [`SubsetSum`].
    SubsetSum(SubsetSum),
    /// See [`LatticePaths`].
    LatticePaths(LatticePaths),
    /// See [`Friday13`].
    Friday13(Friday13),
    /// See [`BracketDepth`].
    BracketDepth(BracketDepth),
}

impl Problem {
    /// The user prompt, rendered from the parameters.
    pub fn prompt(&self) -> String {
        match self {
            Self::DominoTiling(p) => p.prompt(),
            Self::LastDigits(p) => p.prompt(),
            Self::KnightPath(p) => p.prompt(),
            Self::RoundTable(p) => p.prompt(),
            Self::DiceProbability(p) => p.prompt(),
            Self::CoinChange(p) => p.prompt(),
            Self::FixedPoints(p) => p.prompt(),
            Self::Crt(p) => p.prompt(),
            Self::DigitSum(p) => p.prompt(),
            Self::Collatz(p) => p.prompt(),
            Self::SubsetSum(p) => p.prompt(),
            Self::LatticePaths(p) => p.prompt(),
            Self::Friday13(p) => p.prompt(),
            Self::BracketDepth(p) => p.prompt(),
        }
    }

    /// The checker holding the gold answer, computed from the parameters.
    pub fn gold(&self) -> Checker {
        let integer = match self {
            Self::DominoTiling(p) => p.solve(),
            Self::LastDigits(p) => p.solve(),
            Self::KnightPath(p) => p.solve(),
            Self::RoundTable(p) => p.solve(),
            Self::DiceProbability(p) => {
                let (num, den) = p.solve();
                return Checker::Fraction {
                    num,
                    den,
                    allow_unreduced: false,
                };
            }
            Self::CoinChange(p) => p.solve(),
            Self::FixedPoints(p) => p.solve(),
            Self::Crt(p) => p.solve(),
            Self::DigitSum(p) => p.solve(),
            Self::Collatz(p) => p.solve_with_uniqueness().0,
            Self::SubsetSum(p) => p.solve(),
            Self::LatticePaths(p) => p.solve(),
            Self::Friday13(p) => p.solve(),
            Self::BracketDepth(p) => p.solve(),
        };
        Checker::Integer(integer)
    }

    /// Checks that the puzzle is well posed: every answer is a positive count or value (a
    /// puzzle with no solution, an unreachable square or no solution of the congruences
    /// gives 0 or -1), and the Collatz maximum is reached by one start only.
    pub fn validate(&self) -> Result<(), String> {
        match self.gold() {
            Checker::Integer(value) if value <= 0 => {
                return Err(format!(
                    "the answer computed from the parameters is {value}; it must be positive \
                     (the puzzle has no solution as posed)"
                ));
            }
            Checker::Fraction { num, .. } if num <= 0 => {
                return Err("the probability computed from the parameters is 0".to_owned());
            }
            _ => {}
        }
        if let Self::Collatz(p) = self
            && !p.solve_with_uniqueness().1
        {
            return Err("several starting values share the longest sequence".to_owned());
        }
        Ok(())
    }
}

/// The 14 bundled problems with their task ids, in catalogue order.
pub(crate) fn bundled_problems() -> Vec<(&'static str, Problem)> {
    let squares = |names: &[&str]| names.iter().map(|s| (*s).to_owned()).collect();
    vec![
        (
            "domino-tiling",
            Problem::DominoTiling(DominoTiling {
                width: 3,
                length: 12,
            }),
        ),
        (
            "last-digits",
            Problem::LastDigits(LastDigits {
                base: 7,
                exponent: 2026,
                digits: 3,
            }),
        ),
        (
            "knight-path",
            Problem::KnightPath(KnightPath {
                board: 8,
                from: "a1".to_owned(),
                to: "h8".to_owned(),
                blocked: squares(&["c2", "d4", "e5", "f6", "g6"]),
            }),
        ),
        (
            "round-table",
            Problem::RoundTable(RoundTable {
                people: vec!['A', 'B', 'C', 'D', 'E', 'F'],
                adjacent: vec![('A', 'B')],
                not_adjacent: vec![('C', 'D'), ('A', 'F')],
                opposite: vec![('E', 'A')],
            }),
        ),
        (
            "dice-probability",
            Problem::DiceProbability(DiceProbability {
                dice: 4,
                sides: 6,
                target: 14,
            }),
        ),
        (
            "coin-change",
            Problem::CoinChange(CoinChange {
                amount: 137,
                coins: vec![1, 2, 5, 10, 20, 50],
            }),
        ),
        (
            "fixed-points",
            Problem::FixedPoints(FixedPoints { n: 9, k: 2 }),
        ),
        (
            "crt",
            Problem::Crt(Crt {
                congruences: vec![(2, 3), (3, 5), (2, 7), (5, 11)],
            }),
        ),
        (
            "digit-sum",
            Problem::DigitSum(DigitSum {
                limit: 1_000_000,
                sum: 27,
            }),
        ),
        ("collatz", Problem::Collatz(Collatz { below: 10_000 })),
        (
            "subset-sum",
            Problem::SubsetSum(SubsetSum { n: 20, target: 50 }),
        ),
        (
            "lattice-paths",
            Problem::LatticePaths(LatticePaths {
                width: 10,
                height: 10,
                avoid: vec![(3, 3), (5, 7), (8, 2)],
            }),
        ),
        (
            "friday-13",
            Problem::Friday13(Friday13 {
                from_year: 2001,
                to_year: 2100,
            }),
        ),
        (
            "bracket-depth",
            Problem::BracketDepth(BracketDepth {
                pairs: 10,
                max_depth: 3,
            }),
        ),
    ]
}

fn binomial(n: u32, k: u32) -> i128 {
    let mut result = 1_i128;
    for i in 0..k {
        result = result * i128::from(n - i) / i128::from(i + 1);
    }
    result
}

fn number_word(n: u32) -> String {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS
        .get(n as usize)
        .map_or_else(|| n.to_string(), |w| (*w).to_owned())
}

fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn join_words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

trait UppercaseFirst {
    fn to_uppercase_first(&self) -> String;
}

impl UppercaseFirst for String {
    fn to_uppercase_first(&self) -> String {
        let mut chars = self.chars();
        chars.next().map_or_else(String::new, |first| {
            first.to_uppercase().chain(chars).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cases_by_hand() {
        assert_eq!(
            DominoTiling {
                width: 2,
                length: 3
            }
            .solve(),
            3
        );
        assert_eq!(
            DominoTiling {
                width: 3,
                length: 2
            }
            .solve(),
            3
        );
        assert_eq!(
            BracketDepth {
                pairs: 3,
                max_depth: 1
            }
            .solve(),
            1
        );
        assert_eq!(SubsetSum { n: 3, target: 3 }.solve(), 2);
        assert_eq!(FixedPoints { n: 3, k: 1 }.solve(), 3);
    }

    #[test]
    fn squares_parse() {
        assert_eq!(square("a1", 8), Some((0, 0)));
        assert_eq!(square("h8", 8), Some((7, 7)));
        assert_eq!(square("i1", 8), None);
        assert_eq!(square("a9", 8), None);
    }

    #[test]
    fn unsolvable_round_table_is_invalid() {
        let problem = Problem::RoundTable(RoundTable {
            people: vec!['A', 'B', 'C', 'D'],
            adjacent: vec![('A', 'B')],
            not_adjacent: vec![('A', 'B')],
            opposite: vec![],
        });
        assert!(problem.validate().is_err());
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(1_000_000), "1,000,000");
        assert_eq!(grouped(999), "999");
    }
}
