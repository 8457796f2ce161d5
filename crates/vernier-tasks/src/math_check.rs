//! The second, independent computation of every math family's gold answer.
//!
//! Each method here is a different algorithm from the one in `math.rs` (a closed formula,
//! another search, a different calendar formula), so a mistake in one shows up as a
//! disagreement in the self-check instead of hiding in both.

#![expect(
    clippy::many_single_char_names,
    reason = "the formulas keep their textbook letters (n, k, s, t, m, x, y)"
)]

use std::collections::HashMap;

use crate::answer::reduce;
use crate::math::{
    BracketDepth, CoinChange, Collatz, Crt, DiceProbability, DigitSum, DominoTiling, FixedPoints,
    Friday13, KnightPath, LastDigits, LatticePaths, Problem, RoundTable, SubsetSum,
};
use crate::task::Checker;

impl Problem {
    /// The gold answer computed a second time, by the independent method of each family
    /// (see `docs/hardsuite.md`). The self-check requires it to equal [`Problem::gold`].
    pub fn cross_check(&self) -> Checker {
        let integer = match self {
            Self::DominoTiling(p) => kasteleyn(p),
            Self::LastDigits(p) => repeated_multiplication(p),
            Self::KnightPath(p) => knight_relaxation(p),
            Self::RoundTable(p) => all_seatings_over_rotations(p),
            Self::DiceProbability(p) => {
                let (num, den) = dice_inclusion_exclusion(p);
                return Checker::Fraction {
                    num,
                    den,
                    allow_unreduced: false,
                };
            }
            Self::CoinChange(p) => coins_top_down(p),
            Self::FixedPoints(p) => fixed_points_inclusion_exclusion(p),
            Self::Crt(p) => crt_constructive(p),
            Self::DigitSum(p) => digit_sum_polynomial(p),
            Self::Collatz(p) => collatz_memoised(p).0,
            Self::SubsetSum(p) => subset_meet_in_the_middle(p),
            Self::LatticePaths(p) => lattice_inclusion_exclusion(p),
            Self::Friday13(p) => friday_zeller(p),
            Self::BracketDepth(p) => bracket_reflection(p),
        };
        Checker::Integer(integer)
    }

    /// Whether the Collatz maximum is reached by one start only, by the memoised method
    /// (true for every other family).
    pub fn cross_check_unique(&self) -> bool {
        match self {
            Self::Collatz(p) => collatz_memoised(p).1,
            _ => true,
        }
    }
}

/// Kasteleyn's product formula (1961) for the number of domino tilings of an m×n board:
/// ∏ⱼ∏ₖ (4cos²(πj/(m+1)) + 4cos²(πk/(n+1)))^{1/4}, evaluated in floating point and rounded.
/// The drawn boards keep the count below 10^13, where the rounding is exact.
fn kasteleyn(p: &DominoTiling) -> i128 {
    let (m, n) = (f64::from(p.width), f64::from(p.length));
    if (p.width * p.length) % 2 == 1 {
        return 0;
    }
    let mut log_sum = 0.0_f64;
    for j in 1..=p.width {
        for k in 1..=p.length {
            let a = (std::f64::consts::PI * f64::from(j) / (m + 1.0)).cos();
            let b = (std::f64::consts::PI * f64::from(k) / (n + 1.0)).cos();
            log_sum += (4.0 * a * a + 4.0 * b * b).ln();
        }
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the count is below 10^13, far inside i128"
    )]
    let rounded = (log_sum / 4.0).exp().round() as i128;
    rounded
}

/// Multiplies by the base `exponent` times modulo 10^digits.
fn repeated_multiplication(p: &LastDigits) -> i128 {
    let modulus = 10_u128.pow(p.digits);
    let base = u128::from(p.base) % modulus;
    let mut value = 1_u128 % modulus;
    for _ in 0..p.exponent {
        value = value * base % modulus;
    }
    i128::try_from(value).unwrap_or(-1)
}

