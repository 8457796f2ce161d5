//! Progress on stderr: the lines `hardsuite run` prints while it runs.
//!
//! One line per attempt, and, where stderr is no terminal, a heartbeat line at a steady
//! interval saying where the run is (`vernier_cli::Heartbeat`). A dataset run (hundreds of
//! questions) shows a count instead of a line per question unless `--per-task`: redrawn in
//! place on a terminal, the heartbeat elsewhere.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use vernier_cli::{Heartbeat, ProgressMode};
use vernier_hardsuite::{AttemptPhase, AttemptRecord, RunObserver, thousands};

/// The widest the line redrawn in place may be: a line that wraps is no longer redrawn in
/// place.
const LIVE_WIDTH: usize = 79;

/// The category of a dataset's questions (`vernier_tasks::Category::DATASET`).
const DATASET_CATEGORY: &str = "dataset";

/// Prints the simulator banner and warnings always, and progress unless quiet.
#[derive(Debug)]
pub struct TerminalObserver {
    mode: ProgressMode,
    /// `--per-task`: a line per attempt even in a dataset run.
    per_task: bool,
    /// A dataset run: known from the flags, or from its first attempt (a resumed run).
    dataset: AtomicBool,
    /// Without a terminal: where the run is, printed at a steady interval.
    heartbeat: Option<Heartbeat>,
    /// Whether the line redrawn in place is on the terminal now; held while writing, so lines
    /// from concurrent attempts never interleave with it.
    live: Mutex<bool>,
}

impl TerminalObserver {
    /// With `quiet`, only the simulator banner and warnings are printed; a line per attempt
    /// otherwise.
    pub fn new(quiet: bool) -> Self {
        Self::for_run(quiet, false, true)
    }

    /// Progress for a run: `dataset` when the flags name a dataset, `per_task` for a line per
    /// attempt in a dataset run too; the mode from stderr being a terminal or not.
    pub fn for_run(quiet: bool, dataset: bool, per_task: bool) -> Self {
        Self::with_mode(ProgressMode::for_stderr(quiet), dataset, per_task)
    }

    /// Progress in `mode` (see [`TerminalObserver::for_run`]).
    pub fn with_mode(mode: ProgressMode, dataset: bool, per_task: bool) -> Self {
        let heartbeat = mode.heartbeat("hardsuite");
        if let Some(heartbeat) = &heartbeat {
            heartbeat.doing("starting (the self-check, the server)");
        }
        Self {
            mode,
            per_task,
            dataset: AtomicBool::new(dataset),
            heartbeat,
            live: Mutex::new(false),
        }
    }

    /// The run's work is over: the line redrawn in place is cleared and the heartbeat stops.
    pub fn finish(&self) {
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.stop();
        }
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        clear(&mut live);
    }

    /// One line on stderr, below the line redrawn in place (which the next attempt redraws).
    fn line(&self, text: &str) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        clear(&mut live);
        vernier_cli::note(text);
    }

    /// The count redrawn in place, cut to [`LIVE_WIDTH`].
    fn redraw(&self, text: &str) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        let text: String = text.chars().take(LIVE_WIDTH).collect();
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r\x1b[2K{text}");
        let _ = stderr.flush();
        *live = true;
    }
}

/// Clears the line redrawn in place, when it is there.
fn clear(live: &mut bool) {
    if std::mem::take(live) {
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r\x1b[2K");
        let _ = stderr.flush();
    }
}

impl Drop for TerminalObserver {
    fn drop(&mut self) {
        self.finish();
    }
}

impl RunObserver for TerminalObserver {
    fn simulator_started(&self, banner: &str) {
        self.line(banner);
    }

    fn note(&self, line: &str) {
        if self.mode != ProgressMode::Quiet {
            self.line(line);
        }
    }

    /// Printed also when quiet, as the sweep's warnings are: what the user must act on.
    fn warn(&self, line: &str) {
        self.line(&format!("warning: {line}"));
    }

    fn attempt_done(&self, done: usize, planned: usize, record: &AttemptRecord) {
        if record.category.as_str() == DATASET_CATEGORY {
            self.dataset.store(true, Ordering::Relaxed);
        }
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.counts(done as u64, Some(planned as u64), "attempts");
            heartbeat.doing(&last_attempt(record));
        }
        let per_attempt = self.per_task || !self.dataset.load(Ordering::Relaxed);
        match self.mode {
            ProgressMode::Quiet => {}
            _ if per_attempt => self.line(&progress_line(done, planned, record)),
            ProgressMode::Terminal => {
                self.redraw(&format!("[{done:>3}/{planned}] {}", last_attempt(record)));
            }
            // The heartbeat says it.
            ProgressMode::Heartbeat => {}
        }
    }
}

/// The last attempt in a few words: `last: crt #0 pass`, `re-run, last: crt #0 cut_off`.
fn last_attempt(record: &AttemptRecord) -> String {
    let phase = match record.phase {
        AttemptPhase::Rerun => "re-run of the cut-off tasks, ",
        _ => "",
    };
    format!(
        "{phase}last: {} #{} {}",
        record.task_id,
        record.sample,
        record.outcome.as_str()
    )
}

/// One attempt's progress line: `[  3/28] crt  #0 pass  1,234 tok  12.3 s  detail`.
pub fn progress_line(done: usize, planned: usize, record: &AttemptRecord) -> String {
    let tokens = record
        .completion_tokens
        .map_or_else(|| "-".to_owned(), thousands);
    let seconds = record
        .elapsed_ms
        .map_or_else(|| "-".to_owned(), |ms| format!("{:.1} s", ms / 1e3));
    let phase = match record.phase {
        AttemptPhase::Rerun => " (re-run)",
        _ => "",
    };
    format!(
        "[{done:>3}/{planned}] {:<20} #{} {:<11} {tokens:>7} tok {seconds:>8}{phase}  {}",
        record.task_id,
        record.sample,
        record.outcome.as_str(),
        record.detail,
    )
}
