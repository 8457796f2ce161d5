//! Progress where nobody watches a terminal: a line on a steady interval saying where a run
//! is, for CI logs, `nohup` and pipes, where a progress bar draws nothing.
//!
//! The rule every binary follows: when its progress stream (stderr) is not a terminal and
//! `--quiet` is not given, it prints one line at least every [`PROGRESS_EVERY`] (or the
//! seconds in [`PROGRESS_EVERY_VARIABLE`]), such as
//! `sweep: 12 of 48 requests, prose 400/64 c8: rep 2/3, 0:34 elapsed`, beside its per-event
//! lines. [`ProgressMode::for_stderr`] decides which progress a run shows; a [`Heartbeat`]
//! holds where the run is and writes the lines from a thread of its own, so a line comes even
//! while one long request streams.

use std::io::IsTerminal as _;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest a run goes without a progress line when its progress stream is not a terminal.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The environment variable that sets that interval in seconds (`1`, `0.5`), for tests and
/// for logs that want more or fewer lines; a value that is not a positive number is ignored.
pub const PROGRESS_EVERY_VARIABLE: &str = "VERNIER_PROGRESS_EVERY_S";

/// The shortest interval the variable may set: a line every 50 ms is already a flood.
const SHORTEST: Duration = Duration::from_millis(50);

/// The heartbeat's interval: [`PROGRESS_EVERY_VARIABLE`] when it holds a positive number of
/// seconds, else [`PROGRESS_EVERY`].
pub fn progress_every() -> Duration {
    std::env::var(PROGRESS_EVERY_VARIABLE)
        .ok()
        .and_then(|text| interval_of(&text))
        .unwrap_or(PROGRESS_EVERY)
}

/// `text` as an interval in seconds, when it is a positive finite number (at least 50 ms).
fn interval_of(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    (seconds.is_finite() && seconds > 0.0)
        .then(|| Duration::try_from_secs_f64(seconds).ok())
        .flatten()
        .map(|interval| interval.max(SHORTEST))
}

/// Which progress a run shows on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// `--quiet`: none (warnings still print).
    Quiet,
    /// stderr is a terminal: live progress (a bar, a line redrawn in place).
    Terminal,
    /// stderr is a file or a pipe: the per-event lines and a [`Heartbeat`].
    Heartbeat,
}

impl ProgressMode {
    /// The mode for a run with `quiet` whose progress goes to this process's stderr.
    pub fn for_stderr(quiet: bool) -> Self {
        Self::of(quiet, std::io::stderr().is_terminal())
    }

    /// The mode for a run with `quiet` whose progress stream is a terminal or not.
    pub fn of(quiet: bool, terminal: bool) -> Self {
        match (quiet, terminal) {
            (true, _) => Self::Quiet,
            (false, true) => Self::Terminal,
            (false, false) => Self::Heartbeat,
        }
    }

    /// A [`Heartbeat`] for `label` writing to stderr in [`ProgressMode::Heartbeat`], none
    /// otherwise.
    pub fn heartbeat(self, label: &str) -> Option<Heartbeat> {
        (self == Self::Heartbeat).then(|| Heartbeat::on_stderr(label))
    }
}

/// Where a run is, and when its next line is due: the heartbeat's state without its thread
/// or its clock, so it can be driven by hand.
#[derive(Debug, Clone)]
pub struct Beat {
    label: String,
    every: Duration,
    started: Instant,
    last: Instant,
    counted: Option<Counted>,
    doing: String,
}

/// Work counted as `done of total noun`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Counted {
    done: u64,
    total: Option<u64>,
    noun: String,
}

impl Beat {
    /// A run named `label` (`sweep`, `hardsuite`) started at `started`, a line due every
    /// `every`.
    pub fn new(label: &str, every: Duration, started: Instant) -> Self {
        Self {
            label: label.to_owned(),
            every,
            started,
            last: started,
            counted: None,
            doing: String::new(),
        }
    }

    /// `done` of `total` units of work (`requests`, `attempts`) are finished.
    pub fn counts(&mut self, done: u64, total: Option<u64>, noun: &str) {
        self.counted = Some(Counted {
            done,
            total,
            noun: noun.to_owned(),
        });
    }

    /// `n` more units of the counted work are finished (counted as `noun` when nothing was
    /// counted before).
    pub fn advance(&mut self, n: u64, noun: &str) {
        match &mut self.counted {
            Some(counted) => counted.done = counted.done.saturating_add(n),
            None => self.counts(n, None, noun),
        }
    }

    /// What the run is doing now (a cell and its repetition, the last note); empty for
    /// nothing but the counts.
    pub fn doing(&mut self, what: &str) {
        what.replace(['\n', '\r'], " ")
            .trim()
            .clone_into(&mut self.doing);
    }

    /// The line at `now`: `label: 12 of 48 requests, what it is doing, 0:34 elapsed`.
    pub fn line(&self, now: Instant) -> String {
        let mut parts = Vec::new();
        if let Some(counted) = &self.counted {
            parts.push(match counted.total {
                Some(total) => format!("{} of {total} {}", counted.done, counted.noun),
                None => format!("{} {}", counted.done, counted.noun),
            });
        }
        if !self.doing.is_empty() {
            parts.push(self.doing.clone());
        }
        parts.push(format!(
            "{} elapsed",
            clock(now.saturating_duration_since(self.started))
        ));
        format!("{}: {}", self.label, parts.join(", "))
    }

    /// When the next line is due.
    pub fn next_due(&self) -> Instant {
        self.last + self.every
    }

    /// The line, when one is due at `now` (the interval has passed since the last one); the
    /// next is then due an interval later.
    pub fn due(&mut self, now: Instant) -> Option<String> {
        if now < self.next_due() {
            return None;
        }
        self.last = now;
        Some(self.line(now))
    }
}

