//! Trace replay: every record of a trace sent at its recorded offset (divided by the time
//! scale) with a synthesised prompt of its recorded length, so shared prefix blocks are shared
//! text; each request's lateness against its schedule, the cache's hits where the trace's
//! block hashes repeat, and goodput against a target.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vernier_journal::JournalWriter;
use vernier_openai::{ChatMessage, ChatRequest, Client};
use vernier_run::Interrupt;

use super::config::ReplayConfig;
use super::exchange::{Unanswered, Wire};
use super::journal::{AgentLine, Job, ReplayRecord, TurnStatus};
use super::replay_report::{ReplayRunFile, markdown, replay_run_file};
use super::run::count;
use crate::context::RunContext;
use crate::corpus::NonceSource;
use crate::environment::Environment;
use crate::error::SweepError;
use crate::observer::SweepObserver;
use crate::trace::{
    Synthesis, Trace, TraceFormat, TraceRecord, bundled_trace, parse_trace, read_trace, synthesize,
};

/// The pause between the end of set-up and the first record's instant.
const LEAD: Duration = Duration::from_millis(300);

/// Where a replay's journal comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ReplayStart {
    /// A new replay of `config` into `out`.
    New {
        /// The configuration.
        config: Box<ReplayConfig>,
        /// The output folder.
        out: PathBuf,
    },
    /// Continue the replay recorded in this journal.
    Resume {
        /// The journal.
        journal: PathBuf,
        /// What was typed beside `--resume` (a measurement setting that differs from the
        /// journal's is refused by name).
        typed: vernier_run::TypedBeside<ReplayConfig>,
    },
}

/// What a replay produced.
#[derive(Debug)]
#[non_exhaustive]
pub struct ReplayOutcome {
    /// The run file.
    pub run: ReplayRunFile,
    /// `replay.json`.
    pub run_file: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// The journal.
    pub journal: PathBuf,
    /// Whether it was interrupted.
    pub interrupted: bool,
}

/// The trace a configuration names: `bundled:NAME` or a file.
pub fn load_trace(config: &ReplayConfig) -> Result<Trace, SweepError> {
    let format = if config.format.is_empty() {
        None
    } else {
        Some(
            config
                .format
                .parse::<TraceFormat>()
                .map_err(|error| SweepError::invalid("--format", error.to_string()))?,
        )
    };
    let mut trace = if let Some(name) = config.trace.strip_prefix("bundled:") {
        let (text, bundled_format) = bundled_trace(name).ok_or_else(|| {
            SweepError::invalid(
                "--trace",
                format!("no bundled trace {name:?}: give bundled:mini-mooncake, bundled:mini-azure or a file"),
            )
        })?;
        parse_trace(text, Some(format.unwrap_or(bundled_format)), &config.trace)
    } else {
        read_trace(Path::new(&config.trace), format)
    }
    .map_err(|error| SweepError::invalid("--trace", vernier_cli::cause_chain(&error)))?;
    if config.limit > 0 {
        trace.records.truncate(config.limit);
    }
    // A year of replay at most: a longer span is a wrong unit or time scale.
    let span_ms = trace
        .records
        .iter()
        .map(|r| r.offset_ms)
        .fold(0.0, f64::max)
        / config.time_scale;
    if !(span_ms.is_finite() && span_ms <= 365.0 * 86_400_000.0) {
        return Err(SweepError::invalid(
            "--time-scale",
            format!(
                "the trace would take {:.0} days to replay at --time-scale {}: check the trace's offsets (milliseconds) or raise the time scale",
                span_ms / 86_400_000.0,
                config.time_scale
            ),
        ));
    }
    Ok(trace)
}

