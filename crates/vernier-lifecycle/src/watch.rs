//! `watch`: a watchdog that probes with a one-token request and, when probes fail, reads the
//! generation counter twice to tell a busy engine (counter moving) from a hung one (counter
//! still) before it acts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use vernier_journal::JournalWriter;
use vernier_openai::{Client, Timeouts, generation_counter, generation_metric_names, metric_sums};

use crate::common::{self, Interrupt, ProbeOutcome};
use crate::error::LifecycleError;
use crate::observer::WatchObserver;

/// Version of the watch journal's line format.
pub const WATCH_JOURNAL_VERSION: u32 = 1;

/// Everything `watch` can be told. `Default` is the command line's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct WatchConfig {
    /// The server root (with or without `/v1`).
    pub base_url: String,
    /// Model to probe; default: the first one `/v1/models` lists.
    pub model: Option<String>,
    /// Seconds from one probe's start to the next.
    pub interval_s: f64,
    /// A probe that has no token after this many seconds failed.
    pub probe_timeout_s: f64,
    /// Seconds between the two reads of the generation counter.
    pub settle_s: f64,
    /// Failed probes with a still counter (in a row) before the engine counts as hung.
    pub failures: u32,
    /// Shell command run when the engine is hung (for example a container restart).
    pub on_hung: Option<String>,
    /// Shell command run when the server has been unreachable `failures` probes in a row.
    pub on_down: Option<String>,
    /// Seconds after an action during which no other action runs.
    pub grace_s: f64,
    /// After an action, how long to wait for a successful probe before watching again.
    pub ready_timeout_s: f64,
    /// Judge by failed probes alone when `/metrics` has no known generation counter.
    pub allow_no_counter: bool,
    /// Stop after this many probes (default: run until interrupted).
    pub max_probes: Option<u64>,
    /// The probe's prompt.
    pub prompt: String,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8000".to_owned(),
            model: None,
            interval_s: 30.0,
            probe_timeout_s: 30.0,
            settle_s: 20.0,
            failures: 2,
            on_hung: None,
            on_down: None,
            grace_s: 300.0,
            ready_timeout_s: 900.0,
            allow_no_counter: false,
            max_probes: None,
            prompt: "Hi".to_owned(),
        }
    }
}

impl WatchConfig {
    /// Checks ranges; the first problem is the error.
    pub fn check(&self) -> Result<(), LifecycleError> {
        for (value, field) in [
            (self.interval_s, "--interval"),
            (self.probe_timeout_s, "--timeout"),
            (self.settle_s, "--settle"),
            (self.grace_s, "--grace"),
            (self.ready_timeout_s, "--ready-timeout"),
        ] {
            common::seconds(value, field)?;
        }
        if self.probe_timeout_s <= 0.0 || self.interval_s <= 0.0 {
            return Err(LifecycleError::InvalidConfig {
                field: "--interval/--timeout",
                reason: "both must be more than 0 seconds".to_owned(),
            });
        }
        if self.failures == 0 {
            return Err(LifecycleError::InvalidConfig {
                field: "--failures",
                reason: "0 would act without a failed probe; use 1 or more".to_owned(),
            });
        }
        Ok(())
    }
}

/// What the counter said after a failed probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CounterEvidence {
    /// The rule did not ask for it.
    NotRead,
    /// The server exposes no known counter.
    Absent,
    /// `/metrics` did not answer or lacked the counter.
    Unreadable {
        /// Why.
        error: String,
    },
    /// The counter grew between the two reads: the engine is generating.
    Moving {
        /// First read.
        before: f64,
        /// Second read, `settle_s` later.
        after: f64,
    },
    /// The counter stood still.
    Still {
        /// Both reads.
        value: f64,
    },
}

/// What a rule made of a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// The probe succeeded.
    Healthy,
    /// The probe failed but the engine is generating: every slot is taken.
    Busy,
    /// A failed probe, not yet enough to act.
    Failing,
    /// Enough failed probes with no generation: act (`--on-hung`).
    Hung,
    /// The server is unreachable.
    Down,
}

