//! Load beyond the burst: steady concurrency, open-loop request rates, the server's queue
//! sampled while a cell runs, and the search for the capacity at a target.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vernier_openai::Client;

use crate::config::{Arrival, CellKey, LoadMode};
use crate::error::SweepError;
use crate::journal::{QueueSamples, RepPhase, SearchDone, SweepJournalLine};
use crate::runner::{
    RepResult, ResumeState, Shared, StreamEnd, StreamJob, joined, run_cell, run_stream, unix_ms,
};

/// The duration of a steady or open-loop repetition.
fn duration(shared: &Shared) -> Duration {
    Duration::try_from_secs_f64(shared.config.duration_s.unwrap_or(60.0))
        .unwrap_or(Duration::from_secs(60))
}

/// Steady load: `concurrency` slots, each sending its next request as soon as the last one
/// ended, until the duration is over.
pub(crate) async fn run_steady_rep(
    shared: &Arc<Shared>,
    cell: CellKey,
    rep: u32,
    n_units: usize,
) -> Result<RepResult, SweepError> {
    let deadline = Instant::now() + duration(shared);
    let mut set = tokio::task::JoinSet::new();
    for slot in 0..cell.concurrency {
        let shared = Arc::clone(shared);
        set.spawn(async move {
            let mut result = RepResult::default();
            let mut sequence = 0;
            loop {
                let job = StreamJob {
                    cell,
                    phase: RepPhase::Measured,
                    rep,
                    stream: slot,
                    n_units,
                    sequence: Some(sequence),
                    scheduled: None,
                };
                let end = Box::pin(run_stream(Arc::clone(&shared), job, None)).await?;
                result.record(&shared, end)?;
                shared.observer.request_measured();
                sequence += 1;
                if Instant::now() >= deadline {
                    return Ok::<RepResult, SweepError>(result);
                }
            }
        });
    }
    let mut total = RepResult::default();
    while let Some(outcome) = set.join_next().await {
        let slot = match outcome {
            Ok(Ok(slot)) => slot,
            Ok(Err(error)) => {
                set.abort_all();
                return Err(error);
            }
            Err(error) => {
                set.abort_all();
                return Err(SweepError::Journal {
                    what: "run a steady-load slot for",
                    path: shared.journal.path().to_owned(),
                    source: std::io::Error::other(error),
                });
            }
        };
        total.n_ok += slot.n_ok;
        total.n_failed += slot.n_failed;
        total.decode_rates.extend(slot.decode_rates);
    }
    Ok(total)
}

/// `SplitMix64` (Steele, Lea and Flood 2014): the schedule's random source, seeded per cell and
/// repetition so a run's schedule can be drawn again.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn next_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1_u64 << 53) as f64
    }
}

/// Send offsets, in seconds from the start, of every request due before `duration_s`.
pub(crate) fn schedule(arrival: Arrival, rate_per_s: f64, duration_s: f64, seed: u64) -> Vec<f64> {
    let mut offsets = Vec::new();
    let mut random = SplitMix64(seed);
    let mut at = 0.0;
    let mut index = 0_u32;
    while at < duration_s && rate_per_s > 0.0 {
        offsets.push(at);
        index += 1;
        at = match arrival {
            // k/λ, not a running sum, so no rounding error piles up.
            Arrival::Constant => f64::from(index) / rate_per_s,
            // Exponential gaps by inversion: −ln(U)/λ.
            Arrival::Poisson => at - random.next_unit().ln() / rate_per_s,
        };
    }
    offsets
}

/// The seed of one cell's schedule in one repetition.
fn schedule_seed(shared: &Shared, cell: &CellKey, rep: u32) -> u64 {
    let base = shared.config.seed.unwrap_or(0);
    let mut mix = SplitMix64(
        base ^ u64::from(cell.rate_milli_per_s.unwrap_or(0)).rotate_left(32)
            ^ u64::from(cell.prompt_tokens_target).rotate_left(16)
            ^ u64::from(cell.output_tokens)
            ^ (u64::from(rep) << 48),
    );
    mix.next_u64()
}

