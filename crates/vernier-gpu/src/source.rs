//! Somewhere GPUs can be read.

use crate::error::GpuError;
use crate::identity::GpuDevice;
use crate::sample::DeviceSample;

/// Somewhere GPUs can be read.
pub trait GpuSource: Send + std::fmt::Debug {
    /// How the record names it: `nvml`, or the metrics URL.
    fn name(&self) -> String;
    /// Every GPU's identity.
    fn identity(&mut self) -> Result<Vec<GpuDevice>, GpuError>;
    /// One reading of every GPU.
    fn sample(&mut self) -> Result<Vec<DeviceSample>, GpuError>;
}
