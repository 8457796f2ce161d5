//! GPUs read from a DCGM exporter's Prometheus text (or any endpoint serving DCGM's names).
//!
//! Names and units are DCGM's (dcgm-exporter's `etc/default-counters.csv`): power in W, the
//! energy counter in mJ since boot, framebuffer memory in MiB, clocks in MHz. Each series
//! carries `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName` and `Hostname` labels, and the
//! driver version as the label `DCGM_FI_DRIVER_VERSION`.

use std::collections::BTreeMap;

use crate::error::GpuError;
use crate::http::{self, HttpUrl};
use crate::identity::GpuDevice;
use crate::sample::DeviceSample;
use crate::source::GpuSource;

/// One series: its name, labels and value.
struct Series {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Reads `{a="x",b="y\"z"}` starting after the `{`; the labels and the rest after `}`.
fn labels(text: &str) -> Option<(BTreeMap<String, String>, &str)> {
    let mut labels = BTreeMap::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if let Some(after) = rest.strip_prefix('}') {
            return Some((labels, after));
        }
        let eq = rest.find('=')?;
        let key = rest[..eq].trim().to_owned();
        rest = rest[eq + 1..].trim_start().strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            let (at, c) = chars.next()?;
            match c {
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                '"' => break at,
                other => value.push(other),
            }
        };
        labels.insert(key, value);
        rest = &rest[end + 1..];
    }
}

fn series(line: &str) -> Option<Series> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line.find(|c: char| c == '{' || c.is_whitespace())?;
    let name = line[..name_end].to_owned();
    let (labels, rest) = if line[name_end..].starts_with('{') {
        labels(&line[name_end + 1..])?
    } else {
        (BTreeMap::new(), &line[name_end..])
    };
    let value: f64 = rest.split_whitespace().next()?.parse().ok()?;
    // DCGM's "blank" values mean "not available": the int64 ones (9223372036854775794 and
    // its neighbours), the int32 ones (2147483632 to 2147483647) and the fp64 ones (2^47 and
    // just above).
    let int32_blank = (2_147_483_632.0..=2_147_483_647.0).contains(&value);
    let fp64_blank = (140_737_488_355_328.0..140_737_488_355_400.0).contains(&value);
    if !value.is_finite() || value >= 9.0e18 || int32_blank || fp64_blank {
        return None;
    }
    Some(Series {
        name,
        labels,
        value,
    })
}

/// A reading as a whole number: values here are non-negative and below DCGM's blank values
/// (9e18, filtered out when read), so the cast keeps them.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "clamped to 0 ..= 9e18 first"
)]
fn whole(value: f64) -> u64 {
    value.round().clamp(0.0, 9.0e18) as u64
}

/// `12040` (DCGM's CUDA driver version) as `12.4`.
fn cuda_version(value: f64) -> String {
    let value = whole(value);
    format!("{}.{}", value / 1000, (value % 1000) / 10)
}