/// The records (by index) that do not fit the server's context, prompt and reply together:
/// refused before any request, naming the first and the fix, unless `skip` (then they are
/// journaled as `too_long` without being sent). Without a stated context nothing is left out.
fn over_context(
    trace: &Trace,
    limit: Option<vernier_openai::ContextLimit>,
    skip: bool,
) -> Result<HashSet<usize>, SweepError> {
    let Some(limit) = limit else {
        return Ok(HashSet::new());
    };
    let needs = |record: &TraceRecord| {
        u64::from(record.input_tokens) + u64::from(record.output_tokens.max(1))
    };
    let over: HashSet<usize> = trace
        .records
        .iter()
        .enumerate()
        .filter(|(_, record)| needs(record) > limit.tokens)
        .map(|(index, _)| index)
        .collect();
    if over.is_empty() || skip {
        return Ok(over);
    }
    let first = over.iter().min().copied().unwrap_or(0);
    let record = &trace.records[first];
    Err(SweepError::invalid(
        "--trace",
        format!(
            "{} of {} records do not fit the server's context of {} tokens ({}); the first, record {}, asks for {} prompt and {} reply tokens. Replay on a server with a longer context, cut the trace, or pass --skip-over-context to journal them as too long without sending them",
            over.len(),
            trace.records.len(),
            limit.tokens,
            limit.source,
            first + 1,
            record.input_tokens,
            record.output_tokens
        ),
    ))
}

/// Tokens of `record` a perfect cache would hold, given the hash ids sent before it.
fn ideal_of(record: &TraceRecord, seen: &HashSet<u64>, block_tokens: u32) -> u64 {
    let shared = record
        .hash_ids
        .iter()
        .take_while(|id| seen.contains(id))
        .count() as u64;
    (shared * u64::from(block_tokens)).min(u64::from(record.input_tokens))
}

/// Words per server token, from two synthesised prompts of 32 and 512 trace tokens.
async fn calibrate(wire: &Wire, model: &str, nonce: &str) -> Result<f64, SweepError> {
    let synthesis = Synthesis {
        run_nonce: format!("{nonce}probe"),
        words_per_token: 1.0,
    };
    let mut counts = Vec::new();
    for (index, tokens) in [(0usize, 32u32), (1, 512)] {
        let record = TraceRecord {
            offset_ms: 0.0,
            session: None,
            input_tokens: tokens,
            output_tokens: 1,
            hash_ids: Vec::new(),
        };
        let prompt = synthesize(&record, index, 512, &synthesis);
        counts.push(count(wire, model, vec![ChatMessage::user(prompt)], &[]).await?);
    }
    let per_word = counts[1].saturating_sub(counts[0]) as f64 / 480.0;
    Ok(if per_word > 0.05 { 1.0 / per_word } else { 1.0 })
}

/// The nonce and words per token: from the journal's start line, or (a new replay)
/// calibrated now and written as the start line.
async fn first_line(
    opened: &super::run::Opened,
    wire: &Wire,
    writer: &JournalWriter,
    config: &ReplayConfig,
    environment: Environment,
    context: &RunContext,
) -> Result<(String, f64), SweepError> {
    if let Some(AgentLine::Start(start)) = opened.lines.first() {
        let words_per_token = match &start.job {
            Job::Replay {
                words_per_token, ..
            } => *words_per_token,
            Job::Agent { .. } => 1.0,
        };
        return Ok((start.nonce.clone(), words_per_token));
    }
    let nonce = NonceSource::new().next();
    let words_per_token = calibrate(wire, &config.model, &nonce).await?;
    let job = Job::Replay {
        config: Box::new(config.clone()),
        words_per_token,
    };
    super::run::write_start(writer, job, &nonce, environment, context)?;
    Ok((nonce, words_per_token))
}

/// What a replay needs once its folder is open: its trace (read now when resumed), the records
/// over the server's context, the server read and checked, the wire and the journal's writer,
/// and its first line (nonce and words per token).
async fn started(
    read: Option<Trace>,
    client: Client,
    config: &mut ReplayConfig,
    (opened, resumed): (&super::run::Opened, bool),
    context: &RunContext,
    observer: &dyn SweepObserver,
) -> Result<Started, SweepError> {
    let trace = match read {
        Some(trace) => trace,
        None => load_trace(config)?,
    };
    let idle_timeout = config.idle_timeout();
    let (connected, wire, writer) = super::run::begin(
        client,
        (
            &mut config.model,
            config.capture,
            &config.extra_body,
            idle_timeout,
        ),
        (opened, resumed),
        context,
        observer,
    )
    .await?;
    let over = over_context(&trace, connected.context_limit, config.skip_over_context)?;
    if resumed {
        observer.note(
            "resumed: the records left are sent on a schedule anchored anew at the first of them",
        );
    }
    observer.status("sizing synthesised text in the server's tokens");
    let first = first_line(
        opened,
        &wire,
        &writer,
        config,
        connected.environment.clone(),
        context,
    )
    .await?;
    Ok((trace, over, connected, wire, writer, first))
}

