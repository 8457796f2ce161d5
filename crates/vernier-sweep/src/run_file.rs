//! The run file's types (`OUT/run.json`, schema in `docs/run-file.md`): what [`summarise`]
//! derives from the journal.
//!
//! [`summarise`]: crate::summarise

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vernier_meter::TokenSource;
use vernier_stats::Interval;

use crate::config::{SweepConfig, Workload};
use crate::environment::Environment;
use crate::journal::{Calibration, FieldDropped, QueueSamples};
use crate::lag::LagSummary;
use crate::offered_load::{Aggregate, Capacity, Lateness, ServerClock, TargetCheck};

/// Version of the run-file schema (`docs/run-file.md`).
pub const RUN_FILE_SCHEMA_VERSION: u32 = 1;

/// `OUT/run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunFile {
    /// [`RUN_FILE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Free-form label from `--label`.
    pub label: Option<String>,
    /// When the run started, in milliseconds since the Unix epoch (the journal header's
    /// `started_unix_ms`; 0 in run files written before it was recorded here).
    #[serde(default)]
    pub started_unix_ms: u64,
    /// Where the run happened (from the journal header).
    pub environment: Environment,
    /// Environments seen at each resume.
    pub environment_at_resume: Vec<Environment>,
    /// The configuration.
    pub config: SweepConfig,
    /// The original command line.
    pub command_line: Vec<String>,
    /// How each (workload, prompt length) was sized, with the counting method used.
    #[serde(default)]
    pub calibrations: Vec<Calibration>,
    /// One entry per configured cell, in run order (cells not measured yet have `n_ok` 0).
    pub cells: Vec<CellSummary>,
    /// The client's own lag over the whole run.
    pub client_lag: ClientLag,
    /// True when every cell has all its repetitions.
    pub complete: bool,
    /// Run-wide notes a reader must see.
    pub warnings: Vec<String>,
    /// With `--target`: the capacity search's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Waits on rate limits over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limited: Option<RateLimited>,
    /// Fields the server refused, with the guarantee each carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields_dropped: Vec<FieldDropped>,
    /// What changed in the server between the run's start and a later look (its end, or a
    /// resume): another model, server kind or `/version`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identity_changes: Vec<String>,
    /// The run's verdict with each reason ([`crate::validity`]); absent in run files written
    /// before it was recorded.
    #[serde(default)]
    pub validity: vernier_run::Verdict,
    /// A sharded run's shards (`--shard`), or a merged run's (`sweep merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<crate::shard_report::ShardsReport>,
}

/// One cell's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CellSummary {
    /// Prompt text kind.
    pub workload: Workload,
    /// Concurrent streams.
    pub concurrency: u32,
    /// Wanted prompt tokens.
    pub prompt_tokens_target: u32,
    /// Requested completion tokens.
    pub output_tokens: u32,
    /// Prompt tokens the server reported, over measured requests.
    pub prompt_tokens_actual: Option<Spread>,
    /// Completed measured repetitions.
    pub n_reps: u32,
    /// Measured requests.
    pub n_ok: u32,
    /// Requests that failed after every retry (never part of a figure).
    pub n_failed: u32,
    /// Failed attempts, retries included, warm-ups included.
    pub n_infra_attempts: u32,
    /// Largest cached prompt tokens of a measured request (0 means the cache was defeated).
    pub cached_prompt_tokens_max: u64,
    /// Measured requests with cached prompt tokens.
    pub n_cache_hits: u32,
    /// Measured requests whose completion tokens differ from `output_tokens`.
    pub n_length_mismatch: u32,
    /// Medians over measured requests.
    pub median: Figures,
    /// 10th percentiles.
    pub p10: Figures,
    /// 90th percentiles.
    pub p90: Figures,
    /// 99th percentiles (absent in run files written before they were recorded).
    #[serde(default)]
    pub p99: Figures,
    /// Percentile-bootstrap 95% intervals on the medians.
    pub median_interval_95: MedianIntervals,
    /// With `--until-ci`: whether the interval on the median decode rate ended narrower than
    /// the wanted percentage of the median (`false` when the repetition cap stopped the cell).
    #[serde(default)]
    pub until_ci_met: Option<bool>,
    /// Token sources of the measured requests.
    pub token_sources: Vec<TokenSource>,
    /// True when some completion count is only a lower bound (event counting).
    pub token_count_is_lower_bound: bool,
    /// How many times lower an event-counting tool's decode rate is (median tokens per event).
    pub event_count_under_report_factor: Option<f64>,
    /// Speculative-decoding acceptance from `/metrics` counter deltas over the cell.
    pub spec_decode: Option<SpecDecode>,
    /// Whether `/metrics` had speculative-decoding counters around the cell: `false` means
    /// not reported by this server (null when the cell has no measured window).
    #[serde(default)]
    pub spec_decode_reported: Option<bool>,
    /// Speculative-decoding acceptance the server reported per request (llama.cpp `timings`).
    #[serde(default)]
    pub spec_decode_per_request: Option<PerRequestSpecDecode>,
    /// The client's own lag in this cell.
    pub client_lag: ClientLag,
    /// Finish reasons of measured requests.
    pub finish_reasons: BTreeMap<String, u32>,
    /// Meter warnings with how many requests raised each.
    pub warnings: BTreeMap<String, u32>,
    /// Open loop: the request rate, per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// Throughput of all streams together, per window (absent in journals without request
    /// timelines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<Aggregate>,
    /// Open loop: how late requests were sent against their schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lateness: Option<Lateness>,
    /// The server's own queue while the cell ran (from `/metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_queue: Option<QueueSamples>,
    /// With `--target`: how the cell fared against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_check: Option<TargetCheck>,
    /// The server's own timing beside ours (llama.cpp `timings`), absent where responses carry
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock: Option<ServerClock>,
    /// Left out as `context_exceeded`, with the reason: the server cannot take this prompt and
    /// output. Never a failure, never in a figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_exceeded: Option<String>,
    /// Waits on rate limits during the cell: it was measured while throttled (each request is
    /// still measured from its own send, so no wait is inside a per-request figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limited: Option<RateLimited>,
    /// The GPUs over the cell's measured window: energy, power, memory and energy per output
    /// token (absent when no GPU was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<CellGpu>,
}

