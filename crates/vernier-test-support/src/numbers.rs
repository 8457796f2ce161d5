//! Comparing a computed figure with an expected one: the statistics crate's one rule.

pub use vernier_stats::assert_close;