/// What [`started`] gives.
type Started = (
    Trace,
    HashSet<usize>,
    super::run::Connected,
    Wire,
    JournalWriter,
    (String, f64),
);

/// Replays a trace (or continues a replay) and writes its run file and report.
pub async fn run_replay(
    client: Client,
    start: ReplayStart,
    context: RunContext,
    observer: Arc<dyn SweepObserver>,
    interrupt: Option<Interrupt>,
) -> Result<ReplayOutcome, SweepError> {
    // A new replay reads its trace before its folder is made, so a wrong path or format
    // leaves nothing behind; a resumed one reads the trace its journal names.
    let (start, read) = match start {
        ReplayStart::New { config, out } => {
            config
                .check()
                .map_err(|detail| SweepError::invalid("sweep replay", detail))?;
            let trace = load_trace(&config)?;
            (Ok((*config, out)), Some(trace))
        }
        ReplayStart::Resume { journal, typed } => (Err((journal, typed)), None),
    };
    let (opened, mut config, resumed) = super::run::open_job(
        start,
        // A new replay's configuration was checked above, before its trace was read.
        |_| Ok(()),
        "sweep replay",
        |job| match job {
            Job::Replay { config, .. } => Some((**config).clone()),
            Job::Agent { .. } => None,
        },
    )?;
    let started = started(
        read,
        client,
        &mut config,
        (&opened, resumed),
        &context,
        observer.as_ref(),
    )
    .await;
    let (trace, over, connected, wire, writer, (nonce, words_per_token)) = match started {
        Ok(started) => started,
        Err(error) => {
            if !resumed {
                opened.abandon();
            }
            return Err(error);
        }
    };
    let done = records_done(
        &opened.lines,
        &over,
        (&trace, connected.context_limit),
        &writer,
    )?;
    observer.planned(trace.records.len() as u64, done.len() as u64);
    let synthesis = Synthesis {
        run_nonce: nonce,
        words_per_token,
    };
    let n_records = trace.records.len();
    let shared = Arc::new(Shared {
        wire,
        journal: writer,
        observer: Arc::clone(&observer),
        config,
        stop: tokio::sync::watch::channel(false).0,
        stopped_by: std::sync::Mutex::new(None),
    });
    let interrupted = send_all(Arc::clone(&shared), trace, synthesis, done, interrupt).await?;
    let stopped_by = shared
        .stopped_by
        .lock()
        .map_or(None, |mut reason| reason.take());
    let lines = super::run::end_run(
        &shared.wire.client,
        &connected.fingerprint,
        (&shared.journal, &opened.journal),
        (interrupted, stopped_by.is_some()),
        observer.as_ref(),
    )
    .await?;
    let run = replay_run_file(&lines, n_records, interrupted || stopped_by.is_some())?;
    let (run_file, markdown_path) = crate::report::write_json(opened.out.join("replay.json"), &run)
        .and_then(|run_file| {
            crate::report::write(opened.out.join("report.md"), &markdown(&run))
                .map(|markdown| (run_file, markdown))
        })
        .inspect_err(|error| {
            super::run::reports_failed(error, &opened.journal, &context, observer.as_ref());
        })?;
    if let Some(detail) = stopped_by {
        return Err(super::run::server_stopped(
            detail,
            &opened.journal,
            &context,
        ));
    }
    Ok(ReplayOutcome {
        run,
        run_file,
        markdown: markdown_path,
        journal: opened.journal,
        interrupted,
    })
}

struct Shared {
    wire: Wire,
    journal: JournalWriter,
    observer: Arc<dyn SweepObserver>,
    config: ReplayConfig,
    /// Set by a refusal no retry fixes: nothing more is sent.
    stop: tokio::sync::watch::Sender<bool>,
    /// Why the server counts as stopped (a request failed every try and the server no longer
    /// lists its models): the replay ends with the resume command.
    stopped_by: std::sync::Mutex<Option<String>>,
}

