//! Completion-token budgets per category: each family's default, and what a user or a file
//! sets over it.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::kinds::{KINDS, category_named, kind};
use crate::suite::Suite;
use crate::task::Category;

/// The budget of a category no registered family owns (read from a newer file).
pub const FALLBACK_BUDGET: u32 = 2_000;

/// Completion-token budgets per category: the family's default (math 16,000, code 12,000,
/// tools, context, vision and video 2,000, datasets 8,192) unless one is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budgets {
    set: BTreeMap<Category, u32>,
}

impl Budgets {
    /// The budget for a category.
    pub fn for_category(&self, category: Category) -> u32 {
        self.set
            .get(&category)
            .copied()
            .unwrap_or_else(|| kind(category).map_or(FALLBACK_BUDGET, |kind| kind.default_budget))
    }

    /// These budgets with `category` set to `tokens`.
    #[must_use]
    pub fn with(mut self, category: Category, tokens: u32) -> Self {
        self.set(category, tokens);
        self
    }

    /// Sets `category`'s budget to `tokens`.
    pub fn set(&mut self, category: Category, tokens: u32) {
        self.set.insert(category, tokens);
    }

    /// Every registered category's budget, in report order.
    pub fn all(&self) -> Vec<(Category, u32)> {
        KINDS
            .iter()
            .map(|kind| (kind.category, self.for_category(kind.category)))
            .collect()
    }
}

impl<'de> Deserialize<'de> for Budgets {
    /// A table of category names and token counts (`math = 8000`); a name no family registers
    /// is refused, naming the ones there are.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = BTreeMap::<String, u32>::deserialize(deserializer)?;
        let mut budgets = Self::default();
        for (name, tokens) in table {
            let category = category_named(&name);
            if kind(category).is_none() {
                let known: Vec<&str> = KINDS.iter().map(|kind| kind.category.as_str()).collect();
                return Err(serde::de::Error::custom(format!(
                    "unknown category `{name}` in budgets; the categories are {}",
                    known.join(", ")
                )));
            }
            budgets.set(category, tokens);
        }
        Ok(budgets)
    }
}

impl Suite {
    /// Sets every task's budget from its category.
    pub fn apply_budgets(&mut self, budgets: &Budgets) {
        for task in &mut self.tasks {
            task.budget_tokens = budgets.for_category(task.category);
        }
    }
}
