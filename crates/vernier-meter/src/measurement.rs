//! What the meter produces: [`Measurement`] and its parts.

use serde::{Deserialize, Serialize};

/// Where the completion token count came from. Listed best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TokenSource {
    /// Per-chunk token ids (vLLM `return_token_ids`): exact, per event.
    TokenIds,
    /// Per-chunk cumulative usage (`stream_options.continuous_usage_stats`): per event.
    ContinuousUsage,
    /// Entries in per-chunk `logprobs.content`: one per token, per event.
    Logprobs,
    /// llama.cpp `timings.predicted_n`: a per-request total.
    LlamaTimings,
    /// `usage.completion_tokens` of the final usage object: a per-request total.
    FinalUsage,
    /// The number of token-bearing events: a lower bound, used when nothing else is known.
    EventCount,
}

impl TokenSource {
    /// The snake-case name used in JSON and reports.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TokenIds => "token_ids",
            Self::ContinuousUsage => "continuous_usage",
            Self::Logprobs => "logprobs",
            Self::LlamaTimings => "llama_timings",
            Self::FinalUsage => "final_usage",
            Self::EventCount => "event_count",
        }
    }

    /// Whether the source gives a token count for each event (not only a total).
    #[must_use]
    pub const fn is_per_event(self) -> bool {
        matches!(
            self,
            Self::TokenIds | Self::ContinuousUsage | Self::Logprobs
        )
    }
}

impl std::fmt::Display for TokenSource {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Two token sources compared on the completion token total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossCheck {
    /// The source the measurement uses.
    pub source_a: TokenSource,
    /// The source it is compared with.
    pub source_b: TokenSource,
    /// Completion tokens according to `source_a`.
    pub tokens_a: u64,
    /// Completion tokens according to `source_b`.
    pub tokens_b: u64,
    /// Whether both counts are equal.
    pub agrees: bool,
}

/// Summary of a set of durations in milliseconds. Quantiles are nearest-rank.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Median (nearest-rank 50th percentile).
    pub median_ms: f64,
    /// Nearest-rank 90th percentile.
    pub p90_ms: f64,
    /// Nearest-rank 99th percentile.
    pub p99_ms: f64,
    /// Arithmetic mean (weighted by tokens for inter-token latency).
    pub mean_ms: f64,
    /// Largest value.
    pub max_ms: f64,
}

/// How many token-bearing events carried 0, 1, 2, ..., 16 and 17 or more tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokensPerEventHistogram {
    /// Events that carried bytes but no token by the per-event source (a lagging count).
    pub zero: u64,
    /// `counts[i]` is the number of events that carried `i + 1` tokens, for 1 to 16 tokens.
    pub counts: [u64; 16],
    /// Events that carried 17 tokens or more.
    pub over_16: u64,
}

impl TokensPerEventHistogram {
    /// Counts one event carrying `tokens` tokens.
    pub fn record(&mut self, tokens: u64) {
        match tokens {
            0 => self.zero += 1,
            1..=16 => {
                if let Some(count) = usize::try_from(tokens - 1)
                    .ok()
                    .and_then(|index| self.counts.get_mut(index))
                {
                    *count += 1;
                }
            }
            _ => self.over_16 += 1,
        }
    }

    /// Events that carried exactly `tokens` tokens (`17` and above share one bucket).
    #[must_use]
    pub fn events_with(&self, tokens: u64) -> u64 {
        match tokens {
            0 => self.zero,
            1..=16 => usize::try_from(tokens - 1)
                .ok()
                .and_then(|index| self.counts.get(index))
                .copied()
                .unwrap_or(0),
            _ => self.over_16,
        }
    }

    /// All events counted.
    #[must_use]
    pub fn total_events(&self) -> u64 {
        self.zero + self.counts.iter().sum::<u64>() + self.over_16
    }
}

/// Which clock stamped a request's token-bearing events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventClock {
    /// The kernel's receive time of the socket read that completed each event.
    KernelRx,
    /// The instant our task read each event.
    #[default]
    Userspace,
}