/// The records done: each by its last line, one the server failed (infra) sent again; the
/// records over the server's context journaled now as not sent (once) and counted done.
fn records_done(
    lines: &[AgentLine],
    over: &HashSet<usize>,
    (trace, limit): (&Trace, Option<vernier_openai::ContextLimit>),
    writer: &JournalWriter,
) -> Result<HashSet<usize>, SweepError> {
    let mut last: std::collections::HashMap<usize, TurnStatus> = std::collections::HashMap::new();
    for line in lines {
        if let AgentLine::Replayed(record) = line {
            last.insert(record.index, record.status);
        }
    }
    let mut done: HashSet<usize> = last
        .iter()
        .filter(|(_, status)| **status != TurnStatus::Infra)
        .map(|(index, _)| *index)
        .collect();
    for &index in over {
        if done.insert(index) {
            writer.append(&AgentLine::Replayed(Box::new(not_sent(
                index,
                &trace.records[index],
                limit,
            ))))?;
        }
    }
    writer.sync()?;
    Ok(done)
}

/// A record the server's context cannot hold, journaled without being sent.
fn not_sent(
    index: usize,
    record: &TraceRecord,
    limit: Option<vernier_openai::ContextLimit>,
) -> ReplayRecord {
    let context = limit.map_or_else(String::new, |limit| {
        format!(", over the server's context of {} tokens", limit.tokens)
    });
    ReplayRecord {
        index,
        session: record.session.clone(),
        scheduled_ms: 0.0,
        late_ms: None,
        trace_input_tokens: record.input_tokens,
        trace_output_tokens: record.output_tokens,
        ideal_cached_tokens: 0,
        status: TurnStatus::TooLong,
        error: Some(format!(
            "not sent: {} prompt and {} reply tokens{context} (--skip-over-context)",
            record.input_tokens, record.output_tokens
        )),
        tries: 0,
        prompt_tokens: None,
        cached_tokens: None,
        cached_source: super::exchange::CachedSource::None,
        completion_tokens: None,
        ttft_ms: None,
        decode_tokens_per_s: None,
        itl_median_ms: None,
        sent_unix_ns: None,
        capture: None,
    }
}

/// One record ready to go, built ahead of its instant (a bounded window of them), so sending
/// costs nothing but the send and a long trace is never held in memory whole.
struct Ready {
    index: usize,
    due: Duration,
    request: ChatRequest,
    record: TraceRecord,
    ideal: u64,
}

/// Records built ahead of their instants.
const WINDOW: usize = 256;

/// Builds the records left, in order, into `ready` (on a thread of its own): each one's
/// perfect-cache share from the hash ids sent before it, its prompt and its request.
fn prepare(
    config: &ReplayConfig,
    trace: &Trace,
    synthesis: &Synthesis,
    done: &HashSet<usize>,
    ready: &tokio::sync::mpsc::Sender<Ready>,
) {
    let mut seen: HashSet<u64> = HashSet::new();
    let first_left = trace
        .records
        .iter()
        .enumerate()
        .find(|(index, _)| !done.contains(index))
        .map_or(0.0, |(_, record)| record.offset_ms);
    for (index, record) in trace.records.iter().enumerate() {
        let ideal = ideal_of(record, &seen, trace.block_tokens);
        seen.extend(record.hash_ids.iter().copied());
        if done.contains(&index) {
            continue;
        }
        let prompt = synthesize(record, index, trace.block_tokens, synthesis);
        let mut request = ChatRequest::new(config.model.clone(), vec![ChatMessage::user(prompt)]);
        request.max_tokens = Some(u64::from(record.output_tokens.max(1)));
        request.temperature = Some(0.0);
        request.stream = Some(true);
        if config.force_length {
            request.extra.insert("ignore_eos".to_owned(), true.into());
            request
                .extra
                .insert("min_tokens".to_owned(), record.output_tokens.max(1).into());
        }
        let offset_ms = (record.offset_ms - first_left).max(0.0) / config.time_scale;
        let item = Ready {
            index,
            due: Duration::try_from_secs_f64(offset_ms / 1000.0).unwrap_or(Duration::ZERO),
            request,
            record: record.clone(),
            ideal,
        };
        if ready.blocking_send(item).is_err() {
            // The replay stopped: nothing more is wanted.
            return;
        }
    }
}

