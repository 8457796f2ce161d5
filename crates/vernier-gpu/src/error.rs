//! Why a GPU could not be read.

/// Why a reading failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// NVML could not be loaded or answered with an error.
    #[error("NVML: {0}")]
    Nvml(String),
    /// The metrics URL is not one this reader takes.
    #[error("--gpu-metrics-url {url}: {detail}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong and the fix.
        detail: String,
    },
    /// The exporter did not answer, or not with 200.
    #[error("{url}: {detail}")]
    Fetch {
        /// The URL read.
        url: String,
        /// What happened.
        detail: String,
    },
    /// The exporter answered with no GPU metric this reader knows.
    #[error("{url} answered, but with no DCGM GPU metric (DCGM_FI_DEV_*) carrying a gpu label")]
    NoGpuMetrics {
        /// The URL read.
        url: String,
    },
}
