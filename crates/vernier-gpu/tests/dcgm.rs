//! The DCGM path against an exporter's text served over loopback, figures checked by hand
//! from `fixtures/gpu/dcgm-exporter-h100x2.txt`.

use std::net::TcpListener;
use std::time::Duration;

use vernier_gpu::{EnergySource, EnergyWindow, GpuChoice, GpuSampler, open_source, parse_dcgm};

use vernier_test_support::dcgm_exporter;

use dcgm_exporter::{FIXTURE, JOULES_PER_SCRAPE};

#[test]
fn the_fixture_reads_as_two_h100s() {
    let (devices, samples) = parse_dcgm(FIXTURE);
    assert_eq!(devices.len(), 2);
    let first = &devices[0];
    assert_eq!(first.name, "NVIDIA H100 80GB HBM3");
    assert_eq!(
        first.uuid.as_deref(),
        Some("GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52")
    );
    assert_eq!(first.driver_version.as_deref(), Some("550.54.15"));
    assert_eq!(first.hostname.as_deref(), Some("gpu-node-7"));
    // FB_USED 73201 + FB_FREE 7871 MiB.
    assert_eq!(first.memory_total_mib, Some(81_072));
    assert_eq!(first.power_limit_w, Some(700.0));
    assert_eq!(samples[0].power_w, Some(412.617));
    assert_eq!(samples[0].energy_mj, Some(81_234_567_890.0));
    assert_eq!(samples[1].memory_used_mib, Some(73_073.0));
    assert_eq!(samples[0].util_percent, Some(97.0));
    assert_eq!(samples[0].sm_clock_mhz, Some(1980.0));
    assert_eq!(samples[0].temperature_c, Some(52.0));
    // Clock event reasons 4 = SW power cap (nvml.h's nvmlClocksThrottleReasonSwPowerCap).
    assert_eq!(samples[0].throttle_reasons, Some(4));
    assert_eq!(samples[1].throttle_reasons, Some(0));
}

#[test]
fn energy_and_joules_per_token_from_a_served_exporter() {
    let exporter = dcgm_exporter::start();
    let url = exporter.url.clone();
    let (source, record) = open_source(&GpuChoice::new(
        Some(url.clone()),
        None,
        Duration::from_millis(20),
    ));
    let source = source.expect("the exporter is read");
    assert_eq!(record.source.as_deref(), Some(url.as_str()));
    assert_eq!(record.devices.len(), 2);
    assert!(
        record
            .summary_line()
            .starts_with("GPU: 2 × NVIDIA H100 80GB HBM3, 81072 MiB, driver 550.54.15")
    );
    let identity_scrapes = exporter.scrapes();
    let sampler = GpuSampler::start(source, Duration::from_millis(20));
    std::thread::sleep(Duration::from_millis(150));
    let taken = sampler.finish();
    let window_scrapes = exporter.scrapes() - identity_scrapes;
    assert_eq!(
        taken.len() as u64,
        window_scrapes,
        "every scrape is one sample"
    );
    let window = EnergyWindow::from_samples(&taken).expect("a window");
    // By hand: between the window's first and last scrapes the counters rose
    // (scrapes − 1) × (1 500 + 1 000) mJ = (scrapes − 1) × 2.5 J.
    let expected_j = (window_scrapes - 1) as f64 * JOULES_PER_SCRAPE;
    assert_eq!(window.energy_source, Some(EnergySource::EnergyCounter));
    assert!((window.energy_j.expect("energy") - expected_j).abs() < 1e-6);
    // Peak total power: 412.617 + 398.204 W; peak memory 73201 + 73073 MiB.
    assert!((window.peak_power_w.expect("power") - 810.821).abs() < 1e-9);
    assert_eq!(window.peak_memory_mib, Some(146_274.0));
    assert_eq!(
        window.throttle_reasons.get("sw_power_cap").copied(),
        u32::try_from(taken.len()).ok()
    );
    // 1 000 output tokens: joules per token is the energy over 1 000.
    let per = window.per_token(1_000).expect("per token");
    assert!((per.joules_per_output_token - expected_j / 1_000.0).abs() < 1e-9);
    assert!((per.output_tokens_per_joule - 1_000.0 / expected_j).abs() < 1e-9);
}

#[test]
fn an_exporter_that_is_down_is_one_reason() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/metrics", listener.local_addr().expect("address"));
    drop(listener);
    let (source, record) = open_source(&GpuChoice::new(
        Some(url.clone()),
        None,
        Duration::from_millis(20),
    ));
    assert!(source.is_none());
    let line = record.summary_line();
    assert!(
        line.starts_with("GPU: none read (") && line.contains(&url),
        "{line}"
    );
}

#[test]
fn nvml_is_read_or_its_absence_is_named() {
    let (source, record) = open_source(&GpuChoice::new(None, None, Duration::from_millis(500)));
    if source.is_some() {
        // A machine with an NVIDIA driver: every GPU has a name.
        assert!(record.devices.iter().all(|device| !device.name.is_empty()));
    } else {
        let line = record.summary_line();
        assert!(
            line.contains("NVML") && line.contains("--gpu-metrics-url"),
            "{line}"
        );
    }
}

#[test]
fn only_the_servers_gpus_are_counted() {
    let exporter = dcgm_exporter::start();
    let choice = GpuChoice::new(Some(exporter.url.clone()), None, Duration::from_millis(20))
        .only(Some(vec![1]));
    let (source, record) = open_source(&choice);
    let source = source.expect("the exporter is read");
    assert_eq!(record.devices.len(), 1);
    assert_eq!(record.devices[0].index, 1);
    assert!(
        record.summary_line().ends_with(", --gpus 1 (of 2 read)"),
        "{}",
        record.summary_line()
    );
    let before = exporter.scrapes();
    let sampler = GpuSampler::start(source, Duration::from_millis(20));
    std::thread::sleep(Duration::from_millis(100));
    let taken = sampler.finish();
    let scrapes = exporter.scrapes() - before;
    assert!(
        taken
            .iter()
            .all(|sample| sample.devices.len() == 1 && sample.devices[0].index == 1)
    );
    // GPU 1 alone: its counter rises 1 000 mJ a scrape; its power is 398.204 W.
    let window = EnergyWindow::from_samples(&taken).expect("a window");
    assert!((window.energy_j.expect("energy") - (scrapes - 1) as f64).abs() < 1e-6);
    assert_eq!(window.peak_power_w, Some(398.204));
    // A GPU the source does not have: nothing is read, and the reason names the flag.
    let (none, record) = open_source(
        &GpuChoice::new(Some(exporter.url.clone()), None, Duration::from_millis(20))
            .only(Some(vec![7])),
    );
    assert!(none.is_none());
    assert!(
        record
            .summary_line()
            .contains("lists none of --gpus 7 (of 2 read)"),
        "{}",
        record.summary_line()
    );
}
