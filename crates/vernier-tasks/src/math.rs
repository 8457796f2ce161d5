//! The math and logic problems: each struct holds the parameters that are rendered into the
//! prompt, and computes its gold answer from the same parameters by brute force or exact
//! arithmetic.
//!
//! The families live in submodules by the reasoning they ask for: counting (tilings, seatings,
//! dice, coins, permutations, subsets, paths, brackets), arithmetic (modular powers, congruences,
//! digit sums, Collatz, calendar) and the knight's shortest path. The [`Problem`] enum over them,
//! the bundled catalogue and the prompt wording they share are here.

mod arithmetic;
mod counting;
mod knight_path;
#[cfg(test)]
mod tests;
mod wording;

use serde::Serialize;

use crate::kind::Kind;
use crate::task::{Category, Checker, Task};

pub use arithmetic::{Collatz, Crt, DigitSum, Friday13, LastDigits};
pub use counting::{
    BracketDepth, CoinChange, DiceProbability, DominoTiling, FixedPoints, LatticePaths, RoundTable,
    SubsetSum,
};
pub use knight_path::KnightPath;

impl Category {
    /// Math and logic problems with one numeric answer.
    pub const MATH: Self = Self::new("math");
}

/// The math family: one numeric answer, its gold computed two ways from the prompt's
/// parameters (the self-check's literal probes prove it).
pub(crate) const KIND: Kind = Kind {
    category: Category::MATH,
    description: "math and logic problems with one numeric answer",
    default_budget: 16_000,
    fits: |checker| {
        matches!(
            checker,
            Checker::Integer(_) | Checker::Fraction { .. } | Checker::ExactString(_)
        )
    },
    prove: None,
};

impl Task {
    /// A math task built from a problem: the prompt and gold answer come from its parameters,
    /// which the task carries as its spec ([`Task::spec::<Problem>`]).
    pub fn from_problem(id: impl Into<String>, problem: Problem, budget_tokens: u32) -> Self {
        let mut task = Self::new(
            id,
            Category::MATH,
            problem.prompt(),
            budget_tokens,
            problem.gold(),
        )
        .with_spec(problem);
        task.expect_positive = true;
        task
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
