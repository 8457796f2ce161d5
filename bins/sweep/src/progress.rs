//! Live progress on stderr: a bar with the cell, repetition and ETA, and notes above it.

use std::io::Write as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
            "{elapsed_precise} [{bar:30}] {pos}/{len} requests, ETA {eta} · {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self { bar, quiet }
    }

    pub(crate) fn start(&self, total: u64, done: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        self.bar.reset_eta();
    }

    pub(crate) fn set_message(&self, message: &str) {
        self.bar.set_message(message.to_owned());
    }

    pub(crate) fn inc(&self) {
        self.bar.inc(1);
    }

    /// A line above the bar (dropped when quiet).
    pub(crate) fn note(&self, message: &str) {
        if self.quiet {
            return;
        }
        self.bar.suspend(|| {
            let _ = writeln!(std::io::stderr(), "{message}");
        });
    }

    /// A warning above the bar, printed also when quiet.
    pub(crate) fn warn(&self, message: &str) {
        self.bar.suspend(|| {
            let _ = writeln!(std::io::stderr(), "warning: {message}");
        });
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
