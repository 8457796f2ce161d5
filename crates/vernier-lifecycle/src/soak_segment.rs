//! One segment of a soak: the load held on a ready server until the slice's time is up, the
//! run is interrupted, or the server dies; and the watch beside it that tells a death (refused,
//! cut, exited, `/health` down, hung by the generation counter) from one failed request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use vernier_openai::{ClientError, generation_counter, metric_sums};
use vernier_run::{Interrupt, unix_ms};

use crate::error::LifecycleError;
use crate::process::LaunchedServer;
use crate::soak_config::SoakArm;
use crate::soak_context::{Context, clock, slug};
use crate::soak_evidence::{log_evidence, scrape_figures};
use crate::soak_journal::{DeathKind, DeathRecord, MetricsAtDeath, RequestLine, SoakJournalLine};
use crate::soak_load::{FailClass, Failure, Load, worker};

/// How a segment ended.
#[derive(Debug)]
pub(crate) enum SegmentEnd {
    /// The time given was held.
    Elapsed,
    /// A signal stopped the run.
    Interrupted,
    /// The server died.
    Death(Box<DeathRecord>),
}

/// What a segment held.
#[derive(Debug)]
pub(crate) struct Segment {
    /// Seconds of load held (until the death's first sign, for a death).
    pub(crate) loaded_s: f64,
    pub(crate) end: SegmentEnd,
    /// Requests that finished.
    pub(crate) finished: u64,
}

/// Where the arm stands when the segment starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArmState {
    /// 0-based round.
    pub(crate) round: usize,
    /// Seconds of load the arm held before this segment (every slice).
    pub(crate) arm_loaded_s: f64,
    /// Seconds of load this slice held before this segment.
    pub(crate) slice_loaded_s: f64,
    /// Deaths of the arm before this segment.
    pub(crate) deaths: usize,
    /// Seconds of load the slice is to hold.
    pub(crate) planned_s: f64,
    /// Requests of the arm that finished before this segment.
    pub(crate) arm_finished: u64,
}

/// The last good `/metrics` scrape.
struct Scrape {
    at: Instant,
    text: String,
    sums: BTreeMap<String, f64>,
}

/// The first sign of a death, with the requests in flight at it.
struct Sign {
    at: Instant,
    unix_ms: u64,
    in_flight: Vec<u64>,
}

/// A death seen: its first sign, how it showed, and what was seen.
struct Death {
    sign: Sign,
    how: DeathKind,
    signs: Vec<String>,
}

/// The watch beside the load.
struct Watcher<'a, 'c> {
    ctx: &'a Context<'c>,
    arm: &'a SoakArm,
    server: Option<&'a LaunchedServer>,
    load: Arc<Load>,
    last_scrape: Option<Scrape>,
    health_failures: u32,
    hang_quiet_until: Instant,
    /// Requests failed in a row with the server up, and the finished count at the last one.
    failed_in_a_row: (u32, u64),
    /// The first of those failures: if they end in a death, its first sign.
    first_unconfirmed: Option<Sign>,
}

/// The shared state of the workers of one segment.
fn start_load(
    ctx: &Context<'_>,
    arm: &SoakArm,
    model: &str,
    failures: tokio::sync::mpsc::UnboundedSender<Failure>,
) -> Arc<Load> {
    let mut extra = ctx.config.extra_body.clone();
    if ctx.config.ignore_eos {
        extra.insert("ignore_eos".to_owned(), serde_json::Value::Bool(true));
    }
    Arc::new(Load {
        client: ctx.load_client.clone(),
        model: model.to_owned(),
        arm: arm.name.clone(),
        prompt: ctx.config.prompt.clone(),
        nonce: ctx.nonce.clone(),
        max_tokens: ctx.config.max_tokens,
        extra,
        table: crate::soak_load::InFlightTable::default(),
        next_request: Arc::clone(&ctx.next_request),
        writer: Arc::clone(&ctx.writer),
        failures,
        tokens: AtomicU64::new(0),
        finished: AtomicU64::new(0),
    })
}