/// Open loop: requests sent on the schedule whatever the server does, for the duration; each
/// request records when it was due, so a client that fell behind is visible.
pub(crate) async fn run_rate_rep(
    shared: &Arc<Shared>,
    cell: CellKey,
    rep: u32,
    n_units: usize,
) -> Result<RepResult, SweepError> {
    let rate = cell.rate_per_s().unwrap_or(1.0);
    let arrival = shared.config.arrival.unwrap_or_default();
    let offsets = schedule(
        arrival,
        rate,
        duration(shared).as_secs_f64(),
        schedule_seed(shared, &cell, rep),
    );
    // A short lead so the first request is not late by the set-up itself.
    let origin = Instant::now() + Duration::from_millis(20);
    let mut set = tokio::task::JoinSet::new();
    let mut result = RepResult::default();
    for (index, offset) in offsets.iter().enumerate() {
        let scheduled = origin + Duration::from_secs_f64(*offset);
        tokio::time::sleep_until(scheduled.into()).await;
        let job = StreamJob {
            cell,
            phase: RepPhase::Measured,
            rep,
            stream: u32::try_from(index).unwrap_or(u32::MAX),
            n_units,
            sequence: None,
            scheduled: Some(scheduled),
        };
        set.spawn(run_stream(Arc::clone(shared), job, None));
        // Collect what has finished, so a stop is seen while sending goes on.
        while let Some(outcome) = set.try_join_next() {
            collect(shared, &mut set, &mut result, outcome)?;
        }
    }
    while let Some(outcome) = set.join_next().await {
        collect(shared, &mut set, &mut result, outcome)?;
    }
    Ok(result)
}

fn collect(
    shared: &Shared,
    set: &mut tokio::task::JoinSet<Result<StreamEnd, SweepError>>,
    result: &mut RepResult,
    outcome: Result<Result<StreamEnd, SweepError>, tokio::task::JoinError>,
) -> Result<(), SweepError> {
    let recorded = joined(shared, outcome).and_then(|end| result.record(shared, end));
    if recorded.is_err() {
        set.abort_all();
    }
    shared.observer.request_measured();
    recorded
}

/// Samples the server's running and waiting requests from `/metrics` every second: each sample
/// is a request and a parse on the measuring machine, so it is kept rare beside the events.
#[derive(Debug)]
pub(crate) struct QueueSampler {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Vec<(f64, f64)>>,
}

impl QueueSampler {
    pub(crate) fn start(client: Client) -> Self {
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut ticker = tokio::time::interval(Duration::from_secs(1));
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = ticker.tick() => {
                        if let Ok(snapshot) = client.metrics().await
                            && let Some(load) = vernier_openai::server_load(&vernier_openai::metric_sums(&snapshot))
                        {
                            samples.push((load.running, load.waiting));
                        }
                    }
                }
            }
            samples
        });
        Self { stop, task }
    }

    /// Stops sampling; `None` when no sample had the known names.
    pub(crate) async fn finish(self) -> Option<QueueSamples> {
        let _ = self.stop.send(());
        let samples = self.task.await.unwrap_or_default();
        if samples.is_empty() {
            return None;
        }
        let running: Vec<f64> = samples.iter().map(|s| s.0).collect();
        let waiting: Vec<f64> = samples.iter().map(|s| s.1).collect();
        let max = |v: &[f64]| v.iter().copied().fold(0.0_f64, f64::max);
        Some(QueueSamples {
            n_samples: u32::try_from(samples.len()).unwrap_or(u32::MAX),
            running_median: vernier_stats::median(&running).unwrap_or(0.0),
            running_max: max(&running),
            waiting_median: vernier_stats::median(&waiting).unwrap_or(0.0),
            waiting_max: max(&waiting),
        })
    }
}

/// The cell at `load` for one workload, prompt and output length.
fn cell_at(base: CellKey, load_mode: LoadMode, load: f64) -> CellKey {
    if load_mode == LoadMode::Rate {
        CellKey::at_rate(
            base.workload,
            base.prompt_tokens_target,
            base.output_tokens,
            load,
        )
    } else {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "concurrency loads are whole numbers from 1 up to the ceiling"
        )]
        let streams = load.round().max(1.0) as u32;
        CellKey::new(
            base.workload,
            base.prompt_tokens_target,
            base.output_tokens,
            streams,
        )
    }
}

