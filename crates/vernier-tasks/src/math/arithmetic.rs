//! Arithmetic problems: powers modulo a power of ten, congruences, digit sums, Collatz sequences
//! and weekdays from day counts, each answered by exact integer arithmetic.

use serde::Serialize;

use super::wording::{INTEGER_INSTRUCTION, grouped, join_words, number_word};

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
    pub(super) fn prompt(&self) -> String {
        format!(
            "What are the last {} digits of {}^{}? Give them as a number (leading zeros may be \
             dropped). {INTEGER_INSTRUCTION}",
            number_word(self.digits),
            self.base,
            self.exponent
        )
    }

    /// Square-and-multiply modulo 10^digits.
    pub(super) fn solve(&self) -> i128 {
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

/// Smallest positive integer satisfying a system of congruences x ≡ r (mod m).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Crt {
    /// (remainder, modulus) pairs.
    pub congruences: Vec<(u64, u64)>,
}

impl Crt {
    pub(super) fn prompt(&self) -> String {
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
    pub(super) fn solve(&self) -> i128 {
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
    pub(super) fn prompt(&self) -> String {
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
    pub(super) fn solve(&self) -> i128 {
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
    pub(super) fn prompt(&self) -> String {
        format!(
            "The Collatz sequence of n repeats n → n/2 when n is even and n → 3n+1 when n is \
             odd, until it reaches 1. Which starting value below {} has the longest Collatz \
             sequence? {INTEGER_INSTRUCTION}",
            grouped(self.below)
        )
    }

    /// Brute force; also returns whether the longest length is reached by a single start.
    pub(super) fn solve_with_uniqueness(&self) -> (i128, bool) {
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

/// Friday-the-13ths between 1 January of `from_year` and 31 December of `to_year` (Gregorian).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Friday13 {
    /// First year, inclusive.
    pub from_year: i32,
    /// Last year, inclusive.
    pub to_year: i32,
}

impl Friday13 {
    pub(super) fn prompt(&self) -> String {
        format!(
            "How many Friday-the-13ths are there from {}-01-01 to {}-12-31 inclusive, in the \
             Gregorian calendar? {INTEGER_INSTRUCTION}",
            self.from_year, self.to_year
        )
    }

    /// Weekday of every 13th from the days-since-epoch formula of the proleptic Gregorian calendar.
    pub(super) fn solve(&self) -> i128 {
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