/// Holds the load for `budget` on a ready server.
pub(crate) async fn run_segment(
    ctx: &Context<'_>,
    arm: &SoakArm,
    model: &str,
    budget: Duration,
    server: Option<&LaunchedServer>,
    state: ArmState,
    interrupt: &mut Interrupt,
) -> Result<Segment, LifecycleError> {
    let (failures_tx, mut failures) = tokio::sync::mpsc::unbounded_channel();
    let load = start_load(ctx, arm, model, failures_tx);
    let settings = load.settings();
    let mut workers = JoinSet::new();
    for _ in 0..arm.concurrency {
        workers.spawn(worker(Arc::clone(&load)));
    }
    let started = Instant::now();
    let deadline = started + budget;
    let probe_every = Duration::from_secs_f64(ctx.config.probe_interval_s);
    let mut probe_tick = tokio::time::interval_at((started + probe_every).into(), probe_every);
    // After a slow look (a frozen server's scrape), the next one is a whole interval later,
    // not a burst: "two refusals in a row" stay an interval apart.
    probe_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let progress_every = Duration::from_secs(5);
    let mut progress_tick =
        tokio::time::interval_at((started + progress_every).into(), progress_every);
    let mut watcher = Watcher {
        ctx,
        arm,
        server,
        load: Arc::clone(&load),
        last_scrape: None,
        health_failures: 0,
        hang_quiet_until: started,
        failed_in_a_row: (0, 0),
        first_unconfirmed: None,
    };
    let ended = loop {
        tokio::select! {
            () = tokio::time::sleep_until(deadline.into()) => {
                // A death at the very end is still a death: the process, and failures queued.
                if let Some((status, signal)) = server.and_then(LaunchedServer::exit) {
                    break Some(Death {
                        sign: watcher.sign_now(Instant::now()),
                        signs: vec![format!("the launched process exited: {status}")],
                        how: DeathKind::Exit { status, signal },
                    });
                }
                let mut ended = None;
                while let Ok(failure) = failures.try_recv() {
                    if !matches!(failure.class, FailClass::Rejected(_))
                        && let Some(death) = watcher.failed(failure).await?
                    {
                        ended = Some(death);
                        break;
                    }
                }
                break ended;
            }
            () = interrupt.as_mut() => {
                workers.abort_all();
                while workers.join_next().await.is_some() {}
                end_requests(ctx, &load, &settings, "interrupted")?;
                return Ok(Segment {
                    loaded_s: started.elapsed().as_secs_f64(),
                    end: SegmentEnd::Interrupted,
                    finished: load.finished.load(Ordering::Relaxed),
                });
            }
            Some(failure) = failures.recv() => {
                // A refusal before any request finished is the request's shape (a flag); after,
                // it is the server's doing, counted like any failed request.
                if let FailClass::Rejected(status) = failure.class
                    && load.finished.load(Ordering::Relaxed) == 0
                    && state.arm_finished == 0
                {
                    workers.abort_all();
                    return Err(rejected(status, &failure.error));
                }
                if let Some(death) = watcher.failed(failure).await? {
                    break Some(death);
                }
            }
            _ = probe_tick.tick() => {
                if let Some(death) = watcher.look().await? {
                    break Some(death);
                }
            }
            _ = progress_tick.tick() => progress(ctx, arm, &load, state, started.elapsed().as_secs_f64())?,
        }
    };
    workers.abort_all();
    // Aborted workers may be mid-poll on another thread: wait until none can still journal.
    while workers.join_next().await.is_some() {}
    let Some(death) = ended else {
        end_requests(ctx, &load, &settings, "the slice ended")?;
        return Ok(Segment {
            loaded_s: started.elapsed().as_secs_f64(),
            end: SegmentEnd::Elapsed,
            finished: load.finished.load(Ordering::Relaxed),
        });
    };
    let loaded = death
        .sign
        .at
        .saturating_duration_since(started)
        .as_secs_f64();
    let record = watcher.record(death, state, loaded).await;
    Ok(Segment {
        loaded_s: loaded,
        end: SegmentEnd::Death(Box::new(record)),
        finished: load.finished.load(Ordering::Relaxed),
    })
}

