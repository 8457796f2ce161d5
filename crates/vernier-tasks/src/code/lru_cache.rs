//! `lru-cache`: a least-recently-used cache with O(1) operations.
//!
//! Operations travel as one list of integers: `ops[i] >= 0` is `put(ops[i], i)` (the
//! value is the operation's index, so every stored value is distinct) and
//! `ops[i] < 0` is `get(-ops[i] - 1)`. Small cases return every `get` result; the
//! 200,000-operation case returns a summary (counts, sum, the first 20 results and a
//! polynomial checksum), because its 90,000 results would not fit one result record.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};
use vernier_grader::Case;
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, NegativeControl, harness};
use crate::code_check::ExpectedFailure;

const DESCRIPTION: &str = r"Write a Python class

    class LRUCache:
        def __init__(self, capacity: int) -> None: ...
        def get(self, key: int) -> int: ...
        def put(self, key: int, value: int) -> None: ...

a least-recently-used cache holding at most `capacity` entries (capacity >= 1).
Keys are ints; values are non-negative ints.
- get(key) returns the value stored for key, or -1 when the key is absent. A
  successful get makes the key the most recently used.
- put(key, value) stores the value. If the key is already present, its value is
  replaced and it becomes the most recently used. If the key is new and the cache is
  full, the least recently used entry is evicted first.
Both operations must take O(1) average time: the tests run 200,000 mixed operations
on a full cache of capacity 20,000 under constant eviction, within a time limit.";

/// Capacity of the large case.
const LARGE_CAPACITY: usize = 20_000;
/// Operations in the large case.
const LARGE_OPERATIONS: usize = 200_000;

/// What the Rust reference saw while running a workload.
pub(super) struct Simulation {
    /// Results of the `get` operations, in order.
    pub(super) gets: Vec<i64>,
    /// How many entries were evicted.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by the test that proves sustained eviction")
    )]
    pub(super) evictions: usize,
}

/// The Rust reference: a map from key to (value, last use) and an ordered map from
/// last use to key, so the least recently used key is the first entry.
pub(super) fn simulate(capacity: usize, ops: &[i64]) -> Simulation {
    let mut entries: HashMap<i64, (i64, usize)> = HashMap::new();
    let mut by_last_use: BTreeMap<usize, i64> = BTreeMap::new();
    let mut gets = Vec::new();
    let mut evictions = 0;
    for (index, &op) in ops.iter().enumerate() {
        let key = if op >= 0 { op } else { -op - 1 };
        let value = i64::try_from(index).unwrap_or(i64::MAX);
        if let Some((stored, last_use)) = entries.get_mut(&key) {
            by_last_use.remove(last_use);
            *last_use = index;
            by_last_use.insert(index, key);
            if op >= 0 {
                *stored = value;
            } else {
                gets.push(*stored);
            }
            continue;
        }
        if op < 0 {
            gets.push(-1);
            continue;
        }
        if entries.len() >= capacity
            && let Some((_, oldest)) = by_last_use.pop_first()
        {
            entries.remove(&oldest);
            evictions += 1;
        }
        entries.insert(key, (value, index));
        by_last_use.insert(index, key);
    }
    Simulation { gets, evictions }
}

const fn put(key: i64) -> i64 {
    key
}

const fn get(key: i64) -> i64 {
    -key - 1
}

/// The textbook example at capacity 2: put 1, put 2, get 1, put 3 (evicts 2), get 2, put 4
/// (evicts 1), get 1, get 3, get 4.
const CLASSIC: [i64; 9] = [
    put(1),
    put(2),
    get(1),
    put(3),
    get(2),
    put(4),
    get(1),
    get(3),
    get(4),
];

/// The checksum the harness computes: `h = (h * 1_000_003 + value + 2) mod (2^61 - 1)`.
pub(super) fn checksum(values: &[i64]) -> u64 {
    const MODULUS: u128 = (1 << 61) - 1;
    let mut hash: u128 = 0;
    for &value in values {
        let shifted = u128::try_from(value + 2).unwrap_or(0);
        hash = (hash * 1_000_003 + shifted) % MODULUS;
    }
    u64::try_from(hash).unwrap_or(0)
}

fn summary(gets: &[i64]) -> Value {
    json!({
        "gets": gets.len(),
        "misses": gets.iter().filter(|&&value| value == -1).count(),
        "sum": gets.iter().sum::<i64>(),
        "first": &gets[..gets.len().min(20)],
        "checksum": checksum(gets),
    })
}

fn case(name: &str, capacity: usize, ops: &[i64], summarise: bool) -> vernier_grader::Case {
    let simulation = simulate(capacity, ops);
    let expected = if summarise {
        summary(&simulation.gets)
    } else {
        json!(simulation.gets)
    };
    Case::new(
        name,
        json!({"capacity": capacity, "ops": ops, "summary": summarise}),
        expected,
    )
}

