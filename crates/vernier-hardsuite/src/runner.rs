//! Running attempts: build the request, stream it through the meter, grade the reply, retry
//! infrastructure failures, journal every try.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use vernier_grader::Grader;
use vernier_meter::Measurement;
use vernier_openai::{ChatMessage, ChatRequest, Client};
use vernier_tasks::{OutcomeKind, Reply, ReplyToolCall, Task};

use vernier_cli::one_line;

use crate::context_run::ContextSizer;
use crate::error::HardsuiteError;
use crate::journal::{
    AttemptPhase, AttemptRecord, ContextTry, HardsuiteJournalLine, HardsuiteJournalWriter,
    Sampling, TryWait,
};
use media::{attach_images, video_parts, with_media_parts};

use crate::observer::RunObserver;
use crate::replies::{ReplyRecord, ReplyToolCallRecord};

/// Everything the workers share.
pub(crate) struct Runner<'a> {
    pub(crate) client: Client,
    pub(crate) model: String,
    pub(crate) sampling: Sampling,
    pub(crate) extra_body: Map<String, Value>,
    pub(crate) grader: Option<Grader>,
    pub(crate) journal: Arc<HardsuiteJournalWriter>,
    pub(crate) max_tries: u32,
    pub(crate) retry_backoff: Duration,
    pub(crate) observer: &'a dyn RunObserver,
    pub(crate) stop: AtomicBool,
    pub(crate) n_done: AtomicUsize,
    pub(crate) n_planned: AtomicUsize,
    /// Requests sent and not yet finished, this one included (each try records it as sent).
    pub(crate) in_flight: Arc<AtomicUsize>,
    /// `replies.jsonl`: what the model sent in every try, whole.
    pub(crate) replies: Arc<vernier_journal::JournalWriter>,
    /// `--max-rps`.
    pub(crate) pacer: vernier_run::RequestPacer,
    /// The requests in flight at once; with `--adaptive-concurrency` it gives way to 429s.
    pub(crate) slots: vernier_run::AdaptiveConcurrency,
    /// Whether `slots` adapts.
    pub(crate) adaptive: bool,
    /// What is left of the run's budget for waits on rate limits.
    pub(crate) wait_budget: vernier_run::WaitBudget,
    /// The server refused `max_tokens`: the budget goes as `max_completion_tokens`.
    pub(crate) completion_cap: AtomicBool,
    /// Sizes long-context prompts (a suite with context tasks).
    pub(crate) context_sizer: Option<ContextSizer>,
    /// Cache-defeating fields the server refused: no longer sent (the opening nonce still
    /// defeats a prefix cache).
    pub(crate) refused_cache_fields: vernier_run::RefusedFields,
    /// Numbers every request's images, so that no two requests send the same pixels.
    pub(crate) media_nonce: std::sync::atomic::AtomicU64,
    /// How video tasks send their clips.
    pub(crate) video_as: crate::journal::VideoAs,
    /// The KV cache the requests in flight share, and the tries that must run alone.
    pub(crate) room: crate::room::Room,
    /// On a resume: the tries each unfinished attempt already made, so that its next try is
    /// numbered after them.
    pub(crate) tries_before: std::collections::HashMap<(String, u32, AttemptPhase), u32>,
}

/// The fields a long-context request sends to defeat a prefix cache, beside its opening nonce:
/// vLLM's `cache_salt` and llama.cpp's `cache_prompt: false`.
const CACHE_FIELDS: [&str; 2] = ["cache_salt", "cache_prompt"];

/// How one attempt (all its tries) ended.
#[derive(Debug)]
pub(crate) enum AttemptEnd {
    /// Scored, or infra after every try (the journal holds the record).
    Done,
    /// Every try was refused at connect: the server is gone.
    ServerDown(String),
    /// Another worker saw the server die; this attempt was not started.
    NotStarted,
}

