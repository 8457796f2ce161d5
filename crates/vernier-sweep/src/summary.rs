//! The run file: every figure derived from the journal alone.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use vernier_meter::{Measurement, TokenSource};
use vernier_stats::Interval;

use crate::config::{CellKey, LoadMode, SweepConfig, Workload};
use crate::environment::Environment;
use crate::journal::{
    Attempt, Calibration, FieldDropped, LoadedSweepJournal, QueueSamples, RepPhase,
    RequestSpecDecode, Status, SweepJournalLine,
};
use crate::lag::{LagHistogram, LagSummary};
use crate::load::{
    Aggregate, Capacity, CapacityStep, Lateness, ServerClock, Target, TargetCheck, load_of,
};

/// Version of the run-file schema (`docs/run-file.md`).
pub const RUN_FILE_SCHEMA_VERSION: u32 = 1;

const BOOTSTRAP_RESAMPLES: usize = 2000;
const BOOTSTRAP_SEED: u64 = 0x5eed_cafe;

/// `OUT/run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunFile {
    /// [`RUN_FILE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Free-form label from `--label`.
    pub label: Option<String>,
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
}

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

/// Sums and spread of per-request counts; `None` when no request reported any.
pub(crate) fn per_request_spec_decode(
    counts: &[RequestSpecDecode],
) -> Option<PerRequestSpecDecode> {
    if counts.is_empty() {
        return None;
    }
    let draft_tokens: u64 = counts.iter().map(|c| c.draft_tokens).sum();
    let accepted_tokens: u64 = counts.iter().map(|c| c.accepted_tokens).sum();
    let rates: Vec<f64> = counts
        .iter()
        .filter(|c| c.draft_tokens > 0)
        .map(|c| c.accepted_tokens as f64 / c.draft_tokens as f64)
        .collect();
    let at = |q: f64| vernier_stats::quantile(&rates, q).ok();
    Some(PerRequestSpecDecode {
        n_requests: u32::try_from(counts.len()).unwrap_or(u32::MAX),
        draft_tokens,
        accepted_tokens,
        acceptance_rate: (draft_tokens > 0).then(|| accepted_tokens as f64 / draft_tokens as f64),
        acceptance_rate_p10: at(0.1),
        acceptance_rate_median: at(0.5),
        acceptance_rate_p90: at(0.9),
    })
}

/// The run's client lag: the histograms merged over cells, and the cells' clock counts summed.
fn run_lag(
    cells: &[CellSummary],
    events: &LagHistogram,
    scheduler: &LagHistogram,
    timer: &LagHistogram,
) -> ClientLag {
    ClientLag {
        event_processing: events.summary(),
        n_kernel_rx_requests: cells
            .iter()
            .map(|c| c.client_lag.n_kernel_rx_requests)
            .sum(),
        n_userspace_requests: cells
            .iter()
            .map(|c| c.client_lag.n_userspace_requests)
            .sum(),
        n_coalesced_reads: cells.iter().map(|c| c.client_lag.n_coalesced_reads).sum(),
        n_first_token_shared_reads: cells
            .iter()
            .map(|c| c.client_lag.n_first_token_shared_reads)
            .sum(),
        scheduler_delay: scheduler.summary(),
        timer_overshoot: timer.summary(),
    }
}

fn count_u32<T>(items: impl Iterator<Item = T>) -> u32 {
    u32::try_from(items.count()).unwrap_or(u32::MAX)
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

#[derive(Default)]
struct CellAccumulator<'a> {
    measured: Vec<&'a Attempt>,
    reps: BTreeSet<u32>,
    n_failed: u32,
    n_infra_attempts: u32,
    spec: [f64; 3],
    spec_seen: bool,
    windows: u32,
    event_lag: LagHistogram,
    scheduler_delay: LagHistogram,
    timer_overshoot: LagHistogram,
    queue: Option<QueueSamples>,
    rate_limited: Option<RateLimited>,
    skipped: Option<String>,
}