/// Journals the load held so far and tells the observer.
fn progress(
    ctx: &Context<'_>,
    arm: &SoakArm,
    load: &Load,
    state: ArmState,
    loaded: f64,
) -> Result<(), LifecycleError> {
    ctx.writer.append(&SoakJournalLine::Progress {
        arm: arm.name.clone(),
        round: state.round,
        loaded_s: state.slice_loaded_s + loaded,
    })?;
    ctx.observer.note(&format!(
        "{}: {} of {} loaded in this slice; since the server was last ready {} requests finished, {} tokens; {} deaths so far",
        arm.name,
        clock(state.slice_loaded_s + loaded),
        clock(state.planned_s),
        load.finished.load(Ordering::Relaxed),
        load.tokens.load(Ordering::Relaxed),
        state.deaths,
    ));
    Ok(())
}

impl Watcher<'_, '_> {
    fn sign_now(&self, now: Instant) -> Sign {
        Sign {
            at: now,
            unix_ms: unix_ms(),
            in_flight: self.load.table.in_flight_at(now),
        }
    }

    /// A failed request: a death when the process or `/health` confirms it, else journalled
    /// alone.
    async fn failed(&mut self, failure: Failure) -> Result<Option<Death>, LifecycleError> {
        let sign = Sign {
            at: failure.at,
            unix_ms: failure.unix_ms,
            in_flight: self.load.table.in_flight_at(failure.at),
        };
        if let Some((how, signs)) = confirm(self.ctx, &failure, self.server).await {
            return Ok(Some(Death { sign, how, signs }));
        }
        // Up, but failing every request: after enough in a row with none finishing, that is a
        // death too (a server whose engine died behind a live HTTP front).
        let finished = self.load.finished.load(Ordering::Relaxed);
        let (in_a_row, finished_before) = self.failed_in_a_row;
        let in_a_row = if finished == finished_before && self.first_unconfirmed.is_some() {
            in_a_row + 1
        } else {
            self.first_unconfirmed = Some(sign);
            1
        };
        self.failed_in_a_row = (in_a_row, finished);
        if in_a_row >= (2 * self.arm.concurrency).max(3)
            && let Some(first) = self.first_unconfirmed.take()
        {
            return Ok(Some(Death {
                sign: first,
                signs: vec![format!(
                    "{in_a_row} requests in a row failed while /health answered, the last: {}",
                    failure.error
                )],
                how: DeathKind::Errors {
                    in_a_row,
                    error: failure.error,
                },
            }));
        }
        self.ctx.writer.append(&SoakJournalLine::RequestError {
            arm: self.arm.name.clone(),
            unix_ms: failure.unix_ms,
            request: failure.request,
            error: failure.error,
        })?;
        Ok(None)
    }