struct Try {
    record: AttemptRecord,
    connect_refused: bool,
    rejected: Option<(u16, String)>,
    /// `429`/`503`: the server said "not now".
    rate_limited: Option<NotNow>,
    /// The request carried the budget as `max_tokens`.
    sent_max_tokens: bool,
    /// The cache-defeating fields the request carried.
    sent_cache_fields: Vec<&'static str>,
    /// The server failed the request because the requests in flight together outgrew the
    /// cache they share (it fits alone).
    shared_capacity_exceeded: bool,
}

impl Try {
    fn new(record: AttemptRecord) -> Self {
        Self {
            record,
            shared_capacity_exceeded: false,
            connect_refused: false,
            rejected: None,
            rate_limited: None,
            sent_max_tokens: false,
            sent_cache_fields: Vec::new(),
        }
    }
}

/// A `429`/`503` answer, with how long the server asked to wait, if it did.
#[derive(Debug, Clone, Copy)]
struct NotNow {
    asked: Option<Duration>,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("model", &self.model)
            .field("max_tries", &self.max_tries)
            .finish_non_exhaustive()
    }
}

impl Runner<'_> {
    /// Runs one task sample until a scored outcome or `max_tries` infrastructure failures.
    pub(crate) async fn attempt(
        &self,
        task: &Task,
        sample: u32,
        phase: AttemptPhase,
        budget_tokens: u32,
    ) -> Result<AttemptEnd, HardsuiteError> {
        let (mut n_refused, mut last, mut failures, mut limited) = (0, None, 0, 0);
        let mut try_number = self.tries_on_file(task, sample, phase);
        // Why this attempt's tries run alone, once the server failed one for shared capacity.
        let mut alone: Option<String> = None;
        let weight = crate::room::weight(task, budget_tokens);
        while failures < self.max_tries.max(1) {
            try_number += 1;
            if self.stop.load(Ordering::SeqCst) {
                return Ok(if last.is_some() {
                    AttemptEnd::Done
                } else {
                    AttemptEnd::NotStarted
                });
            }
            let (mut attempt, in_flight) = self
                .placed_try(
                    task,
                    (sample, phase, budget_tokens, try_number),
                    weight,
                    alone.as_deref(),
                )
                .await;
            // A rate limit within the wait budget: wait as the server asked and try again,
            // without using up a try.
            let wait = attempt
                .rate_limited
                .and_then(|not_now| self.rate_limit_wait(not_now.asked, limited));
            if let Some((wait, cause, asked)) = wait {
                attempt.record.wait = Some(TryWait {
                    cause: cause.as_str().to_owned(),
                    waited_ms: wait.as_secs_f64() * 1e3,
                    asked_ms: asked.map(|a| a.as_secs_f64() * 1e3),
                });
                self.journal
                    .append(&HardsuiteJournalLine::Attempt(attempt.record.clone()))?;
                self.observer.note(&format!(
                    "task {} #{sample}: rate-limited, waiting {:.1} s",
                    task.id,
                    wait.as_secs_f64()
                ));
                limited += 1;
                last = Some(attempt.record);
                tokio::time::sleep(wait).await;
                continue;
            }
            limited = 0;
            if attempt.rate_limited.is_none() && self.adaptive {
                self.slots.on_success();
            }
            failures += 1;
            self.journal
                .append(&HardsuiteJournalLine::Attempt(attempt.record.clone()))?;
            if self.send_budget_as_completion_cap(&attempt) {
                failures -= 1;
                continue;
            }
            if self.stop_sending_refused_cache_field(&attempt) {
                failures -= 1;
                continue;
            }
            if alone.is_none()
                && let Some(why) = self.must_run_alone(&attempt, task, sample, &in_flight)
            {
                alone = Some(why);
                failures -= 1;
                continue;
            }
            if let Some((status, body)) = attempt.rejected {
                self.stop.store(true, Ordering::SeqCst);
                return Err(HardsuiteError::Rejected {
                    task_id: task.id.clone(),
                    status,
                    body,
                });
            }
            if attempt.connect_refused {
                n_refused += 1;
            }
            let scored = attempt.record.is_scored();
            let detail = attempt.record.detail.clone();
            last = Some(attempt.record);
            if scored {
                break;
            }
            if n_refused == self.max_tries.max(1) {
                self.stop.store(true, Ordering::SeqCst);
                return Ok(AttemptEnd::ServerDown(format!(
                    "task {} was refused at connect {n_refused} times in a row ({detail})",
                    task.id
                )));
            }
            if failures < self.max_tries {
                tokio::time::sleep(self.retry_backoff * 2_u32.pow(failures - 1)).await;
            }
        }
        let Some(record) = last else {
            return Ok(AttemptEnd::NotStarted);
        };
        self.report_progress(&record);
        Ok(AttemptEnd::Done)
    }

    /// The tries a resumed run's journal holds for this attempt (0 for a new one).
    fn tries_on_file(&self, task: &Task, sample: u32, phase: AttemptPhase) -> u32 {
        self.tries_before
            .get(&(task.id.clone(), sample, phase))
            .copied()
            .unwrap_or(0)
    }

    /// One try, once there is room for it in the cache the server's requests share (all of it,
    /// `alone`), a concurrency slot and its turn at the rate cap; with what was in flight
    /// beside it, in words.
    async fn placed_try(
        &self,
        task: &Task,
        (sample, phase, budget_tokens, try_number): (u32, AttemptPhase, u32, u32),
        weight: u64,
        alone: Option<&str>,
    ) -> (Try, String) {
        let asked_for_room = Instant::now();
        let room = self.room.take(weight, alone.is_some()).await;
        let room_wait = asked_for_room.elapsed();
        let slot = self.slots.acquire().await;
        self.pacer.wait_turn().await;
        let mut attempt = self
            .one_try(task, sample, phase, budget_tokens, try_number)
            .await;
        drop(slot);
        let in_flight = room.in_flight();
        drop(room);
        attempt.record.alone = alone.map(str::to_owned);
        // A wait of a millisecond or more is the plan holding the try back.
        attempt.record.room_wait_ms =
            (room_wait >= Duration::from_millis(1)).then_some(room_wait.as_secs_f64() * 1e3);
        (attempt, in_flight)
    }

    /// Why the attempt's next try runs alone, when the server failed this one for shared
    /// capacity: each prompt fits the server alone, but together they outgrew the cache its
    /// requests share. That next try uses up no try.
    fn must_run_alone(
        &self,
        attempt: &Try,
        task: &Task,
        sample: u32,
        in_flight: &str,
    ) -> Option<String> {
        if !attempt.shared_capacity_exceeded {
            return None;
        }
        let why = format!(
            "the server failed it for shared capacity ({in_flight}: {})",
            attempt.record.detail.trim_start_matches("infra:")
        );
        self.observer.note(&format!(
            "task {} #{sample}: {why}; trying it again alone",
            task.id
        ));
        Some(why)
    }

    /// A try refused because it sent the budget as `max_tokens` to a model that takes only
    /// `max_completion_tokens`: the budget goes that way from now on, and the try is made again
    /// without using one up.
    fn send_budget_as_completion_cap(&self, attempt: &Try) -> bool {
        let Some((_, body)) = &attempt.rejected else {
            return false;
        };
        if !attempt.sent_max_tokens || vernier_openai::refused_field(body) != Some("max_tokens") {
            return false;
        }
        if !self.completion_cap.swap(true, Ordering::SeqCst) {
            self.observer.warn(
                "the server refuses `max_tokens`; the budget goes as `max_completion_tokens` from now on",
            );
        }
        true
    }

    /// A try refused because it carried a cache-defeating field the server does not know: the
    /// field is no longer sent (the opening nonce still defeats a prefix cache), and the try is
    /// made again without using one up.
    fn stop_sending_refused_cache_field(&self, attempt: &Try) -> bool {
        let Some((_, body)) = &attempt.rejected else {
            return false;
        };
        let Some(field) = vernier_openai::refused_field(body) else {
            return false;
        };
        if !attempt.sent_cache_fields.contains(&field) {
            return false;
        }
        if self.refused_cache_fields.refuse(field) {
            self.observer.warn(&format!(
                "the server refuses `{field}`; it is no longer sent (each prompt's opening nonce still defeats a prefix cache)"
            ));
        }
        true
    }

    /// The wait after the `n`-th rate-limited answer in a row, taken from the run's budget;
    /// `None` when the budget cannot cover it (the try then counts as a failure).
    fn rate_limit_wait(
        &self,
        asked: Option<Duration>,
        n: u32,
    ) -> Option<(Duration, vernier_run::WaitCause, Option<Duration>)> {
        if self.adaptive {
            self.slots.on_rate_limited();
        }
        let (wait, cause) = self.wait_budget.take(asked, n)?;
        Some((wait, cause, asked))
    }

    /// Writes what the model sent in this try to `replies.jsonl`, before the try's journal
    /// line.
    fn keep_reply(
        &self,
        record: &AttemptRecord,
        accumulated: &vernier_openai::ChatAccumulator,
        broken: bool,
        grader: Option<vernier_tasks::GradeEvidence>,
    ) -> Result<(), vernier_journal::JournalError> {
        let reasoning = accumulated.reasoning();
        self.replies.append(&ReplyRecord {
            task_id: record.task_id.clone(),
            sample: record.sample,
            phase: record.phase,
            try_number: record.try_number,
            content: accumulated.content().to_owned(),
            reasoning: (!reasoning.is_empty()).then(|| reasoning.to_owned()),
            tool_calls: accumulated
                .tool_calls()
                .iter()
                .map(|call| ReplyToolCallRecord {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                })
                .collect(),
            finish_reason: accumulated.finish_reason().map(str::to_owned),
            usage: accumulated
                .usage()
                .and_then(|usage| serde_json::to_value(usage).ok()),
            broken,
            grader,
        })
    }

    fn report_progress(&self, record: &AttemptRecord) {
        let done = self.n_done.fetch_add(1, Ordering::SeqCst) + 1;
        let planned = self.n_planned.load(Ordering::SeqCst);
        self.observer.attempt_done(done, planned, record);
    }

    /// The request for `task`, its budget as `max_completion_tokens` once the server refused
    /// `max_tokens`.
    fn request_for(&self, task: &Task, budget_tokens: u32) -> Result<ChatRequest, String> {
        let mut request = build_request(
            task,
            &self.model,
            &self.sampling,
            &self.extra_body,
            budget_tokens,
        )?;
        if self.completion_cap.load(Ordering::SeqCst) {
            request.max_completion_tokens = request.max_tokens.take();
        }
        Ok(request)
    }

    async fn one_try(
        &self,
        task: &Task,
        sample: u32,
        phase: AttemptPhase,
        budget_tokens: u32,
        try_number: u32,
    ) -> Try {
        let mut record = empty_record(task, sample, phase, budget_tokens, try_number);
        let mut request = match self.request_for(task, budget_tokens) {
            Ok(request) => request,
            Err(message) => {
                record.detail = format!("infra:request {message}");
                return Try::new(record);
            }
        };
        let mut sent_cache_fields = Vec::new();
        if let Err(message) = self.attach_media(task, &mut request).await {
            record.detail = format!("infra:request {message}");
            return Try::new(record);
        }
        if let Some(spec) = task.spec::<vernier_tasks::ContextSpec>() {
            match self.context_request(spec, &mut request).await {
                Ok((context, fields)) => {
                    record.context = Some(context);
                    sent_cache_fields = fields;
                }
                Err(message) => {
                    record.detail = format!("infra:{message}");
                    return Try::new(record);
                }
            }
        }
        let sent_max_tokens = request.max_tokens.is_some();
        let in_flight = InFlight::enter(&self.in_flight);
        record.in_flight = Some(in_flight.count);
        let mut stream = match self.client.metered_chat_stream(&request).await {
            Ok(stream) => stream,
            Err(error) => {
                return unopened(record, &error, sent_max_tokens, sent_cache_fields);
            }
        };
        // Only the sum is kept (the reply, from the accumulator), so the events are read as
        // the meter's counts, without handing out each chunk.
        while let Some(event) = stream.next_observation().await {
            if let Err(error) = event {
                // A stream that breaks off is an infrastructure try: never scored, retried.
                // What arrived is kept.
                if let Err(error) = self.keep_reply(&record, stream.accumulated(), true, None) {
                    record.detail = format!("infra:keep the reply: {error}");
                }
                record.detail = format!("infra:{}", one_line(&error));
                record.elapsed_ms =
                    Some(stream.stream().request_sent_at().elapsed().as_secs_f64() * 1e3);
                return Try {
                    shared_capacity_exceeded: vernier_openai::is_shared_capacity_exceeded(&error),
                    ..Try::new(record)
                };
            }
        }
        let metered = stream.finish();
        // The reply is read: the request no longer holds a place on the server.
        drop(in_flight);
        let (measurement, accumulated) = (&metered.measurement, &metered.accumulated);
        let reasoning = accumulated.reasoning();
        let reply = Reply {
            content: accumulated.content().to_owned(),
            reasoning: (!reasoning.is_empty()).then(|| reasoning.to_owned()),
            tool_calls: accumulated
                .tool_calls()
                .iter()
                .map(|call| ReplyToolCall::new(call.name.clone(), call.arguments.clone()))
                .collect(),
            finish_reason: accumulated.finish_reason().map(str::to_owned),
        };
        record_measurement(&mut record, measurement, &reply, budget_tokens);
        record.media_tokens = accumulated
            .usage()
            .and_then(vernier_openai::Usage::media_tokens);
        if let Some(context) = &mut record.context {
            context.prefill_tokens_per_s = measurement.prefill_tokens_per_s;
            if let (Some(sizer), Some(spec), Some(tokens)) = (
                &self.context_sizer,
                task.spec::<vernier_tasks::ContextSpec>(),
                measurement.prompt_tokens,
            ) {
                sizer.learn(spec.haystack, context.n_units, tokens);
            }
        }
        let grade_started = Instant::now();
        let outcome = task.check(&reply, self.grader.as_ref()).await;
        record.grade_ms = Some(grade_started.elapsed().as_secs_f64() * 1e3);
        record.outcome = outcome.kind;
        record.detail = outcome.detail;
        record.answer = outcome.provisional_answer;
        record.rule = outcome.rule;
        // The reply and what the grader saw go on file before the try's journal line.
        if let Err(error) = self.keep_reply(&record, accumulated, false, outcome.evidence) {
            record.outcome = OutcomeKind::Infra;
            record.detail = format!("infra:keep the reply: {error}");
        }
        Try {
            sent_max_tokens,
            ..Try::new(record)
        }
    }

    /// A vision task's images or a video task's clips, made unique for this request, after its
    /// text.
    async fn attach_media(&self, task: &Task, request: &mut ChatRequest) -> Result<(), String> {
        if let Some(spec) = task.spec::<vernier_tasks::VisionSpec>() {
            attach_images(
                request,
                spec,
                self.media_nonce.fetch_add(1, Ordering::Relaxed),
            );
        }
        if let Some(spec) = task.spec::<vernier_tasks::VideoSpec>() {
            let nonce = self.media_nonce.fetch_add(1, Ordering::Relaxed);
            // Encoding takes tens of milliseconds: off the threads that read other streams.
            let (spec, video_as) = (spec.clone(), self.video_as);
            let parts = tokio::task::spawn_blocking(move || video_parts(&spec, nonce, video_as))
                .await
                .unwrap_or_else(|error| Err(format!("the encoder stopped: {error}")))
                .map_err(|message| format!("the clips do not encode: {message}"))?;
            with_media_parts(request, parts);
        }
        Ok(())
    }

    /// Renders a long-context task's prompt for this request, sized in the server's tokens,
    /// and adds the cache-defeating fields the server has not refused.
    async fn context_request(
        &self,
        spec: &vernier_tasks::ContextSpec,
        request: &mut ChatRequest,
    ) -> Result<(ContextTry, Vec<&'static str>), String> {
        let Some(sizer) = &self.context_sizer else {
            return Err("no prompt sizer for a context task".to_owned());
        };
        let template = request.clone();
        let probe = move |prompt: String| {
            let mut probe = template.clone();
            probe.messages = vec![ChatMessage::user(prompt)];
            probe.max_tokens = Some(1);
            probe.max_completion_tokens = None;
            probe.tools = None;
            probe
        };
        let prepared = sizer
            .prepare(&self.client, &self.model, spec, &probe)
            .await?;
        request.messages = vec![ChatMessage::user(prepared.rendered.prompt.clone())];
        let refused = self.refused_cache_fields.snapshot();
        let mut sent = Vec::new();
        for field in CACHE_FIELDS {
            if refused.contains(&field) || self.extra_body.contains_key(field) {
                continue;
            }
            let value = if field == "cache_salt" {
                Value::String(prepared.nonce.clone())
            } else {
                Value::Bool(false)
            };
            request.extra.insert(field.to_owned(), value);
            sent.push(field);
        }
        Ok((
            ContextTry {
                target_tokens: spec.target_tokens,
                depth_pct: spec.depth_pct,
                n_asked: spec.needles.iter().filter(|needle| needle.asked).count(),
                haystack: spec.haystack.as_str().to_owned(),
                n_units: prepared.n_units,
                nonce: prepared.nonce,
                counted_tokens: prepared.counted_tokens,
                count_method: sizer.method.as_str().to_owned(),
                prefill_tokens_per_s: None,
                needle_depths: prepared.rendered.depths,
            },
            sent,
        ))
    }
}