/// Bellman–Ford style relaxation over the whole board until nothing changes.
fn knight_relaxation(p: &KnightPath) -> i128 {
    let n = usize::from(p.board);
    let parse = |name: &str| -> Option<(usize, usize)> {
        let bytes = name.as_bytes();
        let file = usize::from(bytes.first()?.checked_sub(b'a')?);
        let rank: usize = name.get(1..)?.parse().ok()?;
        (file < n && (1..=n).contains(&rank)).then_some((file, rank - 1))
    };
    let (Some(from), Some(to)) = (parse(&p.from), parse(&p.to)) else {
        return -1;
    };
    let mut blocked = vec![vec![false; n]; n];
    for name in &p.blocked {
        let Some((f, r)) = parse(name) else {
            return -1;
        };
        blocked[f][r] = true;
    }
    let unreached = i128::MAX;
    let mut distance = vec![vec![unreached; n]; n];
    distance[from.0][from.1] = 0;
    let jumps: [(isize, isize); 8] = [
        (1, 2),
        (2, 1),
        (2, -1),
        (1, -2),
        (-1, -2),
        (-2, -1),
        (-2, 1),
        (-1, 2),
    ];
    let mut changed = true;
    while changed {
        changed = false;
        for f in 0..n {
            for r in 0..n {
                if distance[f][r] == unreached {
                    continue;
                }
                for (df, dr) in jumps {
                    let (Some(g), Some(s)) = (f.checked_add_signed(df), r.checked_add_signed(dr))
                    else {
                        continue;
                    };
                    if g < n && s < n && !blocked[g][s] && distance[f][r] + 1 < distance[g][s] {
                        distance[g][s] = distance[f][r] + 1;
                        changed = true;
                    }
                }
            }
        }
    }
    let found = distance[to.0][to.1];
    if found == unreached { -1 } else { found }
}

/// Every arrangement of all n people in the n seats (no one fixed), counted and divided by
/// n: each rotation class of distinct people holds exactly n arrangements.
fn all_seatings_over_rotations(p: &RoundTable) -> i128 {
    let n = p.people.len();
    if n < 2 {
        return 0;
    }
    let mut count: i128 = 0;
    let mut seat_of = vec![usize::MAX; 128];
    let mut used = vec![false; n];
    let mut order = Vec::with_capacity(n);
    heap_free_all(p, n, &mut order, &mut used, &mut seat_of, &mut count);
    count / i128::try_from(n).unwrap_or(1)
}

fn heap_free_all(
    p: &RoundTable,
    n: usize,
    order: &mut Vec<usize>,
    used: &mut [bool],
    seat_of: &mut [usize],
    count: &mut i128,
) {
    if order.len() == n {
        let seat = |c: char| seat_of[c as usize % 128];
        let gap = |a: char, b: char| (seat(a) + n - seat(b)) % n;
        let next_to = |a, b| gap(a, b) == 1 || gap(b, a) == 1;
        let ok = p.adjacent.iter().all(|&(a, b)| next_to(a, b))
            && p.not_adjacent.iter().all(|&(a, b)| !next_to(a, b))
            && p.opposite
                .iter()
                .all(|&(a, b)| n.is_multiple_of(2) && gap(a, b) == n / 2);
        if ok {
            *count += 1;
        }
        return;
    }
    for person in 0..n {
        if !used[person] {
            used[person] = true;
            seat_of[p.people[person] as usize % 128] = order.len();
            order.push(person);
            heap_free_all(p, n, order, used, seat_of, count);
            order.pop();
            used[person] = false;
        }
    }
}

/// Inclusion–exclusion: outcomes of n dice with s faces summing to t are
/// Σₖ (−1)ᵏ C(n,k) C(t − k·s − 1, n − 1).
fn dice_inclusion_exclusion(p: &DiceProbability) -> (i128, i128) {
    let (n, s, t) = (
        i128::from(p.dice),
        i128::from(p.sides),
        i128::from(p.target),
    );
    let mut ways = 0_i128;
    let mut k = 0;
    while k <= n && t - k * s > n - 1 {
        let term = binomial_i(n, k) * binomial_i(t - k * s - 1, n - 1);
        ways += if k % 2 == 0 { term } else { -term };
        k += 1;
    }
    reduce(ways, s.pow(p.dice))
}

