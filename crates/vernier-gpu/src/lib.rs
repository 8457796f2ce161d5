//! The accelerator behind a run's numbers.
//!
//! - [`GpuRecord`]: which GPUs served the run (name, memory, driver and CUDA versions, compute
//!   capability, power limit, clocks), or one line saying none was read and why.
//! - [`GpuSource`]: where readings come from: [`NvmlSource`] (NVML, loaded at run time, for a
//!   server on this machine) or [`DcgmSource`] (a DCGM exporter's or the server's Prometheus
//!   text over HTTP, for a server elsewhere).
//! - [`GpuSampler`]: samples a source at a stated interval on its own thread, which never touches
//!   the streams' runtimes.
//! - [`EnergyWindow`]: what a stretch of samples says: energy (from the GPU's energy counter where
//!   it has one, else integrated power, and which), mean and peak power, peak memory, and with a
//!   token count, joules per output token and output tokens per joule.
//!
//! No async runtime: the sampler is a plain thread and the exporter is read with one blocking
//! HTTP/1.0 request per sample.
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "cli")]
mod cli;
mod dcgm;
mod energy;
mod error;
mod http;
mod identity;
#[cfg(feature = "nvml")]
mod nvml;
mod sample;
mod sampler;
mod source;

#[cfg(feature = "cli")]
pub use cli::GpuArgs;
pub use dcgm::{DcgmSource, parse_dcgm};
pub use energy::{EnergySource, EnergyWindow, PerToken, WorkEnergy};
pub use error::GpuError;
pub use identity::{GpuDevice, GpuRecord};
#[cfg(feature = "nvml")]
pub use nvml::NvmlSource;
pub use sample::{DeviceSample, GpuSample, throttle_reason_names};
pub use sampler::{GpuChoice, GpuSampler, SharedSource, open_source, server_is_local};
pub use source::GpuSource;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
