//! Running the sweep: set-up checks, calibration, cells, repetitions, streams, retries.

use std::collections::{BTreeMap, BTreeSet};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use vernier_openai::{ChatMessage, ChatRequest, Client, StreamOptions};

use crate::calibrate::{self, CountMethod, Counter};
use crate::config::LoadMode;
use crate::config::{CellKey, SweepConfig, Workload};
use crate::corpus::{Corpus, NoncePlacement, NonceSource};
use crate::error::StopReason;
use crate::error::SweepError;
use crate::journal::{
    Attempt, Calibration, CellSkipped, CellWindow, FieldDropped, JournalWriter, LoadedSweepJournal,
    RateLimitWait, RepDone, RepPhase, RequestSpecDecode, ServerTimings, Status, SweepJournalLine,
    Timeline, TimelineClock,
};
use crate::lag::LagHistogram;
use crate::observer::SweepObserver;
use crate::probe::SchedulerProbe;
use crate::summary;

/// Everything the stream tasks share.
pub(crate) struct Shared {
    pub(crate) client: Client,
    pub(crate) config: SweepConfig,
    pub(crate) journal: JournalWriter,
    pub(crate) nonces: NonceSource,
    pub(crate) corpora: BTreeMap<Workload, Corpus>,
    pub(crate) idle_timeout: Duration,
    pub(crate) busy_wait_cap: Duration,
    pub(crate) has_metrics: bool,
    /// The generated-tokens counter the watchdog reads; `None` when `/metrics` has no known one.
    pub(crate) generation_counter: Option<&'static str>,
    pub(crate) resume_command: String,
    pub(crate) observer: Arc<dyn SweepObserver>,
    /// Converts the monotonic clock's instants to wall-clock nanoseconds.
    pub(crate) clock: ClockAnchor,
    /// `--max-rps`.
    pub(crate) rate_cap: RateCap,
    /// Fields the server refused, dropped for the rest of the run.
    pub(crate) dropped: Mutex<BTreeSet<&'static str>>,
    /// What is left of the run's budget for waits on rate limits.
    pub(crate) wait_budget: vernier_openai::WaitBudget,
    /// `--capture`: streams captured so far per cell.
    pub(crate) captured: Mutex<BTreeMap<CellKey, u32>>,
    /// The kernel stamps received data (`vernier_openai::kernel_rx_available`): every event
    /// carries its receive time, so the scheduler probe can tick sparsely.
    pub(crate) kernel_rx: bool,
    /// The measured streams' own single-threaded runtimes (`None`: the run's runtime).
    pub(crate) pool: Option<crate::pool::StreamPool>,
}

/// Spaces requests so that at most `rate` go out per second (none without a cap).
#[derive(Debug)]
pub(crate) struct RateCap {
    gap: Option<Duration>,
    next: Mutex<Option<Instant>>,
}

impl RateCap {
    pub(crate) fn new(max_rps: Option<f64>) -> Self {
        Self {
            gap: max_rps.and_then(|rps| Duration::try_from_secs_f64(1.0 / rps).ok()),
            next: Mutex::new(None),
        }
    }

    /// Waits until this request's turn: `gap` after the previous request's turn.
    pub(crate) async fn wait_turn(&self) {
        let Some(gap) = self.gap else {
            return;
        };
        let turn = {
            let Ok(mut next) = self.next.lock() else {
                return;
            };
            let now = Instant::now();
            let turn = next.map_or(now, |at| at.max(now));
            *next = Some(turn + gap);
            turn
        };
        tokio::time::sleep_until(turn.into()).await;
    }
}

impl Shared {
    /// Whether the next measured stream of `cell` is one of the first `--capture N`.
    pub(crate) fn capture_turn(&self, cell: CellKey) -> bool {
        let Some(wanted) = self.config.capture_streams.filter(|n| *n > 0) else {
            return false;
        };
        let Ok(mut captured) = self.captured.lock() else {
            return false;
        };
        let count = captured.entry(cell).or_default();
        if *count >= wanted {
            return false;
        }
        *count += 1;
        true
    }

    /// Writes a captured response below the output folder; returns its relative path.
    pub(crate) fn write_capture(
        &self,
        job: &StreamJob,
        attempt: u32,
        request: &ChatRequest,
        capture: vernier_openai::Capture,
    ) -> Result<String, SweepError> {
        let out = self.journal.path().parent().map_or_else(
            || std::path::PathBuf::from("."),
            std::path::Path::to_path_buf,
        );
        let cell = job.cell;
        let name = format!(
            "captures/{}-p{}-o{}-{}-rep{}-stream{}-try{attempt}.json",
            cell.workload,
            cell.prompt_tokens_target,
            cell.output_tokens,
            cell.load_label().replace('/', "per"),
            job.rep,
            job.stream
        );
        let record = crate::journal::StreamCapture {
            cell,
            rep: job.rep,
            stream: job.stream,
            attempt,
            request: serde_json::to_value(request).unwrap_or_default(),
            status: capture.status,
            headers: capture.headers,
            frames: capture
                .reads
                .iter()
                .map(|read| crate::journal::CapturedFrame::new(read.offset_ns, &read.bytes))
                .collect(),
        };
        let path = out.join(&name);
        let write = |path: &std::path::Path| -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let text = serde_json::to_string(&record).map_err(std::io::Error::other)?;
            std::fs::write(path, text)
        };
        write(&path).map_err(|source| SweepError::WriteReport { path, source })?;
        Ok(name)
    }

    /// The fields dropped so far.
    pub(crate) fn dropped_fields(&self) -> BTreeSet<&'static str> {
        self.dropped
            .lock()
            .map(|set| set.clone())
            .unwrap_or_default()
    }

    /// Drops `field` for the rest of the run and journals it; `false` when it was dropped
    /// already (the server refuses the request for another reason).
    pub(crate) fn drop_field(
        &self,
        field: &'static str,
        server_said: &str,
    ) -> Result<bool, SweepError> {
        let newly = self.dropped.lock().is_ok_and(|mut set| set.insert(field));
        if newly {
            let lost = crate::fields::guarantee_lost(field);
            self.observer.warn(&format!(
                "the server refuses `{field}`: going on without it ({lost})"
            ));
            self.journal
                .append(&SweepJournalLine::FieldDropped(FieldDropped {
                    field: field.to_owned(),
                    guarantee_lost: lost.to_owned(),
                    server_said: server_said.to_owned(),
                    unix_ms: unix_ms(),
                }))?;
        }
        Ok(newly)
    }

    /// The wait before trying again after the `n`-th rate-limited answer in a row, taken from
    /// the run's budget; `None` when the budget cannot cover it (the try then counts as a
    /// failure). Returns the wait, its cause and what the server asked for.
    pub(crate) fn rate_limit_wait(
        &self,
        error: &vernier_openai::ClientError,
        n: u32,
    ) -> Option<(Duration, vernier_openai::WaitCause, Option<Duration>)> {
        let asked = match error {
            vernier_openai::ClientError::Http {
                status: 429 | 503,
                retry_after,
                ..
            } => *retry_after,
            _ => return None,
        };
        let (wait, cause) = self.wait_budget.take(asked, n)?;
        Some((wait, cause, asked))
    }
}