    /// One look: the launched process, `/metrics` (kept; two refusals in a row are a death),
    /// and a stall of every request (the generation counter decides).
    async fn look(&mut self) -> Result<Option<Death>, LifecycleError> {
        let now = Instant::now();
        if let Some((status, signal)) = self.server.and_then(LaunchedServer::exit) {
            return Ok(Some(Death {
                sign: self.sign_now(now),
                signs: vec![format!("the launched process exited: {status}")],
                how: DeathKind::Exit { status, signal },
            }));
        }
        match metrics_text(&self.ctx.probe_client).await {
            Ok(text) => {
                self.health_failures = 0;
                if let Ok(snapshot) = vernier_openai::MetricsSnapshot::parse(&text) {
                    self.last_scrape = Some(Scrape {
                        at: now,
                        sums: metric_sums(&snapshot),
                        text,
                    });
                }
            }
            Err(ClientError::Connect { .. }) => {
                self.health_failures += 1;
                if self.health_failures >= 2 {
                    return Ok(Some(Death {
                        sign: self.sign_now(now),
                        how: DeathKind::Down,
                        signs: vec!["/metrics refused two connections in a row".to_owned()],
                    }));
                }
            }
            Err(_) => self.health_failures = 0,
        }
        // The scrape may have taken its whole timeout (a frozen server): judge the stall now.
        let now = Instant::now();
        let Some(stalled) = self.load.table.stalled_for(now) else {
            return Ok(None);
        };
        if stalled.as_secs_f64() < self.ctx.config.hang_after_s || now < self.hang_quiet_until {
            return Ok(None);
        }
        // A hang began with the last token: that is its instant, and the load held ends there.
        let began = now.checked_sub(stalled).unwrap_or(now);
        let sign = Sign {
            at: began,
            unix_ms: unix_ms().saturating_sub(u64::try_from(stalled.as_millis()).unwrap_or(0)),
            in_flight: self.load.table.in_flight_at(began),
        };
        match hang_check(self.ctx, stalled).await {
            HangCheck::Hung { counter } => Ok(Some(Death {
                sign,
                signs: vec![format!(
                    "no token on any request for {:.0} s; {counter}",
                    stalled.as_secs_f64()
                )],
                how: DeathKind::Hung {
                    stalled_s: stalled.as_secs_f64(),
                    counter,
                },
            })),
            HangCheck::Busy { before, after } => {
                self.hang_quiet_until =
                    Instant::now() + Duration::from_secs_f64(self.ctx.config.hang_after_s);
                self.ctx.writer.append(&SoakJournalLine::Busy {
                    arm: self.arm.name.clone(),
                    unix_ms: unix_ms(),
                    stalled_s: stalled.as_secs_f64(),
                    before,
                    after,
                })?;
                Ok(None)
            }
        }
    }

    /// The death's record: the requests in flight at its first sign (with every token that
    /// reached us: the others' last events may be read after the first one failed), the last
    /// scrape (kept as a file), a launched server's log.
    async fn record(self, death: Death, state: ArmState, loaded: f64) -> DeathRecord {
        let settings = self.load.settings();
        let in_flight = self
            .load
            .table
            .records(&death.sign.in_flight, death.sign.at, &settings);
        self.load.table.drain(Instant::now(), &settings);
        let number = state.deaths + 1;
        let metrics = self.last_scrape.map(|scrape| {
            let (running, waiting, kv_cache_usage, generated_tokens) = scrape_figures(&scrape.sums);
            let folder = self.ctx.out.join("deaths");
            let file = folder.join(format!("{}-{number}-metrics.txt", slug(&self.arm.name)));
            let written = std::fs::create_dir_all(&folder)
                .and_then(|()| std::fs::write(&file, &scrape.text))
                .is_ok();
            MetricsAtDeath {
                age_s: death
                    .sign
                    .at
                    .saturating_duration_since(scrape.at)
                    .as_secs_f64(),
                running,
                waiting,
                kv_cache_usage,
                generated_tokens,
                file: written.then(|| file.display().to_string()),
            }
        });
        let log = match self.server {
            Some(server) => {
                // Let a dying process finish writing its last lines.
                tokio::time::sleep(Duration::from_millis(300)).await;
                log_evidence(server.log(), self.ctx.config.log_tail_lines)
            }
            None => None,
        };
        DeathRecord {
            arm: self.arm.name.clone(),
            number,
            unix_ms: death.sign.unix_ms,
            loaded_s: state.arm_loaded_s + loaded,
            since_ready_s: loaded,
            how: death.how,
            signs: death.signs,
            in_flight,
            concurrency: self.arm.concurrency,
            metrics,
            log,
        }
    }
}

/// A soak request the server refused: the flag that shapes it, and the server's words.
fn rejected(status: u16, error: &str) -> LifecycleError {
    let flag = vernier_run::refusal_flag(status).unwrap_or("--max-tokens or --extra-body");
    vernier_run::RunError::invalid(
        flag,
        format!("the server refused the soak's request ({error}); every request has this shape, so the soak stops"),
    )
    .into()
}

