//! Live progress on stderr: a bar with the cell, repetition and ETA, and notes above it.

use std::io::Write as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use vernier_sweep::SweepObserver;

/// The progress bar, or nothing when quiet.
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    bar: ProgressBar,
    quiet: bool,
}

impl Progress {
    pub(crate) fn new(quiet: bool) -> Self {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} requests, ETA {eta} · {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        if !quiet {
            // The clock and spinner move while a long request streams, between the requests
            // the bar counts.
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
        }
        Self { bar, quiet }
    }

    /// A line above the bar (dropped when quiet).
    pub(crate) fn note_line(&self, message: &str) {
        if self.quiet {
            return;
        }
        self.bar.suspend(|| {
            let _ = writeln!(std::io::stderr(), "{message}");
        });
    }
}

impl SweepObserver for Progress {
    fn note(&self, message: &str) {
        self.note_line(message);
    }

    /// A warning above the bar, printed also when quiet.
    fn warn(&self, message: &str) {
        self.bar.suspend(|| {
            let _ = writeln!(std::io::stderr(), "warning: {message}");
        });
    }

    fn planned(&self, total_requests: u64, already_done: u64) {
        self.bar.set_length(total_requests);
        self.bar.set_position(already_done);
        self.bar.reset_eta();
    }

    fn status(&self, message: &str) {
        self.bar.set_message(message.to_owned());
    }

    fn request_measured(&self) {
        self.bar.inc(1);
    }

    fn finished(&self) {
        self.bar.finish_and_clear();
    }
}
