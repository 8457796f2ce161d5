//! One stream of a repetition: its tries (retried, rate-limited, a refused field dropped),
//! each measured through the metered stream under the watchdog, journaled before the next
//! request goes out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vernier_openai::ChatRequest;
use vernier_run::{ClockAnchor, StopReason};

use crate::config::CellKey;
use crate::corpus::NoncePlacement;
use crate::error::SweepError;
use crate::journal::{
    Attempt, RateLimitWait, RepPhase, RequestSpecDecode, ServerTimings, Status, Timeline,
    TimelineClock,
};
use crate::lag::LagHistogram;
use crate::observer::SweepObserver;
use crate::parts::{Record, Sweep, Target, Watchdog, dropped_fields};
use crate::request::{Failure, build_request, classify};
use crate::watchdog::watched;

/// A request's instants on the wall clock.
fn timeline(
    anchor: &ClockAnchor,
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
        request_sent_unix_ns: anchor.unix_ns(times.sent),
        headers_unix_ns: anchor.unix_ns(times.headers),
        first_token_unix_ns: times.first_token.map(|t| anchor.unix_ns(t)),
        last_token_unix_ns: times.last_token.map(|t| anchor.unix_ns(t)),
        scheduled_unix_ns: scheduled.map(|t| anchor.unix_ns(t)),
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

/// One try of `request`, measured; the failure and the client's lag so far when it fails.
async fn measure_once(
    target: &Target,
    watchdog: Watchdog,
    observer: &dyn SweepObserver,
    request: &ChatRequest,
    capture: bool,
) -> Result<Measured, (Failure, LagHistogram)> {
    let mut lag = LagHistogram::new();
    let mut watch = vernier_openai::LazyTimer::new();
    let model = request.model.as_str();
    let opened = Box::pin(watched(
        target,
        model,
        watchdog,
        observer,
        &mut watch,
        target.client.metered_chat_stream(request),
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
        let next = match watched(
            target,
            model,
            watchdog,
            observer,
            &mut watch,
            stream.next_observation(),
        )
        .await
        {
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
        unix_ms: vernier_run::unix_ms(),
        sequence: job.sequence,
        timeline: None,
        wait: None,
        server_timings: None,
        capture: None,
        shard: None,
    }
}

/// Copies what a measured try produced into its journal line (writing its capture first).
fn fill_measured(
    line: &mut Attempt,
    mut measured: Measured,
    record: &Record,
    job: &StreamJob,
    request: &ChatRequest,
) -> Result<(), SweepError> {
    if let Some(capture) = measured.capture.take() {
        line.capture = Some(record.write_capture(
            (job.cell, job.rep, job.stream),
            line.attempt,
            request,
            capture,
        )?);
    }
    line.timeline = Some(timeline(
        &record.clock,
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

/// Measures one request on the next stream runtime (on this one without them).
async fn measure_on_runtime(
    sweep: &Arc<Sweep>,
    request: &ChatRequest,
    capture: bool,
) -> Result<Measured, (Failure, LagHistogram)> {
    let watchdog = sweep.plan.watchdog;
    let Some(runtimes) = &sweep.target.runtimes else {
        let observer = sweep.record.observer.as_ref();
        return Box::pin(measure_once(
            &sweep.target,
            watchdog,
            observer,
            request,
            capture,
        ))
        .await;
    };
    let (worker, sent) = (Arc::clone(sweep), request.clone());
    match runtimes
        .run(async move {
            let observer = worker.record.observer.as_ref();
            measure_once(&worker.target, watchdog, observer, &sent, capture).await
        })
        .await
    {
        Some(result) => result,
        None => Err((
            Failure::Retryable("the stream's runtime stopped".to_owned()),
            LagHistogram::new(),
        )),
    }
}

/// Runs one stream of a repetition to its end: measured, failed after every retry, or a stop.
pub(crate) async fn run_stream(
    sweep: Arc<Sweep>,
    job: StreamJob,
    start: Option<Arc<tokio::sync::Barrier>>,
) -> Result<StreamEnd, SweepError> {
    if let Some(start) = start {
        start.wait().await;
    }
    let (target, plan, record) = (&sweep.target, &sweep.plan, &sweep.record);
    let corpus = &plan.corpora[&job.cell.workload];
    let retries = plan.config.retries;
    let placement = NoncePlacement::from_suffix(plan.config.nonce_as_suffix);
    // `tries` numbers every request sent; only real failures use up `retries`. Waits on rate
    // limits and dropping a refused field are not failures of the server.
    let (mut tries, mut failures, mut limited) = (0_u32, 0_u32, 0_u32);
    while failures <= retries {
        let attempt = tries;
        tries += 1;
        target.pacer.wait_turn().await;
        let nonce = plan.config.defeat_prefix_cache.then(|| plan.nonces.next());
        let prompt = corpus.prompt(nonce.as_deref(), placement, job.n_units);
        let request = build_request(
            &plan.config,
            &dropped_fields(target),
            prompt,
            nonce.as_deref(),
            job.cell.output_tokens,
        );
        let capture = job.phase == RepPhase::Measured && record.capture_turn(job.cell);
        let result = measure_on_runtime(&sweep, &request, capture).await;
        let mut line = attempt_line(&job, attempt, nonce);
        line.shard = sweep.plan.config.shard.map(|shard| shard.index);
        let (failure, lag) = match result {
            Ok(measured) => {
                let decode_rate = measured.measurement.decode_tokens_per_s;
                fill_measured(&mut line, measured, record, &job, &request)?;
                record.attempt(line)?;
                return Ok(StreamEnd::Measured(decode_rate));
            }
            Err(failed) => failed,
        };
        line.status = Status::Infra;
        line.error = Some(failure.message().to_owned());
        line.client_lag = lag;
        // A rate limit within the wait budget: wait as the server asked, then try again.
        let wait = match &failure {
            Failure::RateLimited(_, error) => target.rate_limit_wait(error, limited),
            _ => None,
        };
        if let Some((wait, cause, asked)) = wait {
            line.wait = Some(RateLimitWait {
                cause: cause.as_str().to_owned(),
                waited_ms: wait.as_secs_f64() * 1e3,
                asked_ms: asked.map(|a| a.as_secs_f64() * 1e3),
            });
        }
        record.attempt(line)?;
        if let Some((wait, _, _)) = wait {
            limited += 1;
            record.observer.note(&format!(
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
                if record.drop_field(&target.refused, field, message)? {
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
                record.observer.note(&format!(
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
    pub(crate) fn record(&mut self, record: &Record, end: StreamEnd) -> Result<(), SweepError> {
        match end {
            StreamEnd::Measured(rate) => {
                self.n_ok += 1;
                self.decode_rates.extend(rate);
            }
            StreamEnd::Failed => self.n_failed += 1,
            StreamEnd::Stop(failure) => return Err(stop_error(record, &failure)),
        }
        Ok(())
    }
}

/// A stream task's result, or the error of a task that panicked or was cancelled.
pub(crate) fn joined(
    record: &Record,
    joined: Result<Result<StreamEnd, SweepError>, tokio::task::JoinError>,
) -> Result<StreamEnd, SweepError> {
    joined.map_err(|error| SweepError::Journal {
        what: "run a stream task for",
        path: record.journal.path().to_owned(),
        source: std::io::Error::other(error),
    })?
}

fn stop_error(record: &Record, failure: &Failure) -> SweepError {
    match failure {
        Failure::Fatal(detail) | Failure::FieldRefused(detail, _) => SweepError::ServerRejected {
            detail: detail.clone(),
        },
        Failure::ContextExceeded(detail) => SweepError::ContextExceeded {
            detail: detail.clone(),
        },
        Failure::RateLimited(detail, _) => record.stopped(
            StopReason::ServerUnreachable,
            format!("{detail} (the rate-limit wait budget, --max-wait, is spent)"),
        ),
        Failure::Hung(detail) => record.stopped(StopReason::ServerHung, detail.clone()),
        Failure::Unreachable(detail) | Failure::Retryable(detail) => {
            record.stopped(StopReason::ServerUnreachable, detail.clone())
        }
    }
}
