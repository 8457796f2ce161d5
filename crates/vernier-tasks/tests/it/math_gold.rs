//! Every bundled math gold answer, cross-checked by a second, independent method (and, where
//! one exists, a published value).

use vernier_tasks::{Checker, Suite};

fn suite() -> &'static Suite {
    crate::bundled_suite()
}

fn gold(id: &str) -> i128 {
    match suite().task(id).expect("bundled task").checker {
        Checker::Integer(value) => value,
        ref other => panic!("{id}: not an integer checker: {other:?}"),
    }
}

#[test]
fn domino_tiling_matches_the_three_row_recurrence() {
    // Tilings of a 3×2n rectangle satisfy a(n) = 4a(n-1) - a(n-2), a(0)=1, a(1)=3
    // (OEIS A001835: 1, 3, 11, 41, 153, 571, 2131, ...).
    let mut a = [1_i128, 3];
    for _ in 2..=6 {
        a = [a[1], 4 * a[1] - a[0]];
    }
    assert_eq!(a[1], 2131);
    assert_eq!(gold("domino-tiling"), a[1]);
}

#[test]
fn last_digits_by_repeated_multiplication() {
    let mut value = 1_u64;
    for _ in 0..2026 {
        value = value * 7 % 1000;
    }
    assert_eq!(gold("last-digits"), i128::from(value));
    assert_eq!(value, 649);
}

