//! The `User-Agent` every request of the crate carries (`ready`, `soak` and `watch` build their
//! clients with it).

/// The `User-Agent` of every request the crate sends.
pub(crate) const USER_AGENT: &str = concat!("vernier-lifecycle/", env!("CARGO_PKG_VERSION"));
