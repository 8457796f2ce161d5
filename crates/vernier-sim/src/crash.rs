//! The crash fault: the whole server dies when at least `min_streams` streams are each at
//! least `min_depth_tokens` tokens deep, at `rate_per_s` while that holds (a Poisson process,
//! drawn from the seed), as an engine with a load-dependent memory fault does. The
//! [`CrashReport`] is the scheduler's state at the instant: what a test needs to know when,
//! and under what load, the server died.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::SimError;

/// When the simulated server dies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CrashFault {
    /// Streams that must be at least `min_depth_tokens` deep at once.
    pub min_streams: usize,
    /// Tokens each of them has sent.
    pub min_depth_tokens: u64,
    /// Crashes per second while the condition holds (a large rate dies at once).
    pub rate_per_s: f64,
}

impl CrashFault {
    /// A crash at `rate_per_s` whenever `min_streams` streams are each `min_depth_tokens` deep.
    pub fn new(min_streams: usize, min_depth_tokens: u64, rate_per_s: f64) -> Self {
        Self {
            min_streams,
            min_depth_tokens,
            rate_per_s,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), SimError> {
        if self.min_streams == 0 {
            return Err(SimError::InvalidConfig {
                field: "crash.min_streams",
                reason: "0 streams would crash an idle server; use 1 or more".to_owned(),
            });
        }
        if !(self.rate_per_s.is_finite() && self.rate_per_s > 0.0) {
            return Err(SimError::InvalidConfig {
                field: "crash.rate_per_s",
                reason: format!("{} is not a positive rate", self.rate_per_s),
            });
        }
        Ok(())
    }
}

/// One stream in flight when the server died.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CrashedStream {
    /// The response's id (`chatcmpl-…`).
    pub request_id: String,
    /// Tokens it had sent.
    pub tokens: u64,
    /// Milliseconds since it was scheduled.
    pub age_ms: u64,
}

/// The scheduler's state at the crash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CrashReport {
    /// Wall-clock instant of the crash, milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// Requests running (holding a slot).
    pub running: u64,
    /// Requests waiting for a slot.
    pub waiting: u64,
    /// Every stream that had sent a token, deepest first.
    pub streams: Vec<CrashedStream>,
    /// The fault that fired.
    pub fault: CrashFault,
}

impl CrashReport {
    /// The lines a dying engine leaves in its log: an Xid-like driver line, the CUDA error, and
    /// the scheduler dump as JSON after `vernier-sim scheduler dump: ` (all marked simulated).
    pub fn log_lines(&self) -> Vec<String> {
        vec![
            "NVRM: Xid (PCI:0000:00:00): 31, pid=0, name=vernier-sim-server, MMU Fault: ENGINE GRAPHICS faulted (simulated by vernier-sim)".to_owned(),
            "RuntimeError: CUDA error: an illegal memory access was encountered (simulated by vernier-sim)".to_owned(),
            format!(
                "vernier-sim scheduler dump: {}",
                serde_json::to_string(self).unwrap_or_default()
            ),
        ]
    }
}

/// A registered stream's depth.
#[derive(Debug, Clone)]
pub(crate) struct StreamDepth {
    pub(crate) request_id: String,
    pub(crate) tokens: u64,
    pub(crate) since: Instant,
}

/// The streams' depths, keyed by a sequence number.
pub(crate) type Depths = BTreeMap<u64, StreamDepth>;
