//! Integration tests of vernier-stats: golden values from independent sources, error cases and
//! properties.

mod border;
mod errors;
mod golden;
mod normal;
mod properties;
mod rank;

pub(crate) use vernier_stats::assert_close;
