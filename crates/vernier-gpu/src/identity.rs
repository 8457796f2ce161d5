//! Which GPUs served a run.

use serde::{Deserialize, Serialize};

/// One GPU as its source describes it; a field the source does not give is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GpuDevice {
    /// Index as the source numbers it.
    pub index: u32,
    /// Product name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// `GPU-…` UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// PCI bus id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// Total memory in MiB (dedicated memory; for a unified-memory device, what it reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total_mib: Option<u64>,
    /// True when the device reports no dedicated memory of its own (unified memory, shared with
    /// the CPU, as on GB10 or Grace Hopper's coherent mode).
    #[serde(default)]
    pub unified_memory: bool,
    /// Driver version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    /// The CUDA version the driver supports (`12.4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
    /// Compute capability (`9.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    /// The enforced power limit in watts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
    /// Highest SM clock in MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sm_clock_mhz: Option<u32>,
    /// Highest memory clock in MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory_clock_mhz: Option<u32>,
    /// The machine the exporter runs on, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
}

impl GpuDevice {
    /// GPU `index` named `name`, nothing else known.
    pub fn new(index: u32, name: impl Into<String>) -> Self {
        Self {
            index,
            name: name.into(),
            ..Self::default()
        }
    }

    /// One line: `NVIDIA H100 80GB HBM3, 81559 MiB, driver 550.54.15, CUDA 12.4, compute 9.0,
    /// power limit 700 W`.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.name.clone()];
        match (self.memory_total_mib, self.unified_memory) {
            (Some(mib), true) => parts.push(format!("{mib} MiB unified")),
            (Some(mib), false) => parts.push(format!("{mib} MiB")),
            (None, true) => parts.push("unified memory".to_owned()),
            (None, false) => {}
        }
        if let Some(driver) = &self.driver_version {
            parts.push(format!("driver {driver}"));
        }
        if let Some(cuda) = &self.cuda_version {
            parts.push(format!("CUDA {cuda}"));
        }
        if let Some(cc) = &self.compute_capability {
            parts.push(format!("compute {cc}"));
        }
        if let Some(limit) = self.power_limit_w {
            parts.push(format!("power limit {limit:.0} W"));
        }
        if let Some(clock) = self.max_sm_clock_mhz {
            parts.push(format!("SM up to {clock} MHz"));
        }
        parts.join(", ")
    }
}

/// The GPUs behind a run, read once at its start, or why none were read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GpuRecord {
    /// Where the readings come from: `nvml` or the metrics URL; `None` when nothing was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The GPUs read.
    #[serde(default)]
    pub devices: Vec<GpuDevice>,
    /// Why no GPU was read (when `devices` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_read: Option<String>,
    /// The interval between samples, in milliseconds, when sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval_ms: Option<u64>,
    /// How the GPUs were cut to the server's (`--gpus 0,1 (of 8 read)`), when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_by: Option<String>,
}

impl GpuRecord {
    /// No GPU read, for `why`.
    pub fn none(why: impl Into<String>) -> Self {
        Self {
            not_read: Some(why.into()),
            ..Self::default()
        }
    }

    /// `devices` read from `source`.
    pub fn read(source: impl Into<String>, devices: Vec<GpuDevice>) -> Self {
        Self {
            source: Some(source.into()),
            devices,
            ..Self::default()
        }
    }

    /// One line for a report or the terminal: `GPU: 2 × NVIDIA H100 80GB HBM3 (…), read
    /// through nvml` or `GPU: none read (…)`.
    pub fn summary_line(&self) -> String {
        if self.devices.is_empty() {
            return format!(
                "GPU: none read ({})",
                self.not_read.as_deref().unwrap_or("no source was given")
            );
        }
        let source = match (&self.source, &self.selected_by) {
            (Some(source), Some(selected)) => format!("{source}, {selected}"),
            (Some(source), None) => source.clone(),
            (None, _) => "an unknown source".to_owned(),
        };
        let first = &self.devices[0];
        let same = self
            .devices
            .iter()
            .all(|device| device.describe() == first.describe());
        if same {
            format!(
                "GPU: {} × {}, read through {source}",
                self.devices.len(),
                first.describe()
            )
        } else {
            let each: Vec<String> = self
                .devices
                .iter()
                .map(|device| format!("[{}] {}", device.index, device.describe()))
                .collect();
            format!("GPU: {}, read through {source}", each.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_names_each_kind_of_gpu() {
        let mut h100 = GpuDevice::new(0, "NVIDIA H100 80GB HBM3");
        h100.memory_total_mib = Some(81_559);
        h100.driver_version = Some("550.54.15".to_owned());
        let record = GpuRecord::read(
            "nvml",
            vec![h100.clone(), {
                let mut second = h100.clone();
                second.index = 1;
                second
            }],
        );
        assert_eq!(
            record.summary_line(),
            "GPU: 2 × NVIDIA H100 80GB HBM3, 81559 MiB, driver 550.54.15, read through nvml"
        );
        let mut gb10 = GpuDevice::new(1, "NVIDIA GB10");
        gb10.unified_memory = true;
        let mixed = GpuRecord::read("nvml", vec![h100, gb10]);
        assert!(
            mixed
                .summary_line()
                .contains("[1] NVIDIA GB10, unified memory")
        );
        assert_eq!(
            GpuRecord::none("the simulator uses no GPU").summary_line(),
            "GPU: none read (the simulator uses no GPU)"
        );
    }
}