/// A duration as a clock: `0:34`, `12:03`, `1:02:03`.
pub fn clock(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

/// The heartbeat's state as its thread and the observers share it.
#[derive(Debug)]
struct Shared {
    state: Mutex<(Beat, bool)>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, (Beat, bool)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A [`Beat`] on a thread of its own: a line through its sink each time one is due, until it
/// is stopped or dropped. Observers tell it where the run is ([`Heartbeat::counts`],
/// [`Heartbeat::advance`], [`Heartbeat::doing`]); it decides when a line is due.
#[derive(Debug)]
pub struct Heartbeat {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Heartbeat {
    /// A heartbeat for `label` writing its lines to stderr every [`progress_every`].
    pub fn on_stderr(label: &str) -> Self {
        Self::start(label, progress_every(), crate::output::note)
    }

    /// A heartbeat for `label` handing a line to `sink` every `every` (a thread that cannot
    /// be started leaves a heartbeat that prints nothing).
    pub fn start(label: &str, every: Duration, sink: impl Fn(&str) + Send + 'static) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new((Beat::new(label, every, Instant::now()), false)),
            wake: Condvar::new(),
        });
        let beating = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("vernier-heartbeat".to_owned())
            .spawn(move || beat(&beating, &sink))
            .ok();
        Self {
            shared,
            thread: Mutex::new(thread),
        }
    }

    /// See [`Beat::counts`].
    pub fn counts(&self, done: u64, total: Option<u64>, noun: &str) {
        self.shared.lock().0.counts(done, total, noun);
    }

    /// See [`Beat::advance`].
    pub fn advance(&self, n: u64, noun: &str) {
        self.shared.lock().0.advance(n, noun);
    }

    /// See [`Beat::doing`].
    pub fn doing(&self, what: &str) {
        self.shared.lock().0.doing(what);
    }

    /// The line it would print now.
    pub fn line(&self) -> String {
        self.shared.lock().0.line(Instant::now())
    }

    /// Stops the thread and waits for it; no line is printed after. Stopping twice is
    /// harmless.
    pub fn stop(&self) {
        self.shared.lock().1 = true;
        self.shared.wake.notify_all();
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: sleeps until a line is due or it is stopped, writes the line outside the lock.
fn beat(shared: &Shared, sink: &dyn Fn(&str)) {
    let mut state = shared.lock();
    loop {
        if state.1 {
            return;
        }
        let now = Instant::now();
        if let Some(line) = state.0.due(now) {
            drop(state);
            sink(&line);
            state = shared.lock();
            continue;
        }
        let wait = state.0.next_due().saturating_duration_since(now);
        state = shared
            .wake
            .wait_timeout(state, wait)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_counts_what_is_done_and_the_time() {
        let start = Instant::now();
        let mut beat = Beat::new("sweep", Duration::from_secs(10), start);
        assert_eq!(beat.line(start), "sweep: 0:00 elapsed");
        beat.counts(0, Some(48), "requests");
        beat.advance(12, "requests");
        beat.doing("prose 400/64 c8: rep 2/3\n");
        assert_eq!(
            beat.line(start + Duration::from_secs(34)),
            "sweep: 12 of 48 requests, prose 400/64 c8: rep 2/3, 0:34 elapsed"
        );
        let mut open = Beat::new("hardsuite", Duration::from_secs(10), start);
        open.advance(3, "attempts");
        assert_eq!(
            open.line(start + Duration::from_secs(3725)),
            "hardsuite: 3 attempts, 1:02:05 elapsed"
        );
    }

    #[test]
    fn a_line_is_due_once_per_interval() {
        let start = Instant::now();
        let every = Duration::from_secs(10);
        let mut beat = Beat::new("x", every, start);
        assert_eq!(beat.due(start + Duration::from_secs(9)), None);
        assert!(beat.due(start + Duration::from_secs(10)).is_some());
        assert_eq!(beat.due(start + Duration::from_secs(15)), None);
        assert!(beat.due(start + Duration::from_secs(21)).is_some());
        assert_eq!(beat.next_due(), start + Duration::from_secs(31));
    }

    #[test]
    fn the_variable_takes_positive_seconds_only() {
        assert_eq!(interval_of("1"), Some(Duration::from_secs(1)));
        assert_eq!(interval_of(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(interval_of("0.001"), Some(SHORTEST));
        for bad in ["0", "-1", "nan", "inf", "ten", ""] {
            assert_eq!(interval_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_mode_follows_quiet_then_the_terminal() {
        assert_eq!(ProgressMode::of(true, false), ProgressMode::Quiet);
        assert_eq!(ProgressMode::of(true, true), ProgressMode::Quiet);
        assert_eq!(ProgressMode::of(false, true), ProgressMode::Terminal);
        assert_eq!(ProgressMode::of(false, false), ProgressMode::Heartbeat);
        assert!(ProgressMode::Terminal.heartbeat("x").is_none());
    }

    #[test]
    fn the_thread_writes_lines_until_stopped() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let heartbeat = Heartbeat::start("run", Duration::from_millis(60), move |line| {
            let _ = sender.send(line.to_owned());
        });
        heartbeat.counts(1, Some(2), "steps");
        let first = receiver
            .recv_timeout(Duration::from_secs(5))
            .expect("a line");
        let second = receiver
            .recv_timeout(Duration::from_secs(5))
            .expect("another line");
        for line in [first, second] {
            assert!(line.starts_with("run: 1 of 2 steps, "), "{line}");
        }
        heartbeat.stop();
        while receiver.try_recv().is_ok() {}
        std::thread::sleep(Duration::from_millis(200));
        assert!(receiver.try_recv().is_err(), "a line after the stop");
    }
}
