//! Live progress on stderr: on a terminal, a bar with the cell, repetition and ETA, and notes
//! above it; elsewhere (a CI log, `nohup`, a pipe), the notes and a heartbeat line at a steady
//! interval saying where the run is (`vernier_cli::Heartbeat`).

use std::io::Write as _;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use vernier_cli::{Heartbeat, ProgressMode};
use vernier_sweep::SweepObserver;

/// The progress bar or the heartbeat, or nothing when quiet.
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    bar: ProgressBar,
    quiet: bool,
    /// Without a terminal: the heartbeat, and what it counts (`requests`, `turns`).
    heartbeat: Option<(Arc<Heartbeat>, &'static str)>,
}

impl Progress {
    /// Progress for the run `label` names (`sweep`, `sweep replay`), counting its work as
    /// `noun`.
    pub(crate) fn new(quiet: bool, label: &str, noun: &'static str) -> Self {
        let mode = ProgressMode::for_stderr(quiet);
        let target = if mode == ProgressMode::Terminal {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} requests, ETA {eta} · {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        if mode == ProgressMode::Terminal {
            // The clock and spinner move while a long request streams, between the requests
            // the bar counts.
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
        }
        let heartbeat = mode
            .heartbeat(label)
            .map(|heartbeat| (Arc::new(heartbeat), noun));
        Self {
            bar,
            quiet,
            heartbeat,
        }
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
        if let Some((heartbeat, noun)) = &self.heartbeat {
            heartbeat.counts(already_done, Some(total_requests), noun);
            // What was said before the plan (sizing the texts) is over.
            heartbeat.doing("");
        }
    }

    fn status(&self, message: &str) {
        self.bar.set_message(message.to_owned());
        if let Some((heartbeat, _)) = &self.heartbeat {
            heartbeat.doing(message);
        }
    }

    fn request_measured(&self) {
        self.bar.inc(1);
        if let Some((heartbeat, noun)) = &self.heartbeat {
            heartbeat.advance(1, noun);
        }
    }

    fn finished(&self) {
        self.bar.finish_and_clear();
        if let Some((heartbeat, _)) = &self.heartbeat {
            heartbeat.stop();
        }
    }
}