/// A request in flight: counted while it lives (its stream open, its reply read).
struct InFlight {
    counter: Arc<AtomicUsize>,
    /// Requests in flight as it was sent, itself included.
    count: u32,
}

impl InFlight {
    fn enter(counter: &Arc<AtomicUsize>) -> Self {
        let count = counter.fetch_add(1, Ordering::SeqCst) + 1;
        Self {
            counter: Arc::clone(counter),
            count: u32::try_from(count).unwrap_or(u32::MAX),
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The try of a request whose stream did not open: refused for its length
/// (`context_exceeded`, with the server's words), rate-limited, refused, or failed.
fn unopened(
    mut record: AttemptRecord,
    error: &vernier_openai::ClientError,
    sent_max_tokens: bool,
    sent_cache_fields: Vec<&'static str>,
) -> Try {
    // The server cannot see the images, or cannot take this length: its own words are kept,
    // and the try is neither retried nor scored.
    let refused = if vernier_openai::is_media_unsupported(error)
        || vernier_openai::is_tools_unsupported(error)
        || vernier_openai::is_response_format_unsupported(error)
    {
        Some(OutcomeKind::Unsupported)
    } else if vernier_openai::is_context_exceeded(error) {
        Some(OutcomeKind::ContextExceeded)
    } else {
        None
    };
    if let Some(kind) = refused {
        record.outcome = kind;
        kind.as_str().clone_into(&mut record.detail);
        record.server_message = Some(server_message(error));
        return Try::new(record);
    }
    let connect_refused = matches!(error, vernier_openai::ClientError::Connect { .. });
    let rate_limited = match error {
        vernier_openai::ClientError::Http {
            status: 429 | 503,
            retry_after,
            ..
        } => Some(NotNow {
            asked: *retry_after,
        }),
        _ => None,
    };
    let rejected = match error {
        vernier_openai::ClientError::Http { status, body, .. }
            if matches!(status, 400 | 401 | 403 | 404 | 422) =>
        {
            Some((*status, body.clone()))
        }
        _ => None,
    };
    record.detail = format!("infra:{}", one_line(error));
    Try {
        record,
        connect_refused,
        rejected,
        rate_limited,
        sent_max_tokens,
        sent_cache_fields,
        shared_capacity_exceeded: vernier_openai::is_shared_capacity_exceeded(error),
    }
}

/// The server's own words in a refusal: the JSON body's `error.message` (or `message`), else
/// the body, cut at 1,000 characters.
fn server_message(error: &vernier_openai::ClientError) -> String {
    let vernier_openai::ClientError::Http { status, body, .. } = error else {
        return one_line(error);
    };
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|value| {
            value
                .pointer("/error/message")
                .or_else(|| value.get("message"))
                .and_then(Value::as_str)
        })
        .map_or_else(|| body.clone(), str::to_owned);
    let cut: String = message.chars().take(1_000).collect();
    format!("{status}: {cut}")
}

fn empty_record(
    task: &Task,
    sample: u32,
    phase: AttemptPhase,
    budget_tokens: u32,
    try_number: u32,
) -> AttemptRecord {
    AttemptRecord {
        task_id: task.id.clone(),
        category: task.category,
        sample,
        phase,
        try_number,
        budget_tokens,
        outcome: OutcomeKind::Infra,
        detail: String::new(),
        answer: None,
        finish_reason: None,
        completion_tokens: None,
        token_source: None,
        token_count_is_lower_bound: false,
        reasoning_tokens: None,
        content_chars: 0,
        reasoning_chars: 0,
        n_tool_calls: 0,
        ended_in_reasoning: false,
        hit_budget: false,
        elapsed_ms: None,
        ttft_ms: None,
        decode_tokens_per_s: None,
        grade_ms: None,
        wait: None,
        context: None,
        clock: None,
        prompt_tokens: None,
        cached_tokens: None,
        media_tokens: None,
        server_message: None,
        alone: None,
        room_wait_ms: None,
        in_flight: None,
        rule: None,
    }
}

/// Copies what the meter measured and what the reply holds into the record.
fn record_measurement(
    record: &mut AttemptRecord,
    measurement: &Measurement,
    reply: &Reply,
    budget_tokens: u32,
) {
    let cut_off = reply.finish_reason.as_deref() == Some("length");
    record.finish_reason.clone_from(&reply.finish_reason);
    record.completion_tokens = Some(measurement.completion_tokens);
    record.token_source = Some(measurement.token_source.as_str().to_owned());
    record.token_count_is_lower_bound = measurement.token_count_is_lower_bound;
    record.reasoning_tokens = measurement.reasoning_tokens;
    record.content_chars = reply.content.chars().count();
    record.reasoning_chars = reply.reasoning.as_deref().map_or(0, |r| r.chars().count());
    record.n_tool_calls = reply.tool_calls.len();
    record.ended_in_reasoning =
        cut_off && reply.content.trim().is_empty() && reply.tool_calls.is_empty();
    record.hit_budget = cut_off || measurement.completion_tokens >= u64::from(budget_tokens);
    record.elapsed_ms = Some(measurement.end_to_end_ms);
    record.ttft_ms = measurement.ttft_ms;
    record.decode_tokens_per_s = measurement.decode_tokens_per_s;
    record.clock = Some(measurement.clock.as_str().to_owned());
    record.prompt_tokens = measurement.prompt_tokens;
    record.cached_tokens = measurement.cached_prompt_tokens;
}

mod media;
mod request;
pub(crate) use request::build_request;
#[cfg(test)]
mod tests;