/// One reading of the monotonic and the wall clock together, so that every instant of a run
/// maps to the wall clock by the same offset (differences stay exact durations).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClockAnchor {
    instant: Instant,
    unix_ns: u64,
}

impl ClockAnchor {
    pub(crate) fn now() -> Self {
        let unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Self {
            instant: Instant::now(),
            unix_ns,
        }
    }

    /// A request's instants on the wall clock.
    fn timeline(
        &self,
        times: &RequestTimes,
        scheduled: Option<Instant>,
        clock: vernier_meter::EventClock,
    ) -> Timeline {
        Timeline {
            clock: if clock == vernier_meter::EventClock::KernelRx {
                TimelineClock::KernelRx
            } else {
                TimelineClock::Userspace
            },
            request_sent_unix_ns: self.unix_ns(times.sent),
            headers_unix_ns: self.unix_ns(times.headers),
            first_token_unix_ns: times.first_token.map(|t| self.unix_ns(t)),
            last_token_unix_ns: times.last_token.map(|t| self.unix_ns(t)),
            scheduled_unix_ns: scheduled.map(|t| self.unix_ns(t)),
        }
    }

    /// `at` in nanoseconds since the Unix epoch.
    pub(crate) fn unix_ns(&self, at: Instant) -> u64 {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        if at >= self.instant {
            self.unix_ns.saturating_add(nanos(at - self.instant))
        } else {
            self.unix_ns.saturating_sub(nanos(self.instant - at))
        }
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The request body for one prompt.
pub(crate) fn build_request(
    config: &SweepConfig,
    dropped: &BTreeSet<&'static str>,
    prompt: String,
    nonce: Option<&str>,
    max_tokens: u32,
) -> ChatRequest {
    let mut request = build_full_request(config, prompt, nonce, max_tokens);
    for field in dropped {
        match *field {
            "max_tokens" => {
                request.max_completion_tokens = request.max_tokens.take();
            }
            "continuous_usage_stats" => {
                if request.stream_options.is_some() {
                    request.stream_options = Some(StreamOptions::usage(false));
                }
            }
            other => {
                request.extra.remove(other);
            }
        }
    }
    request
}

/// The request body with every field the configuration asks for.
fn build_full_request(
    config: &SweepConfig,
    prompt: String,
    nonce: Option<&str>,
    max_tokens: u32,
) -> ChatRequest {
    let mut request = ChatRequest::new(config.model.clone(), vec![ChatMessage::user(prompt)]);
    request.max_tokens = Some(u64::from(max_tokens));
    request.temperature = Some(config.temperature);
    request.seed = config.seed.and_then(|seed| i64::try_from(seed).ok());
    request.stream_options = Some(StreamOptions::usage(config.continuous_usage));
    if config.force_length {
        request.extra.insert("ignore_eos".to_owned(), true.into());
        request
            .extra
            .insert("min_tokens".to_owned(), max_tokens.into());
    }
    if let Some(nonce) = nonce {
        if config.cache_salt {
            request.extra.insert("cache_salt".to_owned(), nonce.into());
        }
        if config.cache_prompt_field {
            request
                .extra
                .insert("cache_prompt".to_owned(), false.into());
        }
    }
    if config.token_ids {
        request
            .extra
            .insert("return_token_ids".to_owned(), true.into());
    }
    if config.extra_body.is_empty() {
        return request;
    }
    // Merge through JSON so `--extra-body` may also override the named fields.
    match serde_json::to_value(&request) {
        Ok(serde_json::Value::Object(mut body)) => {
            for (key, value) in &config.extra_body {
                body.insert(key.clone(), value.clone());
            }
            serde_json::from_value(serde_json::Value::Object(body)).unwrap_or(request)
        }
        _ => request,
    }
}

/// Why an attempt did not produce a measurement.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Worth retrying: HTTP 429/5xx, dropped stream, timeout.
    Retryable(String),
    /// Connection refused or reset before any answer: the server may be gone.
    Unreachable(String),
    /// The server will refuse every request like this one.
    Fatal(String),
    /// The stream is silent and the server's generation counter does not move.
    Hung(String),
    /// `429` or `503`: the server says "not now"; waiting is not a failed try.
    RateLimited(String, vernier_openai::ClientError),
    /// The server cannot take a request this long: the cell is `context_exceeded`.
    ContextExceeded(String),
    /// The server refuses a field the sweep can do without (`cache_salt`, `ignore_eos`, ...,
    /// or `max_tokens` where `max_completion_tokens` is wanted): drop it and go on.
    FieldRefused(String, &'static str),
}

impl Failure {
    fn message(&self) -> &str {
        match self {
            Self::Retryable(m)
            | Self::Unreachable(m)
            | Self::Fatal(m)
            | Self::Hung(m)
            | Self::RateLimited(m, _)
            | Self::FieldRefused(m, _)
            | Self::ContextExceeded(m) => m,
        }
    }
}

fn classify(error: vernier_openai::ClientError) -> Failure {
    let message = vernier_cli::one_line(&error);
    match &error {
        vernier_openai::ClientError::Connect { .. } => Failure::Unreachable(message),
        _ if vernier_openai::is_context_exceeded(&error) => Failure::ContextExceeded(message),
        vernier_openai::ClientError::Http {
            status: 400 | 422,
            body,
            ..
        } if crate::fields::refused_field(body).is_some() => {
            let field = crate::fields::refused_field(body).unwrap_or("unknown");
            Failure::FieldRefused(message, field)
        }
        vernier_openai::ClientError::Http {
            status: 400 | 401 | 403 | 404 | 405 | 413 | 422,
            ..
        } => Failure::Fatal(message),
        _ if vernier_openai::is_rate_limited(&error) => Failure::RateLimited(message, error),
        _ => Failure::Retryable(message),
    }
}

/// Reads the generated-tokens counter `name` twice, `gap` apart: `Some(true)` when it moved,
/// `None` when `/metrics` did not answer or lost the counter.
async fn generation_moving(client: &Client, name: &str, gap: Duration) -> Option<bool> {
    let first = client.metrics().await.ok()?.sum(name)?;
    tokio::time::sleep(gap).await;
    let second = client.metrics().await.ok()?.sum(name)?;
    Some(second > first)
}

/// Whether the server answers a one-token request within the idle timeout (at least 2 s): a
/// silent stream on a server that answers is stuck, not the server.
async fn probe_answered(shared: &Shared) -> bool {
    let mut probe = ChatRequest::new(
        shared.config.model.clone(),
        vec![ChatMessage::user("Say OK.")],
    );
    probe.max_tokens = Some(1);
    let limit = shared.idle_timeout.max(Duration::from_secs(2));
    matches!(
        tokio::time::timeout(limit, shared.client.chat(&probe)).await,
        Ok(Ok(_))
    )
}

/// Awaits `future`, checking the server whenever `idle_timeout` passes without it finishing:
/// a server whose generation counter moves is busy (keep waiting, up to the cap); one whose
/// counter stands still is hung. The future keeps being polled during the check, so event
/// arrival times stay exact.
async fn watched<F: Future>(
    shared: &Shared,
    watch: &mut vernier_openai::LazyTimer,
    future: F,
) -> Result<F::Output, Failure> {
    let mut future = pin!(future);
    let mut waited = Duration::ZERO;
    let client = &shared.client;
    let idle = shared.idle_timeout;
    let counter = shared.generation_counter;
    let gap = idle.min(Duration::from_secs(3));
    loop {
        // One timer per stream, moved on lazily: a wait costs no timer of its own.
        let due = tokio::time::Instant::now() + idle;
        tokio::select! {
            biased;
            output = &mut future => return Ok(output),
            () = watch.until(due) => {}
        }
        let check = pin!(async move {
            match counter {
                Some(name) => generation_moving(client, name, gap).await,
                None => None,
            }
        });
        tokio::select! {
            biased;
            output = &mut future => return Ok(output),
            verdict = check => {
                waited += if counter.is_some() { idle + gap } else { idle };
                match verdict {
                    Some(true) if waited < shared.busy_wait_cap => {
                        shared.observer.note(&format!(
                            "no event for {:.0} s but the server's generation counter moves: busy, still waiting",
                            waited.as_secs_f64()
                        ));
                    }
                    Some(true) => {
                        return Err(Failure::Retryable(format!(
                            "no event for {:.0} s while the server was busy elsewhere (cap {:.0} s, --busy-wait-cap-s)",
                            waited.as_secs_f64(),
                            shared.busy_wait_cap.as_secs_f64()
                        )));
                    }
                    Some(false) if probe_answered(shared).await => {
                        return Err(Failure::Retryable(format!(
                            "no event for {:.0} s and the server's generation counter did not move, but the server answered a one-token probe: this stream is stuck, not the server; it is abandoned and retried",
                            waited.as_secs_f64()
                        )));
                    }
                    Some(false) => {
                        return Err(Failure::Hung(format!(
                            "no event for {:.0} s, the server's generation counter did not move and a one-token probe went unanswered: the server looks hung",
                            waited.as_secs_f64()
                        )));
                    }
                    None => {
                        return Err(match counter {
                            Some(name) => Failure::Hung(format!(
                                "no event for {:.0} s and /metrics no longer answers with {name}",
                                waited.as_secs_f64()
                            )),
                            None => Failure::Retryable(format!(
                                "no event for {:.0} s; {}",
                                waited.as_secs_f64(),
                                watchdog_blind(shared.has_metrics)
                            )),
                        });
                    }
                }
            }
        }
    }
}

/// What one successful attempt produced.
struct Measured {
    capture: Option<vernier_openai::Capture>,
    measurement: vernier_meter::Measurement,
    spec_decode: Option<RequestSpecDecode>,
    server_timings: Option<ServerTimings>,
    lag: LagHistogram,
    times: RequestTimes,
}

/// A request's instants on the monotonic clock.
struct RequestTimes {
    sent: Instant,
    headers: Instant,
    first_token: Option<Instant>,
    last_token: Option<Instant>,
}

async fn measure_once(
    shared: &Shared,
    request: &ChatRequest,
    capture: bool,
) -> Result<Measured, (Failure, LagHistogram)> {
    let mut lag = LagHistogram::new();
    let mut watch = vernier_openai::LazyTimer::new();
    let opened = Box::pin(watched(
        shared,
        &mut watch,
        shared.client.metered_chat_stream(request),
    ))
    .await
    .map_err(|f| (f, LagHistogram::new()))?;
    let mut stream = opened.map_err(|error| (classify(error), LagHistogram::new()))?;
    if capture {
        stream.capture_body();
    }
    let mut times = RequestTimes {
        sent: stream.stream().request_sent_at(),
        headers: stream.stream().headers_at(),
        first_token: None,
        last_token: None,
    };
    loop {
        let next = match watched(shared, &mut watch, stream.next_observation()).await {
            Ok(next) => next,
            Err(failure) => return Err((failure, lag)),
        };
        match next {
            None => break,
            Some(Ok(event)) => {
                lag.record_since(event.at);
                if event.content_bytes > 0 || event.reasoning_bytes > 0 || event.tool_call_bytes > 0
                {
                    times.first_token.get_or_insert(event.at);
                    times.last_token = Some(event.at);
                }
            }
            Some(Err(error)) => return Err((classify(error), lag)),
        }
    }
    let metered = stream.finish();
    Ok(Measured {
        capture: metered.capture,
        times,
        spec_decode: metered
            .accumulated
            .timings()
            .and_then(RequestSpecDecode::from_timings),
        server_timings: metered
            .accumulated
            .timings()
            .and_then(ServerTimings::from_timings),
        measurement: metered.measurement,
        lag,
    })
}

/// How one stream of a repetition ended.
pub(crate) enum StreamEnd {
    /// Measured, with the request's decode rate when it had one.
    Measured(Option<f64>),
    Failed,
    Stop(Failure),
}

pub(crate) struct StreamJob {
    pub(crate) cell: CellKey,
    pub(crate) phase: RepPhase,
    pub(crate) rep: u32,
    pub(crate) stream: u32,
    pub(crate) n_units: usize,
    /// Steady load: the request's place in its slot.
    pub(crate) sequence: Option<u32>,
    /// Open loop: when the schedule says to send it.
    pub(crate) scheduled: Option<Instant>,
}

/// A journal line for one try, before its outcome is known.
fn attempt_line(job: &StreamJob, attempt: u32, nonce: Option<String>) -> Attempt {
    Attempt {
        cell: job.cell,
        phase: job.phase,
        rep: job.rep,
        stream: job.stream,
        attempt,
        status: Status::Ok,
        error: None,
        nonce,
        prompt_tokens_actual: None,
        cached_prompt_tokens: None,
        completion_tokens: None,
        finish_reason: None,
        cache_hit: false,
        length_mismatch: false,
        measurement: None,
        spec_decode: None,
        client_lag: LagHistogram::new(),
        unix_ms: unix_ms(),
        sequence: job.sequence,
        timeline: None,
        wait: None,
        server_timings: None,
        capture: None,
    }
}

/// Copies what a measured try produced into its journal line (writing its capture first).
fn fill_measured(
    line: &mut Attempt,
    mut measured: Measured,
    shared: &Shared,
    job: &StreamJob,
    request: &ChatRequest,
) -> Result<(), SweepError> {
    if let Some(capture) = measured.capture.take() {
        line.capture = Some(shared.write_capture(job, line.attempt, request, capture)?);
    }
    line.timeline = Some(shared.clock.timeline(
        &measured.times,
        job.scheduled,
        measured.measurement.clock,
    ));
    let m = measured.measurement;
    line.prompt_tokens_actual = m.prompt_tokens;
    line.cached_prompt_tokens = m.cached_prompt_tokens;
    line.completion_tokens = Some(m.completion_tokens);
    line.finish_reason.clone_from(&m.finish_reason);
    line.cache_hit = m.cached_prompt_tokens.unwrap_or(0) > 0;
    line.length_mismatch = m.completion_tokens != u64::from(job.cell.output_tokens);
    line.measurement = Some(m);
    line.spec_decode = measured.spec_decode;
    line.server_timings = measured.server_timings;
    line.client_lag = measured.lag;
    Ok(())
}

/// Measures one request on the next stream runtime (on this one without a pool).
async fn measure_on_pool(
    shared: &Arc<Shared>,
    request: &ChatRequest,
    capture: bool,
) -> Result<Measured, (Failure, LagHistogram)> {
    let Some(pool) = &shared.pool else {
        return Box::pin(measure_once(shared, request, capture)).await;
    };
    let (worker, sent) = (Arc::clone(shared), request.clone());
    match pool
        .run(async move { measure_once(&worker, &sent, capture).await })
        .await
    {
        Some(result) => result,
        None => Err((
            Failure::Retryable("the stream's runtime stopped".to_owned()),
            LagHistogram::new(),
        )),
    }
}

pub(crate) async fn run_stream(
    shared: Arc<Shared>,
    job: StreamJob,
    start: Option<Arc<tokio::sync::Barrier>>,
) -> Result<StreamEnd, SweepError> {
    if let Some(start) = start {
        start.wait().await;
    }
    let corpus = &shared.corpora[&job.cell.workload];
    let retries = shared.config.retries;
    let placement = NoncePlacement::from_suffix(shared.config.nonce_as_suffix);
    // `tries` numbers every request sent; only real failures use up `retries`. Waits on rate
    // limits and dropping a refused field are not failures of the server.
    let (mut tries, mut failures, mut limited) = (0_u32, 0_u32, 0_u32);
    while failures <= retries {
        let attempt = tries;
        tries += 1;
        shared.rate_cap.wait_turn().await;
        let nonce = shared
            .config
            .defeat_prefix_cache
            .then(|| shared.nonces.next());
        let prompt = corpus.prompt(nonce.as_deref(), placement, job.n_units);
        let request = build_request(
            &shared.config,
            &shared.dropped_fields(),
            prompt,
            nonce.as_deref(),
            job.cell.output_tokens,
        );
        let capture = job.phase == RepPhase::Measured && shared.capture_turn(job.cell);
        let result = measure_on_pool(&shared, &request, capture).await;
        let mut line = attempt_line(&job, attempt, nonce);
        let (failure, lag) = match result {
            Ok(measured) => {
                let decode_rate = measured.measurement.decode_tokens_per_s;
                fill_measured(&mut line, measured, &shared, &job, &request)?;
                shared
                    .journal
                    .append(&SweepJournalLine::Attempt(Box::new(line)))?;
                return Ok(StreamEnd::Measured(decode_rate));
            }
            Err(failed) => failed,
        };
        line.status = Status::Infra;
        line.error = Some(failure.message().to_owned());
        line.client_lag = lag;
        // A rate limit within the wait budget: wait as the server asked, then try again.
        let wait = match &failure {
            Failure::RateLimited(_, error) => shared.rate_limit_wait(error, limited),
            _ => None,
        };
        if let Some((wait, cause, asked)) = wait {
            line.wait = Some(RateLimitWait {
                cause: cause.as_str().to_owned(),
                waited_ms: wait.as_secs_f64() * 1e3,
                asked_ms: asked.map(|a| a.as_secs_f64() * 1e3),
            });
        }
        shared
            .journal
            .append(&SweepJournalLine::Attempt(Box::new(line)))?;
        if let Some((wait, _, _)) = wait {
            limited += 1;
            shared.observer.note(&format!(
                "{} rep {} stream {}: rate-limited, waiting {:.1} s: {}",
                job.cell,
                job.rep,
                job.stream,
                wait.as_secs_f64(),
                failure.message()
            ));
            tokio::time::sleep(wait).await;
            continue;
        }
        limited = 0;
        match failure {
            Failure::FieldRefused(ref message, field) => {
                if shared.drop_field(field, message)? {
                    continue;
                }
                return Ok(StreamEnd::Stop(Failure::Fatal(message.clone())));
            }
            Failure::Fatal(_) | Failure::Hung(_) | Failure::ContextExceeded(_) => {
                return Ok(StreamEnd::Stop(failure));
            }
            Failure::Unreachable(_) if failures == retries => {
                return Ok(StreamEnd::Stop(failure));
            }
            Failure::Retryable(_) | Failure::Unreachable(_) | Failure::RateLimited(..) => {
                shared.observer.note(&format!(
                    "{} rep {} stream {}: attempt {} failed: {}",
                    job.cell,
                    job.rep,
                    job.stream,
                    attempt + 1,
                    failure.message()
                ));
                if failures < retries {
                    tokio::time::sleep(Duration::from_millis(250 * u64::from(failures + 1))).await;
                }
                failures += 1;
            }
        }
    }
    Ok(StreamEnd::Failed)
}

/// What one repetition produced.
#[derive(Default)]
pub(crate) struct RepResult {
    pub(crate) n_ok: u32,
    pub(crate) n_failed: u32,
    pub(crate) decode_rates: Vec<f64>,
}

impl RepResult {
    /// Counts one stream's end; a stop becomes the run's error.
    pub(crate) fn record(&mut self, shared: &Shared, end: StreamEnd) -> Result<(), SweepError> {
        match end {
            StreamEnd::Measured(rate) => {
                self.n_ok += 1;
                self.decode_rates.extend(rate);
            }
            StreamEnd::Failed => self.n_failed += 1,
            StreamEnd::Stop(failure) => return Err(stop_error(shared, &failure)),
        }
        Ok(())
    }
}

/// A stream task's result, or the error of a task that panicked or was cancelled.
pub(crate) fn joined(
    shared: &Shared,
    joined: Result<Result<StreamEnd, SweepError>, tokio::task::JoinError>,
) -> Result<StreamEnd, SweepError> {
    joined.map_err(|error| SweepError::Journal {
        what: "run a stream task for",
        path: shared.journal.path().to_owned(),
        source: std::io::Error::other(error),
    })?
}

/// Runs one repetition of `cell` as the configuration's load says: a burst of `concurrency`
/// streams at once (the default), steady load, or an open-loop schedule.
async fn run_rep(
    shared: &Arc<Shared>,
    cell: CellKey,
    phase: RepPhase,
    rep: u32,
    n_units: usize,
) -> Result<RepResult, SweepError> {
    match (shared.config.load, phase) {
        (LoadMode::Burst, _) => {
            run_burst_rep(shared, cell, phase, rep, n_units, cell.concurrency).await
        }
        // A warm-up of steady or open-loop load is one request per stream slot (one for a rate
        // cell): it warms the server without taking a whole duration.
        (_, RepPhase::Warmup) => {
            run_burst_rep(shared, cell, phase, rep, n_units, cell.concurrency.max(1)).await
        }
        (LoadMode::Steady, RepPhase::Measured) => {
            crate::load_runner::run_steady_rep(shared, cell, rep, n_units).await
        }
        (LoadMode::Rate, RepPhase::Measured) => {
            crate::load_runner::run_rate_rep(shared, cell, rep, n_units).await
        }
    }
}

/// Runs `concurrency` streams at once; the counts and decode rates, or a stop.
async fn run_burst_rep(
    shared: &Arc<Shared>,
    cell: CellKey,
    phase: RepPhase,
    rep: u32,
    n_units: usize,
    n_streams: u32,
) -> Result<RepResult, SweepError> {
    let start = Arc::new(tokio::sync::Barrier::new(n_streams as usize));
    let mut set = tokio::task::JoinSet::new();
    for stream in 0..n_streams {
        let job = StreamJob {
            cell,
            phase,
            rep,
            stream,
            n_units,
            sequence: None,
            scheduled: None,
        };
        set.spawn(run_stream(
            Arc::clone(shared),
            job,
            Some(Arc::clone(&start)),
        ));
    }
    let mut result = RepResult::default();
    while let Some(outcome) = set.join_next().await {
        let end = joined(shared, outcome)?;
        if let Err(error) = result.record(shared, end) {
            set.abort_all();
            return Err(error);
        }
        if phase == RepPhase::Measured {
            shared.observer.request_measured();
        }
    }
    Ok(result)
}

fn stop_error(shared: &Shared, failure: &Failure) -> SweepError {
    match failure {
        Failure::Fatal(detail) | Failure::FieldRefused(detail, _) => SweepError::ServerRejected {
            detail: detail.clone(),
        },
        Failure::ContextExceeded(detail) => SweepError::ContextExceeded {
            detail: detail.clone(),
        },
        Failure::RateLimited(detail, _) => shared.stopped(
            StopReason::ServerUnreachable,
            format!("{detail} (the rate-limit wait budget, --max-wait, is spent)"),
        ),
        Failure::Hung(detail) => shared.stopped(StopReason::ServerHung, detail.clone()),
        Failure::Unreachable(detail) | Failure::Retryable(detail) => {
            shared.stopped(StopReason::ServerUnreachable, detail.clone())
        }
    }
}

impl Shared {
    /// The error that stops the run for `reason`, with the journal and the resume command.
    pub(crate) fn stopped(&self, reason: StopReason, detail: String) -> SweepError {
        SweepError::ServerStopped {
            reason,
            detail,
            journal: self.journal.path().to_owned(),
            resume_command: self.resume_command.clone(),
        }
    }
}

/// Sums of every non-bucket metric, by name; `None` when `/metrics` does not answer.
pub(crate) async fn metric_sums(client: &Client) -> Option<BTreeMap<String, f64>> {
    let snapshot = client.metrics().await.ok()?;
    Some(vernier_openai::metric_sums(&snapshot))
}

/// Progress through the journal so far, for resuming.
#[derive(Debug, Default)]
pub(crate) struct ResumeState {
    calibrations: BTreeMap<(Workload, u32), usize>,
    done_reps: BTreeMap<CellKey, BTreeSet<u32>>,
    next_rep: BTreeMap<CellKey, u32>,
    next_warmup: BTreeMap<CellKey, u32>,
    /// Decode rates of the counted requests per cell, for `--until-ci` (kept in memory so
    /// the journal is read once, at resume, not after every repetition).
    decode_rates: BTreeMap<CellKey, Vec<f64>>,
    /// Fields the server refused before the resume.
    pub(crate) dropped_fields: BTreeSet<&'static str>,
    /// Cells left out as `context_exceeded`, with the reason.
    pub(crate) skipped: BTreeMap<CellKey, String>,
}

impl ResumeState {
    pub(crate) fn from_journal(journal: &LoadedSweepJournal) -> Self {
        let mut state = Self::default();
        for line in &journal.lines {
            match line {
                SweepJournalLine::Calibration(c) => {
                    state
                        .calibrations
                        .insert((c.workload, c.prompt_tokens_target), c.n_units);
                }
                SweepJournalLine::RepDone(done) => {
                    state
                        .done_reps
                        .entry(done.cell)
                        .or_default()
                        .insert(done.rep);
                }
                SweepJournalLine::CellSkipped(skipped) => {
                    state.skipped.insert(skipped.cell, skipped.reason.clone());
                }
                SweepJournalLine::FieldDropped(dropped) => {
                    if let Some((field, _)) = crate::fields::REFUSABLE
                        .iter()
                        .find(|(name, _)| *name == dropped.field)
                    {
                        state.dropped_fields.insert(field);
                    }
                }
                SweepJournalLine::Attempt(attempt) => {
                    let next = match attempt.phase {
                        RepPhase::Measured => state.next_rep.entry(attempt.cell).or_default(),
                        RepPhase::Warmup => state.next_warmup.entry(attempt.cell).or_default(),
                    };
                    *next = (*next).max(attempt.rep + 1);
                }
                _ => {}
            }
        }
        for (cell, attempts) in summary::counted_attempts(journal) {
            state
                .decode_rates
                .insert(cell, summary::decode_rates(&attempts));
        }
        state
    }

    /// Measured repetitions already finished for `cell`.
    pub(crate) fn done(&self, cell: &CellKey) -> u32 {
        self.done_reps
            .get(cell)
            .map_or(0, |reps| u32::try_from(reps.len()).unwrap_or(u32::MAX))
    }
}

/// Calibrates every (workload, prompt length) the journal does not already have.
pub(crate) async fn calibrate_all(
    shared: &Shared,
    state: &mut ResumeState,
) -> Result<(), SweepError> {
    let config = &shared.config;
    let mut method: Option<CountMethod> = None;
    for &workload in &config.workloads {
        for &target in &config.prompt_tokens {
            if state.calibrations.contains_key(&(workload, target)) {
                continue;
            }
            // A prompt length whose every cell is left out needs no calibration.
            let cells_of = |state: &ResumeState| {
                config
                    .cells()
                    .into_iter()
                    .filter(|c| c.workload == workload && c.prompt_tokens_target == target)
                    .all(|c| state.skipped.contains_key(&c))
            };
            if !config.is_search() && cells_of(state) {
                continue;
            }
            let method = if let Some(method) = method {
                method
            } else {
                let chosen = calibrate::choose_method(&shared.client, &config.model).await;
                method = Some(chosen);
                chosen
            };
            shared.observer.status(&format!(
                "calibrating {workload} prompt to {target} tokens ({})",
                method.as_str()
            ));
            let build = |prompt: String, nonce: Option<&str>, max_tokens: u32| {
                let mut probe_config = config.clone();
                probe_config.force_length = false;
                probe_config.continuous_usage = false;
                probe_config.token_ids = false;
                let mut request = build_request(
                    &probe_config,
                    &shared.dropped_fields(),
                    prompt,
                    nonce,
                    max_tokens,
                );
                request.stream_options = None;
                request
            };
            let counter = Counter {
                client: &shared.client,
                model: &config.model,
                method,
                nonces: &shared.nonces,
                use_nonce: config.defeat_prefix_cache,
                nonce_placement: NoncePlacement::from_suffix(config.nonce_as_suffix),
                build: &build,
            };
            let calibrated = match calibrate::calibrate(&counter, workload, target).await {
                Ok(calibrated) => calibrated,
                // Probe requests this long are refused for their length: every cell of this
                // prompt length is left out, and the run goes on.
                Err(detail) if vernier_openai::says_context_exceeded(&detail) => {
                    for cell in config
                        .cells()
                        .into_iter()
                        .filter(|c| c.workload == workload && c.prompt_tokens_target == target)
                    {
                        skip_cell(shared, state, cell, detail.clone())?;
                    }
                    continue;
                }
                Err(detail) => {
                    return Err(SweepError::Calibration {
                        workload: workload.to_string(),
                        target,
                        detail,
                    });
                }
            };
            shared
                .journal
                .append(&SweepJournalLine::Calibration(Calibration {
                    workload,
                    prompt_tokens_target: target,
                    n_units: calibrated.n_units,
                    prompt_tokens_actual: calibrated.prompt_tokens,
                    method: method.as_str().to_owned(),
                    n_probes: calibrated.n_probes,
                }))?;
            state
                .calibrations
                .insert((workload, target), calibrated.n_units);
        }
    }
    Ok(())
}

/// Whether `cell` is finished after `done` measured repetitions: the cap reached, or with
/// `--until-ci`, the minimum reached and the interval narrow enough.
fn finished(config: &SweepConfig, state: &ResumeState, cell: &CellKey, done: u32) -> bool {
    let cap = if config.until_ci_percent.is_some() {
        config.max_reps.max(config.reps)
    } else {
        config.reps
    };
    if done >= cap {
        return true;
    }
    if done < config.reps {
        return false;
    }
    let Some(percent) = config.until_ci_percent else {
        return true;
    };
    let rates = state.decode_rates.get(cell).map_or(&[][..], Vec::as_slice);
    summary::until_ci_met(percent, rates)
}

/// Runs every cell not yet finished, or with a capacity target, searches the load.
pub(crate) async fn run_cells(
    shared: &Arc<Shared>,
    state: &mut ResumeState,
) -> Result<(), SweepError> {
    let config = &shared.config;
    if config.is_search() {
        return crate::load_runner::search(shared, state).await;
    }
    let cells = config.cells();
    let planned: u64 = cells
        .iter()
        .map(|c| u64::from(config.reps) * u64::from(c.concurrency.max(1)))
        .sum();
    let already: u64 = cells
        .iter()
        .map(|c| u64::from(state.done(c).min(config.reps)) * u64::from(c.concurrency.max(1)))
        .sum();
    shared.observer.planned(planned, already);
    for cell in cells {
        run_cell(shared, state, cell).await?;
    }
    Ok(())
}

/// Runs what `cell` still needs: its warm-ups, then measured repetitions until it is finished,
/// with the server's counters, queue and the scheduler probe around them.
pub(crate) async fn run_cell(
    shared: &Arc<Shared>,
    state: &mut ResumeState,
    cell: CellKey,
) -> Result<(), SweepError> {
    if state.skipped.contains_key(&cell) {
        return Ok(());
    }
    match run_cell_reps(shared, state, cell).await {
        Err(SweepError::ContextExceeded { detail }) => skip_cell(shared, state, cell, detail),
        other => other,
    }
}

/// Leaves `cell` out as `context_exceeded`, journaled with `reason`.
pub(crate) fn skip_cell(
    shared: &Shared,
    state: &mut ResumeState,
    cell: CellKey,
    reason: String,
) -> Result<(), SweepError> {
    if state.skipped.contains_key(&cell) {
        return Ok(());
    }
    shared
        .observer
        .warn(&format!("{cell} left out (context_exceeded): {reason}"));
    shared
        .journal
        .append(&SweepJournalLine::CellSkipped(CellSkipped {
            cell,
            reason: reason.clone(),
            unix_ms: unix_ms(),
        }))?;
    state.skipped.insert(cell, reason);
    Ok(())
}

async fn run_cell_reps(
    shared: &Arc<Shared>,
    state: &mut ResumeState,
    cell: CellKey,
) -> Result<(), SweepError> {
    let config = &shared.config;
    let Some(&n_units) = state
        .calibrations
        .get(&(cell.workload, cell.prompt_tokens_target))
    else {
        return Ok(());
    };
    let mut done = state.done(&cell);
    if finished(config, state, &cell, done) {
        return Ok(());
    }
    for _ in 0..config.warmup {
        let next_warmup = *state.next_warmup.entry(cell).or_default();
        shared.observer.status(&format!("{cell}: warm-up"));
        run_rep(shared, cell, RepPhase::Warmup, next_warmup, n_units).await?;
        state.next_warmup.insert(cell, next_warmup + 1);
    }
    let metrics_before = if shared.has_metrics {
        metric_sums(&shared.client).await.unwrap_or_default()
    } else {
        BTreeMap::new()
    };
    // The probe runs where the events are read: once a second on every stream runtime, or
    // (events timed in user space) every millisecond on the first, so that it never wakes
    // idle runtimes a thousand times a second.
    let runtimes = shared.pool.as_ref().map_or(&[][..], |pool| pool.handles());
    let probe = if shared.kernel_rx {
        SchedulerProbe::start(crate::probe::SPARSE, runtimes)
    } else {
        SchedulerProbe::start(crate::probe::DENSE, &runtimes[..runtimes.len().min(1)])
    };
    let queue = shared
        .has_metrics
        .then(|| crate::load_runner::QueueSampler::start(shared.client.clone()));
    let mut failed_in_a_row = 0;
    let result = async {
        while !finished(config, state, &cell, done) {
            let rep = *state.next_rep.entry(cell).or_default();
            shared.observer.status(&format!(
                "{cell}: rep {}/{}",
                done + 1,
                config.reps.max(done + 1)
            ));
            let RepResult {
                n_ok,
                n_failed,
                decode_rates,
            } = run_rep(shared, cell, RepPhase::Measured, rep, n_units).await?;
            state.next_rep.insert(cell, rep + 1);
            shared.journal.append(&SweepJournalLine::RepDone(RepDone {
                cell,
                rep,
                n_ok,
                n_failed,
            }))?;
            shared.journal.sync()?;
            state.done_reps.entry(cell).or_default().insert(rep);
            state
                .decode_rates
                .entry(cell)
                .or_default()
                .extend(decode_rates);
            done += 1;
            failed_in_a_row = if n_ok == 0 { failed_in_a_row + 1 } else { 0 };
            if failed_in_a_row >= 2 {
                return Err(shared.stopped(
                    StopReason::RepeatedFailures,
                    format!(
                        "every request of {failed_in_a_row} repetitions in a row failed in {cell}"
                    ),
                ));
            }
        }
        Ok(())
    }
    .await;
    let probed = probe.finish().await;
    let queue = match queue {
        Some(sampler) => sampler.finish().await,
        None => None,
    };
    let metrics_after = if shared.has_metrics {
        metric_sums(&shared.client).await.unwrap_or_default()
    } else {
        BTreeMap::new()
    };
    shared
        .journal
        .append(&SweepJournalLine::CellWindow(Box::new(CellWindow {
            cell,
            metrics_before,
            metrics_after,
            scheduler_delay: probed.scheduler_delay,
            timer_overshoot: probed.timer_overshoot,
            queue,
        })))?;
    result
}

/// The warning when the busy check cannot run; `has_metrics` is false when `/metrics` itself
/// did not answer.
pub(crate) fn busy_check_unavailable(has_metrics: bool) -> String {
    let source = if has_metrics {
        "/metrics has none of"
    } else {
        "the server has no /metrics (llama.cpp serves it only with --metrics), so none of"
    };
    format!(
        "busy check unavailable: {source} {}; pass --allow-busy to silence",
        vernier_openai::load_metric_names()
    )
}

/// Why the watchdog cannot tell a hung server from a busy one.
pub(crate) fn watchdog_blind(has_metrics: bool) -> String {
    let source = if has_metrics {
        "/metrics has none of"
    } else {
        "the server has no /metrics, so none of"
    };
    format!(
        "the watchdog cannot tell hung from busy: {source} {}; a stream silent for --idle-timeout-s is abandoned and retried",
        vernier_openai::generation_metric_names()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_fields_rate_limits_and_refusals_are_told_apart() {
        let http = |status: u16, body: &str| vernier_openai::ClientError::Http {
            status,
            body: body.to_owned(),
            retry_after: None,
        };
        assert!(matches!(
            classify(http(400, "unknown field: cache_salt")),
            Failure::FieldRefused(_, "cache_salt")
        ));
        assert!(matches!(
            classify(http(503, "overloaded")),
            Failure::RateLimited(..)
        ));
        assert!(matches!(
            classify(http(429, "slow down")),
            Failure::RateLimited(..)
        ));
        assert!(matches!(classify(http(500, "oops")), Failure::Retryable(_)));
        assert!(matches!(classify(http(401, "bad key")), Failure::Fatal(_)));
    }

    #[test]
    fn a_dropped_field_leaves_the_request_and_max_tokens_becomes_max_completion_tokens() {
        let config = SweepConfig::default();
        let all = build_request(&config, &BTreeSet::new(), "p".to_owned(), Some("n"), 16);
        assert!(all.extra.contains_key("cache_salt") && all.extra.contains_key("ignore_eos"));
        let dropped: BTreeSet<&'static str> =
            ["cache_salt", "max_tokens", "continuous_usage_stats"].into();
        let request = build_request(&config, &dropped, "p".to_owned(), Some("n"), 16);
        assert!(!request.extra.contains_key("cache_salt"));
        assert!(request.extra.contains_key("ignore_eos"));
        assert_eq!(
            (request.max_tokens, request.max_completion_tokens),
            (None, Some(16))
        );
        let body = serde_json::to_value(&request).expect("serialises");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert!(
            body["stream_options"]
                .get("continuous_usage_stats")
                .is_none_or(|v| v == false)
        );
    }
}
