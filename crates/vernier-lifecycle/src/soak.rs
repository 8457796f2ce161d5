//! `soak`: hold a chosen load on a server for a duration, record every death with what was in
//! flight, relaunch and go on; several configurations (and concurrencies) take turns in
//! interleaved slices, so their failure rates can be compared.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use vernier_journal::JournalWriter;
use vernier_openai::{Client, Timeouts};
use vernier_run::{ClientOptions, Interrupt, RunError, build_client, unix_ms};

use crate::error::LifecycleError;
use crate::observer::ReadyObserver;
use crate::process::LaunchedServer;
use crate::ready::check_port_free;
use crate::soak_config::{SoakArm, SoakConfig};
use crate::soak_context::{Context, clock, log_path};
use crate::soak_journal::{SOAK_JOURNAL_VERSION, SoakJournalLine};
use crate::soak_report::{SoakRun, summarise, write_soak_reports};
use crate::soak_resume::{SoakResumeFlags, read_soak_journal, resumed_state};
use crate::soak_segment::{ArmState, SegmentEnd, run_segment};

/// A new soak, or the continuation of a journal's.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SoakStart {
    /// A new run, journalled into `out/journal.jsonl` (refused if it exists).
    New {
        /// The settings.
        config: SoakConfig,
        /// The output folder.
        out: PathBuf,
    },
    /// Continue the run of this journal, with the time already spent.
    Resume {
        /// The journal.
        journal: PathBuf,
        /// The flags typed beside `--resume`.
        flags: SoakResumeFlags,
    },
}

/// What a finished (or stopped) soak leaves behind.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SoakOutcome {
    /// The summary.
    pub run: SoakRun,
    /// The journal.
    pub journal: PathBuf,
    /// `run.json`.
    pub run_file: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// Whether a signal stopped it (it can be resumed).
    pub interrupted: bool,
}

/// How a slice ended.
enum SliceEnd {
    Held,
    Interrupted,
    GaveUp(String),
}