/// What the GPUs did over a cell's measured repetitions (warm-ups excluded; the idle moments
/// between repetitions included), with joules per output token of its measured requests.
pub type CellGpu = vernier_gpu::WorkEnergy;

/// Waits on rate limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RateLimited {
    /// Rate-limited answers (`429`, `503`) waited on.
    pub n_waits: u32,
    /// Seconds waited in all.
    pub waited_s: f64,
    /// Waits where the server said how long (the rest backed off).
    pub n_server_asked: u32,
}

/// Smallest, median and largest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Smallest.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Largest.
    pub max: f64,
}

/// The figures summarised per cell; `None` where no request defined them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Figures {
    /// Request sent → first token-bearing event.
    pub ttft_ms: Option<f64>,
    /// Request sent → response headers.
    pub time_to_first_byte_ms: Option<f64>,
    /// Request sent → first answer content (after reasoning).
    pub time_to_first_content_ms: Option<f64>,
    /// Prompt tokens / TTFT.
    pub prefill_tokens_per_s: Option<f64>,
    /// Token-accurate decode rate.
    pub decode_tokens_per_s: Option<f64>,
    /// What an event-counting tool would report.
    pub event_rate_per_s: Option<f64>,
    /// Completion tokens per token-bearing event.
    pub tokens_per_event: Option<f64>,
    /// Per-request median latency per token.
    pub inter_token_latency_ms: Option<f64>,
    /// Per-request 99th-percentile latency per token.
    pub inter_token_latency_p99_ms: Option<f64>,
    /// Request sent → end of stream.
    pub end_to_end_ms: Option<f64>,
    /// Completion tokens.
    pub completion_tokens: Option<f64>,
    /// Prompt tokens.
    pub prompt_tokens: Option<f64>,
}

/// Bootstrap intervals on medians.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MedianIntervals {
    /// On the median decode rate.
    pub decode_tokens_per_s: Option<Interval>,
    /// On the median prefill rate.
    pub prefill_tokens_per_s: Option<Interval>,
    /// On the median TTFT.
    pub ttft_ms: Option<Interval>,
}

/// Speculative-decoding counters over a cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SpecDecode {
    /// Verification steps: `vllm:spec_decode_num_drafts_total` (or llama.cpp's
    /// `llamacpp:spec_decode_num_drafts_total`) delta.
    pub drafts: f64,
    /// `…spec_decode_num_draft_tokens_total` delta.
    pub draft_tokens: f64,
    /// `…spec_decode_num_accepted_tokens_total` delta.
    pub accepted_tokens: f64,
    /// accepted / draft tokens.
    pub acceptance_rate: Option<f64>,
    /// 1 + accepted / drafts: tokens per verification step.
    pub mean_acceptance_length: Option<f64>,
}

/// Speculative decoding as the server reported it per measured request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PerRequestSpecDecode {
    /// Measured requests whose response carried the counts.
    pub n_requests: u32,
    /// Draft tokens proposed, summed over those requests.
    pub draft_tokens: u64,
    /// Draft tokens accepted, summed.
    pub accepted_tokens: u64,
    /// Accepted / draft tokens over the cell.
    pub acceptance_rate: Option<f64>,
    /// 10th percentile of the requests' own acceptance rates.
    pub acceptance_rate_p10: Option<f64>,
    /// Median of the requests' own acceptance rates.
    pub acceptance_rate_median: Option<f64>,
    /// 90th percentile of the requests' own acceptance rates.
    pub acceptance_rate_p90: Option<f64>,
}

/// The client's own lag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientLag {
    /// Event arrival (the kernel's receive time when the request's clock is `kernel_rx`) →
    /// our processing done, per event.
    pub event_processing: Option<LagSummary>,
    /// Measured requests whose every token event carried the kernel's receive time.
    #[serde(default)]
    pub n_kernel_rx_requests: u32,
    /// Measured requests timed in user space (no kernel stamps, or not on every event).
    #[serde(default)]
    pub n_userspace_requests: u32,
    /// Socket reads that completed more than one token event, over the measured requests:
    /// the earlier events of such a read only have an upper bound on their arrival.
    #[serde(default)]
    pub n_coalesced_reads: u64,
    /// Measured requests whose first token event shared its socket read with a later event:
    /// their first-token instant, and so their TTFT, is only an upper bound.
    #[serde(default)]
    pub n_first_token_shared_reads: u32,
    /// Tokio scheduling delay: a task yields every tick (1 ms, or 1 s once the kernel
    /// stamps events); the time until it is polled again.
    pub scheduler_delay: Option<LagSummary>,
    /// Tokio timer overshoot: how late the probe's timer woke it. This includes the timer's
    /// 1 ms granularity, so it is not client lag; reported apart.
    #[serde(default)]
    pub timer_overshoot: Option<LagSummary>,
}
