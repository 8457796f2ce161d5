//! What a run tells its caller while it runs: the crate prints nothing itself.

use crate::journal::AttemptRecord;

/// Receives a run's progress. Every method has a default that does nothing; an implementation
/// picks what it shows. Called from the run's tasks, hence `Send + Sync`.
pub trait RunObserver: Send + Sync {
    /// The in-process simulator started and answers instead of a server; `banner` says so
    /// ([`crate::HARDSUITE_SIMULATOR_BANNER`]). Show it even when quiet: the score measures the
    /// harness, not a model.
    fn simulator_started(&self, banner: &str) {
        let _ = banner;
    }

    /// A progress line, e.g. `self-check passed: 84 checks on 28 tasks`.
    fn note(&self, line: &str) {
        let _ = line;
    }

    /// Something the caller should know that does not stop the run.
    fn warn(&self, line: &str) {
        let _ = line;
    }

    /// An attempt finished (scored, or infrastructure on every try): the `done`-th of the
    /// `planned` attempts of the current phase, with its final try.
    fn attempt_done(&self, done: usize, planned: usize, record: &AttemptRecord) {
        let _ = (done, planned, record);
    }
}

/// An observer that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct SilentObserver;

impl RunObserver for SilentObserver {}