/// Runs a soak: each arm (configuration × concurrency) held for `duration_s` of load, in
/// interleaved slices; every death journalled with its evidence; a launched server relaunched
/// after each. `interrupt` stops it (a launched server is stopped, the reports written).
pub async fn run_soak(
    start: SoakStart,
    command_line: &[String],
    observer: &dyn ReadyObserver,
    interrupt: Option<Interrupt>,
) -> Result<SoakOutcome, LifecycleError> {
    // A flag the client refuses (a CA file that cannot be read) is refused before a new soak's
    // folder is made.
    if let SoakStart::New { config, .. } = &start {
        client(config, None)?;
    }
    let (config, out, journal, writer, done) = open(start, command_line)?;
    let writer = Arc::new(writer);
    let arms = config.arms();
    let state = resumed_state(&done, &arms);
    if state.loaded_s.iter().any(|s| *s > 0.0) {
        observer.note(&format!(
            "resuming with {} of load already held",
            arms.iter()
                .zip(&state.loaded_s)
                .map(|(arm, s)| format!("{} {}", arm.name, clock(*s)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let ctx = Context {
        config: &config,
        out: &out,
        writer: Arc::clone(&writer),
        observer,
        next_request: Arc::new(AtomicU64::new(state.next_request)),
        nonce: format!("{:x}", unix_ms()),
        load_client: client(&config, None)?,
        probe_client: client(&config, Some(Duration::from_secs(3)))?,
    };
    let mut interrupt = interrupt.unwrap_or_else(vernier_run::never);
    let mut loaded = state.loaded_s;
    let mut deaths = state.deaths;
    let mut finished = state.finished;
    let mut launches = state.launches;
    let round_s = config.round_seconds();
    let mut round = state.round;
    let mut end = SliceEnd::Held;
    'rounds: loop {
        let target = (round_s * (round + 1) as f64).min(config.duration_s);
        let mut any = false;
        for index in config.round_order(round) {
            let planned = target - loaded[index];
            if planned < 0.5 {
                continue;
            }
            any = true;
            let arm = &arms[index];
            let mut arm_state = ArmState {
                round,
                arm_loaded_s: loaded[index],
                slice_loaded_s: 0.0,
                deaths: deaths[index],
                planned_s: planned,
                arm_finished: finished[index],
            };
            end = slice(
                &ctx,
                arm,
                &mut arm_state,
                &mut launches[index],
                &mut interrupt,
            )
            .await?;
            loaded[index] = arm_state.arm_loaded_s;
            deaths[index] = arm_state.deaths;
            finished[index] = arm_state.arm_finished;
            if !matches!(end, SliceEnd::Held) {
                break 'rounds;
            }
        }
        if !any && target >= config.duration_s {
            break;
        }
        round += 1;
    }
    let (interrupted, gave_up) = match end {
        SliceEnd::Held => (false, None),
        SliceEnd::Interrupted => (true, None),
        SliceEnd::GaveUp(reason) => (false, Some(reason)),
    };
    writer.sync()?;
    let lines = read_soak_journal(&journal)?;
    let run = summarise(&lines, interrupted, gave_up);
    let (run_file, markdown) = write_soak_reports(&run, &out)?;
    Ok(SoakOutcome {
        run,
        journal,
        run_file,
        markdown,
        interrupted,
    })
}

type Opened = (
    SoakConfig,
    PathBuf,
    PathBuf,
    JournalWriter,
    Vec<SoakJournalLine>,
);

/// Creates the journal of a new run, or checks and reopens a resumed one.
fn open(start: SoakStart, command_line: &[String]) -> Result<Opened, LifecycleError> {
    match start {
        SoakStart::New { config, out } => {
            config.check()?;
            crate::report::make_run_folders(&out)?;
            let journal = out.join("journal.jsonl");
            if journal.exists() {
                return Err(RunError::JournalExists { out, journal }.into());
            }
            let writer = JournalWriter::create_new(&journal)?;
            writer.append(&SoakJournalLine::Header {
                journal_version: SOAK_JOURNAL_VERSION,
                started_unix_ms: unix_ms(),
                command_line: command_line.to_vec(),
                config: config.clone(),
            })?;
            Ok((config, out, journal, writer, Vec::new()))
        }
        SoakStart::Resume { journal, flags } => {
            let lines = read_soak_journal(&journal)?;
            let Some(SoakJournalLine::Header {
                config: recorded,
                command_line: original,
                ..
            }) = lines.first()
            else {
                return Err(LifecycleError::Resume {
                    path: journal,
                    reason: "its first line is not a soak header".to_owned(),
                });
            };
            let (out, changed_settings) = flags.check(&journal, original, |flags, out| {
                flags.settings(recorded, out)
            })?;
            let config = flags.session_config(recorded);
            config.check()?;
            crate::report::make_run_folders(&out)?;
            let writer = JournalWriter::open_append(&journal)?;
            writer.append(&SoakJournalLine::Resumed {
                unix_ms: unix_ms(),
                command_line: command_line.to_vec(),
                changed_settings,
            })?;
            Ok((config, out, journal, writer, lines))
        }
    }
}

/// The load's client (no first-byte or idle limit: the watch beside it judges a stall), or
/// the probes' (every phase bounded by `limit`).
fn client(config: &SoakConfig, limit: Option<Duration>) -> Result<Client, LifecycleError> {
    let timeouts = Timeouts::new()
        .connect(Some(limit.unwrap_or(Duration::from_secs(10))))
        .first_byte(limit)
        .idle(limit)
        .total(limit);
    Ok(build_client(
        &ClientOptions::new(&config.base_url)
            .api_key_env(config.api_key_env.as_deref())
            .ca_cert(config.ca_cert.as_deref())
            .timeouts(timeouts)
            .user_agent(crate::user_agent::USER_AGENT),
    )?)
}

/// One slice of an arm: launch (or find) the server, hold the load, record each death and
/// relaunch after it, until the slice's time is held.
async fn slice(
    ctx: &Context<'_>,
    arm: &SoakArm,
    state: &mut ArmState,
    launches: &mut usize,
    interrupt: &mut Interrupt,
) -> Result<SliceEnd, LifecycleError> {
    let launch = ctx.config.servers[arm.server].launch.clone();
    start_slice(ctx, arm, state)?;
    let grace = vernier_run::seconds("--stop-grace", ctx.config.stop_grace_s, true)?;
    let mut reason = "start";
    let end = loop {
        let server = match &launch {
            Some(command) => Some(launch_server(ctx, arm, command, launches, reason)?),
            None => None,
        };
        let ready = tokio::select! {
            ready = wait_ready(ctx, server.as_ref()) => match ready {
                Ok(ready) => ready,
                Err(refused) => {
                    stop(ctx, arm, server, grace).await?;
                    return Err(refused);
                }
            },
            () = interrupt.as_mut() => {
                stop(ctx, arm, server, grace).await?;
                break SliceEnd::Interrupted;
            }
        };
        ctx.writer.append(&SoakJournalLine::Ready {
            arm: arm.name.clone(),
            unix_ms: unix_ms(),
            ready: ready.is_ok(),
            after_s: ready
                .as_ref()
                .map_or(ctx.config.ready_timeout_s, |(_, s)| *s),
            error: ready.as_ref().err().cloned(),
            model: ready.as_ref().ok().map(|(model, _)| model.clone()),
        })?;
        let model = match ready {
            Ok((model, _)) => model,
            Err(error) => {
                stop(ctx, arm, server, grace).await?;
                break SliceEnd::GaveUp(format!("{}: {error}", arm.name));
            }
        };
        let budget = Duration::from_secs_f64((state.planned_s - state.slice_loaded_s).max(0.0));
        let segment =
            match run_segment(ctx, arm, &model, budget, server.as_ref(), *state, interrupt).await {
                Ok(segment) => segment,
                Err(error) => {
                    // Stopped the way the user asked (`--stop`), not only by the drop guard.
                    stop(ctx, arm, server, grace).await?;
                    return Err(error);
                }
            };
        state.slice_loaded_s += segment.loaded_s;
        state.arm_loaded_s += segment.loaded_s;
        state.arm_finished += segment.finished;
        match segment.end {
            SegmentEnd::Elapsed => {
                stop(ctx, arm, server, grace).await?;
                break SliceEnd::Held;
            }
            SegmentEnd::Interrupted => {
                stop(ctx, arm, server, grace).await?;
                break SliceEnd::Interrupted;
            }
            SegmentEnd::Death(record) => {
                state.deaths += 1;
                ctx.observer.note(&format!(
                    "{}: death {} after {} of load ({}); {} in flight, {} tokens deep at most",
                    arm.name,
                    record.number,
                    clock(record.since_ready_s),
                    record.how.short(),
                    record.in_flight.len(),
                    record.in_flight.iter().map(|r| r.tokens).max().unwrap_or(0)
                ));
                // On disk before anything else happens to the server.
                ctx.writer.append(&SoakJournalLine::Death(record))?;
                ctx.writer.sync()?;
                stop(ctx, arm, server, grace).await?;
                if state.planned_s - state.slice_loaded_s < 0.5 {
                    break SliceEnd::Held;
                }
                reason = "relaunch";
            }
        }
    };
    ctx.writer.append(&SoakJournalLine::SliceEnd {
        arm: arm.name.clone(),
        round: state.round,
        loaded_s: state.slice_loaded_s,
        reason: match &end {
            SliceEnd::Held => "duration".to_owned(),
            SliceEnd::Interrupted => "interrupted".to_owned(),
            SliceEnd::GaveUp(reason) => reason.clone(),
        },
    })?;
    ctx.writer.sync()?;
    Ok(end)
}

/// Journals a slice's start and says so.
fn start_slice(ctx: &Context<'_>, arm: &SoakArm, state: &ArmState) -> Result<(), LifecycleError> {
    ctx.writer.append(&SoakJournalLine::SliceStart {
        arm: arm.name.clone(),
        round: state.round,
        unix_ms: unix_ms(),
        planned_s: state.planned_s,
    })?;
    ctx.observer.note(&format!(
        "{}: round {}, {} of load at {} in flight",
        arm.name,
        state.round + 1,
        clock(state.planned_s),
        arm.concurrency
    ));
    Ok(())
}

/// Launches the arm's server (after checking that nothing answers on its port) and journals
/// the launch.
fn launch_server(
    ctx: &Context<'_>,
    arm: &SoakArm,
    command: &str,
    launches: &mut usize,
    reason: &str,
) -> Result<LaunchedServer, LifecycleError> {
    check_port_free(&ctx.config.base_url)?;
    *launches += 1;
    let log = log_path(ctx, arm, *launches);
    let server = LaunchedServer::launch(command, &log)?;
    ctx.writer.append(&SoakJournalLine::Launched {
        arm: arm.name.clone(),
        unix_ms: unix_ms(),
        pgid: server.pgid(),
        log: log.display().to_string(),
        reason: reason.to_owned(),
    })?;
    ctx.observer.note(&format!(
        "{}: launched ({reason}), log {}",
        arm.name,
        log.display()
    ));
    Ok(server)
}

/// Stops a launched server and journals how.
async fn stop(
    ctx: &Context<'_>,
    arm: &SoakArm,
    server: Option<LaunchedServer>,
    grace: Duration,
) -> Result<(), LifecycleError> {
    if let Some(server) = server {
        let report = server.stop(ctx.config.stop.as_deref(), grace).await;
        ctx.writer.append(&SoakJournalLine::Stopped {
            arm: arm.name.clone(),
            stop: report,
        })?;
    }
    Ok(())
}

/// Waits until the server answers a one-token request (the model from `--model` or the first
/// listed); the model and the seconds it took, or why it gave up.
/// A probe the server refuses (a key, a model) is a usage error: waiting will not mend it.
async fn wait_ready(
    ctx: &Context<'_>,
    server: Option<&LaunchedServer>,
) -> Result<Result<(String, f64), String>, LifecycleError> {
    let started = Instant::now();
    let limit = Duration::from_secs_f64(ctx.config.ready_timeout_s);
    let mut last = "nothing answered".to_owned();
    loop {
        if let Some((status, _)) = server.and_then(LaunchedServer::exit) {
            return Ok(Err(format!(
                "the server exited ({status}) before it answered; see {}",
                server
                    .map(|s| s.log().display().to_string())
                    .unwrap_or_default()
            )));
        }
        if started.elapsed() > limit {
            return Ok(Err(format!(
                "no answer within --ready-timeout {} s (last: {last})",
                ctx.config.ready_timeout_s
            )));
        }
        match ctx.probe_client.models().await {
            Ok(models) => {
                let found = match &ctx.config.model {
                    Some(wanted) => models.iter().find(|m| &m.id == wanted),
                    None => models.first(),
                };
                match found {
                    Some(model) => {
                        let outcome = crate::probe::probe(
                            &ctx.load_client,
                            &model.id,
                            "Say OK.",
                            &ctx.config.extra_body,
                            Duration::from_secs(60),
                        )
                        .await;
                        if outcome.is_ok() {
                            return Ok(Ok((model.id.clone(), started.elapsed().as_secs_f64())));
                        }
                        if let crate::probe::ProbeOutcome::Http { status } = outcome
                            && crate::probe::is_configuration_status(status)
                        {
                            return Err(vernier_run::RunError::invalid(
                                crate::probe::configuration_flag(status),
                                format!(
                                    "the server answered the soak's first request {status}: {}",
                                    crate::probe::configuration_hint(status)
                                ),
                            )
                            .into());
                        }
                        last = outcome.short();
                    }
                    None => {
                        last = format!(
                            "/v1/models does not list {}",
                            ctx.config.model.as_deref().unwrap_or("any model")
                        );
                    }
                }
            }
            Err(error) => last = vernier_cli::one_line(&error),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