/// Measured attempts that count: status ok in a repetition that finished (a repetition cut
/// short by a crash is redone under a new number on resume, so none is counted twice).
pub(crate) fn counted_attempts(journal: &LoadedSweepJournal) -> BTreeMap<CellKey, Vec<&Attempt>> {
    let done: BTreeSet<(CellKey, u32)> = journal
        .lines
        .iter()
        .filter_map(|line| match line {
            SweepJournalLine::RepDone(done) => Some((done.cell, done.rep)),
            _ => None,
        })
        .collect();
    let mut out: BTreeMap<CellKey, Vec<&Attempt>> = BTreeMap::new();
    for line in &journal.lines {
        if let SweepJournalLine::Attempt(attempt) = line
            && attempt.phase == RepPhase::Measured
            && attempt.status == Status::Ok
            && done.contains(&(attempt.cell, attempt.rep))
        {
            out.entry(attempt.cell).or_default().push(attempt);
        }
    }
    out
}

/// The set-up warnings of the start and of every resume, each once.
fn set_up_warnings(journal: &LoadedSweepJournal) -> Vec<String> {
    let mut warnings: Vec<String> = Vec::new();
    let all = journal.lines.iter().flat_map(|line| match line {
        SweepJournalLine::Header(header) => header.warnings.as_slice(),
        SweepJournalLine::Resumed(resumed) => resumed.warnings.as_slice(),
        _ => &[],
    });
    for warning in all {
        if !warnings.contains(warning) {
            warnings.push(warning.clone());
        }
    }
    warnings
}

/// The speculative-decoding counters (verification steps, draft tokens, accepted draft tokens)
/// among recorded `/metrics` sums: the first prefix `P` (in name order) for which
/// `P:spec_decode_num_drafts_total`, `P:spec_decode_num_draft_tokens_total` and
/// `P:spec_decode_num_accepted_tokens_total` are all present. This is the naming every server
/// in `vernier_openai::KNOWN_METRICS` uses (a test checks it), read here without the client
/// so that summarising a journal needs no HTTP stack.
pub(crate) fn spec_decode_counters(sums: &BTreeMap<String, f64>) -> Option<[String; 3]> {
    const SUFFIXES: [&str; 3] = [
        ":spec_decode_num_drafts_total",
        ":spec_decode_num_draft_tokens_total",
        ":spec_decode_num_accepted_tokens_total",
    ];
    sums.keys().find_map(|name| {
        let prefix = name.strip_suffix(SUFFIXES[0])?;
        let names = SUFFIXES.map(|suffix| format!("{prefix}{suffix}"));
        names
            .iter()
            .all(|name| sums.contains_key(name))
            .then_some(names)
    })
}

/// Adds a cell's aggregate, lateness, queue and target figures; with a target, the step the
/// capacity search took there.
fn add_load_figures(
    summary: &mut CellSummary,
    config: &SweepConfig,
    target: Option<&Target>,
    cell: &CellAccumulator<'_>,
) -> Option<CapacityStep> {
    summary.aggregate = crate::load::aggregate(config.load, &cell.measured);
    summary.schedule_lateness = crate::load::lateness(&cell.measured);
    summary.server_queue = cell.queue;
    summary.rate_limited = cell.rate_limited;
    summary.server_clock = crate::load::server_clock(&cell.measured);
    let target = target.filter(|_| summary.n_reps > 0)?;
    let check = crate::load::check_target(target, &cell.measured);
    summary.target_check = Some(check.clone());
    let load = summary.rate_per_s.unwrap_or(f64::from(summary.concurrency));
    Some(CapacityStep { load, check })
}

fn add_wait(total: &mut Option<RateLimited>, wait: &crate::journal::RateLimitWait) {
    let total = total.get_or_insert(RateLimited {
        n_waits: 0,
        waited_s: 0.0,
        n_server_asked: 0,
    });
    total.n_waits += 1;
    total.waited_s += wait.waited_ms / 1e3;
    if wait.cause == "server_asked" {
        total.n_server_asked += 1;
    }
}

/// Every wait on a rate limit in the run.
fn run_waits(journal: &LoadedSweepJournal) -> Option<RateLimited> {
    journal
        .lines
        .iter()
        .filter_map(|line| match line {
            SweepJournalLine::Attempt(attempt) => attempt.wait.as_ref(),
            _ => None,
        })
        .fold(None, |mut total, wait| {
            add_wait(&mut total, wait);
            total
        })
}

