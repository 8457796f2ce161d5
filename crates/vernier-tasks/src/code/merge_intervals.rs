//! `merge-intervals`: merge overlapping and touching closed intervals.

use serde_json::{Value, json};
use vernier_grader::Case;
use vernier_stats::SplitMix64;

use super::spec::{CaseDraw, CodeTaskSpec, NegativeControl, harness};
use crate::code_check::ExpectedFailure;

const DESCRIPTION: &str = r"Write a Python function

    def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:

Each interval (start, end) is a closed range of integers with start <= end. The input
may be in any order and may contain duplicates. Return the union as a list of disjoint
intervals sorted by start. Intervals that overlap or touch merge: (1, 3) and (3, 5)
become (1, 5), and an interval nested inside another disappears into it. Intervals
that only sit next to each other, like (1, 2) and (3, 4), do not touch and stay apart.
An empty list gives an empty list. Do not modify the input list. The tests use up to
1,000 intervals, within a time limit.";

/// The Rust reference: sort, then extend the last interval while the next one starts
/// at or before its end.
pub(super) fn merge(intervals: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut sorted = intervals.to_vec();
    sorted.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::with_capacity(sorted.len());
    for (start, end) in sorted {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

fn to_json(intervals: &[(i64, i64)]) -> Value {
    Value::Array(
        intervals
            .iter()
            .map(|&(start, end)| json!([start, end]))
            .collect(),
    )
}

fn case(name: &str, intervals: &[(i64, i64)]) -> vernier_grader::Case {
    Case::new(name, to_json(intervals), to_json(&merge(intervals)))
}

/// Many short intervals on a crowded line, so overlaps, touches, nesting and
/// duplicates all occur.
fn random_intervals(seed: u64, count: usize, span: i64) -> Vec<(i64, i64)> {
    let mut generator = SplitMix64::new(seed);
    let span_u64 = u64::try_from(span).unwrap_or(1);
    (0..count)
        .map(|_| {
            let start = i64::try_from(generator.below(span_u64)).unwrap_or(0) - span / 2;
            let length = i64::try_from(generator.below(40)).unwrap_or(0);
            (start, start + length)
        })
        .collect()
}

pub(super) fn spec(draw: CaseDraw) -> CodeTaskSpec {
    let mut cases = vec![
        case("empty", &[]),
        case("single", &[(4, 9)]),
        case("touching", &[(1, 3), (3, 5)]),
        case("overlapping", &[(1, 4), (2, 6), (8, 10)]),
        case("unsorted", &[(8, 10), (15, 18), (1, 3), (2, 6)]),
        case("nested", &[(1, 10), (2, 3), (4, 5)]),
        case("touching_chain_unsorted", &[(5, 7), (1, 3), (3, 5)]),
        case("adjacent_not_touching", &[(3, 4), (1, 2)]),
        case("points_and_duplicates", &[(2, 2), (2, 2), (1, 1), (2, 3)]),
        case("negative", &[(-5, -1), (-3, 2), (4, 4)]),
        case("already_merged", &[(1, 2), (4, 5), (7, 9)]),
    ];
    let size = draw.random_size(1_000);
    let span = i64::try_from(size * 40).unwrap_or(40_000);
    cases.push(case(
        &format!("random_{size}"),
        &random_intervals(draw.seed(0x6d65_7267_6501), size, span),
    ));
    for index in 1..=draw.extra_cases() {
        cases.push(case(
            &format!("random_{size}_extra_{index}"),
            &random_intervals(draw.extra_seed(0x6d65_7267_6501, index), size, span),
        ));
    }
    CodeTaskSpec {
        id: "merge-intervals",
        harness: harness!("merge_intervals"),
        reference: include_str!("python/merge_intervals/reference.py"),
        negative_controls: vec![
            NegativeControl {
                name: "returns-input-unchanged",
                code: include_str!("python/merge_intervals/control_unchanged.py"),
                must_fail_with: ExpectedFailure::FailedCases,
            },
            NegativeControl {
                name: "merges-overlapping-not-touching",
                code: include_str!("python/merge_intervals/control_not_touching.py"),
                must_fail_with: ExpectedFailure::FailedCases,
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
    fn examples_from_the_spec() {
        assert_eq!(merge(&[(1, 3), (3, 5)]), [(1, 5)]);
        assert_eq!(merge(&[]), []);
        assert_eq!(merge(&[(1, 10), (2, 3), (4, 5)]), [(1, 10)]);
        assert_eq!(merge(&[(8, 10), (1, 3), (2, 6)]), [(1, 6), (8, 10)]);
        assert_eq!(merge(&[(3, 4), (1, 2)]), [(1, 2), (3, 4)]);
    }

    #[test]
    fn the_random_case_really_merges_and_touches() {
        let intervals = random_intervals(0x6d65_7267_6501, 1_000, 40_000);
        let merged = merge(&intervals);
        assert!(merged.len() < 800, "too few merges: {}", merged.len());
        let mut sorted = intervals.clone();
        sorted.sort_unstable();
        let touching = sorted
            .windows(2)
            .filter(|pair| pair[0].1 == pair[1].0)
            .count();
        assert!(touching > 10, "only {touching} touching pairs");
        for pair in merged.windows(2) {
            assert!(pair[0].1 < pair[1].0, "result not disjoint: {pair:?}");
        }
    }
}
