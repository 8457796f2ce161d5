//! The run file: every figure derived from the journal alone.

use std::collections::{BTreeMap, BTreeSet};

use vernier_meter::{Measurement, TokenSource};

use crate::capacity_target::Target;
use crate::config::{CellKey, LoadMode, SweepConfig, Workload};
use crate::counted::{counted_attempts, request_identity};
use crate::environment::Environment;
use crate::interval::median_interval;
use crate::journal::{
    Attempt, Calibration, LoadedSweepJournal, QueueSamples, RepPhase, RequestSpecDecode, Status,
    SweepJournalLine,
};
use crate::lag::LagHistogram;
use crate::offered_load::{CapacityStep, load_of};
use crate::run_file::{
    CellSummary, ClientLag, Figures, MedianIntervals, PerRequestSpecDecode,
    RUN_FILE_SCHEMA_VERSION, RateLimited, RunFile, SpecDecode, Spread,
};

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
    gpu_windows: Vec<vernier_gpu::EnergyWindow>,
}

/// Measured attempts the journal holds more than once (the same request's try), each named
/// once: counted once, and said.
fn duplicated_attempts(journal: &LoadedSweepJournal) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut named = BTreeSet::new();
    for line in &journal.lines {
        if let SweepJournalLine::Attempt(attempt) = line
            && attempt.phase == RepPhase::Measured
            && !seen.insert(request_identity(attempt))
        {
            named.insert((attempt.cell, attempt.rep, attempt.stream, attempt.attempt));
        }
    }
    named
        .into_iter()
        .map(|(cell, rep, stream, attempt)| {
            format!(
                "the journal holds the request of {cell}, repetition {}, stream {}, try {} more than once; it was counted once",
                rep + 1,
                stream + 1,
                attempt + 1
            )
        })
        .collect()
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
    summary.aggregate = crate::offered_load::aggregate(config.load, &cell.measured);
    summary.schedule_lateness = crate::offered_load::lateness(&cell.measured);
    summary.server_queue = cell.queue;
    summary.rate_limited = cell.rate_limited;
    summary.server_clock = crate::offered_load::server_clock(&cell.measured);
    // Only the requests that ended inside a sampled window count: a session interrupted
    // before its samples were journalled, or resumed without a GPU source, has tokens and no
    // energy.
    let covered: Vec<&&Attempt> = cell
        .measured
        .iter()
        .filter(|attempt| {
            cell.gpu_windows.iter().any(|window| {
                (window.start_unix_ms..=window.end_unix_ms).contains(&attempt.unix_ms)
            })
        })
        .collect();
    let tokens = covered
        .iter()
        .filter_map(|attempt| attempt.completion_tokens)
        .sum();
    summary.gpu = vernier_gpu::WorkEnergy::of(&cell.gpu_windows, tokens)
        .map(|energy| energy.covering(covered.len() as u64, cell.measured.len() as u64));
    let target = target.filter(|_| summary.n_reps > 0)?;
    let check = crate::offered_load::check_target(target, &cell.measured);
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
                cell.gpu_windows
                    .extend(vernier_gpu::EnergyWindow::from_samples(&window.gpu_samples));
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
        crate::offered_load::capacity(text, kind, steps, config.max_load.unwrap_or(f64::INFINITY))
    });
    if config.is_search() {
        complete = journal
            .lines
            .iter()
            .any(|line| matches!(line, SweepJournalLine::SearchDone(_)));
    }
    let mut warnings = set_up_warnings(journal);
    warnings.extend(duplicated_attempts(journal));
    if journal.torn_tail {
        warnings.push(
            "the journal ended in a torn line (a crash mid-write); it was ignored".to_owned(),
        );
    }
    if header.environment.server.simulator {
        warnings.push("figures come from the bundled simulator, not a real server".to_owned());
    }
    let run_client_lag = run_lag(&summaries, &run_event_lag, &run_scheduler, &run_timer);
    let mut run = RunFile {
        schema_version: RUN_FILE_SCHEMA_VERSION,
        label: config.label.clone(),
        started_unix_ms: header.started_unix_ms,
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
        identity_changes: identity_changes(journal),
        validity: vernier_run::Verdict::default(),
        shards: crate::shard_report::shards_report(journal, complete),
    };
    run.validity = crate::report::validity(&run);
    Some(run)
}

/// What changed in the server: every end-of-work check's changes, each once.
fn identity_changes(journal: &LoadedSweepJournal) -> Vec<String> {
    let mut changes = Vec::new();
    for line in &journal.lines {
        if let SweepJournalLine::IdentityChecked(checked) = line {
            for change in &checked.changes {
                if !changes.contains(change) {
                    changes.push(change.clone());
                }
            }
        }
    }
    changes
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
        p99: figures_at(measured, 0.99),
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
        gpu: None,
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
