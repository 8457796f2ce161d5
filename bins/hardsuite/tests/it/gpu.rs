//! The server's GPUs over a suite: read from a DCGM exporter's text served over loopback, with
//! the run's energy and joules per output token checked by hand.

use hardsuite::CommandOutput;

use crate::{arg, run_cli};

use vernier_test_support::dcgm_exporter;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_reports_the_exporters_energy_per_output_token() {
    let exporter = dcgm_exporter::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let output = run_cli(&[
        "hardsuite",
        "run",
        "--out",
        arg(&out),
        "--quiet",
        "--tasks",
        "crt,dice-probability,digit-sum",
        "--gpu-metrics-url",
        &exporter.url,
        "--gpu-sample-ms",
        "20",
    ])
    .await
    .expect("math tasks need no Docker");
    let CommandOutput::Run(outcome) = output else {
        panic!("run gives a run outcome");
    };
    let results = &outcome.results;
    let gpu = results.gpu.as_ref().expect("the GPUs are recorded");
    assert_eq!(gpu.devices.len(), 2);
    let energy = results.energy.as_ref().expect("the run's energy");
    // One scrape read the identity; every later one is a sample of the run's one session.
    let samples = exporter.scrapes() - 1;
    assert_eq!(energy.window.samples as u64, samples);
    let joules = (samples - 1) as f64 * dcgm_exporter::JOULES_PER_SCRAPE;
    assert!((energy.window.energy_j.expect("energy") - joules).abs() < 1e-6);
    // Every try's completion tokens, summed by hand from the journal.
    let tokens: u64 = crate::json_lines(&out.join("journal.jsonl"))
        .iter()
        .filter(|line| line["type"] == "attempt")
        .filter_map(|line| line["completion_tokens"].as_u64())
        .sum();
    assert!(tokens > 0);
    let per = energy.per_token.expect("joules per token");
    assert_eq!(per.output_tokens, tokens);
    assert!((per.joules_per_output_token - joules / tokens as f64).abs() < 1e-9);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(
        report.contains("- GPU: 2 × NVIDIA H100 80GB HBM3"),
        "{report}"
    );
    assert!(report.contains("- GPU energy over the run"), "{report}");
    assert!(
        report.contains("- Weights: loaded from `vernier-sim` (/v1/models root)"),
        "{report}"
    );
    // A later session that journalled no GPU window (interrupted before its samples were
    // written, or resumed with reading off): its tries count nowhere in the energy per token.
    let journal = out.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).expect("journal");
    let attempt = text
        .lines()
        .find(|line| line.contains("\"type\":\"attempt\""))
        .expect("an attempt line");
    std::fs::write(
        &journal,
        format!("{text}{{\"type\":\"resumed\",\"kept_attempts\":3,\"at_unix_ms\":1}}\n{attempt}\n"),
    )
    .expect("append a session");
    let again = vernier_hardsuite::ResultsFile::load(&journal).expect("results from the journal");
    let energy = again.energy.expect("energy");
    let n_tries = crate::json_lines(&out.join("journal.jsonl"))
        .iter()
        .filter(|line| line["type"] == "attempt")
        .count() as u64;
    assert_eq!(energy.covered_requests, Some((n_tries - 1, n_tries)));
    assert_eq!(energy.per_token.expect("per token").output_tokens, tokens);
    assert!(
        energy
            .warnings()
            .iter()
            .any(|w| w.contains(&format!("cover {} of {n_tries}", n_tries - 1)))
    );
}
