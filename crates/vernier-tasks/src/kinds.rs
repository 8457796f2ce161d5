//! The families of tasks, registered in one place: adding a family is its own file (with its
//! [`Kind`]) and one line in [`KINDS`]. The order here is the order reports list categories in.

use std::collections::BTreeSet;
use std::sync::{LazyLock, Mutex};

use serde::Deserialize;

use crate::kind::Kind;
use crate::task::Category;

/// Every registered family, in report order.
pub const KINDS: &[Kind] = &[
    crate::math::KIND,
    crate::code::KIND,
    crate::tools::KIND,
    crate::instructions::KIND,
    crate::structured::KIND,
    crate::calls::KIND,
    crate::context::KIND,
    crate::vision::KIND,
    crate::video::KIND,
    crate::dataset::KIND,
];

/// The registered family of `category`.
pub fn kind(category: Category) -> Option<&'static Kind> {
    KINDS.iter().find(|kind| kind.category == category)
}

/// Every registered category, in report order.
pub fn categories() -> impl Iterator<Item = Category> {
    KINDS.iter().map(|kind| kind.category)
}

/// The names read from files that no family registers, each kept once.
static UNKNOWN: LazyLock<Mutex<BTreeSet<&'static str>>> =
    LazyLock::new(|| Mutex::new(BTreeSet::new()));

/// The category named `name`: a registered one, or (for a name no family registers, read from
/// a file a newer version wrote) the name kept as it is, once per distinct name.
pub fn category_named(name: &str) -> Category {
    if let Some(kind) = KINDS.iter().find(|kind| kind.category.as_str() == name) {
        return kind.category;
    }
    let mut unknown = UNKNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = unknown.get(name) {
        return Category::new(known);
    }
    // One allocation per distinct unregistered name for the life of the process.
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    unknown.insert(leaked);
    Category::new(leaked)
}

/// A registered category's place in report order; unregistered ones come after, by name.
fn rank(category: Category) -> usize {
    KINDS
        .iter()
        .position(|kind| kind.category == category)
        .unwrap_or(KINDS.len())
}

impl PartialOrd for Category {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Category {
    /// Report order: the registered families as [`KINDS`] lists them, then any other by name.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        rank(*self)
            .cmp(&rank(*other))
            .then_with(|| self.as_str().cmp(other.as_str()))
    }
}

impl<'de> Deserialize<'de> for Category {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(category_named(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_registered_once_with_a_budget() {
        let mut seen = BTreeSet::new();
        for kind in KINDS {
            assert!(
                seen.insert(kind.category.as_str()),
                "{} twice",
                kind.category
            );
            assert!(kind.default_budget > 0, "{} has no budget", kind.category);
        }
    }

    #[test]
    fn an_unregistered_name_reads_back_as_written_and_sorts_last() {
        let newer = category_named("from-a-newer-version");
        assert_eq!(newer.as_str(), "from-a-newer-version");
        assert_eq!(category_named("from-a-newer-version"), newer);
        assert!(Category::DATASET < newer);
        assert!(
            Category::MATH < Category::CODE,
            "report order, not the alphabet"
        );
    }
}
