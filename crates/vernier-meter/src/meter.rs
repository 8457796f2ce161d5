//! The meter: records observations on the hot path and computes a [`Measurement`] at the end.

use std::time::{Duration, Instant};

use crate::measurement::{
    CrossCheck, EventClock, LatencySummary, Measurement, TokenSource, TokensPerEventHistogram,
};
use crate::observation::{Final, Observation};
use crate::summary::summarise;

/// Records the events of one streamed request and measures them.
///
/// [`Meter::new`] reserves room for `expected_events` observations. While the stream stays
/// within that capacity, [`Meter::observe`] only copies the observation into the reserved
/// buffer: it never allocates. Past the capacity the buffer grows (amortised doubling), so
/// size `expected_events` from `max_tokens` plus a few (role chunk, usage chunk).
/// [`Meter::finish`] does all the arithmetic and may allocate.
#[derive(Debug, Clone)]
pub struct Meter {
    request_sent_at: Instant,
    headers_received_at: Option<Instant>,
    observations: Vec<Observation>,
}

impl Meter {
    /// A meter for a request sent at `request_sent_at`, with room for `expected_events`.
    #[must_use]
    pub fn new(request_sent_at: Instant, expected_events: usize) -> Self {
        Self {
            request_sent_at,
            headers_received_at: None,
            observations: Vec::with_capacity(expected_events),
        }
    }

    /// Empties the meter for a new request sent at `request_sent_at`, keeping its capacity, so a
    /// meter reused across requests allocates nothing after the first.
    pub fn restart(&mut self, request_sent_at: Instant) {
        self.request_sent_at = request_sent_at;
        self.headers_received_at = None;
        self.observations.clear();
    }

    /// Records when the response headers arrived. Only the first call counts.
    pub fn headers_received(&mut self, at: Instant) {
        if self.headers_received_at.is_none() {
            self.headers_received_at = Some(at);
        }
    }

    /// Records one event. Does not allocate while within the capacity reserved by [`Meter::new`].
    #[inline]
    pub fn observe(&mut self, observation: &Observation) {
        self.observations.push(*observation);
    }

    /// When the request was sent.
    #[must_use]
    pub const fn request_sent_at(&self) -> Instant {
        self.request_sent_at
    }

    /// Events observed so far.
    #[must_use]
    pub fn n_events(&self) -> usize {
        self.observations.len()
    }

    /// Events the meter can hold before its buffer must grow.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.observations.capacity()
    }

    /// The observations recorded so far, in arrival order.
    #[must_use]
    pub fn observations(&self) -> &[Observation] {
        &self.observations
    }

    /// Measures the request from the events observed and what is known at the end.
    #[must_use]
    pub fn finish(&self, final_counts: &Final) -> Measurement {
        Computation::new(self, final_counts).into_measurement()
    }
}

/// A token-bearing event reduced to what the arithmetic needs.
#[derive(Debug, Clone, Copy)]
struct TokenEvent {
    at: Instant,
    read_at: Option<Instant>,
    read_seq: Option<u64>,
    /// Bytes of output text (content, reasoning, tool-call text) the event carried.
    text_bytes: u64,
    token_ids: Option<u32>,
    usage_delta: Option<u64>,
    logprob_tokens: Option<u32>,
}

impl TokenEvent {
    /// Tokens in this event by a per-event `source`; `None` when the event does not carry it or
    /// the source is a per-request total.
    fn tokens(&self, source: TokenSource) -> Option<u64> {
        match source {
            TokenSource::TokenIds => self.token_ids.map(u64::from),
            TokenSource::ContinuousUsage => self.usage_delta,
            TokenSource::Logprobs => self.logprob_tokens.map(u64::from),
            _ => None,
        }
    }
}

/// Totals of one token source over the request.
#[derive(Debug, Clone, Copy)]
struct SourceTotal {
    source: TokenSource,
    tokens: u64,
}

#[derive(Debug)]
struct Computation<'a> {
    meter: &'a Meter,
    final_counts: &'a Final,
    token_events: Vec<TokenEvent>,
    first_content_at: Option<Instant>,
    max_cumulative_usage: Option<u64>,
    warnings: Vec<String>,
}

