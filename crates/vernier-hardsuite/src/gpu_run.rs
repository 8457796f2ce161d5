//! The server's GPUs over a run: opened once, sampled over each session (`vernier_run`'s
//! `OpenedGpu`), the samples journalled when the session ends.

use std::time::Duration;

use crate::config::RunConfig;
use crate::error::HardsuiteError;
use crate::journal::{HardsuiteJournalLine, HardsuiteJournalWriter};

/// Opens the server's GPUs as the configuration asks: `--gpu-metrics-url`, else NVML for a
/// server on this machine.
pub(crate) async fn open_gpu(
    config: &RunConfig,
    base_url: &str,
    simulated: bool,
) -> vernier_run::OpenedGpu {
    vernier_run::OpenedGpu::open(
        vernier_gpu::GpuChoice::for_server(
            base_url,
            simulated,
            config.gpu_metrics_url.clone(),
            Duration::from_millis(config.gpu_sample_ms),
        )
        .only(config.gpus.clone()),
    )
    .await
}

/// Stops `sampler` and journals its samples.
pub(crate) async fn finish(
    sampler: Option<vernier_gpu::GpuSampler>,
    journal: &HardsuiteJournalWriter,
) -> Result<(), HardsuiteError> {
    let taken = vernier_run::finish_sampling(sampler).await;
    if !taken.is_empty() {
        journal.append(&HardsuiteJournalLine::GpuWindow { samples: taken })?;
    }
    Ok(())
}