/// Top-down count over the coins from the largest, each taken 0, 1, 2, … times, memoised
/// on (coin index, remaining amount); one coin left makes the amount in one way or none.
fn coins_top_down(p: &CoinChange) -> i128 {
    let mut coins = p.coins.clone();
    coins.sort_unstable_by(|a, b| b.cmp(a));
    coins.dedup();
    coins.retain(|&c| c > 0);
    if coins.is_empty() {
        return i128::from(p.amount == 0);
    }
    let mut memo = vec![vec![None; p.amount as usize + 1]; coins.len()];
    count_coins(&coins, 0, p.amount as usize, &mut memo)
}

fn count_coins(coins: &[u32], index: usize, amount: usize, memo: &mut [Vec<Option<i128>>]) -> i128 {
    let coin = coins[index] as usize;
    if index + 1 == coins.len() {
        return i128::from(amount.is_multiple_of(coin));
    }
    if let Some(known) = memo[index][amount] {
        return known;
    }
    let mut total = 0;
    let mut left = amount;
    loop {
        total += count_coins(coins, index + 1, left, memo);
        if left < coin {
            break;
        }
        left -= coin;
    }
    memo[index][amount] = Some(total);
    total
}

/// C(n, k) · Σⱼ (−1)ʲ m!/j! with m = n − k (inclusion–exclusion over the fixed points of
/// the other m).
fn fixed_points_inclusion_exclusion(p: &FixedPoints) -> i128 {
    if p.k > p.n {
        return 0;
    }
    let m = i128::from(p.n - p.k);
    let mut sum = 0_i128;
    for j in 0..=m {
        // m!/j! = (j+1)(j+2)…m
        let falling: i128 = (j + 1..=m).product();
        sum += if j % 2 == 0 { falling } else { -falling };
    }
    binomial_i(i128::from(p.n), i128::from(p.k)) * sum
}

/// Constructive Chinese remainder theorem (extended Euclid, merging one congruence at a
/// time); works for moduli that are not coprime too, and reports no solution as -1.
fn crt_constructive(p: &Crt) -> i128 {
    let (mut residue, mut modulus) = (0_i128, 1_i128);
    for &(r, m) in &p.congruences {
        let (r, m) = (i128::from(r), i128::from(m));
        let (g, x, _) = extended_gcd(modulus, m);
        if (r - residue).rem_euclid(g) != 0 {
            return -1;
        }
        let step = m / g;
        let t = ((r - residue) / g % step * x % step).rem_euclid(step);
        residue += modulus * t;
        modulus *= step;
        residue = residue.rem_euclid(modulus);
    }
    if residue == 0 { modulus } else { residue }
}

fn extended_gcd(a: i128, b: i128) -> (i128, i128, i128) {
    if b == 0 {
        (a, 1, 0)
    } else {
        let (g, x, y) = extended_gcd(b, a % b);
        (g, y, x - (a / b) * y)
    }
}

/// Splits 1..=limit into blocks by leading digits and counts each block with the
/// coefficients of (1 + x + … + x⁹)ᵏ.
fn digit_sum_polynomial(p: &DigitSum) -> i128 {
    let digits: Vec<u32> = p
        .limit
        .to_string()
        .bytes()
        .map(|b| u32::from(b - b'0'))
        .collect();
    let target = p.sum as usize;
    // power[k][s]: k-digit strings (leading zeros allowed) with digit sum s.
    let mut power = vec![vec![0_i128; target + 1]];
    power[0][0] = 1;
    for k in 1..=digits.len() {
        let mut next = vec![0_i128; target + 1];
        for (s, &count) in power[k - 1].iter().enumerate() {
            for d in 0..=9 {
                if s + d <= target {
                    next[s + d] += count;
                }
            }
        }
        power.push(next);
    }
    // Numbers 0..limit: for each position, a smaller digit there after the limit's prefix.
    let mut total = 0_i128;
    let mut prefix_sum = 0_usize;
    for (position, &digit) in digits.iter().enumerate() {
        let rest = digits.len() - position - 1;
        for smaller in 0..digit as usize {
            if prefix_sum + smaller <= target {
                total += power[rest][target - prefix_sum - smaller];
            }
        }
        prefix_sum += digit as usize;
    }
    if prefix_sum == target {
        total += 1; // the limit itself
    }
    if target == 0 {
        total -= 1; // 0 is not in 1..=limit
    }
    total
}