/// The first event's tokens estimated from its text, with the bounds the counts allow.
struct FirstEventEstimate {
    tokens: f64,
    bounds: (f64, f64),
    note: String,
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn per_second(count: f64, span: Duration) -> Option<f64> {
    let seconds = span.as_secs_f64();
    (seconds > 0.0 && count.is_finite()).then(|| count / seconds)
}

impl<'a> Computation<'a> {
    fn new(meter: &'a Meter, final_counts: &'a Final) -> Self {
        let mut token_events = Vec::with_capacity(meter.observations.len());
        let mut first_content_at = None;
        let mut previous_cumulative: u64 = 0;
        let mut max_cumulative_usage: Option<u64> = None;
        let mut usage_went_backwards = false;
        for observation in &meter.observations {
            let usage_delta = observation.cumulative_completion_tokens.map(|cumulative| {
                if cumulative < previous_cumulative {
                    usage_went_backwards = true;
                }
                let delta = cumulative.saturating_sub(previous_cumulative);
                previous_cumulative = previous_cumulative.max(cumulative);
                max_cumulative_usage =
                    Some(max_cumulative_usage.map_or(cumulative, |max| max.max(cumulative)));
                delta
            });
            if first_content_at.is_none() && observation.is_content_bearing() {
                first_content_at = Some(observation.at);
            }
            if observation.is_token_bearing() {
                token_events.push(TokenEvent {
                    at: observation.at,
                    read_at: observation.read_at,
                    read_seq: observation.read_seq,
                    text_bytes: u64::from(observation.content_bytes)
                        + u64::from(observation.reasoning_bytes)
                        + u64::from(observation.tool_call_bytes),
                    token_ids: observation.token_ids,
                    usage_delta,
                    logprob_tokens: observation.logprob_tokens,
                });
            }
        }
        let mut warnings = Vec::new();
        if usage_went_backwards {
            warnings.push("per-chunk cumulative usage decreased during the stream; the server's per-chunk usage is suspect".to_owned());
        }
        Self {
            meter,
            final_counts,
            token_events,
            first_content_at,
            max_cumulative_usage,
            warnings,
        }
    }

    /// Sum of a per-event count when every token-bearing event carries it; warns on partial presence.
    fn per_event_total(&mut self, source: TokenSource) -> Option<u64> {
        let present = self
            .token_events
            .iter()
            .filter(|event| event.tokens(source).is_some())
            .count();
        if present == 0 {
            return None;
        }
        if present < self.token_events.len() {
            self.warnings.push(format!(
                "{source} present on only {present} of {} token-bearing events; not used as a token source",
                self.token_events.len()
            ));
            return None;
        }
        Some(
            self.token_events
                .iter()
                .filter_map(|event| event.tokens(source))
                .sum(),
        )
    }

    /// Every source present, best first.
    fn available_sources(&mut self) -> Vec<SourceTotal> {
        let mut sources = Vec::with_capacity(6);
        if let Some(tokens) = self.per_event_total(TokenSource::TokenIds) {
            sources.push(SourceTotal {
                source: TokenSource::TokenIds,
                tokens,
            });
        }
        if self.per_event_total(TokenSource::ContinuousUsage).is_some()
            && let Some(tokens) = self.max_cumulative_usage
        {
            sources.push(SourceTotal {
                source: TokenSource::ContinuousUsage,
                tokens,
            });
        }
        if let Some(tokens) = self.per_event_total(TokenSource::Logprobs) {
            sources.push(SourceTotal {
                source: TokenSource::Logprobs,
                tokens,
            });
        }
        if let Some(timings) = self.final_counts.llama_timings {
            sources.push(SourceTotal {
                source: TokenSource::LlamaTimings,
                tokens: timings.predicted_n,
            });
        }
        if let Some(tokens) = self.final_counts.usage_completion_tokens {
            sources.push(SourceTotal {
                source: TokenSource::FinalUsage,
                tokens,
            });
        }
        sources.push(SourceTotal {
            source: TokenSource::EventCount,
            tokens: self.token_events.len() as u64,
        });
        sources
    }