/// What [`summarise`] gathers from the journal's lines before it summarises each cell.
struct Accumulated<'a> {
    cells: BTreeMap<CellKey, CellAccumulator<'a>>,
    environments_at_resume: Vec<Environment>,
    calibrations: BTreeMap<(Workload, u32), Calibration>,
}

fn accumulate(journal: &LoadedSweepJournal) -> Accumulated<'_> {
    let mut cells: BTreeMap<CellKey, CellAccumulator<'_>> = BTreeMap::new();
    let counted = counted_attempts(journal);
    let mut environments_at_resume = Vec::new();
    let mut calibrations: BTreeMap<(Workload, u32), Calibration> = BTreeMap::new();
    for line in &journal.lines {
        match line {
            SweepJournalLine::Attempt(attempt) if attempt.status == Status::Infra => {
                let cell = cells.entry(attempt.cell).or_default();
                cell.n_infra_attempts += 1;
                if let Some(wait) = &attempt.wait {
                    add_wait(&mut cell.rate_limited, wait);
                }
            }
            SweepJournalLine::RepDone(done) => {
                let cell = cells.entry(done.cell).or_default();
                if cell.reps.insert(done.rep) {
                    cell.n_failed += done.n_failed;
                }
            }
            SweepJournalLine::CellWindow(window) => {
                let cell = cells.entry(window.cell).or_default();
                cell.windows += 1;
                cell.scheduler_delay.merge(&window.scheduler_delay);
                cell.timer_overshoot.merge(&window.timer_overshoot);
                if window.queue.is_some() {
                    cell.queue = window.queue;
                }
                let names = spec_decode_counters(&window.metrics_before);
                for (slot, name) in cell.spec.iter_mut().zip(names.iter().flatten()) {
                    if let (Some(before), Some(after)) = (
                        window.metrics_before.get(name.as_str()),
                        window.metrics_after.get(name.as_str()),
                    ) {
                        *slot += after - before;
                        cell.spec_seen = true;
                    }
                }
            }
            SweepJournalLine::Resumed(resumed) => {
                environments_at_resume.push(resumed.environment.clone());
            }
            SweepJournalLine::CellSkipped(skipped) => {
                cells.entry(skipped.cell).or_default().skipped = Some(skipped.reason.clone());
            }
            SweepJournalLine::Calibration(calibration) => {
                calibrations.insert(
                    (calibration.workload, calibration.prompt_tokens_target),
                    calibration.clone(),
                );
            }
            _ => {}
        }
    }
    for (key, attempts) in counted {
        let cell = cells.entry(key).or_default();
        for attempt in &attempts {
            cell.event_lag.merge(&attempt.client_lag);
        }
        cell.measured = attempts;
    }

    Accumulated {
        cells,
        environments_at_resume,
        calibrations,
    }
}

