//! GPUs read through NVML, loaded at run time: a machine without `libnvidia-ml` gets a
//! reason, not a failed start.

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::error::NvmlError;

use crate::error::GpuError;
use crate::identity::GpuDevice;
use crate::sample::DeviceSample;
use crate::source::GpuSource;

fn nvml_error(error: &NvmlError) -> GpuError {
    match error {
        NvmlError::LibloadingError(inner) => GpuError::Nvml(format!(
            "libnvidia-ml could not be loaded ({inner}); no NVIDIA driver on this machine"
        )),
        other => GpuError::Nvml(other.to_string()),
    }
}

/// Every GPU NVML sees on this machine.
#[derive(Debug)]
pub struct NvmlSource {
    nvml: Nvml,
    count: u32,
}

const MIB: u64 = 1024 * 1024;

impl NvmlSource {
    /// Loads NVML and counts the GPUs.
    pub fn open() -> Result<Self, GpuError> {
        let nvml = Nvml::init().map_err(|error| nvml_error(&error))?;
        let count = nvml.device_count().map_err(|error| nvml_error(&error))?;
        Ok(Self { nvml, count })
    }
}

impl GpuSource for NvmlSource {
    fn name(&self) -> String {
        "nvml".to_owned()
    }

    fn identity(&mut self) -> Result<Vec<GpuDevice>, GpuError> {
        let driver = self.nvml.sys_driver_version().ok();
        let cuda = self.nvml.sys_cuda_driver_version().ok().map(|version| {
            // 12040 → 12.4, as nvidia-smi prints it.
            format!("{}.{}", version / 1000, (version % 1000) / 10)
        });
        let mut devices = Vec::new();
        for index in 0..self.count {
            // A GPU NVML cannot open (fallen off the bus, say) is left out; the others are read.
            let Ok(device) = self.nvml.device_by_index(index) else {
                continue;
            };
            let mut gpu = GpuDevice::new(
                index,
                device.name().unwrap_or_else(|_| "unnamed GPU".to_owned()),
            );
            gpu.uuid = device.uuid().ok();
            gpu.pci_bus_id = device.pci_info().ok().map(|pci| pci.bus_id);
            match device.memory_info() {
                Ok(memory) => gpu.memory_total_mib = Some(memory.total / MIB),
                // Unified-memory devices (GB10, for one) have no framebuffer of their own.
                Err(NvmlError::NotSupported) => gpu.unified_memory = true,
                Err(_) => {}
            }
            gpu.driver_version.clone_from(&driver);
            gpu.cuda_version.clone_from(&cuda);
            gpu.compute_capability = device
                .cuda_compute_capability()
                .ok()
                .map(|cc| format!("{}.{}", cc.major, cc.minor));
            gpu.power_limit_w = device
                .enforced_power_limit()
                .ok()
                .map(|milliwatts| f64::from(milliwatts) / 1000.0);
            gpu.max_sm_clock_mhz = device.max_clock_info(Clock::SM).ok();
            gpu.max_memory_clock_mhz = device.max_clock_info(Clock::Memory).ok();
            devices.push(gpu);
        }
        Ok(devices)
    }

    fn sample(&mut self) -> Result<Vec<DeviceSample>, GpuError> {
        let mut samples = Vec::new();
        for index in 0..self.count {
            let Ok(device) = self.nvml.device_by_index(index) else {
                continue;
            };
            let mut sample = DeviceSample::new(index);
            sample.power_w = device
                .power_usage()
                .ok()
                .map(|milliwatts| f64::from(milliwatts) / 1000.0);
            sample.energy_mj = device.total_energy_consumption().ok().map(|mj| mj as f64);
            sample.memory_used_mib = device
                .memory_info()
                .ok()
                .map(|memory| memory.used as f64 / MIB as f64);
            sample.util_percent = device
                .utilization_rates()
                .ok()
                .map(|rates| f64::from(rates.gpu));
            sample.sm_clock_mhz = device.clock_info(Clock::SM).ok().map(f64::from);
            sample.temperature_c = device
                .temperature(TemperatureSensor::Gpu)
                .ok()
                .map(f64::from);
            sample.throttle_reasons = device
                .current_throttle_reasons()
                .ok()
                .map(|bits| bits.bits());
            samples.push(sample);
        }
        Ok(samples)
    }
}