/// What the text says of each GPU: its identity and one reading, by the `gpu` label.
pub fn parse_dcgm(text: &str) -> (Vec<GpuDevice>, Vec<DeviceSample>) {
    let mut devices: BTreeMap<u32, (GpuDevice, DeviceSample, Option<f64>)> = BTreeMap::new();
    for series in text.lines().filter_map(series) {
        if !series.name.starts_with("DCGM_FI_") {
            continue;
        }
        // A MIG instance's series (`GPU_I_ID`) would overwrite its whole GPU's.
        if series.labels.contains_key("GPU_I_ID") {
            continue;
        }
        let Some(index) = series
            .labels
            .get("gpu")
            .and_then(|gpu| gpu.parse::<u32>().ok())
        else {
            continue;
        };
        let (device, sample, fb_free) = devices
            .entry(index)
            .or_insert_with(|| (GpuDevice::new(index, ""), DeviceSample::new(index), None));
        let label = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| series.labels.get(*name))
                .filter(|value| !value.is_empty())
                .cloned()
        };
        if device.name.is_empty() {
            device.name = label(&["modelName", "model_name"]).unwrap_or_default();
        }
        device.uuid = device.uuid.take().or_else(|| label(&["UUID", "uuid"]));
        device.pci_bus_id = device.pci_bus_id.take().or_else(|| label(&["pci_bus_id"]));
        device.hostname = device
            .hostname
            .take()
            .or_else(|| label(&["Hostname", "hostname"]));
        device.driver_version = device
            .driver_version
            .take()
            .or_else(|| label(&["DCGM_FI_DRIVER_VERSION", "driver_version"]));
        let value = series.value;
        match series.name.as_str() {
            "DCGM_FI_DEV_POWER_USAGE" => sample.power_w = Some(value),
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" => sample.energy_mj = Some(value),
            "DCGM_FI_DEV_FB_USED" => sample.memory_used_mib = Some(value),
            "DCGM_FI_DEV_FB_FREE" => *fb_free = Some(value),
            "DCGM_FI_DEV_GPU_UTIL" => sample.util_percent = Some(value),
            "DCGM_FI_DEV_SM_CLOCK" => sample.sm_clock_mhz = Some(value),
            "DCGM_FI_DEV_GPU_TEMP" => sample.temperature_c = Some(value),
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS" | "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" => {
                sample.throttle_reasons = Some(whole(value));
            }
            "DCGM_FI_DEV_POWER_MGMT_LIMIT" | "DCGM_FI_DEV_ENFORCED_POWER_LIMIT" => {
                device.power_limit_w = Some(value);
            }
            "DCGM_FI_DEV_MAX_SM_CLOCK" => {
                device.max_sm_clock_mhz = u32::try_from(whole(value)).ok();
            }
            "DCGM_FI_DEV_MAX_MEM_CLOCK" => {
                device.max_memory_clock_mhz = u32::try_from(whole(value)).ok();
            }
            "DCGM_FI_DEV_FB_TOTAL" => device.memory_total_mib = Some(whole(value)),
            "DCGM_FI_CUDA_DRIVER_VERSION" => device.cuda_version = Some(cuda_version(value)),
            "DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY" => {
                // DCGM packs it as major << 16 | minor.
                let packed = whole(value);
                device.compute_capability = Some(format!("{}.{}", packed >> 16, packed & 0xffff));
            }
            _ => {}
        }
    }
    devices
        .into_values()
        .map(|(mut device, sample, fb_free)| {
            if device.memory_total_mib.is_none()
                && let (Some(used), Some(free)) = (sample.memory_used_mib, fb_free)
            {
                // Total as DCGM's own dashboards take it: used + free (reserved memory aside).
                device.memory_total_mib = Some(whole(used + free));
            }
            if device.name.is_empty() {
                "unnamed GPU".clone_into(&mut device.name);
            }
            (device, sample)
        })
        .unzip()
}

/// A DCGM exporter (or a server's Prometheus endpoint with DCGM's names) read over HTTP.
#[derive(Debug, Clone)]
pub struct DcgmSource {
    url: HttpUrl,
    display: String,
}

impl DcgmSource {
    /// The exporter at `url` (`http://HOST:9400/metrics`); checked, not yet read.
    pub fn new(url: &str) -> Result<Self, GpuError> {
        Ok(Self {
            url: HttpUrl::parse(url)?,
            display: url.to_owned(),
        })
    }

    fn read(&self) -> Result<(Vec<GpuDevice>, Vec<DeviceSample>), GpuError> {
        let text = http::get(&self.url, &self.display)?;
        let parsed = parse_dcgm(&text);
        if parsed.0.is_empty() {
            return Err(GpuError::NoGpuMetrics {
                url: self.display.clone(),
            });
        }
        Ok(parsed)
    }
}

impl GpuSource for DcgmSource {
    fn name(&self) -> String {
        self.display.clone()
    }

    fn identity(&mut self) -> Result<Vec<GpuDevice>, GpuError> {
        Ok(self.read()?.0)
    }

    fn sample(&mut self) -> Result<Vec<DeviceSample>, GpuError> {
        Ok(self.read()?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_with_escapes_and_blank_values() {
        let text = r#"
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-b",modelName="A \"quoted\" GPU"} 61
DCGM_FI_DEV_MEMORY_TEMP{gpu="1",UUID="GPU-b"} 9223372036854775794
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-b"} 140737488355328
DCGM_FI_DEV_SM_CLOCK{gpu="1",UUID="GPU-b"} 2147483632
DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-b",GPU_I_ID="3",GPU_I_PROFILE="1g.10gb"} 99
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",modelName="NVIDIA L4"} 40 1700000000000
DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY{gpu="0"} 524288
DCGM_FI_CUDA_DRIVER_VERSION{gpu="0"} 12040
vllm:num_requests_running{model_name="m"} 3
"#;
        let (devices, samples) = parse_dcgm(text);
        assert_eq!(devices.len(), 2);
        assert_eq!(devices[0].name, "NVIDIA L4");
        assert_eq!(devices[0].compute_capability.as_deref(), Some("8.0"));
        assert_eq!(devices[0].cuda_version.as_deref(), Some("12.4"));
        assert_eq!(devices[1].name, "A \"quoted\" GPU");
        assert_eq!(
            samples[1].temperature_c,
            Some(61.0),
            "a MIG series is not the GPU's"
        );
        assert_eq!(samples[1].power_w, None, "DCGM's fp64 blank");
        assert_eq!(samples[1].sm_clock_mhz, None, "DCGM's int32 blank");
        assert_eq!(samples[0].temperature_c, Some(40.0));
    }
}