/// Sequence lengths memoised in a table over the starts already seen.
fn collatz_memoised(p: &Collatz) -> (i128, bool) {
    let below = p.below;
    let slot = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
    let mut length = vec![0_u32; slot(below).max(2)];
    let mut best = (0_u64, 0_u32, true);
    let mut path = Vec::new();
    for start in 1..below {
        let mut value = start;
        path.clear();
        while value != 1 && (value >= below || length[slot(value)] == 0) {
            path.push(value);
            value = if value.is_multiple_of(2) {
                value / 2
            } else {
                3 * value + 1
            };
        }
        let mut steps = if value == 1 { 0 } else { length[slot(value)] };
        for &seen in path.iter().rev() {
            steps += 1;
            if seen < below {
                length[slot(seen)] = steps;
            }
        }
        let here = if start == 1 { 0 } else { length[slot(start)] };
        match here.cmp(&best.1) {
            std::cmp::Ordering::Greater => best = (start, here, true),
            std::cmp::Ordering::Equal => best.2 = false,
            std::cmp::Ordering::Less => {}
        }
    }
    (i128::from(best.0), best.2)
}

/// Meet in the middle: every subset sum of each half, one half counted in a table.
fn subset_meet_in_the_middle(p: &SubsetSum) -> i128 {
    let elements: Vec<u64> = (1..=u64::from(p.n)).collect();
    let (low, high) = elements.split_at(elements.len() / 2);
    let sums = |half: &[u64]| {
        let mut all = vec![0_u64];
        for &e in half {
            let extended: Vec<u64> = all.iter().map(|s| s + e).collect();
            all.extend(extended);
        }
        all
    };
    let mut table: HashMap<u64, i128> = HashMap::new();
    for s in sums(low) {
        *table.entry(s).or_default() += 1;
    }
    let target = u64::from(p.target);
    sums(high)
        .into_iter()
        .filter(|s| *s <= target)
        .map(|s| table.get(&(target - s)).copied().unwrap_or(0))
        .sum()
}

/// Inclusion–exclusion over the avoided points in dominance order: f(P) = paths(O→P) −
/// Σ_{Q before P} f(Q)·paths(Q→P), with paths counted by binomial coefficients.
fn lattice_inclusion_exclusion(p: &LatticePaths) -> i128 {
    let mut points: Vec<(i128, i128)> = p
        .avoid
        .iter()
        .map(|&(x, y)| (i128::from(x), i128::from(y)))
        .filter(|&(x, y)| x <= i128::from(p.width) && y <= i128::from(p.height))
        .collect();
    points.sort_unstable();
    points.dedup();
    points.push((i128::from(p.width), i128::from(p.height)));
    let paths = |(ax, ay): (i128, i128), (bx, by): (i128, i128)| {
        if bx < ax || by < ay {
            0
        } else {
            binomial_i(bx - ax + by - ay, bx - ax)
        }
    };
    let mut first_bad: Vec<i128> = Vec::with_capacity(points.len());
    for (i, &point) in points.iter().enumerate() {
        let mut value = paths((0, 0), point);
        for j in 0..i {
            value -= first_bad[j] * paths(points[j], point);
        }
        first_bad.push(value);
    }
    first_bad.last().copied().unwrap_or(0)
}

