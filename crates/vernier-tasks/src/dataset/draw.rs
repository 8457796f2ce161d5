//! Which questions a run asks: all, a sample, or a number per category, drawn from a seed.

use serde::{Deserialize, Serialize};
use vernier_stats::SplitMix64;

use super::error::DatasetError;
use super::question::Question;

/// How questions are drawn from a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetSampling {
    /// Every question (`--all`).
    All,
    /// This many, drawn from the whole file (`--sample N`).
    Sample(usize),
    /// This many from each category (`--per-category N`; the seed's 20 × 14 = 280 on
    /// MMLU-Pro). A category with fewer gives all it has.
    PerCategory(usize),
}

/// A stable hash of a category name, so a category's draw does not depend on which others
/// the file holds.
pub(super) fn name_hash(name: &str) -> u64 {
    // FNV-1a, 64 bits.
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The indices of the questions drawn, in file order. The same file, sampling and seed give
/// the same questions on every machine (`SplitMix64` from the seed; per category mixed with
/// the category's name).
pub fn draw_questions(
    questions: &[Question],
    sampling: DatasetSampling,
    seed: u64,
) -> Result<Vec<usize>, DatasetError> {
    let mut drawn = match sampling {
        DatasetSampling::All => (0..questions.len()).collect(),
        DatasetSampling::Sample(n) => {
            if n == 0 || n > questions.len() {
                return Err(DatasetError::Draw {
                    reason: format!(
                        "--sample {n}: the file holds {} questions; ask for 1 to {0}, or --all",
                        questions.len()
                    ),
                });
            }
            let mut order: Vec<usize> = (0..questions.len()).collect();
            SplitMix64::new(seed).shuffle(&mut order);
            order.truncate(n);
            order
        }
        DatasetSampling::PerCategory(n) => {
            if n == 0 {
                return Err(DatasetError::Draw {
                    reason: "--per-category 0: ask for at least 1".to_owned(),
                });
            }
            let mut subjects: Vec<&str> = questions.iter().map(|q| q.subject.as_str()).collect();
            subjects.sort_unstable();
            subjects.dedup();
            let mut drawn = Vec::new();
            for subject in subjects {
                let mut members: Vec<usize> = (0..questions.len())
                    .filter(|index| questions[*index].subject == subject)
                    .collect();
                SplitMix64::new(seed ^ name_hash(subject)).shuffle(&mut members);
                members.truncate(n);
                drawn.extend(members);
            }
            drawn
        }
    };
    drawn.sort_unstable();
    Ok(drawn)
}
