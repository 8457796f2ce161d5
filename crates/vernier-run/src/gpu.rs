//! The server's GPUs over a run, the same way in every engine: opened once off the async
//! threads (NVML's load and an exporter's first read block), sampled over a stretch of work on
//! the sampler's own thread, the sampler stopped off the async threads.

use std::sync::Arc;
use std::time::Duration;

use vernier_gpu::{GpuChoice, GpuRecord, GpuSample, GpuSampler, SharedSource};

/// The GPUs a run opened: what was read of them, and the source to sample when there is one.
#[derive(Debug)]
#[non_exhaustive]
pub struct OpenedGpu {
    /// What was read (or why nothing was).
    pub record: GpuRecord,
    source: Option<SharedSource>,
    interval: Duration,
}

impl OpenedGpu {
    /// Opens the source `choice` names (never an error: the record says why nothing was read).
    pub async fn open(choice: GpuChoice) -> Self {
        let interval = choice.interval;
        match tokio::task::spawn_blocking(move || vernier_gpu::open_source(&choice)).await {
            Ok((source, record)) => Self {
                record,
                source,
                interval,
            },
            Err(error) => Self {
                record: GpuRecord::none(format!("the GPU reader failed: {error}")),
                source: None,
                interval,
            },
        }
    }

    /// Starts sampling, when there is a source.
    pub fn start_sampling(&self) -> Option<GpuSampler> {
        self.source
            .as_ref()
            .map(|source| GpuSampler::start(Arc::clone(source), self.interval))
    }
}

/// Stops `sampler` off the async threads (its last reading may block on an exporter) and gives
/// its samples; none without a sampler.
pub async fn finish_sampling(sampler: Option<GpuSampler>) -> Vec<GpuSample> {
    match sampler {
        Some(sampler) => tokio::task::spawn_blocking(move || sampler.finish())
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    }
}
