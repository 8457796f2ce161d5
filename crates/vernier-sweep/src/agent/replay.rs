//! Trace replay: every record of a trace sent at its recorded offset (divided by the time
//! scale) with a synthesised prompt of its recorded length, so shared prefix blocks are shared
//! text; each request's lateness against its schedule, the cache's hits where the trace's
//! block hashes repeat, and goodput against a target.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use vernier_journal::JournalWriter;
use vernier_openai::{ChatMessage, ChatRequest, Client};
use vernier_run::{Interrupt, Reason, Verdict, VerdictLevel};

use super::config::ReplayConfig;
use super::exchange::{Unanswered, Wire};
use super::journal::{self, AgentLine, Job, ReplayRecord, TurnStatus};
use super::run::count;
use super::summary::{Goodput, Spread, goodput_of};
use crate::context::RunContext;
use crate::corpus::NonceSource;
use crate::environment::Environment;
use crate::error::SweepError;
use crate::observer::SweepObserver;
use crate::trace::{
    Synthesis, Trace, TraceFormat, TraceRecord, bundled_trace, parse_trace, read_trace, synthesize,
};

/// Lateness p99 above which a replay is `questionable`: the client, not the trace, set when
/// requests went out.
pub const LATE_P99_MS: f64 = 5.0;
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
    },
}

/// A replay's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReplayRunFile {
    /// `replay`.
    pub kind: String,
    /// How far the figures can be trusted.
    pub verdict: Verdict,
    /// The configuration.
    pub config: ReplayConfig,
    /// Words of synthesised text per server token.
    pub words_per_token: f64,
    /// The server, model and machine.
    pub environment: Environment,
    /// When it began, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// Records in the trace (after `--limit`).
    pub records: usize,
    /// Records answered within budget, cut off, failed, too long.
    pub ok: usize,
    /// Cut off by the token budget.
    pub cut_off: usize,
    /// Failed at the server.
    pub infra: usize,
    /// Too long for the server.
    pub too_long: usize,
    /// Each request's send against its schedule, ms.
    pub late_ms: Option<Spread>,
    /// TTFT, ms.
    pub ttft_ms: Option<Spread>,
    /// Decode rate, tokens per second.
    pub decode_tokens_per_s: Option<Spread>,
    /// Records whose hash ids repeat an earlier record's (a perfect cache would hit).
    pub repeat_records: usize,
    /// Of those, records the server reported a hit for.
    pub repeat_hits: usize,
    /// Cached tokens reported / tokens a perfect cache would hold.
    pub hit_ratio: Option<f64>,
    /// Per trace session: its records, and its cached / ideal ratio.
    pub sessions: Vec<(String, usize, Option<f64>)>,
    /// Against the target.
    pub goodput: Option<Goodput>,
    /// Whether the replay was interrupted.
    pub interrupted: bool,
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
    .map_err(|error| SweepError::invalid("--trace", error.to_string()))?;
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
        ReplayStart::Resume { journal } => (Err(journal), None),
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
    let trace = match read {
        Some(trace) => trace,
        None => load_trace(&config)?,
    };
    let (connected, wire, writer) = super::run::begin(
        client,
        (&mut config.model, config.capture, &config.extra_body),
        (&opened, resumed),
        &context,
        observer.as_ref(),
    )
    .await?;
    if resumed {
        observer.note(
            "resumed: the records left are sent on a schedule anchored anew at the first of them",
        );
    }
    observer.status("sizing synthesised text in the server's tokens");
    let (nonce, words_per_token) = first_line(
        &opened,
        &wire,
        &writer,
        &config,
        connected.environment,
        &context,
    )
    .await?;
    let done: HashSet<usize> = opened
        .lines
        .iter()
        .filter_map(|line| match line {
            AgentLine::Replayed(record) => Some(record.index),
            _ => None,
        })
        .collect();
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
    });
    let interrupted = send_all(Arc::clone(&shared), trace, synthesis, done, interrupt).await?;
    let lines = super::run::end_run(
        &shared.wire.client,
        &connected.fingerprint,
        (&shared.journal, &opened.journal),
        interrupted,
        observer.as_ref(),
    )
    .await?;
    let run = replay_run_file(&lines, n_records, interrupted)?;
    let run_file = crate::report::write_json(opened.out.join("replay.json"), &run)?;
    let markdown_path = crate::report::write(opened.out.join("report.md"), &markdown(&run))?;
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
        Err(Unanswered::Infra(message, tries, began)) => ReplayRecord {
            late_ms: late(began),
            error: Some(message),
            tries,
            ..base
        },
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