/// Whether the measured cell met the target, read back from the journal (so a resumed search
/// takes the same path).
fn cell_met(shared: &Shared, cell: &CellKey) -> Result<bool, SweepError> {
    let journal = crate::journal::read_sweep_journal(shared.journal.path())?;
    let run = crate::summary::summarise(&journal).ok_or_else(|| SweepError::JournalParse {
        path: shared.journal.path().to_owned(),
        line: 1,
        detail: "the journal has no header".to_owned(),
    })?;
    Ok(run
        .cells
        .iter()
        .find(|summary| {
            summary.workload == cell.workload
                && summary.prompt_tokens_target == cell.prompt_tokens_target
                && summary.output_tokens == cell.output_tokens
                && summary.concurrency == cell.concurrency
                && summary.rate_per_s == cell.rate_per_s()
        })
        .and_then(|summary| summary.target_check.as_ref())
        .is_some_and(|check| check.met))
}

/// The capacity search: from the first concurrency (or rate), double the load while the target
/// holds, then bisect between the last load that met it and the first that missed, down to
/// neighbouring concurrencies (or rates within 10% of each other). Each load is a whole cell.
pub(crate) async fn search(
    shared: &Arc<Shared>,
    state: &mut ResumeState,
) -> Result<(), SweepError> {
    let config = &shared.config;
    let rate_search = config.load == LoadMode::Rate;
    let first = if rate_search {
        config.rates_per_s.first().copied().unwrap_or(1.0)
    } else {
        f64::from(config.concurrency.first().copied().unwrap_or(1))
    };
    let ceiling = config
        .max_load
        .unwrap_or(if rate_search { 1e4 } else { 1024.0 });
    for &workload in &config.workloads {
        for &prompt in &config.prompt_tokens {
            for &output in &config.output_tokens {
                let base = CellKey::new(workload, prompt, output, 1);
                let (mut good, mut bad): (Option<f64>, Option<f64>) = (None, None);
                let mut load = first.min(ceiling);
                loop {
                    let cell = cell_at(base, config.load, load);
                    shared.observer.status(&format!("capacity search: {cell}"));
                    run_cell(shared, state, cell).await?;
                    if cell_met(shared, &cell)? {
                        good = Some(load);
                    } else {
                        bad = Some(load);
                    }
                    let next = match (good, bad) {
                        (_, None) if load >= ceiling => break,
                        (_, None) => (load * 2.0).min(ceiling),
                        (None, Some(_)) => break,
                        (Some(low), Some(high)) => {
                            let close = if rate_search {
                                high / low <= 1.1
                            } else {
                                high - low <= 1.0
                            };
                            if close {
                                break;
                            }
                            if rate_search {
                                (low * high).sqrt()
                            } else {
                                f64::midpoint(low, high).floor()
                            }
                        }
                    };
                    load = next;
                }
            }
        }
    }
    shared
        .journal
        .append(&SweepJournalLine::SearchDone(SearchDone {
            unix_ms: unix_ms(),
        }))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_schedule_is_evenly_spaced_and_stops_at_the_duration() {
        let offsets = schedule(Arrival::Constant, 4.0, 1.0, 7);
        assert_eq!(offsets, vec![0.0, 0.25, 0.5, 0.75]);
    }

    #[test]
    fn a_poisson_schedule_is_seeded_and_has_the_asked_rate() {
        let a = schedule(Arrival::Poisson, 50.0, 200.0, 11);
        assert_eq!(a, schedule(Arrival::Poisson, 50.0, 200.0, 11));
        assert_ne!(a, schedule(Arrival::Poisson, 50.0, 200.0, 12));
        // 10,000 expected arrivals: the count's standard deviation is 100 (Poisson), so four
        // of them is 4%; the mean gap of an exponential with rate 50 is 20 ms.
        let n = a.len() as f64;
        assert!((n - 10_000.0).abs() < 400.0, "{n}");
        let gaps: Vec<f64> = a.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 0.02).abs() < 0.001, "{mean}");
        // For an exponential, the share of gaps above the mean is e^-1 = 0.368.
        let above = gaps.iter().filter(|g| **g > 0.02).count() as f64 / gaps.len() as f64;
        assert!((above - (-1.0_f64).exp()).abs() < 0.02, "{above}");
    }
}