    /// Tokens in each token-bearing event by a per-event source.
    fn tokens_by_event(&self, source: TokenSource) -> Option<Vec<u64>> {
        source.is_per_event().then(|| {
            self.token_events
                .iter()
                .map(|event| event.tokens(source).unwrap_or(0))
                .collect()
        })
    }

    fn cross_check(&mut self, sources: &[SourceTotal]) -> Vec<CrossCheck> {
        let Some(best) = sources.first().copied() else {
            return Vec::new();
        };
        let mut checks = Vec::new();
        for other in sources
            .iter()
            .skip(1)
            .filter(|other| other.source != TokenSource::EventCount)
        {
            let agrees = best.tokens == other.tokens;
            if !agrees {
                self.warnings.push(format!(
                    "token sources disagree: {} counts {} completion tokens, {} counts {}",
                    best.source, best.tokens, other.source, other.tokens
                ));
            }
            checks.push(CrossCheck {
                source_a: best.source,
                source_b: other.source,
                tokens_a: best.tokens,
                tokens_b: other.tokens,
                agrees,
            });
        }
        checks
    }

    /// Tokens in the first token-bearing event when no source counts tokens per event, within
    /// what the counts allow (at least one token, and at most what leaves one for every later
    /// event). Two estimates: the `average` tokens per event, exact when every event carries
    /// the same, and the first event's share of the stream's text at the stream's bytes per
    /// token, which sees a first event unlike the rest (vLLM's single prefill token before
    /// speculative steps of several). When they agree within one token the first event is a
    /// typical one and the average is kept (a few tokens' text varies more than that); when
    /// they do not, the text's estimate is. A text-free stream keeps the average.
    fn first_event_estimate(&self, completion_tokens: u64, average: f64) -> FirstEventEstimate {
        let n_events = self.token_events.len() as u64;
        let low = 1.0_f64.min(completion_tokens as f64);
        let high = (completion_tokens.saturating_sub(n_events.saturating_sub(1)) as f64).max(low);
        let total_bytes: u64 = self.token_events.iter().map(|e| e.text_bytes).sum();
        let first_bytes = self.token_events.first().map_or(0, |e| e.text_bytes);
        if total_bytes == 0 || first_bytes == 0 {
            return FirstEventEstimate {
                tokens: average.clamp(low, high),
                bounds: (low, high),
                note: format!(
                    "no per-event token counts and no text to weigh: tokens in the first event estimated as {completion_tokens} completion tokens / {n_events} token-bearing events (bounds {low:.0}–{high:.0})"
                ),
            };
        }
        let bytes_per_token = total_bytes as f64 / completion_tokens.max(1) as f64;
        let by_text = (first_bytes as f64 / bytes_per_token).clamp(low, high);
        let average = average.clamp(low, high);
        if (by_text - average).abs() < 1.0 {
            return FirstEventEstimate {
                tokens: average,
                bounds: (low, high),
                note: format!(
                    "no per-event token counts: tokens in the first event estimated as {completion_tokens} completion tokens / {n_events} token-bearing events = {average:.2}, which its text agrees with ({first_bytes} bytes at {bytes_per_token:.2} bytes per token = {by_text:.2}; bounds {low:.0}–{high:.0})"
                ),
            };
        }
        FirstEventEstimate {
            tokens: by_text,
            bounds: (low, high),
            note: format!(
                "no per-event token counts: the first event is unlike the average of {average:.2} tokens per event, so its tokens are estimated from its text as {first_bytes} bytes at {bytes_per_token:.2} bytes per token = {by_text:.2} (bounds {low:.0}–{high:.0})"
            ),
        }
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one linear pass over the definitions, easier to audit in one place"
    )]
    fn into_measurement(mut self) -> Measurement {
        let sent = self.meter.request_sent_at;
        let final_counts = self.final_counts;
        let sources = self.available_sources();
        let best = sources.first().copied().unwrap_or(SourceTotal {
            source: TokenSource::EventCount,
            tokens: 0,
        });
        let cross_checks = self.cross_check(&sources);
        let completion_tokens = best.tokens;
        let n_token_events = self.token_events.len() as u64;

        let tokens_by_event = self.tokens_by_event(best.source);
        let estimated_tokens_per_event =
            (n_token_events > 0).then(|| completion_tokens as f64 / n_token_events as f64);
        let mut first_event_tokens_bounds = None;
        let (first_event_tokens, first_event_tokens_estimated) =
            match (&tokens_by_event, estimated_tokens_per_event) {
                (Some(by_event), _) => {
                    (by_event.first().map_or(0.0, |&tokens| tokens as f64), false)
                }
                (None, Some(average)) => {
                    let estimate = self.first_event_estimate(completion_tokens, average);
                    first_event_tokens_bounds = Some(estimate.bounds);
                    if completion_tokens != n_token_events {
                        self.warnings.push(estimate.note);
                    }
                    (estimate.tokens, true)
                }
                (None, None) => (0.0, false),
            };

        let first_token_at = self.token_events.first().map(|event| event.at);
        let last_token_at = self.token_events.last().map(|event| event.at);
        let ttft = first_token_at.map(|at| at.saturating_duration_since(sent));
        let span = match (first_token_at, last_token_at) {
            (Some(first), Some(last)) if n_token_events >= 2 => {
                Some(last.saturating_duration_since(first))
            }
            _ => None,
        };
        let decode_tokens_per_s = span.and_then(|span| {
            per_second(
                (completion_tokens as f64 - first_event_tokens).max(0.0),
                span,
            )
        });
        let event_rate_per_s = span.and_then(|span| per_second((n_token_events - 1) as f64, span));

        let prompt_tokens = final_counts
            .usage_prompt_tokens
            .or_else(|| final_counts.llama_timings.map(|timings| timings.prompt_n));
        let prefill_tokens_per_s = match (prompt_tokens, ttft) {
            (Some(prompt), Some(ttft)) => per_second(prompt as f64, ttft),
            _ => None,
        };

        let mut histogram = tokens_by_event
            .as_ref()
            .map(|_| TokensPerEventHistogram::default());
        let mut gaps = Vec::with_capacity(self.token_events.len());
        let mut per_token = Vec::with_capacity(self.token_events.len());
        let mut pending_gap_ms = 0.0;
        for (index, event) in self.token_events.iter().enumerate() {
            let tokens = match &tokens_by_event {
                Some(by_event) => by_event.get(index).map_or(0.0, |&tokens| tokens as f64),
                None => estimated_tokens_per_event.unwrap_or(0.0),
            };
            if let (Some(histogram), Some(by_event)) = (histogram.as_mut(), &tokens_by_event) {
                histogram.record(by_event.get(index).copied().unwrap_or(0));
            }
            let Some(previous) = index
                .checked_sub(1)
                .and_then(|previous| self.token_events.get(previous))
            else {
                continue;
            };
            let gap_ms = milliseconds(event.at.saturating_duration_since(previous.at));
            gaps.push((gap_ms, 1.0));
            pending_gap_ms += gap_ms;
            if tokens > 0.0 {
                per_token.push((pending_gap_ms / tokens, tokens));
                pending_gap_ms = 0.0;
            }
        }

        self.add_final_warnings(completion_tokens, best.source, n_token_events);
        let (clock, client_lag_ms, n_coalesced_reads) = self.receive_side();
        let first_token_read_shared = self.first_token_read_shared();

        Measurement {
            ttft_ms: ttft.map(milliseconds),
            time_to_first_byte_ms: self
                .meter
                .headers_received_at
                .map(|at| milliseconds(at.saturating_duration_since(sent))),
            time_to_first_content_ms: self
                .first_content_at
                .map(|at| milliseconds(at.saturating_duration_since(sent))),
            end_to_end_ms: milliseconds(final_counts.completed_at.saturating_duration_since(sent)),
            decode_tokens_per_s,
            prefill_tokens_per_s,
            event_rate_per_s,
            tokens_per_event: estimated_tokens_per_event,
            tokens_per_event_histogram: histogram,
            inter_token_latency_ms: summarise(per_token),
            event_gap_ms: summarise(gaps),
            n_events: self.meter.observations.len() as u64,
            n_token_events,
            completion_tokens,
            prompt_tokens,
            cached_prompt_tokens: final_counts.cached_prompt_tokens,
            reasoning_tokens: final_counts.reasoning_tokens,
            first_event_tokens,
            first_event_tokens_estimated,
            first_event_tokens_bounds,
            token_source: best.source,
            token_count_is_lower_bound: best.source == TokenSource::EventCount,
            cross_checks,
            warnings: self.warnings,
            finish_reason: final_counts.finish_reason.clone(),
            clock,
            client_lag_ms,
            n_coalesced_reads,
            first_token_read_shared,
        }
    }