/// The decision rule: given a probe (and, when it asks for it, the counter), a verdict.
pub trait HangRule: Send + Sync + std::fmt::Debug {
    /// Short name for the journal.
    fn name(&self) -> &'static str;
    /// Whether a failed probe should be followed by two counter reads.
    fn reads_counter(&self) -> bool {
        true
    }
    /// The verdict on one probe.
    fn judge(&mut self, probe: &ProbeOutcome, counter: &CounterEvidence) -> Verdict;
}

/// The watchdog's rule: a failed probe with a moving counter is busy, not a failure;
/// `failures` failed probes in a row with a still (or unreadable) counter are a hang.
#[derive(Debug, Clone)]
pub struct CounterRule {
    failures: u32,
    failed_in_a_row: u32,
    unreachable_in_a_row: u32,
}

impl CounterRule {
    /// The rule acting after `failures` failed probes with a still counter.
    pub fn new(failures: u32) -> Self {
        Self {
            failures: failures.max(1),
            failed_in_a_row: 0,
            unreachable_in_a_row: 0,
        }
    }
}

impl HangRule for CounterRule {
    fn name(&self) -> &'static str {
        "generation counter read twice"
    }

    fn judge(&mut self, probe: &ProbeOutcome, counter: &CounterEvidence) -> Verdict {
        match probe {
            ProbeOutcome::Ok { .. } => {
                self.failed_in_a_row = 0;
                self.unreachable_in_a_row = 0;
                Verdict::Healthy
            }
            ProbeOutcome::Unreachable { .. } => {
                self.failed_in_a_row = 0;
                self.unreachable_in_a_row += 1;
                if self.unreachable_in_a_row >= self.failures {
                    self.unreachable_in_a_row = 0;
                    Verdict::Down
                } else {
                    Verdict::Failing
                }
            }
            _ => {
                self.unreachable_in_a_row = 0;
                if matches!(counter, CounterEvidence::Moving { .. }) {
                    self.failed_in_a_row = 0;
                    return Verdict::Busy;
                }
                self.failed_in_a_row += 1;
                if self.failed_in_a_row >= self.failures {
                    self.failed_in_a_row = 0;
                    Verdict::Hung
                } else {
                    Verdict::Failing
                }
            }
        }
    }
}

/// One line of the watch journal (also handed to the observer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum WatchEvent {
    /// The watchdog started.
    Start {
        /// Journal format version.
        journal_version: u32,
        /// Wall clock, milliseconds since the epoch.
        unix_ms: u64,
        /// The settings.
        config: WatchConfig,
        /// The rule deciding.
        rule: String,
        /// The generation counter found in `/metrics`, if any.
        counter: Option<String>,
        /// Why there is no counter, when there is none.
        counter_note: Option<String>,
    },
    /// One probe.
    Probe {
        /// 1-based probe number.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
        /// What it found.
        outcome: ProbeOutcome,
    },
    /// What the rule made of it (after the counter reads, if any).
    Decision {
        /// The probe judged.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
        /// The counter's evidence.
        counter: CounterEvidence,
        /// The verdict.
        verdict: Verdict,
        /// What the watchdog does about it, in words.
        action: String,
    },
    /// The server stopped answering connections.
    ServerDown {
        /// The probe that first found it down.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
    },
    /// The server answers probes again after being down or hung.
    ServerBack {
        /// The first successful probe.
        probe: u64,
        /// Wall clock.
        unix_ms: u64,
        /// Seconds since it was found down or hung.
        after_s: f64,
    },
    /// A command was run.
    Action {
        /// `on_hung` or `on_down`.
        trigger: String,
        /// The shell command.
        command: String,
        /// Wall clock at its start.
        unix_ms: u64,
        /// Its exit status, or why it did not run.
        status: String,
        /// Seconds it ran.
        duration_s: f64,
    },
    /// After an action: the first successful probe, or the wait gave up.
    Ready {
        /// Whether a probe succeeded within `ready_timeout_s`.
        ready: bool,
        /// Seconds from the action's end.
        after_s: f64,
        /// Probes tried.
        probes: u64,
    },
    /// The watchdog stopped.
    Stop {
        /// Wall clock.
        unix_ms: u64,
        /// `"interrupted"` or `"max probes"`.
        reason: String,
        /// The tallies.
        summary: WatchSummary,
    },
}

