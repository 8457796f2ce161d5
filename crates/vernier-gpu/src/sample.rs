//! One reading of every GPU.

use serde::{Deserialize, Serialize};

/// Every GPU read at one instant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GpuSample {
    /// Wall clock when the reading was taken (milliseconds since the Unix epoch).
    pub unix_ms: u64,
    /// One entry per GPU read.
    pub devices: Vec<DeviceSample>,
}

impl GpuSample {
    /// A reading of `devices` at `unix_ms`.
    pub fn new(unix_ms: u64, devices: Vec<DeviceSample>) -> Self {
        Self { unix_ms, devices }
    }
}

/// One GPU at one instant; a field the source does not give is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DeviceSample {
    /// The GPU's index as the source numbers it.
    pub index: u32,
    /// Power draw in watts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// The energy counter in millijoules (since the driver loaded or the machine booted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_mj: Option<f64>,
    /// Memory used in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_mib: Option<f64>,
    /// Utilisation in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util_percent: Option<f64>,
    /// SM clock in MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<f64>,
    /// Temperature in degrees Celsius.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    /// Clock throttle (clock event) reasons as NVML's bit mask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_reasons: Option<u64>,
}

impl DeviceSample {
    /// An empty reading of GPU `index`.
    pub fn new(index: u32) -> Self {
        Self {
            index,
            ..Self::default()
        }
    }
}

/// NVML's clock throttle reasons (`nvmlClocksThrottleReason*`, the same bits DCGM reports in
/// `DCGM_FI_DEV_CLOCKS_EVENT_REASONS`), by bit.
const THROTTLE_REASONS: [(u64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

/// The names of the reasons set in `mask` (bits NVML does not name are given as hex).
pub fn throttle_reason_names(mask: u64) -> Vec<String> {
    let mut names = Vec::new();
    let mut known = 0;
    for (bit, name) in THROTTLE_REASONS {
        known |= bit;
        if mask & bit != 0 {
            names.push(name.to_owned());
        }
    }
    let unknown = mask & !known;
    if unknown != 0 {
        names.push(format!("other_{unknown:#x}"));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_named_by_nvml_bit() {
        // nvml.h: SwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown 0x20.
        assert_eq!(
            throttle_reason_names(0x4 | 0x8 | 0x20),
            ["sw_power_cap", "hw_slowdown", "sw_thermal_slowdown"]
        );
        assert_eq!(throttle_reason_names(0), Vec::<String>::new());
        assert_eq!(
            throttle_reason_names(0x1000 | 0x1),
            ["gpu_idle", "other_0x1000"]
        );
    }
}
