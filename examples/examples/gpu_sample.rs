//! The GPUs on this machine through NVML (or a DCGM exporter with `--metrics-url`): their
//! identity, then `--seconds` of samples and what they add up to (energy, mean and peak power,
//! peak memory). `scripts/gpu-check.sh` runs it beside a known GPU load.
//!
//! ```text
//! cargo run -p vernier-examples --example gpu_sample -- --seconds 60 --interval-ms 200
//! ```

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use vernier_gpu::{EnergyWindow, GpuChoice, GpuSampler, open_source};

#[derive(Debug, Parser)]
struct Args {
    /// How long to sample.
    #[arg(long, default_value_t = 30.0)]
    seconds: f64,
    /// Milliseconds between samples.
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// Read a DCGM exporter instead of NVML.
    #[arg(long)]
    metrics_url: Option<String>,
}

#[expect(clippy::print_stdout, reason = "an example reports on stdout")]
fn main() -> ExitCode {
    let args = Args::parse();
    let interval = Duration::from_millis(args.interval_ms);
    let (source, record) = open_source(&GpuChoice::new(args.metrics_url, None, interval));
    println!("{}", record.summary_line());
    for device in &record.devices {
        println!(
            "  [{}] {} uuid={} pci={} cc={} cuda={} driver={} limit={} W",
            device.index,
            device.name,
            device.uuid.as_deref().unwrap_or("-"),
            device.pci_bus_id.as_deref().unwrap_or("-"),
            device.compute_capability.as_deref().unwrap_or("-"),
            device.cuda_version.as_deref().unwrap_or("-"),
            device.driver_version.as_deref().unwrap_or("-"),
            device
                .power_limit_w
                .map_or_else(|| "-".to_owned(), |w| format!("{w:.0}")),
        );
    }
    let Some(source) = source else {
        return ExitCode::FAILURE;
    };
    let Ok(seconds) = Duration::try_from_secs_f64(args.seconds) else {
        println!(
            "--seconds {}: give a number of seconds from 0",
            args.seconds
        );
        return ExitCode::from(2);
    };
    let sampler = GpuSampler::start(source, interval);
    std::thread::sleep(seconds);
    let taken = sampler.finish();
    let Some(window) = EnergyWindow::from_samples(&taken) else {
        println!("no sample could be read");
        return ExitCode::FAILURE;
    };
    let figure = |value: Option<f64>, unit: &str| {
        value.map_or_else(|| "-".to_owned(), |v| format!("{v:.1} {unit}"))
    };
    println!(
        "samples: {} over {:.1} s; energy {} ({}); mean power {}; peak power {}; peak memory {}; mean utilisation {}; max temperature {}",
        window.samples,
        window.duration_s,
        figure(window.energy_j, "J"),
        window.energy_source.map_or("-", |source| source.label()),
        figure(window.mean_power_w, "W"),
        figure(window.peak_power_w, "W"),
        figure(window.peak_memory_mib, "MiB"),
        figure(window.mean_util_percent, "%"),
        figure(window.max_temperature_c, "°C"),
    );
    if !window.throttle_reasons.is_empty() {
        println!(
            "clock throttle reasons (samples): {:?}",
            window.throttle_reasons
        );
    }
    ExitCode::SUCCESS
}