    /// Whether the socket read that completed the first token-bearing event also completed a
    /// later event, of any kind (`None`: no token-bearing event, or reads not numbered).
    fn first_token_read_shared(&self) -> Option<bool> {
        let observations = &self.meter.observations;
        let first = observations
            .iter()
            .position(Observation::is_token_bearing)?;
        let read = observations[first].read_seq?;
        Some(
            observations[first + 1..]
                .iter()
                .any(|later| later.read_seq == Some(read)),
        )
    }

    /// The clock of the token-bearing events, the client's lag behind the kernel per event,
    /// and the reads that completed more than one event.
    fn receive_side(&self) -> (EventClock, Option<LatencySummary>, Option<u64>) {
        let events = &self.token_events;
        let clock = if !events.is_empty() && events.iter().all(|e| e.read_at.is_some()) {
            EventClock::KernelRx
        } else {
            EventClock::Userspace
        };
        let lags: Vec<(f64, f64)> = events
            .iter()
            .filter_map(|e| {
                e.read_at
                    .map(|read_at| (milliseconds(read_at.saturating_duration_since(e.at)), 1.0))
            })
            .collect();
        let coalesced =
            (!events.is_empty() && events.iter().all(|e| e.read_seq.is_some())).then(|| {
                let mut reads: Vec<u64> = events.iter().filter_map(|e| e.read_seq).collect();
                reads.sort_unstable();
                let mut n = 0;
                let mut run = 1;
                for pair in reads.windows(2) {
                    if pair[0] == pair[1] {
                        run += 1;
                        if run == 2 {
                            n += 1;
                        }
                    } else {
                        run = 1;
                    }
                }
                n
            });
        (clock, summarise(lags), coalesced)
    }

