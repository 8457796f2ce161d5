//! Progress on stderr: the engines' notes (a milestone, a repetition, a death), the watch's
//! journal lines on stdout, and where stderr is no terminal a heartbeat line at a steady
//! interval saying where the run is (`vernier_cli::Heartbeat`): a launch that takes minutes
//! says so every interval, not once at its end.

use std::sync::{Mutex, PoisonError};

use vernier_cli::{Heartbeat, ProgressMode};
use vernier_lifecycle::{ReadyObserver, WatchEvent, WatchObserver};

/// What `lifecycle ready`, `watch` and `soak` show while they run.
pub(crate) struct Progress {
    quiet: bool,
    heartbeat: Option<Heartbeat>,
    /// The watch's last probe in words (`ok in 12 ms`), for its decision's line.
    last_probe: Mutex<String>,
}

impl Progress {
    /// Progress for the run `label` names (`lifecycle ready`), quiet or not.
    pub(crate) fn new(quiet: bool, label: &str) -> Self {
        let heartbeat = ProgressMode::for_stderr(quiet).heartbeat(label);
        if let Some(heartbeat) = &heartbeat {
            heartbeat.doing("starting");
        }
        Self {
            quiet,
            heartbeat,
            last_probe: Mutex::new(String::new()),
        }
    }
}

impl ReadyObserver for Progress {
    fn note(&self, message: &str) {
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.doing(message);
        }
        if !self.quiet {
            vernier_cli::note(message);
        }
    }
}

impl WatchObserver for Progress {
    fn event(&self, event: &WatchEvent) {
        // Without the generation counter the watchdog cannot tell busy from hung: say so on
        // stderr, quiet or not, not only in a JSON field.
        if let WatchEvent::Start {
            counter_note: Some(note),
            ..
        } = event
        {
            vernier_cli::note(&format!(
                "warning: {note}; a busy server may be judged hung"
            ));
        }
        if let Some(heartbeat) = &self.heartbeat {
            let mut last_probe = self
                .last_probe
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            beat_of(heartbeat, &mut last_probe, event);
        }
        if self.quiet {
            return;
        }
        if let Ok(line) = serde_json::to_string(event) {
            let _ = vernier_cli::write_stdout(&(line + "\n"));
        }
    }
}

/// Where the watch is after `event`: the probes made, the last one and what the rule made of
/// it (`last_probe` keeps the probe's words for its decision).
fn beat_of(heartbeat: &Heartbeat, last_probe: &mut String, event: &WatchEvent) {
    match event {
        WatchEvent::Probe { probe, outcome, .. } => {
            *last_probe = outcome.short();
            heartbeat.counts(*probe, None, "probes");
            heartbeat.doing(&format!("last probe {last_probe}"));
        }
        WatchEvent::Decision {
            probe,
            verdict,
            action,
            ..
        } => {
            let verdict = serde_json::to_value(verdict)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_default();
            let action = if action == "none" {
                String::new()
            } else {
                format!(": {action}")
            };
            heartbeat.counts(*probe, None, "probes");
            heartbeat.doing(&format!("last probe {last_probe}, {verdict}{action}"));
        }
        WatchEvent::ServerDown { .. } => heartbeat.doing("the server is down"),
        WatchEvent::ServerBack { after_s, .. } => {
            heartbeat.doing(&format!("the server came back after {after_s:.1} s"));
        }
        WatchEvent::Action {
            trigger, status, ..
        } => heartbeat.doing(&format!(
            "ran the --{} command: {status}",
            trigger.replace('_', "-")
        )),
        WatchEvent::Ready { ready, after_s, .. } => heartbeat.doing(&if *ready {
            format!("the server was ready {after_s:.1} s after the command")
        } else {
            format!("the server was not ready {after_s:.1} s after the command")
        }),
        _ => {}
    }
}