/// Tallies of a watch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WatchSummary {
    /// Probes sent.
    pub probes: u64,
    /// Probes that failed.
    pub failed_probes: u64,
    /// Verdicts, by name.
    pub verdicts: BTreeMap<String, u64>,
    /// `--on-hung` runs.
    pub on_hung_runs: u64,
    /// `--on-down` runs.
    pub on_down_runs: u64,
    /// Times the server was found down.
    pub downs: u64,
    /// Times it came back.
    pub backs: u64,
}

/// What a finished watch leaves behind.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WatchOutcome {
    /// The tallies.
    pub summary: WatchSummary,
    /// The JSON Lines journal.
    pub journal: PathBuf,
    /// The summary as JSON.
    pub run_file: PathBuf,
    /// The summary as Markdown.
    pub markdown: PathBuf,
    /// Whether a signal stopped it.
    pub interrupted: bool,
}

struct Watcher<'a> {
    config: &'a WatchConfig,
    client: Client,
    model: Option<String>,
    counter: Option<&'static str>,
    rule: Box<dyn HangRule>,
    writer: JournalWriter,
    observer: &'a dyn WatchObserver,
    summary: WatchSummary,
    probe_number: u64,
    down_since: Option<Instant>,
    hung_since: Option<Instant>,
    grace_until: Option<Instant>,
}

/// Runs the watchdog with [`CounterRule`], journalling into `out/watch.jsonl` (appended to
/// when it exists), until `interrupt` completes or `max_probes` probes were sent.
pub async fn run_watch(
    config: &WatchConfig,
    out: &Path,
    observer: &dyn WatchObserver,
    interrupt: Option<Interrupt>,
) -> Result<WatchOutcome, LifecycleError> {
    let rule = Box::new(CounterRule::new(config.failures));
    run_watch_with_rule(config, rule, out, observer, interrupt).await
}

/// [`run_watch`] with another decision rule (for comparisons against a baseline).
pub async fn run_watch_with_rule(
    config: &WatchConfig,
    rule: Box<dyn HangRule>,
    out: &Path,
    observer: &dyn WatchObserver,
    interrupt: Option<Interrupt>,
) -> Result<WatchOutcome, LifecycleError> {
    config.check()?;
    std::fs::create_dir_all(out).map_err(|source| LifecycleError::Write {
        path: out.to_owned(),
        source,
    })?;
    let journal = out.join("watch.jsonl");
    let writer = if journal.exists() {
        JournalWriter::open_append(&journal)?
    } else {
        JournalWriter::create_new(&journal)?
    };
    let probe_timeout = common::seconds(config.probe_timeout_s, "--timeout")?;
    let timeouts = Timeouts::new()
        .connect(Some(probe_timeout))
        .first_byte(Some(probe_timeout))
        .idle(Some(probe_timeout));
    let client = common::client(&config.base_url, timeouts)?;
    let mut watcher = Watcher {
        config,
        client,
        model: config.model.clone(),
        counter: None,
        rule,
        writer,
        observer,
        summary: WatchSummary::default(),
        probe_number: 0,
        down_since: None,
        hung_since: None,
        grace_until: None,
    };
    watcher.start().await?;
    let mut interrupt = interrupt.unwrap_or_else(|| Box::pin(std::future::pending()));
    let (result, interrupted) = tokio::select! {
        result = watcher.watch() => (result, false),
        () = interrupt.as_mut() => (Ok(()), true),
    };
    result?;
    let summary = watcher.summary.clone();
    watcher.record(&WatchEvent::Stop {
        unix_ms: common::unix_ms(),
        reason: if interrupted {
            "interrupted"
        } else {
            "max probes"
        }
        .to_owned(),
        summary: summary.clone(),
    })?;
    let (run_file, markdown) = crate::report::write_watch_reports(&summary, config, out)?;
    Ok(WatchOutcome {
        summary,
        journal,
        run_file,
        markdown,
        interrupted,
    })
}