    fn add_final_warnings(
        &mut self,
        completion_tokens: u64,
        source: TokenSource,
        n_token_events: u64,
    ) {
        let final_counts = self.final_counts;
        if n_token_events == 0 {
            self.warnings
                .push("no token-bearing event arrived: TTFT and rates are undefined".to_owned());
        }
        if source == TokenSource::EventCount {
            self.warnings.push(
                "no token counts from the server: completion tokens are the count of token-bearing events, a lower bound; request stream_options.include_usage"
                    .to_owned(),
            );
        } else if final_counts.usage_completion_tokens.is_none() {
            self.warnings.push(format!(
                "final usage missing: completion tokens taken from {source}; request stream_options.include_usage to cross-check"
            ));
        }
        if source != TokenSource::EventCount && completion_tokens < n_token_events {
            self.warnings.push(format!(
                "{source} counts {completion_tokens} completion tokens but {n_token_events} events carried output; the count is suspect"
            ));
        }
        if let Some(requested) = final_counts.requested_max_tokens
            && requested != completion_tokens
        {
            let reason = final_counts.finish_reason.as_deref().unwrap_or("unknown");
            self.warnings.push(format!(
                "completion tokens ({completion_tokens}) differ from the requested max_tokens ({requested}), finish reason {reason}; force the length with ignore_eos or min_tokens where the server allows"
            ));
        }
        if let Some(cached) = final_counts.cached_prompt_tokens
            && cached > 0
        {
            let prompt = final_counts
                .usage_prompt_tokens
                .map_or_else(|| "?".to_owned(), |prompt| prompt.to_string());
            self.warnings.push(format!(
                "prefix cache hit: {cached} of {prompt} prompt tokens were cached, so the prefill rate is overstated; open the prompt with a nonce or send cache_salt"
            ));
        }
    }
}
