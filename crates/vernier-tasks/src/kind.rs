//! What a family of tasks tells the rest of the crate about itself: its category, its default
//! token budget, the checkers its tasks may use, and how its generated tasks are proved. Each
//! family defines one [`Kind`] in its own file; `kinds.rs` lists them.

use crate::task::{Category, Checker, Task};

/// One family of tasks, as it registers itself.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Kind {
    /// Its category.
    pub category: Category,
    /// What the family is, in a few words (for listings).
    pub description: &'static str,
    /// Its default completion-token budget.
    pub default_budget: u32,
    /// Whether a task of the family may be judged by this checker (the self-check refuses any
    /// other).
    pub fits: fn(&Checker) -> bool,
    /// The proof of a generated task (its prompt, media and gold checked from its spec), with
    /// the number of checks and every failure; `None` where the checker's own probes prove it.
    pub prove: Option<Prove>,
}

/// A family's proof of one generated task: the number of checks and every failure.
pub type Prove = fn(&Task) -> (usize, Vec<String>);