#[test]
fn knight_path_by_relaxation() {
    // Bellman-Ford style relaxation over the whole board until nothing changes.
    let blocked = [(2, 1), (3, 3), (4, 4), (5, 5), (6, 5)]; // c2 d4 e5 f6 g6 as (file, rank)
    let mut distance = [[i32::MAX; 8]; 8];
    distance[0][0] = 0;
    let moves = [
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
        for file in 0..8_i32 {
            for rank in 0..8_i32 {
                let here = distance[on_board(file)][on_board(rank)];
                if here == i32::MAX {
                    continue;
                }
                for (df, dr) in moves {
                    let (f, r) = (file + df, rank + dr);
                    if (0..8).contains(&f) && (0..8).contains(&r) && !blocked.contains(&(f, r)) {
                        let cell = &mut distance[on_board(f)][on_board(r)];
                        if here + 1 < *cell {
                            *cell = here + 1;
                            changed = true;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(gold("knight-path"), i128::from(distance[7][7]));
    // Without obstacles a1→h8 takes 6 moves; the obstacles can only lengthen it.
    assert!(distance[7][7] >= 6);
}

fn on_board(coordinate: i32) -> usize {
    usize::try_from(coordinate).expect("on the board")
}

#[test]
fn round_table_by_counting_all_arrangements_and_dividing_by_rotations() {
    // All 6! seatings on labelled seats; each rotation class of distinct people has 6 members.
    let people = ['A', 'B', 'C', 'D', 'E', 'F'];
    let mut count = 0;
    let mut permutation = [0_usize, 1, 2, 3, 4, 5];
    loop {
        let seat_of = |person: char| {
            let index = people.iter().position(|p| *p == person).expect("person");
            permutation.iter().position(|p| *p == index).expect("seat")
        };
        let distance = |a: char, b: char| {
            let d = (seat_of(a) + 6 - seat_of(b)) % 6;
            d.min(6 - d)
        };
        if distance('A', 'B') == 1
            && distance('C', 'D') != 1
            && distance('A', 'F') != 1
            && distance('E', 'A') == 3
        {
            count += 1;
        }
        if !next_permutation(&mut permutation) {
            break;
        }
    }
    assert_eq!(count % 6, 0);
    assert_eq!(gold("round-table"), count / 6);
    // By hand: A at seat 0, E opposite; B on either side (2); F must take one of the two seats
    // not next to A, and only one placement keeps C and D apart (2 each): 4.
    assert_eq!(count / 6, 4);
}

fn next_permutation(items: &mut [usize]) -> bool {
    let Some(pivot) = (0..items.len().saturating_sub(1))
        .rev()
        .find(|&i| items[i] < items[i + 1])
    else {
        return false;
    };
    let successor = (pivot + 1..items.len())
        .rev()
        .find(|&i| items[i] > items[pivot])
        .expect("successor");
    items.swap(pivot, successor);
    items[pivot + 1..].reverse();
    true
}

#[test]
fn dice_probability_by_enumerating_all_rolls() {
    let mut hits = 0_i128;
    for a in 1..=6 {
        for b in 1..=6 {
            for c in 1..=6 {
                for d in 1..=6 {
                    if a + b + c + d == 14 {
                        hits += 1;
                    }
                }
            }
        }
    }
    assert_eq!(hits, 146, "the catalogue's 146/1296");
    match suite().task("dice-probability").expect("task").checker {
        Checker::Fraction { num, den, .. } => {
            assert_eq!((num, den), (73, 648));
            assert_eq!(num * 1296, hits * den);
        }
        ref other => panic!("not a fraction checker: {other:?}"),
    }
}

#[test]
fn coin_change_by_nested_loops() {
    let mut ways = 0;
    for fifties in 0..=137 / 50 {
        let rest = 137 - 50 * fifties;
        for twenties in 0..=rest / 20 {
            let rest = rest - 20 * twenties;
            for tens in 0..=rest / 10 {
                let rest = rest - 10 * tens;
                for fives in 0..=rest / 5 {
                    let rest = rest - 5 * fives;
                    ways += rest / 2 + 1; // twos from 0 to rest/2, ones fill the remainder
                }
            }
        }
    }
    assert_eq!(gold("coin-change"), ways);
}

#[test]
fn fixed_points_by_brute_force_over_all_permutations() {
    let mut permutation: Vec<usize> = (0..9).collect();
    let mut count = 0;
    loop {
        if permutation
            .iter()
            .enumerate()
            .filter(|(i, p)| i == *p)
            .count()
            == 2
        {
            count += 1;
        }
        if !next_permutation(&mut permutation) {
            break;
        }
    }
    // C(9,2) × D(7) = 36 × 1854 (derangements: OEIS A000166).
    assert_eq!(count, 36 * 1854);
    assert_eq!(gold("fixed-points"), count);
}

#[test]
fn crt_by_construction() {
    // Constructive Chinese remainder theorem with modular inverses.
    let congruences = [(2_i128, 3_i128), (3, 5), (2, 7), (5, 11)];
    let modulus: i128 = congruences.iter().map(|(_, m)| m).product();
    let mut x = 0;
    for (r, m) in congruences {
        let partial = modulus / m;
        let inverse = (1..m)
            .find(|i| partial * i % m == 1)
            .expect("coprime moduli");
        x += r * partial * inverse;
    }
    let x = x % modulus;
    assert_eq!(gold("crt"), if x == 0 { modulus } else { x });
    assert_eq!(x, 863);
}

#[test]
fn digit_sum_by_inclusion_exclusion() {
    // Six-digit strings 000000..999999 with digit sum 27: sum over k of (-1)^k C(6,k) C(27-10k+5, 5).
    // 0 and 1,000,000 have other digit sums, so the count over 1..=1,000,000 is the same.
    let binomial = |n: i128, k: i128| -> i128 {
        if n < k || n < 0 {
            return 0;
        }
        (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
    };
    let mut count = 0;
    for k in 0..=2 {
        let sign = if k % 2 == 0 { 1 } else { -1 };
        count += sign * binomial(6, k) * binomial(27 - 10 * k + 5, 5);
    }
    assert_eq!(count, 55_252);
    assert_eq!(gold("digit-sum"), count);
}

#[test]
fn collatz_matches_the_published_record_holders() {
    // OEIS A006877 (starting values that set a new record for the number of steps):
    // ..., 3711, 6171, 10971, ... so the longest below 10,000 starts at 6171.
    assert_eq!(gold("collatz"), 6171);
    // And a second computation with a memo table.
    let mut steps = vec![0_u32; 10_000];
    let mut best = (1, 0);
    for start in 2..10_000_u64 {
        let (mut n, mut extra) = (start, 0);
        while n >= start {
            n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
            extra += 1;
        }
        let total = steps[usize::try_from(n).expect("small")] + extra;
        steps[usize::try_from(start).expect("small")] = total;
        if total > best.1 {
            best = (start, total);
        }
    }
    assert_eq!(gold("collatz"), i128::from(best.0));
}

#[test]
fn subset_sum_by_enumerating_every_subset() {
    let count = (0_u32..1 << 20)
        .filter(|mask| {
            (0..20)
                .filter(|bit| mask & (1 << bit) != 0)
                .map(|bit| bit + 1)
                .sum::<u32>()
                == 50
        })
        .count();
    assert_eq!(gold("subset-sum"), i128::try_from(count).expect("count"));
}

#[test]
fn lattice_paths_by_inclusion_exclusion() {
    let binomial = |n: i128, k: i128| -> i128 { (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1)) };
    let paths = |from: (i128, i128), to: (i128, i128)| -> i128 {
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        if dx < 0 || dy < 0 {
            0
        } else {
            binomial(dx + dy, dx)
        }
    };
    // Paths to the end that avoid every blocked point: for blocked points sorted so that a
    // predecessor comes first, good(p) = paths(0,p) - sum over earlier q of good(q)·paths(q,p).
    let mut points = [(3, 3), (5, 7), (8, 2), (10, 10)];
    points.sort_unstable();
    let mut good: Vec<i128> = Vec::new();
    for (index, point) in points.iter().enumerate() {
        let through = (0..index)
            .map(|j| good[j] * paths(points[j], *point))
            .sum::<i128>();
        good.push(paths((0, 0), *point) - through);
    }
    assert_eq!(gold("lattice-paths"), *good.last().expect("end point"));
    assert!(gold("lattice-paths") < binomial(20, 10));
}

#[test]
fn friday_13_by_walking_every_day() {
    // 2001-01-01 was a Monday. Walk day by day with the Gregorian leap rule.
    let leap = |y: i32| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut weekday = 1; // 0 = Sunday
    let mut count = 0;
    for year in 2001..=2100 {
        let lengths = [
            31,
            if leap(year) { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        for length in lengths {
            for day in 1..=length {
                if day == 13 && weekday == 5 {
                    count += 1;
                }
                weekday = (weekday + 1) % 7;
            }
        }
    }
    assert_eq!(gold("friday-13"), count);
    // Every year has between 1 and 3 Friday-the-13ths.
    assert!((100..=300).contains(&count));
}

#[test]
fn bracket_depth_by_enumerating_every_string() {
    let count = (0_u32..1 << 20)
        .filter(|mask| {
            let mut depth = 0_i32;
            for bit in 0..20 {
                depth += if mask & (1 << bit) != 0 { 1 } else { -1 };
                if !(0..=3).contains(&depth) {
                    return false;
                }
            }
            depth == 0
        })
        .count();
    // Dyck paths of semilength n and height at most 3 are counted by F(2n-1) (OEIS A001519):
    // n = 10 gives F(19) = 4181.
    assert_eq!(count, 4181);
    assert_eq!(gold("bracket-depth"), i128::try_from(count).expect("count"));
}

#[test]
fn every_math_prompt_states_its_parameters() {
    let expectations = [
        ("domino-tiling", vec!["3×12"]),
        ("last-digits", vec!["7^2026", "three"]),
        (
            "knight-path",
            vec!["a1", "h8", "c2", "d4", "e5", "f6", "g6"],
        ),
        (
            "round-table",
            vec![
                "A sits next to B",
                "C does not sit next to D",
                "A does not sit next to F",
                "E sits directly opposite A",
            ],
        ),
        (
            "dice-probability",
            vec!["Four", "6-sided", "14", "lowest terms"],
        ),
        ("coin-change", vec!["137", "1, 2, 5, 10, 20 and 50"]),
        ("fixed-points", vec!["9", "two fixed points"]),
        (
            "crt",
            vec![
                "x ≡ 2 (mod 3)",
                "x ≡ 3 (mod 5)",
                "x ≡ 2 (mod 7)",
                "x ≡ 5 (mod 11)",
            ],
        ),
        ("digit-sum", vec!["1 to 1,000,000 inclusive", "27"]),
        ("collatz", vec!["below 10,000"]),
        ("subset-sum", vec!["{1, 2, …, 20}", "50"]),
        ("lattice-paths", vec!["(10,10)", "(3,3)", "(5,7)", "(8,2)"]),
        ("friday-13", vec!["2001-01-01", "2100-12-31", "Gregorian"]),
        ("bracket-depth", vec!["20 brackets", "never exceeds 3"]),
    ];
    for (id, needles) in expectations {
        let task = suite().task(id).expect("bundled task");
        let prompt = &task.messages.last().expect("message").content;
        for needle in needles {
            assert!(
                prompt.contains(needle),
                "{id}: prompt lacks {needle:?}: {prompt}"
            );
        }
        assert!(prompt.contains("ANSWER:"), "{id}: no answer instruction");
    }
}
