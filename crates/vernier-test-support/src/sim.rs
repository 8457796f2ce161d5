//! Simulator settings the tests share: a quick server (fast prefill, a decode step the test
//! names), and one that rate-limits.

use std::net::SocketAddr;
use std::time::Duration;

use vernier_sim::{Faults, SimConfig, SimConfigBuilder};

/// A simulator that prefills at 50,000 tokens per second and decodes a token every
/// `decode_step_ms`, so a sweep's cells take milliseconds; more settings go on the builder.
pub fn quick_sim(decode_step_ms: u64) -> SimConfigBuilder {
    SimConfig::builder()
        .decode_step(Duration::from_millis(decode_step_ms))
        .prefill_tokens_per_s(50_000.0)
}

/// [`quick_sim`] at `bind` (a fixed address, for a server that comes back where it was).
pub fn quick_sim_at(bind: SocketAddr, decode_step_ms: u64) -> SimConfig {
    quick_sim(decode_step_ms).bind(bind).build()
}

/// A quick simulator (4 ms a token) that answers `rate_limited` (`(share in percent, seconds
/// asked to wait)`) of its requests 429 with `Retry-After`, or none.
pub fn rate_limited_sim(rate_limited: Option<(u32, u64)>) -> SimConfig {
    let mut faults = Faults::default();
    faults.rate_limited = rate_limited;
    quick_sim(4).faults(faults).build()
}
