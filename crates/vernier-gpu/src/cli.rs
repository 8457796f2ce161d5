//! The flags every binary takes for the server's GPUs, defined once.

use std::time::Duration;

/// `--gpu-metrics-url`, `--gpu-sample-ms` and `--gpus`.
#[derive(Debug, Clone, clap::Args)]
pub struct GpuArgs {
    /// Read the server's GPUs from this DCGM exporter (or Prometheus endpoint with DCGM's
    /// names), e.g. `http://gpu-node:9400/metrics`; run the exporter with `-c 1000` so it
    /// refreshes every second. Without it, a server on this machine is read through NVML.
    #[arg(long, value_name = "URL", help_heading = "Server")]
    pub gpu_metrics_url: Option<String>,
    /// Milliseconds between GPU samples (power, energy, memory, clocks) over the work; 0
    /// reads no GPU.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 500,
        help_heading = "Server"
    )]
    pub gpu_sample_ms: u64,
    /// Only these GPUs (by index, as NVML or the exporter numbers them) serve the server
    /// measured, e.g. `0,1`; the others are left out of energy and power.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        help_heading = "Server"
    )]
    pub gpus: Option<Vec<u32>>,
}

impl Default for GpuArgs {
    /// As the flags are when none is typed.
    fn default() -> Self {
        Self {
            gpu_metrics_url: None,
            gpu_sample_ms: 500,
            gpus: None,
        }
    }
}

impl GpuArgs {
    /// The interval between samples (zero: no GPU read).
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.gpu_sample_ms)
    }
}
