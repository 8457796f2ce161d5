//! The cells of a sweep: each cell's warm-ups and measured repetitions (a burst of streams, or
//! steady or open-loop load), with the server's counters, queue and the scheduler probe
//! around them, and cells left out for the server's context.

use std::collections::BTreeMap;
use std::sync::Arc;

use vernier_openai::Client;
use vernier_run::StopReason;

use crate::config::{CellKey, LoadMode, SweepConfig};
use crate::error::SweepError;
use crate::journal::{CellSkipped, CellWindow, RepDone, RepPhase, SweepJournalLine};
use crate::parts::{Record, Sweep};
use crate::probe::SchedulerProbe;
use crate::queue_sampler::QueueSampler;
use crate::resume::ResumeState;
use crate::stream::{RepResult, StreamJob, joined, run_stream};
use crate::summary;

/// Sums of every non-bucket metric, by name; `None` when `/metrics` does not answer within
/// the scrape deadline.
pub(crate) async fn metric_sums(client: &Client) -> Option<BTreeMap<String, f64>> {
    let snapshot = tokio::time::timeout(crate::watchdog::SCRAPE_DEADLINE, client.metrics())
        .await
        .ok()?
        .ok()?;
    Some(vernier_openai::metric_sums(&snapshot))
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

/// Runs every cell not yet finished.
pub(crate) async fn run_cells(
    sweep: &Arc<Sweep>,
    state: &mut ResumeState,
) -> Result<(), SweepError> {
    let config = &sweep.plan.config;
    let cells = config.cells();
    let planned: u64 = cells
        .iter()
        .map(|c| u64::from(config.reps) * u64::from(c.concurrency.max(1)))
        .sum();
    let already: u64 = cells
        .iter()
        .map(|c| u64::from(state.done(c).min(config.reps)) * u64::from(c.concurrency.max(1)))
        .sum();
    sweep.record.observer.planned(planned, already);
    for cell in cells {
        run_cell(sweep, state, cell).await?;
    }
    Ok(())
}

/// Runs what `cell` still needs: its warm-ups, then measured repetitions until it is finished,
/// with the server's counters, queue and the scheduler probe around them.
pub(crate) async fn run_cell(
    sweep: &Arc<Sweep>,
    state: &mut ResumeState,
    cell: CellKey,
) -> Result<(), SweepError> {
    if state.skipped.contains_key(&cell) {
        return Ok(());
    }
    match run_cell_reps(sweep, state, cell).await {
        Err(SweepError::ContextExceeded { detail }) => {
            skip_cell(&sweep.record, state, cell, detail)
        }
        other => other,
    }
}

/// Leaves `cell` out as `context_exceeded`, journaled with `reason`.
pub(crate) fn skip_cell(
    record: &Record,
    state: &mut ResumeState,
    cell: CellKey,
    reason: String,
) -> Result<(), SweepError> {
    if state.skipped.contains_key(&cell) {
        return Ok(());
    }
    record
        .observer
        .warn(&format!("{cell} left out (context_exceeded): {reason}"));
    record
        .journal
        .append(&SweepJournalLine::CellSkipped(CellSkipped {
            cell,
            reason: reason.clone(),
            unix_ms: vernier_run::unix_ms(),
        }))?;
    state.skipped.insert(cell, reason);
    Ok(())
}

/// What watches a cell's measured repetitions beside the streams: the scheduler probe, the
/// server's queue and the GPUs.
struct Watchers {
    probe: SchedulerProbe,
    queue: Option<QueueSampler>,
    gpu: Option<vernier_gpu::GpuSampler>,
}

impl Watchers {
    fn start(target: &crate::parts::Target) -> Self {
        // The probe runs where the events are read: once a second on every stream runtime,
        // or (events timed in user space) every millisecond on the first, so that it never
        // wakes idle runtimes a thousand times a second.
        let runtimes = target
            .runtimes
            .as_ref()
            .map_or(&[][..], |runtimes| runtimes.handles());
        let probe = if target.kernel_rx {
            SchedulerProbe::start(crate::probe::SPARSE, runtimes)
        } else {
            SchedulerProbe::start(crate::probe::DENSE, &runtimes[..runtimes.len().min(1)])
        };
        Self {
            probe,
            queue: target
                .has_metrics
                .then(|| QueueSampler::start(target.client.clone())),
            // On its own thread: a reading never waits behind the streams.
            gpu: target.gpu.start_sampling(),
        }
    }

    async fn finish(
        self,
    ) -> (
        crate::probe::ProbeResult,
        Option<crate::journal::QueueSamples>,
        Vec<vernier_gpu::GpuSample>,
    ) {
        let probed = self.probe.finish().await;
        let queue = match self.queue {
            Some(sampler) => sampler.finish().await,
            None => None,
        };
        let gpu_samples = vernier_run::finish_sampling(self.gpu).await;
        (probed, queue, gpu_samples)
    }
}

async fn run_cell_reps(
    sweep: &Arc<Sweep>,
    state: &mut ResumeState,
    cell: CellKey,
) -> Result<(), SweepError> {
    let (target, config, record) = (&sweep.target, &sweep.plan.config, &sweep.record);
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
        record.observer.status(&format!("{cell}: warm-up"));
        run_rep(sweep, cell, RepPhase::Warmup, next_warmup, n_units).await?;
        state.next_warmup.insert(cell, next_warmup + 1);
    }
    let metrics_before = if target.has_metrics {
        metric_sums(&target.client).await.unwrap_or_default()
    } else {
        BTreeMap::new()
    };
    let watchers = Watchers::start(target);
    let mut failed_in_a_row = 0;
    let result = async {
        while !finished(config, state, &cell, done) {
            let rep = *state.next_rep.entry(cell).or_default();
            record.observer.status(&format!(
                "{cell}: rep {}/{}",
                done + 1,
                config.reps.max(done + 1)
            ));
            let RepResult {
                n_ok,
                n_failed,
                decode_rates,
            } = run_rep(sweep, cell, RepPhase::Measured, rep, n_units).await?;
            state.next_rep.insert(cell, rep + 1);
            record.journal.append(&SweepJournalLine::RepDone(RepDone {
                cell,
                rep,
                n_ok,
                n_failed,
            }))?;
            record.journal.sync()?;
            state.done_reps.entry(cell).or_default().insert(rep);
            state
                .decode_rates
                .entry(cell)
                .or_default()
                .extend(decode_rates);
            done += 1;
            failed_in_a_row = if n_ok == 0 { failed_in_a_row + 1 } else { 0 };
            if failed_in_a_row >= 2 {
                return Err(record.stopped(
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
    let (probed, queue, gpu_samples) = watchers.finish().await;
    let metrics_after = if target.has_metrics {
        metric_sums(&target.client).await.unwrap_or_default()
    } else {
        BTreeMap::new()
    };
    record
        .journal
        .append(&SweepJournalLine::CellWindow(Box::new(CellWindow {
            cell,
            metrics_before,
            metrics_after,
            scheduler_delay: probed.scheduler_delay,
            timer_overshoot: probed.timer_overshoot,
            queue,
            gpu_samples,
        })))?;
    result
}

/// Runs one repetition of `cell` as the configuration's load says: a burst of `concurrency`
/// streams at once (the default), steady load, or an open-loop schedule.
async fn run_rep(
    sweep: &Arc<Sweep>,
    cell: CellKey,
    phase: RepPhase,
    rep: u32,
    n_units: usize,
) -> Result<RepResult, SweepError> {
    match (sweep.plan.config.load, phase) {
        (LoadMode::Burst, _) => {
            run_burst_rep(sweep, cell, phase, rep, n_units, cell.concurrency).await
        }
        // A warm-up of steady or open-loop load is one request per stream slot (one for a rate
        // cell): it warms the server without taking a whole duration.
        (_, RepPhase::Warmup) => {
            run_burst_rep(sweep, cell, phase, rep, n_units, cell.concurrency.max(1)).await
        }
        (LoadMode::Steady, RepPhase::Measured) => {
            crate::open_loop::run_steady_rep(sweep, cell, rep, n_units).await
        }
        (LoadMode::Rate, RepPhase::Measured) => {
            crate::open_loop::run_rate_rep(sweep, cell, rep, n_units).await
        }
    }
}

/// Runs `concurrency` streams at once; the counts and decode rates, or a stop.
async fn run_burst_rep(
    sweep: &Arc<Sweep>,
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
        set.spawn(run_stream(Arc::clone(sweep), job, Some(Arc::clone(&start))));
    }
    let mut result = RepResult::default();
    while let Some(outcome) = set.join_next().await {
        let end = joined(&sweep.record, outcome)?;
        if let Err(error) = result.record(&sweep.record, end) {
            set.abort_all();
            return Err(error);
        }
        if phase == RepPhase::Measured {
            sweep.record.observer.request_measured();
        }
    }
    Ok(result)
}
