//! The server's GPUs over a run: opened once, sampled over each session on the sampler's own
//! thread, the samples journalled when the session ends.

use std::sync::Arc;
use std::time::Duration;

use crate::config::RunConfig;
use crate::error::HardsuiteError;
use crate::journal::{HardsuiteJournalLine, HardsuiteJournalWriter};

/// Opens the server's GPUs (NVML for a server here, else `--gpu-metrics-url`) off the async
/// threads: NVML's load and an exporter's first read block.
pub(crate) async fn open_gpu(
    config: &RunConfig,
    base_url: &str,
    simulated: bool,
) -> (
    Option<(vernier_gpu::SharedSource, Duration)>,
    vernier_gpu::GpuRecord,
) {
    let interval = Duration::from_millis(config.gpu_sample_ms);
    let choice = vernier_gpu::GpuChoice::for_server(
        base_url,
        simulated,
        config.gpu_metrics_url.clone(),
        interval,
    )
    .only(config.gpus.clone());
    match tokio::task::spawn_blocking(move || vernier_gpu::open_source(&choice)).await {
        Ok((source, record)) => (source.map(|source| (source, interval)), record),
        Err(error) => (
            None,
            vernier_gpu::GpuRecord::none(format!("the GPU reader failed: {error}")),
        ),
    }
}

/// Starts sampling `gpu` (the source and interval), when there is one.
pub(crate) fn start(
    gpu: Option<&(vernier_gpu::SharedSource, Duration)>,
) -> Option<vernier_gpu::GpuSampler> {
    gpu.map(|(source, interval)| vernier_gpu::GpuSampler::start(Arc::clone(source), *interval))
}

/// Stops `sampler` (off the async threads) and journals its samples.
pub(crate) async fn finish(
    sampler: Option<vernier_gpu::GpuSampler>,
    journal: &HardsuiteJournalWriter,
) -> Result<(), HardsuiteError> {
    let Some(sampler) = sampler else {
        return Ok(());
    };
    let taken = tokio::task::spawn_blocking(move || sampler.finish())
        .await
        .unwrap_or_default();
    if !taken.is_empty() {
        journal.append(&HardsuiteJournalLine::GpuWindow { samples: taken })?;
    }
    Ok(())
}
