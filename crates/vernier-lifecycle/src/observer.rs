//! How progress reaches the caller: the binary prints it, a library user may log or ignore it.

use crate::watch_journal::WatchEvent;

/// Receives a `ready` or `soak` run's progress. Every method has a do-nothing default.
pub trait ReadyObserver: Send + Sync {
    /// A line for a human (a milestone reached, a repetition done, a resume note).
    fn note(&self, message: &str) {
        let _ = message;
    }
}

/// Receives every line the watchdog journals, as it is written.
pub trait WatchObserver: Send + Sync {
    /// One probe, decision, action or state change.
    fn event(&self, event: &WatchEvent) {
        let _ = event;
    }
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuietObserver;

impl ReadyObserver for QuietObserver {}
impl WatchObserver for QuietObserver {}