/// Builds the run file from a journal. `None` when the journal has no header.
pub fn summarise(journal: &LoadedSweepJournal) -> Option<RunFile> {
    let header = journal.header()?;
    let config = &header.config;
    let Accumulated {
        cells,
        environments_at_resume,
        calibrations,
    } = accumulate(journal);
    let mut run_event_lag = LagHistogram::new();
    let mut run_scheduler = LagHistogram::new();
    let mut run_timer = LagHistogram::new();
    let mut summaries = Vec::new();
    let mut complete = true;
    let empty = CellAccumulator::default();
    let target = config
        .capacity_target
        .as_deref()
        .and_then(|t| Target::parse(t).ok());
    // The configured cells in order, then any other cell the journal holds (the loads a
    // capacity search chose), by load.
    let mut keys = config.cells();
    let mut extra: Vec<CellKey> = cells
        .keys()
        .filter(|k| !keys.contains(k))
        .copied()
        .collect();
    extra.sort_by(|a, b| load_of(a).total_cmp(&load_of(b)).then(a.cmp(b)));
    keys.extend(extra);
    let mut steps = Vec::new();
    for key in keys {
        let cell = cells.get(&key).unwrap_or(&empty);
        run_event_lag.merge(&cell.event_lag);
        run_scheduler.merge(&cell.scheduler_delay);
        run_timer.merge(&cell.timer_overshoot);
        let mut summary = summarise_cell(key, cell, config.until_ci_percent);
        summary.context_exceeded.clone_from(&cell.skipped);
        if summary.n_reps < config.reps && cell.skipped.is_none() {
            complete = false;
        }
        if let Some(step) = add_load_figures(&mut summary, config, target.as_ref(), cell) {
            steps.push(step);
        }
        summaries.push(summary);
    }
    let capacity = config.capacity_target.as_ref().map(|text| {
        let kind = if config.load == LoadMode::Rate {
            "rate"
        } else {
            "concurrency"
        };
        crate::load::capacity(text, kind, steps, config.max_load.unwrap_or(f64::INFINITY))
    });
    if config.is_search() {
        complete = journal
            .lines
            .iter()
            .any(|line| matches!(line, SweepJournalLine::SearchDone(_)));
    }
    let mut warnings = set_up_warnings(journal);
    if journal.torn_tail {
        warnings.push(
            "the journal ended in a torn line (a crash mid-write); it was ignored".to_owned(),
        );
    }
    if header.environment.server.simulator {
        warnings.push("figures come from the bundled simulator, not a real server".to_owned());
    }
    let run_client_lag = run_lag(&summaries, &run_event_lag, &run_scheduler, &run_timer);
    Some(RunFile {
        schema_version: RUN_FILE_SCHEMA_VERSION,
        label: config.label.clone(),
        environment: header.environment.clone(),
        environment_at_resume: environments_at_resume,
        config: config.clone(),
        command_line: header.command_line.clone(),
        calibrations: calibrations.into_values().collect(),
        cells: summaries,
        client_lag: run_client_lag,
        complete,
        warnings,
        capacity,
        rate_limited: run_waits(journal),
        fields_dropped: journal
            .lines
            .iter()
            .filter_map(|line| match line {
                SweepJournalLine::FieldDropped(dropped) => Some(dropped.clone()),
                _ => None,
            })
            .collect(),
    })
}

fn values(attempts: &[&Attempt], field: impl Fn(&Measurement) -> Option<f64>) -> Vec<f64> {
    attempts
        .iter()
        .filter_map(|attempt| attempt.measurement.as_ref().and_then(&field))
        .filter(|value| value.is_finite())
        .collect()
}

fn figures_at(attempts: &[&Attempt], q: f64) -> Figures {
    let at = |field: &dyn Fn(&Measurement) -> Option<f64>| {
        let data = values(attempts, field);
        vernier_stats::quantile(&data, q).ok()
    };
    Figures {
        ttft_ms: at(&|m| m.ttft_ms),
        time_to_first_byte_ms: at(&|m| m.time_to_first_byte_ms),
        time_to_first_content_ms: at(&|m| m.time_to_first_content_ms),
        prefill_tokens_per_s: at(&|m| m.prefill_tokens_per_s),
        decode_tokens_per_s: at(&|m| m.decode_tokens_per_s),
        event_rate_per_s: at(&|m| m.event_rate_per_s),
        tokens_per_event: at(&|m| m.tokens_per_event),
        inter_token_latency_ms: at(&|m| m.inter_token_latency_ms.as_ref().map(|l| l.median_ms)),
        inter_token_latency_p99_ms: at(&|m| m.inter_token_latency_ms.as_ref().map(|l| l.p99_ms)),
        end_to_end_ms: at(&|m| Some(m.end_to_end_ms)),
        completion_tokens: at(&|m| Some(m.completion_tokens as f64)),
        prompt_tokens: at(&|m| m.prompt_tokens.map(|t| t as f64)),
    }
}

/// Percentile-bootstrap 95% interval on the median of `data`; `None` with fewer than 2 values.
pub(crate) fn median_interval(data: &[f64]) -> Option<Interval> {
    if data.len() < 2 {
        return None;
    }
    vernier_stats::bootstrap_percentile(
        data,
        |sample| vernier_stats::median(sample).unwrap_or(f64::NAN),
        BOOTSTRAP_RESAMPLES,
        0.95,
        BOOTSTRAP_SEED,
    )
    .ok()
}

/// Decode rates of a cell's counted requests (for `--until-ci`).
pub(crate) fn decode_rates(attempts: &[&Attempt]) -> Vec<f64> {
    values(attempts, |m| m.decode_tokens_per_s)
}

