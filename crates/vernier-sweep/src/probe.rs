//! The scheduler probe: how long a ready task waits for the runtime that reads the streams,
//! during a cell. Every millisecond on one stream runtime while the events are timed in user
//! space; once a second on each stream runtime once the kernel stamps them, where the client's
//! lag is measured on every event and the probe only adds the runtime's own delay, at a rate
//! well below the events it watches.

use std::time::{Duration, Instant};

use crate::lag::LagHistogram;

/// What a [`SchedulerProbe`] measured.
#[derive(Debug, Default)]
pub(crate) struct ProbeResult {
    /// Yield → polled again: how long a ready task waits for the runtime.
    pub(crate) scheduler_delay: LagHistogram,
    /// Timer deadline → the task woken: tokio's timer granularity (about 1 ms) plus the
    /// scheduling delay. Reported apart; it is not the client's lag.
    pub(crate) timer_overshoot: LagHistogram,
}

/// The probe's tick while events are timed in user space.
pub(crate) const DENSE: Duration = Duration::from_millis(1);
/// The probe's tick once the kernel stamps events.
pub(crate) const SPARSE: Duration = Duration::from_secs(1);

/// Measures tokio's scheduling delay on the runtimes that read the measured streams, one probe
/// task on each. Every tick (by tokio's timer) a probe records how late the timer woke it, then
/// yields and records how long the runtime takes to poll it again. The yield is timed from
/// `Instant::now()` just before `yield_now()`, so the timer's granularity is not part of the
/// scheduling delay.
#[derive(Debug)]
pub(crate) struct SchedulerProbe {
    probes: Vec<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<ProbeResult>,
    )>,
}

/// One probe task on `runtime`.
fn probe_on(
    runtime: &tokio::runtime::Handle,
    tick: Duration,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<ProbeResult>,
) {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let task = runtime.spawn(async move {
        let mut result = ProbeResult::default();
        let mut ticker = tokio::time::interval(tick);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                deadline = ticker.tick() => {
                    result.timer_overshoot.record(
                        tokio::time::Instant::now().saturating_duration_since(deadline),
                    );
                    let before = Instant::now();
                    tokio::task::yield_now().await;
                    result.scheduler_delay.record(before.elapsed());
                }
            }
        }
        result
    });
    (stop, task)
}

impl SchedulerProbe {
    /// A probe on each of `runtimes` (the stream runtimes), or on the caller's runtime when
    /// there are none (the streams then run there). Must be called on a tokio runtime.
    pub(crate) fn start(tick: Duration, runtimes: &[tokio::runtime::Handle]) -> Self {
        let probes = if runtimes.is_empty() {
            vec![probe_on(&tokio::runtime::Handle::current(), tick)]
        } else {
            runtimes
                .iter()
                .map(|runtime| probe_on(runtime, tick))
                .collect()
        };
        Self { probes }
    }

    /// Stops every probe; their figures merged.
    pub(crate) async fn finish(self) -> ProbeResult {
        let mut merged = ProbeResult::default();
        for (stop, task) in self.probes {
            let _ = stop.send(());
            let result = task.await.unwrap_or_default();
            merged.scheduler_delay.merge(&result.scheduler_delay);
            merged.timer_overshoot.merge(&result.timer_overshoot);
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_records_one_yield_and_one_timer_wake_per_tick() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let result = runtime.block_on(async {
            let probe = SchedulerProbe::start(DENSE, &[]);
            tokio::time::sleep(Duration::from_millis(20)).await;
            probe.finish().await
        });
        let ticks = result.timer_overshoot.count();
        assert!(ticks >= 1, "{result:?}");
        assert_eq!(result.scheduler_delay.count(), ticks, "{result:?}");
    }
}
