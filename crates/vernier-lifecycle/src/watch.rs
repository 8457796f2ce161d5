//! `watch`: a watchdog that probes with a one-token request and, when probes fail, reads the
//! generation counter twice to tell a busy engine (counter moving) from a hung one (counter
//! still) before it acts.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use vernier_journal::JournalWriter;
use vernier_openai::{Client, Timeouts, generation_counter, generation_metric_names, metric_sums};

use vernier_run::{ClientOptions, Interrupt, build_client, unix_ms};

use crate::error::LifecycleError;
use crate::hang_rule::{CounterEvidence, CounterRule, HangRule, Verdict, verdict_name};
use crate::observer::WatchObserver;
use crate::probe::{self, ProbeOutcome};
use crate::report;
use crate::watch_config::WatchConfig;
use crate::watch_journal::{WATCH_JOURNAL_VERSION, WatchEvent, WatchSummary};

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
    let probe_timeout = vernier_run::seconds("--timeout", config.probe_timeout_s, true)?;
    let timeouts = Timeouts::new()
        .connect(Some(probe_timeout))
        .first_byte(Some(probe_timeout))
        .idle(Some(probe_timeout));
    let client = build_client(
        &ClientOptions::new(&config.base_url)
            .api_key_env(config.api_key_env.as_deref())
            .ca_cert(config.ca_cert.as_deref())
            .timeouts(timeouts)
            .user_agent(crate::user_agent::USER_AGENT),
    )?;
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
    let mut interrupt = interrupt.unwrap_or_else(vernier_run::never);
    let (result, interrupted) = tokio::select! {
        result = watcher.watch() => (result, false),
        () = interrupt.as_mut() => (Ok(()), true),
    };
    result?;
    let summary = watcher.summary.clone();
    watcher.record(&WatchEvent::Stop {
        unix_ms: unix_ms(),
        reason: if interrupted {
            "interrupted"
        } else {
            "max probes"
        }
        .to_owned(),
        summary: summary.clone(),
    })?;
    let (run_file, markdown) = write_watch_reports(&summary, config, out)?;
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
                    probe::classify(&error).short()
                )),
            ),
        };
        self.counter = counter;
        self.record(&WatchEvent::Start {
            journal_version: WATCH_JOURNAL_VERSION,
            unix_ms: unix_ms(),
            config: self.config.clone(),
            rule: self.rule.name().to_owned(),
            counter: counter.map(str::to_owned),
            counter_note: note,
        })
    }

    async fn watch(&mut self) -> Result<(), LifecycleError> {
        let interval = vernier_run::seconds("--interval", self.config.interval_s, true)?;
        loop {
            if self.probes_used_up() {
                return Ok(());
            }
            let started = Instant::now();
            let outcome = self.probe().await;
            // A refusal at the first probe is the watchdog's configuration, not the server's
            // health: say which, and stop before any --on-hung could run.
            if self.probe_number == 1
                && let ProbeOutcome::Http { status } = outcome
                && probe::is_configuration_status(status)
            {
                return Err(vernier_run::RunError::invalid(
                    probe::configuration_flag(status),
                    format!(
                        "the first probe of {} was answered {status}: {}",
                        self.client.base_url(),
                        probe::configuration_hint(status)
                    ),
                )
                .into());
            }
            self.judge(outcome).await?;
            tokio::time::sleep_until((started + interval).into()).await;
        }
    }

    /// `--max-probes` probes were sent.
    fn probes_used_up(&self) -> bool {
        self.config
            .max_probes
            .is_some_and(|max| self.probe_number >= max)
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
                probe::probe(
                    &self.client,
                    &model,
                    &self.config.prompt,
                    &self.config.extra_body,
                    left,
                )
                .await
            }
            Ok(None) => match self.client.models().await {
                Err(error) => probe::classify(&error),
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
            unix_ms: unix_ms(),
            outcome: outcome.clone(),
        });
        outcome
    }

    async fn read_counter(&mut self) -> Result<f64, String> {
        let snapshot = self
            .client
            .metrics()
            .await
            .map_err(|error| probe::classify(&error).short())?;
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
                    unix_ms: unix_ms(),
                    after_s: since.elapsed().as_secs_f64(),
                })?;
            }
        } else if matches!(outcome, ProbeOutcome::Unreachable { .. }) && self.down_since.is_none() {
            self.down_since = Some(Instant::now());
            self.summary.downs += 1;
            self.record(&WatchEvent::ServerDown {
                probe,
                unix_ms: unix_ms(),
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
            unix_ms: unix_ms(),
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
        let unix_ms = unix_ms();
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
                    unix_ms: vernier_run::unix_ms(),
                    counter: CounterEvidence::NotRead,
                    verdict,
                    action: "none: ready again".to_owned(),
                })?;
                break true;
            }
            // `--max-probes` bounds these probes too: the watch ends at its bound.
            if acted_at.elapsed() >= limit || self.probes_used_up() {
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

/// The watch summary file's content.
#[derive(Debug, Clone, Serialize)]
struct WatchRun<'a> {
    config: &'a WatchConfig,
    summary: &'a WatchSummary,
}

/// Writes `watch.json` and `watch.md` into `out`.
fn write_watch_reports(
    summary: &WatchSummary,
    config: &WatchConfig,
    out: &Path,
) -> Result<(PathBuf, PathBuf), LifecycleError> {
    let mut text = format!("# Watch of {}\n\n| | |\n| --- | --- |\n", config.base_url);
    let _ = writeln!(text, "| probes | {} |", summary.probes);
    let _ = writeln!(text, "| failed probes | {} |", summary.failed_probes);
    for (verdict, n) in &summary.verdicts {
        let _ = writeln!(text, "| verdict {verdict} | {n} |");
    }
    let _ = writeln!(text, "| --on-hung runs | {} |", summary.on_hung_runs);
    let _ = writeln!(text, "| --on-down runs | {} |", summary.on_down_runs);
    let _ = writeln!(text, "| server down | {} |", summary.downs);
    let _ = writeln!(text, "| server back | {} |", summary.backs);
    Ok((
        report::write(
            out.join("watch.json"),
            &report::json(&WatchRun { config, summary }),
        )?,
        report::write(out.join("watch.md"), &text)?,
    ))
}