/// Zeller's congruence for the weekday of each 13th.
fn friday_zeller(p: &Friday13) -> i128 {
    let mut count = 0;
    for year in p.from_year..=p.to_year {
        for month in 1..=12 {
            let (m, y) = if month < 3 {
                (month + 12, year - 1)
            } else {
                (month, year)
            };
            let (k, j) = (y.rem_euclid(100), y.div_euclid(100));
            // h = 0 is Saturday, 6 is Friday.
            let h = (13 + (13 * (m + 1)) / 5 + k + k / 4 + j.div_euclid(4) + 5 * j).rem_euclid(7);
            if h == 6 {
                count += 1;
            }
        }
    }
    count
}

/// The reflection principle: Dyck paths of 2n steps staying within height h number
/// Σₖ [C(2n, n + k(h+2)) − C(2n, n + k(h+2) + h + 1)] over all integers k.
fn bracket_reflection(p: &BracketDepth) -> i128 {
    let (n, h) = (i128::from(p.pairs), i128::from(p.max_depth));
    let period = h + 2;
    let mut total = 0;
    let reach = n / period + 2;
    for k in -reach..=reach {
        total += binomial_i(2 * n, n + k * period) - binomial_i(2 * n, n + k * period + h + 1);
    }
    total
}

/// C(n, k), 0 outside 0 ≤ k ≤ n.
fn binomial_i(n: i128, k: i128) -> i128 {
    if k < 0 || n < 0 || k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut result = 1_i128;
    for i in 0..k {
        result = result * (n - i) / (i + 1);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflection_matches_small_brute_force() {
        // Brute force over every bracket string of 2n characters.
        for pairs in 1..=7_u32 {
            for max_depth in 1..=4_u32 {
                let mut brute = 0;
                for bits in 0_u32..(1 << (2 * pairs)) {
                    let mut depth = 0_i32;
                    let mut ok = true;
                    for i in 0..2 * pairs {
                        depth += if bits >> i & 1 == 1 { 1 } else { -1 };
                        ok &= depth >= 0 && depth <= i32::try_from(max_depth).unwrap_or(i32::MAX);
                    }
                    if ok && depth == 0 {
                        brute += 1;
                    }
                }
                let p = BracketDepth { pairs, max_depth };
                assert_eq!(bracket_reflection(&p), brute, "{pairs} {max_depth}");
            }
        }
    }

    #[test]
    fn kasteleyn_matches_published_values() {
        // OEIS A004003: tilings of a 2n×2n board: 1, 2, 36, 6728, 12988816.
        let square = |side| {
            kasteleyn(&DominoTiling {
                width: side,
                length: side,
            })
        };
        assert_eq!(square(2), 2);
        assert_eq!(square(4), 36);
        assert_eq!(square(6), 6728);
        assert_eq!(square(8), 12_988_816);
    }

    #[test]
    fn digit_sum_polynomial_matches_brute_force() {
        for limit in [1_u64, 9, 10, 99, 100, 345, 1000, 7777] {
            for sum in 0..=30 {
                let brute = (1..=limit)
                    .filter(|v| {
                        v.to_string()
                            .bytes()
                            .map(|b| u32::from(b - b'0'))
                            .sum::<u32>()
                            == sum
                    })
                    .count();
                assert_eq!(
                    digit_sum_polynomial(&DigitSum { limit, sum }),
                    brute as i128,
                    "{limit} {sum}"
                );
            }
        }
    }

    #[test]
    fn crt_and_dice_small_cases() {
        // x ≡ 2 (mod 3), 3 (mod 5), 2 (mod 7): 23 (Sunzi's problem).
        let sunzi = Crt {
            congruences: vec![(2, 3), (3, 5), (2, 7)],
        };
        assert_eq!(crt_constructive(&sunzi), 23);
        // Two dice sum to 7 in 6 of 36 ways.
        let two = DiceProbability {
            dice: 2,
            sides: 6,
            target: 7,
        };
        assert_eq!(dice_inclusion_exclusion(&two), (1, 6));
    }
}