/// Journals the requests the workers were stopped in, and empties the table.
fn end_requests(
    ctx: &Context<'_>,
    load: &Load,
    settings: &serde_json::Map<String, serde_json::Value>,
    why: &str,
) -> Result<(), LifecycleError> {
    for request in load.table.drain(Instant::now(), settings) {
        if request.error.is_some() {
            continue;
        }
        ctx.writer.append(&SoakJournalLine::Request(RequestLine {
            arm: load.arm.clone(),
            request: request.request,
            started_unix_ms: request.started_unix_ms,
            duration_s: request.age_s,
            tokens: request.tokens,
            token_source: request.token_source,
            finish_reason: None,
            error: Some(format!("stopped: {why}")),
        }))?;
    }
    Ok(())
}

/// Whether a failed request is a death: the launched process exited, or `/health` refuses
/// connections or answers a server error. `None` when the server is still up (the failure is
/// the request's own).
async fn confirm(
    ctx: &Context<'_>,
    failure: &Failure,
    server: Option<&LaunchedServer>,
) -> Option<(DeathKind, Vec<String>)> {
    let mut signs = vec![format!(
        "request {} failed: {}",
        failure.request, failure.error
    )];
    if let Some(server) = server {
        // A process that is dying takes a moment to be reaped.
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            if let Some((status, signal)) = server.exit() {
                signs.push(format!("the launched process exited: {status}"));
                return Some((DeathKind::Exit { status, signal }, signs));
            }
            if Instant::now() >= until
                || !matches!(failure.class, FailClass::Reset | FailClass::Refused)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    match ctx.probe_client.get_raw("/health").await {
        Err(ClientError::Connect { .. }) => {
            signs.push("/health refused the connection".to_owned());
            let how = match failure.class {
                FailClass::Refused => DeathKind::Refused,
                FailClass::Reset => DeathKind::Reset,
                FailClass::Other | FailClass::Rejected(_) => DeathKind::Down,
            };
            Some((how, signs))
        }
        // vLLM whose engine core died answers /health 503 (and every request 500) until its
        // API server exits: down, whatever the request's failure looked like.
        Ok((status, _, _)) if status.is_server_error() => {
            signs.push(format!("/health answered {}", status.as_u16()));
            Some((DeathKind::Down, signs))
        }
        _ => None,
    }
}

enum HangCheck {
    Hung { counter: String },
    Busy { before: f64, after: f64 },
}

/// Two reads of the generation counter `--settle` apart: moving is busy, still (or no counter
/// to read) is hung.
async fn hang_check(ctx: &Context<'_>, stalled: Duration) -> HangCheck {
    let read = || async {
        let text = metrics_text(&ctx.probe_client).await.ok()?;
        let snapshot = vernier_openai::MetricsSnapshot::parse(&text).ok()?;
        let sums = metric_sums(&snapshot);
        let name = generation_counter(&sums)?;
        sums.get(name).copied()
    };
    let Some(before) = read().await else {
        return HangCheck::Hung {
            counter: format!(
                "no generation counter could be read; judged by {:.0} s of stalled streams alone",
                stalled.as_secs_f64()
            ),
        };
    };
    tokio::time::sleep(Duration::from_secs_f64(ctx.config.settle_s)).await;
    match read().await {
        Some(after) if after > before => HangCheck::Busy { before, after },
        Some(after) => HangCheck::Hung {
            counter: format!(
                "the generation counter stood at {after} over {} s",
                ctx.config.settle_s
            ),
        },
        None => HangCheck::Hung {
            counter: "the generation counter could not be read a second time".to_owned(),
        },
    }
}

/// `GET /metrics` as text (kept whole with a death).
async fn metrics_text(client: &vernier_openai::Client) -> Result<String, ClientError> {
    let (status, _, body) = client.get_raw("metrics").await?;
    let text = String::from_utf8_lossy(&body).into_owned();
    if status.is_success() {
        Ok(text)
    } else {
        Err(ClientError::Http {
            status: status.as_u16(),
            body: text.chars().take(1024).collect(),
            retry_after: None,
        })
    }
}