/// Fill the cache with `capacity` distinct keys, then mix gets and puts on keys
/// drawn from twice the capacity: half the puts meet a new key in a full cache and
/// evict, and whether a get hits depends on the exact recency order.
pub(super) fn workload(seed: u64, capacity: usize, total: usize) -> Vec<i64> {
    let mut generator = SplitMix64::new(seed);
    let capacity_i64 = i64::try_from(capacity).unwrap_or(i64::MAX);
    let mut keys: Vec<i64> = (0..capacity_i64).collect();
    generator.shuffle(&mut keys);
    let mut ops: Vec<i64> = keys.into_iter().map(put).collect();
    let key_space = 2 * u64::try_from(capacity).unwrap_or(1);
    while ops.len() < total {
        let key = i64::try_from(generator.below(key_space)).unwrap_or(0);
        ops.push(if generator.chance(1, 2) {
            put(key)
        } else {
            get(key)
        });
    }
    ops
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let mut cases = vec![
        case("classic", 2, &CLASSIC, false),
        // put 1, put 2, put 1 again (refreshes 1), put 3 (evicts 2), get 1, get 2, get 3
        case(
            "put_refreshes",
            2,
            &[put(1), put(2), put(1), put(3), get(1), get(2), get(3)],
            false,
        ),
        // put 1, put 2, get 1 (refreshes 1), put 3 (evicts 2), get 2, get 1
        case(
            "get_refreshes",
            2,
            &[put(1), put(2), get(1), put(3), get(2), get(1)],
            false,
        ),
        case(
            "update_value",
            1,
            &[put(7), put(7), get(7), put(8), get(7), get(8)],
            false,
        ),
        case("miss_on_empty", 3, &[get(5), get(0), put(0), get(0)], false),
    ];
    let size = draw.random_size(3_000);
    cases.push(case(
        &format!("random_{size}"),
        64,
        &workload(draw.seed(0x6c72_7501), 64, size),
        false,
    ));
    for index in 1..=draw.extra_cases() {
        cases.push(case(
            &format!("random_{size}_extra_{index}"),
            64,
            &workload(draw.extra_seed(0x6c72_7501, index), 64, size),
            false,
        ));
    }
    let (capacity, operations) = (
        draw.adversarial_size(LARGE_CAPACITY),
        draw.adversarial_size(LARGE_OPERATIONS),
    );
    cases.push(case(
        &format!("large_full_cache_{operations}"),
        capacity,
        &workload(draw.seed(0x6c72_7502), capacity, operations),
        true,
    ));
    CodeTaskSpec {
        id: "lru-cache",
        harness: harness!("lru_cache"),
        reference: include_str!("python/lru_cache/reference.py"),
        negative_controls: vec![
            NegativeControl {
                name: "put-does-not-refresh",
                code: include_str!("python/lru_cache/control_put_no_refresh.py"),
                must_fail_with: ExpectedFailure::FailedCases,
            },
            NegativeControl {
                name: "linear-eviction-scan",
                code: include_str!("python/lru_cache/control_linear_eviction.py"),
                must_fail_with: ExpectedFailure::Timeout,
            },
        ],
        cases,
        ..CodeTaskSpec::described(DESCRIPTION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_example_by_hand() {
        // Values are operation indices: put 1 -> 0, put 2 -> 1, put 3 -> 3, put 4 -> 5.
        assert_eq!(simulate(2, &CLASSIC).gets, [0, -1, -1, 3, 5]);
    }

    #[test]
    fn put_and_get_refresh_recency() {
        let ops = [put(1), put(2), put(1), put(3), get(1), get(2), get(3)];
        assert_eq!(simulate(2, &ops).gets, [2, -1, 3]);
        let ops = [put(1), put(2), get(1), put(3), get(2), get(1)];
        assert_eq!(simulate(2, &ops).gets, [0, -1, 0]);
    }

    #[test]
    fn the_large_case_keeps_a_full_cache_evicting() {
        let ops = workload(0x6c72_7502, LARGE_CAPACITY, LARGE_OPERATIONS);
        assert_eq!(ops.len(), LARGE_OPERATIONS);
        let simulation = simulate(LARGE_CAPACITY, &ops);
        assert!(
            simulation.evictions > 40_000,
            "only {} evictions",
            simulation.evictions
        );
        let misses = simulation.gets.iter().filter(|&&value| value == -1).count();
        let hits = simulation.gets.len() - misses;
        assert!(
            hits > 30_000 && misses > 30_000,
            "{hits} hits, {misses} misses"
        );
    }

    #[test]
    fn checksum_matches_a_hand_computation() {
        // ((0 * 1000003 + 1) * 1000003 + 7) = 1000010
        assert_eq!(checksum(&[-1, 5]), 1_000_010);
        assert_eq!(checksum(&[]), 0);
    }
}
