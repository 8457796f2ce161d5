//! The server's queue sampled while a cell runs.

use std::time::Duration;

use vernier_openai::Client;

use crate::journal::QueueSamples;
use crate::watchdog::SCRAPE_DEADLINE;

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
                        if let Ok(Ok(snapshot)) = tokio::time::timeout(SCRAPE_DEADLINE, client.metrics()).await
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