impl Watcher<'_> {
    fn record(&self, event: &WatchEvent) -> Result<(), LifecycleError> {
        self.writer.append(event)?;
        self.observer.event(event);
        Ok(())
    }

    async fn start(&mut self) -> Result<(), LifecycleError> {
        let (counter, note) = match self.client.metrics().await {
            Ok(snapshot) => {
                let sums = metric_sums(&snapshot);
                match generation_counter(&sums) {
                    Some(name) => (Some(name), None),
                    None if self.config.allow_no_counter => (
                        None,
                        Some(format!(
                            "/metrics has none of {}; judging by failed probes alone (--allow-no-counter)",
                            generation_metric_names()
                        )),
                    ),
                    None => {
                        return Err(LifecycleError::NoGenerationCounter {
                            base_url: self.client.base_url(),
                            known: generation_metric_names(),
                        });
                    }
                }
            }
            Err(error) => (
                None,
                Some(format!(
                    "/metrics did not answer at start ({}); the counter is looked for again on a failed probe",
                    common::classify(&error).short()
                )),
            ),
        };
        self.counter = counter;
        self.record(&WatchEvent::Start {
            journal_version: WATCH_JOURNAL_VERSION,
            unix_ms: common::unix_ms(),
            config: self.config.clone(),
            rule: self.rule.name().to_owned(),
            counter: counter.map(str::to_owned),
            counter_note: note,
        })
    }

    async fn watch(&mut self) -> Result<(), LifecycleError> {
        let interval = common::seconds(self.config.interval_s, "--interval")?;
        loop {
            if self
                .config
                .max_probes
                .is_some_and(|max| self.probe_number >= max)
            {
                return Ok(());
            }
            let started = Instant::now();
            let outcome = self.probe().await;
            self.judge(outcome).await?;
            tokio::time::sleep_until((started + interval).into()).await;
        }
    }

    async fn model(&mut self) -> Option<String> {
        if self.model.is_none() {
            self.model = self
                .client
                .models()
                .await
                .ok()
                .and_then(|models| models.into_iter().next())
                .map(|model| model.id);
        }
        self.model.clone()
    }

    async fn probe(&mut self) -> ProbeOutcome {
        self.probe_number += 1;
        self.summary.probes += 1;
        let timeout = Duration::from_secs_f64(self.config.probe_timeout_s);
        let started = Instant::now();
        let outcome = match tokio::time::timeout(timeout, self.model()).await {
            Ok(Some(model)) => {
                let left = timeout.saturating_sub(started.elapsed());
                common::probe(&self.client, &model, &self.config.prompt, left).await
            }
            Ok(None) => match self.client.models().await {
                Err(error) => common::classify(&error),
                Ok(_) => ProbeOutcome::Failed {
                    error: "/v1/models lists no model; pass --model".to_owned(),
                },
            },
            Err(_) => ProbeOutcome::Timeout,
        };
        if !outcome.is_ok() {
            self.summary.failed_probes += 1;
        }
        let _ = self.record(&WatchEvent::Probe {
            probe: self.probe_number,
            unix_ms: common::unix_ms(),
            outcome: outcome.clone(),
        });
        outcome
    }

    async fn read_counter(&mut self) -> Result<f64, String> {
        let snapshot = self
            .client
            .metrics()
            .await
            .map_err(|error| common::classify(&error).short())?;
        let sums = metric_sums(&snapshot);
        if self.counter.is_none() {
            self.counter = generation_counter(&sums);
        }
        let name = self.counter.ok_or("no known generation counter")?;
        sums.get(name)
            .copied()
            .ok_or_else(|| format!("{name} is missing from /metrics"))
    }

    async fn counter_evidence(&mut self, outcome: &ProbeOutcome) -> CounterEvidence {
        if outcome.is_ok()
            || matches!(outcome, ProbeOutcome::Unreachable { .. })
            || !self.rule.reads_counter()
        {
            return CounterEvidence::NotRead;
        }
        let before = match self.read_counter().await {
            Ok(value) => value,
            Err(_) if self.counter.is_none() => return CounterEvidence::Absent,
            Err(error) => return CounterEvidence::Unreadable { error },
        };
        tokio::time::sleep(Duration::from_secs_f64(self.config.settle_s)).await;
        match self.read_counter().await {
            Ok(after) if after > before => CounterEvidence::Moving { before, after },
            Ok(_) => CounterEvidence::Still { value: before },
            Err(error) => CounterEvidence::Unreadable { error },
        }
    }

    /// Reports the server going down and coming back.
    fn note_state(&mut self, outcome: &ProbeOutcome) -> Result<(), LifecycleError> {
        let probe = self.probe_number;
        if outcome.is_ok() {
            let since = self.down_since.take().or(self.hung_since.take());
            self.hung_since = None;
            if let Some(since) = since {
                self.summary.backs += 1;
                self.record(&WatchEvent::ServerBack {
                    probe,
                    unix_ms: common::unix_ms(),
                    after_s: since.elapsed().as_secs_f64(),
                })?;
            }
        } else if matches!(outcome, ProbeOutcome::Unreachable { .. }) && self.down_since.is_none() {
            self.down_since = Some(Instant::now());
            self.summary.downs += 1;
            self.record(&WatchEvent::ServerDown {
                probe,
                unix_ms: common::unix_ms(),
            })?;
        }
        Ok(())
    }

    async fn judge(&mut self, outcome: ProbeOutcome) -> Result<(), LifecycleError> {
        let probe = self.probe_number;
        self.note_state(&outcome)?;
        let counter = self.counter_evidence(&outcome).await;
        let verdict = self.rule.judge(&outcome, &counter);
        *self
            .summary
            .verdicts
            .entry(verdict_name(verdict).to_owned())
            .or_insert(0) += 1;
        let in_grace = self.grace_until.is_some_and(|until| Instant::now() < until);
        let (trigger, command) = match verdict {
            Verdict::Hung => ("on_hung", self.config.on_hung.clone()),
            Verdict::Down => ("on_down", self.config.on_down.clone()),
            _ => ("", None),
        };
        let action = match verdict {
            Verdict::Healthy => "none".to_owned(),
            Verdict::Busy => "none: the engine is generating, every slot is taken".to_owned(),
            Verdict::Failing => "none yet: watching".to_owned(),
            Verdict::Hung | Verdict::Down if in_grace => {
                "none: within the grace period of the last action".to_owned()
            }
            Verdict::Hung | Verdict::Down => match &command {
                Some(command) => format!("run --{} `{command}`", trigger.replace('_', "-")),
                None => format!("none: no --{} given", trigger.replace('_', "-")),
            },
        };
        if verdict == Verdict::Hung && self.hung_since.is_none() {
            self.hung_since = Some(Instant::now());
        }
        self.record(&WatchEvent::Decision {
            probe,
            unix_ms: common::unix_ms(),
            counter,
            verdict,
            action,
        })?;
        if let (Some(command), false) = (command, in_grace) {
            self.act(trigger, &command).await?;
        }
        Ok(())
    }

    async fn act(&mut self, trigger: &str, command: &str) -> Result<(), LifecycleError> {
        let started = Instant::now();
        let unix_ms = common::unix_ms();
        let status = match tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(std::process::Stdio::null())
            .status()
            .await
        {
            Ok(status) => status.to_string(),
            Err(error) => format!("did not start: {error}"),
        };
        if trigger == "on_hung" {
            self.summary.on_hung_runs += 1;
        } else {
            self.summary.on_down_runs += 1;
        }
        self.record(&WatchEvent::Action {
            trigger: trigger.to_owned(),
            command: command.to_owned(),
            unix_ms,
            status,
            duration_s: started.elapsed().as_secs_f64(),
        })?;
        let acted_at = Instant::now();
        self.grace_until = Some(acted_at + Duration::from_secs_f64(self.config.grace_s));
        // Wait for ready: probe until one succeeds or the wait gives up.
        let interval = Duration::from_secs_f64(self.config.interval_s);
        let limit = Duration::from_secs_f64(self.config.ready_timeout_s);
        let mut probes = 0;
        let ready = loop {
            let probe_started = Instant::now();
            probes += 1;
            let outcome = self.probe().await;
            self.note_state(&outcome)?;
            if outcome.is_ok() {
                let verdict = self.rule.judge(&outcome, &CounterEvidence::NotRead);
                *self
                    .summary
                    .verdicts
                    .entry(verdict_name(verdict).to_owned())
                    .or_insert(0) += 1;
                self.record(&WatchEvent::Decision {
                    probe: self.probe_number,
                    unix_ms: common::unix_ms(),
                    counter: CounterEvidence::NotRead,
                    verdict,
                    action: "none: ready again".to_owned(),
                })?;
                break true;
            }
            if acted_at.elapsed() >= limit {
                break false;
            }
            tokio::time::sleep_until((probe_started + interval).into()).await;
        };
        self.record(&WatchEvent::Ready {
            ready,
            after_s: acted_at.elapsed().as_secs_f64(),
            probes,
        })
    }
}

fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Healthy => "healthy",
        Verdict::Busy => "busy",
        Verdict::Failing => "failing",
        Verdict::Hung => "hung",
        Verdict::Down => "down",
    }
}

impl ProbeOutcome {
    /// A short description for notes.
    pub fn short(&self) -> String {
        match self {
            Self::Ok { latency_ms } => format!("ok in {latency_ms:.0} ms"),
            Self::Timeout => "timed out".to_owned(),
            Self::Unreachable { error } => format!("unreachable: {error}"),
            Self::Http { status } => format!("HTTP {status}"),
            Self::Failed { error } => format!("failed: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moving_counter_is_busy_and_resets_the_count() {
        let mut rule = CounterRule::new(2);
        let moving = CounterEvidence::Moving {
            before: 1.0,
            after: 5.0,
        };
        let still = CounterEvidence::Still { value: 5.0 };
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Failing);
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &moving), Verdict::Busy);
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Failing);
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Hung);
        // The count starts again after a verdict.
        assert_eq!(rule.judge(&ProbeOutcome::Timeout, &still), Verdict::Failing);
        assert_eq!(
            rule.judge(
                &ProbeOutcome::Ok { latency_ms: 1.0 },
                &CounterEvidence::NotRead
            ),
            Verdict::Healthy
        );
    }

    #[test]
    fn without_a_counter_failed_probes_alone_decide() {
        let mut rule = CounterRule::new(3);
        let absent = CounterEvidence::Absent;
        let http = ProbeOutcome::Http { status: 503 };
        assert_eq!(rule.judge(&http, &absent), Verdict::Failing);
        assert_eq!(rule.judge(&http, &absent), Verdict::Failing);
        assert_eq!(rule.judge(&http, &absent), Verdict::Hung);
    }

    #[test]
    fn unreachable_is_down_not_hung() {
        let mut rule = CounterRule::new(2);
        let gone = ProbeOutcome::Unreachable {
            error: "refused".to_owned(),
        };
        assert_eq!(
            rule.judge(&gone, &CounterEvidence::NotRead),
            Verdict::Failing
        );
        assert_eq!(rule.judge(&gone, &CounterEvidence::NotRead), Verdict::Down);
    }

    #[test]
    fn bad_settings_are_refused() {
        let config = WatchConfig {
            failures: 0,
            ..WatchConfig::default()
        };
        assert!(config.check().is_err());
        let config = WatchConfig {
            interval_s: -1.0,
            ..WatchConfig::default()
        };
        assert!(config.check().is_err());
        assert!(WatchConfig::default().check().is_ok());
    }
}
