//! Load beyond the burst: steady concurrency (every slot replaced as it ends) and open-loop
//! request rates on a seeded schedule, each request recording when it was due.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vernier_stats::SplitMix64;

use crate::config::{Arrival, CellKey, SweepConfig};
use crate::error::SweepError;
use crate::journal::RepPhase;
use crate::parts::{Record, Sweep};
use crate::stream::{RepResult, StreamEnd, StreamJob, joined, run_stream};

/// The duration of a steady or open-loop repetition.
pub(crate) fn duration(config: &SweepConfig) -> Duration {
    Duration::try_from_secs_f64(config.duration_s.unwrap_or(60.0))
        .unwrap_or(Duration::from_secs(60))
}

/// Steady load: `concurrency` slots, each sending its next request as soon as the last one
/// ended, until the duration is over.
pub(crate) async fn run_steady_rep(
    sweep: &Arc<Sweep>,
    cell: CellKey,
    rep: u32,
    n_units: usize,
) -> Result<RepResult, SweepError> {
    // A shard starts on the shared grid and runs its own slots, by their one-machine numbers.
    let start = match sweep.grid.next_origin() {
        Some(origin) => {
            tokio::time::sleep_until(origin.into()).await;
            origin
        }
        None => Instant::now(),
    };
    let deadline = start + duration(&sweep.plan.config);
    let slots = sweep.plan.config.shard.map_or_else(
        || (0..cell.concurrency).collect(),
        |shard| shard.slots(cell.concurrency),
    );
    let mut set = tokio::task::JoinSet::new();
    for slot in slots {
        let sweep = Arc::clone(sweep);
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
                let end = Box::pin(run_stream(Arc::clone(&sweep), job, None)).await?;
                result.record(&sweep.record, end)?;
                sweep.record.observer.request_measured();
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
                    path: sweep.record.journal.path().to_owned(),
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

/// Send offsets, in seconds from the start, of every request due before `duration_s`.
pub(crate) fn schedule(arrival: Arrival, rate_per_s: f64, duration_s: f64, seed: u64) -> Vec<f64> {
    let mut offsets = Vec::new();
    let mut random = SplitMix64::new(seed);
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
fn schedule_seed(config: &SweepConfig, cell: &CellKey, rep: u32) -> u64 {
    let base = config.seed.unwrap_or(0);
    let mut mix = SplitMix64::new(
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
    sweep: &Arc<Sweep>,
    cell: CellKey,
    rep: u32,
    n_units: usize,
) -> Result<RepResult, SweepError> {
    let rate = cell.rate_per_s().unwrap_or(1.0);
    let config = &sweep.plan.config;
    let arrival = config.arrival.unwrap_or_default();
    let offsets = schedule(
        arrival,
        rate,
        duration(config).as_secs_f64(),
        schedule_seed(config, &cell, rep),
    );
    // A short lead so the first request is not late by the set-up itself; a shard's schedule
    // starts on the shared grid, and it sends its own arrivals of the one-machine schedule.
    let origin = sweep
        .grid
        .next_origin()
        .unwrap_or_else(|| Instant::now() + Duration::from_millis(20));
    let shard = config.shard;
    let due: Vec<(usize, Instant)> = offsets
        .iter()
        .enumerate()
        .filter(|(index, _)| shard.is_none_or(|shard| shard.owns(*index)))
        .map(|(index, offset)| (index, origin + Duration::from_secs_f64(*offset)))
        .collect();
    // The schedule is kept by a thread of its own sleeping to each instant (the kernel's
    // high-resolution timer), not by the runtime's timer, which rounds every deadline up to
    // its next millisecond and fires behind the streams' reads: each instant reaches the
    // sending loop through a channel the moment it is due.
    let (tick, mut ticks) = tokio::sync::mpsc::unbounded_channel::<(usize, Instant)>();
    let pacer = {
        let due = due.clone();
        std::thread::Builder::new()
            .name("vernier-open-loop".to_owned())
            .spawn(move || {
                for (index, scheduled) in due {
                    let wait = scheduled.saturating_duration_since(Instant::now());
                    if !wait.is_zero() {
                        std::thread::sleep(wait);
                    }
                    if tick.send((index, scheduled)).is_err() {
                        return;
                    }
                }
            })
    };
    let mut set = tokio::task::JoinSet::new();
    let mut result = RepResult::default();
    let thread_keeps_time = pacer.is_ok();
    let mut next = 0;
    while next < due.len() {
        let tick = if thread_keeps_time {
            ticks.recv().await
        } else {
            None
        };
        // Without the pacing thread (it could not start), the runtime's timer keeps time.
        let (at, scheduled) = if let Some(tick) = tick {
            tick
        } else {
            tokio::time::sleep_until(due[next].1.into()).await;
            due[next]
        };
        next += 1;
        let job = StreamJob {
            cell,
            phase: RepPhase::Measured,
            rep,
            stream: u32::try_from(at).unwrap_or(u32::MAX),
            n_units,
            sequence: None,
            scheduled: Some(scheduled),
        };
        set.spawn(run_stream(Arc::clone(sweep), job, None));
        // Collect what has finished, so a stop is seen while sending goes on.
        while let Some(outcome) = set.try_join_next() {
            collect(&sweep.record, &mut set, &mut result, outcome)?;
        }
    }
    while let Some(outcome) = set.join_next().await {
        collect(&sweep.record, &mut set, &mut result, outcome)?;
    }
    Ok(result)
}

fn collect(
    record: &Record,
    set: &mut tokio::task::JoinSet<Result<StreamEnd, SweepError>>,
    result: &mut RepResult,
    outcome: Result<Result<StreamEnd, SweepError>, tokio::task::JoinError>,
) -> Result<(), SweepError> {
    let recorded = joined(record, outcome).and_then(|end| result.record(record, end));
    if recorded.is_err() {
        set.abort_all();
    }
    record.observer.request_measured();
    recorded
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
