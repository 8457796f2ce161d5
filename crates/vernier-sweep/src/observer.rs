//! How a run's progress reaches its caller: the binary draws a progress bar with it, a library
//! user may log or ignore it.

/// Receives a sweep's progress. Every method has a do-nothing default; the run calls them
/// from its own tasks, so they must be cheap and must not block.
pub trait SweepObserver: Send + Sync {
    /// A line for a human (what is happening, a retry, a resume note).
    fn note(&self, message: &str) {
        let _ = message;
    }

    /// A set-up warning a reader must see (also recorded in the journal).
    fn warn(&self, message: &str) {
        let _ = message;
    }

    /// The measured requests the run plans in all, and how many a resumed journal already
    /// holds.
    fn planned(&self, total_requests: u64, already_done: u64) {
        let _ = (total_requests, already_done);
    }

    /// What the run is doing now (calibrating, a cell's warm-up, a repetition).
    fn status(&self, message: &str) {
        let _ = message;
    }

    /// One measured request finished (measured or failed after its retries).
    fn request_measured(&self) {}

    /// The run's work is over (the reports are written next).
    fn finished(&self) {}
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuietObserver;

impl SweepObserver for QuietObserver {}