/// `--until-ci`: the 95% interval on the median decode rate is narrower than `percent` of the
/// median.
pub(crate) fn until_ci_met(percent: f64, decode_rates: &[f64]) -> bool {
    let Some(interval) = median_interval(decode_rates) else {
        return false;
    };
    let median = vernier_stats::median(decode_rates).unwrap_or(f64::NAN);
    median > 0.0 && (interval.high - interval.low) / median * 100.0 < percent
}

#[expect(
    clippy::too_many_lines,
    reason = "one field of the summary after another"
)]
fn summarise_cell(
    key: CellKey,
    cell: &CellAccumulator<'_>,
    until_ci_percent: Option<f64>,
) -> CellSummary {
    let measured = &cell.measured;
    let prompts: Vec<f64> = measured
        .iter()
        .filter_map(|a| a.prompt_tokens_actual.map(|t| t as f64))
        .collect();
    let prompt_tokens_actual = (!prompts.is_empty()).then(|| Spread {
        min: prompts.iter().copied().fold(f64::INFINITY, f64::min),
        median: vernier_stats::median(&prompts).unwrap_or(f64::NAN),
        max: prompts.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    });
    let median = figures_at(measured, 0.5);
    let mut sources = BTreeSet::new();
    let mut finish_reasons = BTreeMap::new();
    let mut warnings = BTreeMap::new();
    let mut lower_bound = false;
    for attempt in measured {
        if let Some(measurement) = &attempt.measurement {
            sources.insert(measurement.token_source.as_str());
            lower_bound |= measurement.token_count_is_lower_bound;
            for warning in &measurement.warnings {
                *warnings.entry(warning.clone()).or_insert(0) += 1;
            }
        }
        let reason = attempt
            .finish_reason
            .clone()
            .unwrap_or_else(|| "none".to_owned());
        *finish_reasons.entry(reason).or_insert(0) += 1;
    }
    let token_sources = measured
        .iter()
        .filter_map(|a| a.measurement.as_ref().map(|m| m.token_source))
        .fold(Vec::new(), |mut acc: Vec<TokenSource>, source| {
            if !acc.contains(&source) {
                acc.push(source);
            }
            acc
        });
    let [drafts, draft_tokens, accepted_tokens] = cell.spec;
    let spec_decode = (cell.spec_seen && draft_tokens > 0.0).then(|| SpecDecode {
        drafts,
        draft_tokens,
        accepted_tokens,
        acceptance_rate: (draft_tokens > 0.0).then(|| accepted_tokens / draft_tokens),
        mean_acceptance_length: (drafts > 0.0).then(|| 1.0 + accepted_tokens / drafts),
    });
    #[expect(clippy::cast_possible_truncation, reason = "request counts are small")]
    let count = |predicate: &dyn Fn(&Attempt) -> bool| {
        measured.iter().filter(|a| predicate(a)).count() as u32
    };
    CellSummary {
        workload: key.workload,
        concurrency: key.concurrency,
        prompt_tokens_target: key.prompt_tokens_target,
        output_tokens: key.output_tokens,
        prompt_tokens_actual,
        #[expect(
            clippy::cast_possible_truncation,
            reason = "repetition counts are small"
        )]
        n_reps: cell.reps.len() as u32,
        n_ok: count(&|_| true),
        n_failed: cell.n_failed,
        n_infra_attempts: cell.n_infra_attempts,
        cached_prompt_tokens_max: measured
            .iter()
            .filter_map(|a| a.cached_prompt_tokens)
            .max()
            .unwrap_or(0),
        n_cache_hits: count(&|a| a.cache_hit),
        n_length_mismatch: count(&|a| a.length_mismatch),
        event_count_under_report_factor: median.tokens_per_event,
        median,
        p10: figures_at(measured, 0.1),
        p90: figures_at(measured, 0.9),
        until_ci_met: until_ci_percent
            .map(|percent| until_ci_met(percent, &decode_rates(measured))),
        median_interval_95: MedianIntervals {
            decode_tokens_per_s: median_interval(&values(measured, |m| m.decode_tokens_per_s)),
            prefill_tokens_per_s: median_interval(&values(measured, |m| m.prefill_tokens_per_s)),
            ttft_ms: median_interval(&values(measured, |m| m.ttft_ms)),
        },
        token_sources,
        token_count_is_lower_bound: lower_bound,
        spec_decode,
        spec_decode_reported: (cell.windows > 0).then_some(cell.spec_seen),
        spec_decode_per_request: per_request_spec_decode(
            &measured
                .iter()
                .filter_map(|a| a.spec_decode)
                .collect::<Vec<_>>(),
        ),
        client_lag: ClientLag {
            event_processing: cell.event_lag.summary(),
            n_kernel_rx_requests: count_u32(measured.iter().filter(|a| {
                a.measurement
                    .as_ref()
                    .is_some_and(|m| m.clock == vernier_meter::EventClock::KernelRx)
            })),
            n_userspace_requests: count_u32(measured.iter().filter(|a| {
                a.measurement
                    .as_ref()
                    .is_some_and(|m| m.clock != vernier_meter::EventClock::KernelRx)
            })),
            n_coalesced_reads: measured
                .iter()
                .filter_map(|a| a.measurement.as_ref().and_then(|m| m.n_coalesced_reads))
                .sum(),
            n_first_token_shared_reads: count_u32(measured.iter().filter(|a| {
                a.measurement
                    .as_ref()
                    .is_some_and(|m| m.first_token_read_shared == Some(true))
            })),
            scheduler_delay: cell.scheduler_delay.summary(),
            timer_overshoot: cell.timer_overshoot.summary(),
        },
        finish_reasons,
        warnings,
        rate_per_s: key.rate_per_s(),
        aggregate: None,
        schedule_lateness: None,
        server_queue: None,
        target_check: None,
        rate_limited: None,
        context_exceeded: None,
        server_clock: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_decode_counters_are_found_for_every_known_server() {
        for names in &vernier_openai::KNOWN_METRICS {
            let Some(known) = names.spec_decode else {
                continue;
            };
            let sums: BTreeMap<String, f64> = known
                .iter()
                .map(|name| ((*name).to_owned(), 1.0))
                .chain([("other:spec_decode_num_drafts_total".to_owned(), 1.0)])
                .collect();
            assert_eq!(spec_decode_counters(&sums), Some(known.map(str::to_owned)));
        }
        let partial: BTreeMap<String, f64> =
            [("vllm:spec_decode_num_drafts_total".to_owned(), 1.0)].into();
        assert_eq!(spec_decode_counters(&partial), None);
    }

    fn counts(draft_tokens: u64, accepted_tokens: u64) -> RequestSpecDecode {
        let timings: vernier_openai::Timings = serde_json::from_value(serde_json::json!({
            "predicted_n": 64,
            "draft_n": draft_tokens,
            "draft_n_accepted": accepted_tokens,
        }))
        .expect("a llama.cpp timings object");
        RequestSpecDecode::from_timings(&timings).expect("both counts present")
    }

    #[test]
    fn per_request_acceptance_sums_counts_and_spreads_rates() {
        assert_eq!(per_request_spec_decode(&[]), None);
        let summary = per_request_spec_decode(&[counts(40, 20), counts(40, 30), counts(20, 20)])
            .expect("three requests");
        assert_eq!(summary.n_requests, 3);
        assert_eq!((summary.draft_tokens, summary.accepted_tokens), (100, 70));
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
        assert!(close(summary.acceptance_rate, 0.7), "{summary:?}");
        // Rates 0.5, 0.75, 1.0: type-7 quantiles interpolate between neighbours.
        assert!(close(summary.acceptance_rate_median, 0.75), "{summary:?}");
        assert!(close(summary.acceptance_rate_p10, 0.55), "{summary:?}");
        assert!(close(summary.acceptance_rate_p90, 0.95), "{summary:?}");
    }

    #[test]
    fn timings_without_draft_counts_report_nothing() {
        let timings: vernier_openai::Timings =
            serde_json::from_value(serde_json::json!({"predicted_n": 64, "draft_n": 12}))
                .expect("a llama.cpp timings object");
        assert_eq!(RequestSpecDecode::from_timings(&timings), None);
    }
}