/// Sends every record at its instant; returns whether the replay was interrupted.
async fn send_all(
    shared: Arc<Shared>,
    trace: Trace,
    synthesis: Synthesis,
    done: HashSet<usize>,
    interrupt: Option<Interrupt>,
) -> Result<bool, SweepError> {
    let (ready_tx, mut ready) = tokio::sync::mpsc::channel(WINDOW);
    let config = shared.config.clone();
    let producer = tokio::task::spawn_blocking(move || {
        prepare(&config, &trace, &synthesis, &done, &ready_tx);
    });
    // The window fills before the clock starts, so the first records are ready when due.
    while ready.len() < WINDOW && !producer.is_finished() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let origin = Instant::now() + LEAD;
    let mut interrupt = interrupt.unwrap_or_else(vernier_run::never);
    let mut stop = shared.stop.subscribe();
    let mut set = tokio::task::JoinSet::new();
    let mut interrupted = false;
    while let Some(item) = ready.recv().await {
        let at = origin.checked_add(item.due).unwrap_or(origin);
        tokio::select! {
            () = tokio::time::sleep_until(at.into()) => {}
            () = &mut interrupt => { interrupted = true; break; }
            _ = stop.wait_for(|stopped| *stopped) => break,
        }
        let shared = Arc::clone(&shared);
        let scheduled_unix_ns = shared.wire.clock.unix_ns(at);
        set.spawn(async move { send_one(&shared, item, scheduled_unix_ns).await });
    }
    drop(ready);
    let _ = producer.await;
    let mut first_error = None;
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                first_error.get_or_insert(error);
            }
            Err(panic) => {
                first_error.get_or_insert(SweepError::invalid(
                    "sweep replay",
                    format!("a request task failed: {panic}"),
                ));
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(interrupted),
    }
}

async fn send_one(shared: &Shared, item: Ready, scheduled_unix_ns: u64) -> Result<(), SweepError> {
    let name = format!("record-{}", item.index);
    let sent = shared.wire.send(&item.request, &name).await;
    let late = |at_unix_ns: u64| Some((at_unix_ns as f64 - scheduled_unix_ns as f64) / 1e6);
    let base = ReplayRecord {
        index: item.index,
        session: item.record.session.clone(),
        scheduled_ms: item.due.as_secs_f64() * 1000.0,
        late_ms: None,
        trace_input_tokens: item.record.input_tokens,
        trace_output_tokens: item.record.output_tokens,
        ideal_cached_tokens: item.ideal,
        status: TurnStatus::Infra,
        error: None,
        tries: 1,
        prompt_tokens: None,
        cached_tokens: None,
        cached_source: super::exchange::CachedSource::None,
        completion_tokens: None,
        ttft_ms: None,
        decode_tokens_per_s: None,
        itl_median_ms: None,
        sent_unix_ns: None,
        capture: None,
    };
    let record = match sent {
        Ok(exchange) => {
            let m = &exchange.measurement;
            ReplayRecord {
                // Against the first try: a retry's wait is the server's doing, not lateness.
                late_ms: late(exchange.first_try_unix_ns),
                status: TurnStatus::Ok,
                tries: exchange.tries,
                prompt_tokens: m.prompt_tokens,
                cached_tokens: exchange.cached_tokens,
                cached_source: exchange.cached_source,
                completion_tokens: Some(m.completion_tokens),
                ttft_ms: m.ttft_ms,
                decode_tokens_per_s: m.decode_tokens_per_s,
                itl_median_ms: m.inter_token_latency_ms.map(|l| l.median_ms),
                sent_unix_ns: Some(exchange.sent_unix_ns),
                capture: exchange.capture.clone(),
                ..base
            }
        }
        Err(Unanswered::Fatal(message)) => {
            shared.stop.send_replace(true);
            return Err(SweepError::ServerRejected { detail: message });
        }
        Err(Unanswered::Infra(message, tries, began)) => {
            if !shared.wire.alive().await {
                // The server stopped: nothing more is sent, and the replay ends with the
                // command that continues it (this record is sent again then).
                if let Ok(mut reason) = shared.stopped_by.lock() {
                    reason.get_or_insert_with(|| {
                        format!(
                            "record {} got no answer and the server no longer answers: {message}",
                            item.index
                        )
                    });
                }
                shared.stop.send_replace(true);
            }
            ReplayRecord {
                late_ms: late(began),
                error: Some(message),
                tries,
                ..base
            }
        }
        Err(Unanswered::TooLong(message)) => ReplayRecord {
            status: TurnStatus::TooLong,
            error: Some(message),
            ..base
        },
    };
    shared
        .journal
        .append(&AgentLine::Replayed(Box::new(record)))?;
    shared.journal.sync()?;
    shared.observer.request_measured();
    Ok(())
}