impl EventClock {
    /// `kernel_rx` or `userspace`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::KernelRx => "kernel_rx",
            Self::Userspace => "userspace",
        }
    }
}

/// Everything measured about one streamed request.
///
/// Durations are milliseconds from the moment the request was sent; rates are per second and
/// `None` where undefined (fewer than two token-bearing events, or no time between them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Measurement {
    /// Request sent → first token-bearing event (a role-only chunk does not count).
    pub ttft_ms: Option<f64>,
    /// Request sent → response headers received.
    pub time_to_first_byte_ms: Option<f64>,
    /// Request sent → first event carrying answer content or a tool call (after any reasoning).
    pub time_to_first_content_ms: Option<f64>,
    /// Request sent → end of stream.
    pub end_to_end_ms: f64,
    /// (completion tokens − tokens in the first token-bearing event) / (last − first
    /// token-bearing event).
    pub decode_tokens_per_s: Option<f64>,
    /// Prompt tokens / TTFT.
    pub prefill_tokens_per_s: Option<f64>,
    /// What an event-counting tool reports: (token-bearing events − 1) / (last − first).
    pub event_rate_per_s: Option<f64>,
    /// Completion tokens / token-bearing events.
    pub tokens_per_event: Option<f64>,
    /// Tokens carried per event; `None` without a per-event token source.
    pub tokens_per_event_histogram: Option<TokensPerEventHistogram>,
    /// Latency per token: each gap between token-bearing events divided by that event's tokens.
    pub inter_token_latency_ms: Option<LatencySummary>,
    /// Gaps between consecutive token-bearing events.
    pub event_gap_ms: Option<LatencySummary>,
    /// All events observed, token-bearing or not.
    pub n_events: u64,
    /// Events that carried generated output.
    pub n_token_events: u64,
    /// Completion tokens according to `token_source`.
    pub completion_tokens: u64,
    /// Prompt tokens from the final usage (or llama.cpp `prompt_n`).
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens served from the prefix cache.
    pub cached_prompt_tokens: Option<u64>,
    /// Reasoning tokens from the final usage.
    pub reasoning_tokens: Option<u64>,
    /// Tokens in the first token-bearing event.
    pub first_event_tokens: f64,
    /// Whether `first_event_tokens` is an estimate (no per-event source): the first event's
    /// share of the stream's text at the stream's bytes per token.
    pub first_event_tokens_estimated: bool,
    /// With an estimate: the fewest and most tokens the first event can hold (at least one,
    /// and at most what leaves one for every later token-bearing event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event_tokens_bounds: Option<(f64, f64)>,
    /// The best token source available.
    pub token_source: TokenSource,
    /// Whether `completion_tokens` is only a lower bound (the event count).
    pub token_count_is_lower_bound: bool,
    /// The best source compared with each other source present.
    pub cross_checks: Vec<CrossCheck>,
    /// Anything a reader should know before trusting the figures.
    pub warnings: Vec<String>,
    /// How the stream ended, as the server said.
    pub finish_reason: Option<String>,
    /// Which clock stamped the token-bearing events: `kernel_rx` when every one had the
    /// kernel's receive time, else `userspace`.
    #[serde(default)]
    pub clock: EventClock,
    /// With kernel stamps: how long after the kernel received each token-bearing event our
    /// task read it (the client's own lag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_lag_ms: Option<LatencySummary>,
    /// Socket reads that completed more than one token-bearing event: the earlier events of
    /// such a read have only an upper bound, and the gaps between them are not real. Absent
    /// when the reads are not numbered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_coalesced_reads: Option<u64>,
    /// Whether the socket read that brought the first token-bearing event also completed a
    /// later event. The kernel stamps a read with the arrival of the last segment it
    /// consumed, so then the first token's instant, and with it `ttft_ms`, is only an upper
    /// bound: the client was reading late when the first token came. Absent when the reads
    /// are not numbered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_read_shared: Option<bool>,
}
