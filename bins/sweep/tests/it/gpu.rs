//! The server's GPUs in a sweep: read from a DCGM exporter's text served over loopback, sampled
//! over each cell, with energy and joules per output token checked by hand; and the one line a
//! run without GPUs carries.

use std::time::Duration;

use vernier_sim::{SimConfig, TokensPerEvent};

use crate::support::{run_sweep, start_sim};

use vernier_test_support::dcgm_exporter;

fn quick_sim() -> SimConfig {
    SimConfig::builder()
        .tokens_per_event(TokensPerEvent::Fixed(2))
        .decode_step(Duration::from_millis(4))
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_reports_the_exporters_energy_per_output_token() {
    let exporter = dcgm_exporter::start();
    let sim = start_sim(quick_sim()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run_sweep(
        &sim.base_url(),
        out.path(),
        &[
            "--workload",
            "prose",
            "--prompt-tokens",
            "64",
            "--output-tokens",
            "40",
            "--concurrency",
            "2",
            "--reps",
            "3",
            "--gpu-metrics-url",
            &exporter.url,
            "--gpu-sample-ms",
            "20",
        ],
    )
    .await
    .expect("the sweep runs");
    sim.shutdown().await;
    let run = &outcome.run;
    let gpu = run.environment.gpu.as_ref().expect("the GPUs are recorded");
    assert_eq!(gpu.source.as_deref(), Some(exporter.url.as_str()));
    assert_eq!(gpu.devices.len(), 2);
    assert_eq!(gpu.devices[0].name, "NVIDIA H100 80GB HBM3");
    assert_eq!(gpu.sample_interval_ms, Some(20));
    let cell = &run.cells[0];
    let cell_gpu = cell.gpu.as_ref().expect("the cell has GPU figures");
    // Every scrape after the one that read the identity is one of the cell's samples.
    let samples = exporter.scrapes() - 1;
    assert_eq!(cell_gpu.window.samples as u64, samples);
    // By hand: the counters rose 2.5 J between consecutive scrapes, over (samples − 1) gaps.
    let energy = (samples - 1) as f64 * dcgm_exporter::JOULES_PER_SCRAPE;
    assert!((cell_gpu.window.energy_j.expect("energy") - energy).abs() < 1e-6);
    assert_eq!(
        cell_gpu.window.energy_source,
        Some(vernier_gpu::EnergySource::EnergyCounter)
    );
    // The simulator writes exactly the 40 tokens asked for (forced length): 3 reps × 2 streams.
    let per = cell_gpu.per_token.expect("joules per token");
    assert_eq!(per.output_tokens, 3 * 2 * 40);
    assert!((per.joules_per_output_token - energy / 240.0).abs() < 1e-9);
    assert!((per.output_tokens_per_joule - 240.0 / energy).abs() < 1e-9);
    // Peak memory: 73201 + 73073 MiB from the exporter's text.
    assert_eq!(cell_gpu.window.peak_memory_mib, Some(146_274.0));
    let report = std::fs::read_to_string(out.path().join("report.md")).expect("report");
    assert!(report.contains("- GPU: 2 × NVIDIA H100 80GB HBM3, 81072 MiB, driver 550.54.15"));
    assert!(report.contains("## GPU energy"));
    assert!(report.contains("clocks held back: sw_power_cap"));
    for chart in ["gpu_power.svg", "gpu_memory.svg", "energy_per_token.svg"] {
        let svg = std::fs::read_to_string(out.path().join(chart)).expect("the chart is written");
        assert!(svg.contains("<circle"), "{chart} plots the cell");
    }
    let csv = std::fs::read_to_string(out.path().join("report.csv")).expect("csv");
    assert!(
        csv.lines()
            .next()
            .is_some_and(|h| h.ends_with("gpu_joules_per_output_token"))
    );
    // The run store's record: the GPUs and driver as the exporter names them, and the
    // energy per output token worked by hand above.
    let record = vernier_store::read_run(out.path()).expect("the run's record");
    assert_eq!(record.gpu, "NVIDIA H100 80GB HBM3, NVIDIA H100 80GB HBM3");
    assert_eq!(record.driver, "550.54.15");
    let figure = record
        .figure("energy per output token at 2 in flight (median over cells)")
        .expect("the energy figure");
    assert!((figure.value - energy / 240.0).abs() < 1e-9, "{figure:?}");
    assert!(!figure.higher_is_better);
}

/// A one-cell sweep of the simulator with `extra` flags: the run and its folder.
async fn short_run(extra: &[&str]) -> (vernier_sweep::RunFile, tempfile::TempDir) {
    let sim = start_sim(quick_sim()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut flags = vec![
        "--workload",
        "prose",
        "--prompt-tokens",
        "64",
        "--output-tokens",
        "16",
        "--reps",
        "1",
    ];
    flags.extend_from_slice(extra);
    let outcome = run_sweep(&sim.base_url(), out.path(), &flags)
        .await
        .expect("the sweep runs");
    sim.shutdown().await;
    (outcome.run, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_gpus_says_so_in_one_line() {
    let (run, out) = short_run(&[]).await;
    let gpu = run.environment.gpu.as_ref().expect("a GPU record");
    assert!(run.cells.iter().all(|cell| cell.gpu.is_none()) || !gpu.devices.is_empty());
    let report = std::fs::read_to_string(out.path().join("report.md")).expect("report");
    if gpu.devices.is_empty() {
        // A machine without an NVIDIA driver (CI): NVML's absence is named, never an error.
        assert!(
            report.contains("- GPU: none read (NVML: libnvidia-ml could not be loaded"),
            "{report}"
        );
        assert!(!out.path().join("gpu_power.svg").exists());
    }
    // Turned off: nothing is read and the reason says how.
    let (run, _out) = short_run(&["--gpu-sample-ms", "0"]).await;
    let gpu = run.environment.gpu.as_ref().expect("a GPU record");
    assert_eq!(
        gpu.not_read.as_deref(),
        Some("GPU reading turned off (--gpu-sample-ms 0)")
    );
}

/// A short sweep of a simulated vLLM serving `model` over weights at `root`: what the run
/// recorded of the weights, and its report.
async fn weights_of(model: &str, root: &str) -> (vernier_run::LoadedWeights, String) {
    let sim = start_sim(
        SimConfig::builder()
            .model(model)
            .model_root(Some(root.to_owned()))
            .decode_step(Duration::from_millis(2))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let flags = [
        "--workload",
        "prose",
        "--prompt-tokens",
        "64",
        "--output-tokens",
        "8",
        "--reps",
        "1",
    ];
    let outcome = run_sweep(&sim.base_url(), out.path(), &flags)
        .await
        .expect("the sweep runs");
    sim.shutdown().await;
    let weights = outcome
        .run
        .environment
        .model
        .weights
        .clone()
        .expect("weights recorded");
    let report = std::fs::read_to_string(out.path().join("report.md")).expect("report");
    (weights, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fp8_weights_served_under_the_bf16_name_are_flagged() {
    // The seed's case: vLLM serving `Qwen/Qwen3-8B` (the BF16 model's name) over FP8 weights,
    // which only `/v1/models`' `root` reveals.
    let (weights, report) = weights_of("Qwen/Qwen3-8B", "/models/Qwen3-8B-FP8").await;
    assert_eq!(weights.loaded_from.as_deref(), Some("/models/Qwen3-8B-FP8"));
    assert_eq!(weights.stated_by.as_deref(), Some("/v1/models root"));
    let mismatch = weights.mismatch.as_deref().expect("the names disagree");
    assert!(
        mismatch.contains("`Qwen/Qwen3-8B`") && mismatch.contains("FP8"),
        "{mismatch}"
    );
    assert!(report.contains("**Served name and weights disagree:**"));
    // The same server over weights its name describes is not flagged.
    let (weights, report) = weights_of("Qwen/Qwen3-8B-FP8", "/models/Qwen3-8B-FP8").await;
    assert_eq!(weights.mismatch, None);
    assert!(!report.contains("disagree"));
}