/// The replay's figures from its journal.
pub(crate) fn replay_run_file(
    lines: &[AgentLine],
    n_records: usize,
    interrupted: bool,
) -> Result<ReplayRunFile, SweepError> {
    let Some(AgentLine::Start(start)) = lines.first() else {
        return Err(SweepError::invalid("the journal", "it has no start line"));
    };
    let Job::Replay {
        config,
        words_per_token,
    } = &start.job
    else {
        return Err(SweepError::invalid(
            "the journal",
            "it is an agent run's, not a replay's",
        ));
    };
    let records: Vec<&ReplayRecord> = lines
        .iter()
        .filter_map(|line| match line {
            AgentLine::Replayed(record) => Some(&**record),
            _ => None,
        })
        .collect();
    let answered: Vec<&ReplayRecord> = records
        .iter()
        .copied()
        .filter(|r| r.status.answered())
        .collect();
    let count = |status: TurnStatus| records.iter().filter(|r| r.status == status).count();
    let reported: Vec<&ReplayRecord> = answered
        .iter()
        .copied()
        .filter(|r| r.cached_tokens.is_some())
        .collect();
    let cached: u64 = reported.iter().filter_map(|r| r.cached_tokens).sum();
    let ideal: u64 = reported.iter().map(|r| r.ideal_cached_tokens).sum();
    let sessions = per_session(&records, &reported);
    let late_ms = Spread::of(answered.iter().filter_map(|r| r.late_ms));
    let infra = count(TurnStatus::Infra);
    let (_, server_changes) = journal::end_of(lines);
    let mut verdict = replay_verdict(
        late_ms,
        (infra, records.len(), n_records),
        !answered.is_empty() && reported.is_empty(),
        interrupted,
    );
    if !server_changes.is_empty() {
        let mut reasons = verdict.reasons.clone();
        reasons.push(Reason::new(
            "server_changed",
            VerdictLevel::Invalid,
            format!(
                "the server changed during the replay: {}",
                server_changes.join("; ")
            ),
        ));
        verdict = Verdict::from_reasons(reasons);
    }
    Ok(ReplayRunFile {
        kind: "replay".to_owned(),
        verdict,
        config: (**config).clone(),
        words_per_token: *words_per_token,
        environment: (*start.environment).clone(),
        started_unix_ms: start.started_unix_ms,
        records: n_records,
        ok: count(TurnStatus::Ok),
        cut_off: count(TurnStatus::CutOff),
        infra,
        too_long: count(TurnStatus::TooLong),
        late_ms,
        ttft_ms: Spread::of(answered.iter().filter_map(|r| r.ttft_ms)),
        decode_tokens_per_s: Spread::of(answered.iter().filter_map(|r| r.decode_tokens_per_s)),
        repeat_records: answered
            .iter()
            .filter(|r| r.ideal_cached_tokens > 0)
            .count(),
        repeat_hits: answered
            .iter()
            .filter(|r| r.ideal_cached_tokens > 0 && r.cached_tokens.unwrap_or(0) > 0)
            .count(),
        hit_ratio: (ideal > 0).then(|| cached as f64 / ideal as f64),
        sessions,
        goodput: config.target.as_ref().map(|target| {
            goodput_of(
                records.iter().map(|r| {
                    (
                        r.status.answered(),
                        r.ttft_ms,
                        r.decode_tokens_per_s,
                        r.itl_median_ms,
                    )
                }),
                target,
                n_records,
            )
        }),
        interrupted,
    })
}

/// Per trace session: its records, and its cached / ideal ratio over the records that
/// reported a count.
fn per_session(
    records: &[&ReplayRecord],
    reported: &[&ReplayRecord],
) -> Vec<(String, usize, Option<f64>)> {
    let mut names: Vec<String> = records.iter().filter_map(|r| r.session.clone()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let mine: Vec<&ReplayRecord> = reported
                .iter()
                .copied()
                .filter(|r| r.session.as_deref() == Some(name.as_str()))
                .collect();
            let ideal: u64 = mine.iter().map(|r| r.ideal_cached_tokens).sum();
            let cached: u64 = mine.iter().filter_map(|r| r.cached_tokens).sum();
            let n = records
                .iter()
                .filter(|r| r.session.as_deref() == Some(name.as_str()))
                .count();
            (name, n, (ideal > 0).then(|| cached as f64 / ideal as f64))
        })
        .collect()
}

