//! Progress on stderr: the lines `hardsuite run` prints while it runs.

use vernier_hardsuite::{AttemptPhase, AttemptRecord, RunObserver, thousands};

/// Prints the simulator banner always, and progress lines unless quiet.
#[derive(Debug, Clone, Copy, Default)]
pub struct TerminalObserver {
    quiet: bool,
}

impl TerminalObserver {
    /// With `quiet`, only the simulator banner is printed.
    pub fn new(quiet: bool) -> Self {
        Self { quiet }
    }
}

impl RunObserver for TerminalObserver {
    fn simulator_started(&self, banner: &str) {
        vernier_cli::note(banner);
    }

    fn note(&self, line: &str) {
        if !self.quiet {
            vernier_cli::note(line);
        }
    }

    /// Printed also when quiet, as the sweep's warnings are: what the user must act on.
    fn warn(&self, line: &str) {
        vernier_cli::note(&format!("warning: {line}"));
    }

    fn attempt_done(&self, done: usize, planned: usize, record: &AttemptRecord) {
        if !self.quiet {
            vernier_cli::note(&progress_line(done, planned, record));
        }
    }
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