/// The replay's verdict: late sends, failures, no cache count, records not sent.
fn replay_verdict(
    late_ms: Option<Spread>,
    (infra, sent, n_records): (usize, usize, usize),
    no_cache_count: bool,
    interrupted: bool,
) -> Verdict {
    let mut reasons = Vec::new();
    if let Some(late) = late_ms
        && late.p99 > LATE_P99_MS
    {
        reasons.push(Reason::new(
            "late_sends",
            VerdictLevel::Questionable,
            format!(
                "requests went out late against the trace's schedule: p99 {:.1} ms (above {LATE_P99_MS} ms)",
                late.p99
            ),
        ));
    }
    if infra > 0 {
        let level = if infra as f64 / sent.max(1) as f64 > vernier_run::INFRA_INVALID_SHARE {
            VerdictLevel::Invalid
        } else {
            VerdictLevel::Questionable
        };
        reasons.push(Reason::new(
            "infra",
            level,
            format!("{infra} of {sent} requests failed at the server after every try"),
        ));
    }
    if no_cache_count {
        reasons.push(Reason::new(
            "no_cache_count",
            VerdictLevel::Questionable,
            "the server reported no cached tokens: the hit ratio is unknown",
        ));
    }
    if interrupted || sent < n_records {
        reasons.push(Reason::new(
            "interrupted",
            VerdictLevel::Questionable,
            format!("{sent} of {n_records} records were sent"),
        ));
    }
    Verdict::from_reasons(reasons)
}

fn markdown(run: &ReplayRunFile) -> String {
    use std::fmt::Write as _;
    let mut md = String::new();
    let env = &run.environment;
    let _ = writeln!(
        md,
        "# Trace replay: {} on {}, {}\n",
        env.model.id,
        if env.server.simulator {
            "the bundled simulator (simulated figures)".to_owned()
        } else {
            env.server.kind.clone()
        },
        vernier_run::utc_minute(run.started_unix_ms)
    );
    let _ = writeln!(md, "**{}**\n", run.verdict.line());
    let _ = writeln!(
        md,
        "Trace `{}` ({} records), sent {}× faster than recorded; prompts synthesised at the recorded lengths ({:.3} words per server token), \
         shared prefix blocks as shared text; output lengths {}.\n",
        run.config.trace,
        run.records,
        run.config.time_scale,
        run.words_per_token,
        if run.config.force_length {
            "forced where the server allows"
        } else {
            "as budgets"
        }
    );
    let spread = |s: Option<Spread>, d: usize| {
        s.map_or_else(
            || "—".to_owned(),
            |s| {
                format!(
                    "{} (p99 {}, max {})",
                    crate::report::text::number(Some(s.median), d),
                    crate::report::text::number(Some(s.p99), d),
                    crate::report::text::number(Some(s.max), d)
                )
            },
        )
    };
    let _ = writeln!(md, "| figure | median (p99, max) |\n|---|---|");
    let _ = writeln!(
        md,
        "| lateness against the schedule, ms | {} |",
        spread(run.late_ms, 2)
    );
    let _ = writeln!(md, "| TTFT, ms | {} |", spread(run.ttft_ms, 1));
    let _ = writeln!(
        md,
        "| decode, tok/s | {} |",
        spread(run.decode_tokens_per_s, 1)
    );
    let _ = writeln!(
        md,
        "\n{} ok, {} cut off, {} failed, {} too long. {} records repeat an earlier record's prefix blocks; the server reported a hit for {} of them. \
         Hit ratio (cached / what a perfect cache would hold): {}.",
        run.ok,
        run.cut_off,
        run.infra,
        run.too_long,
        run.repeat_records,
        run.repeat_hits,
        run.hit_ratio
            .map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))
    );
    if let Some(goodput) = &run.goodput {
        let _ = writeln!(
            md,
            "\n**Goodput:** {} of {} requests ({:.1}%) meet the target.",
            goodput.met,
            goodput.of,
            goodput.share * 100.0
        );
    }
    if !run.sessions.is_empty() {
        md.push_str("\n| session | records | hit ratio |\n|---|---|---|\n");
        for (name, n, ratio) in &run.sessions {
            let _ = writeln!(
                md,
                "| {name} | {n} | {} |",
                ratio.map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))
            );
        }
    }
    md
}
