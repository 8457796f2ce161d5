//! Prompts hit the wanted length in the server's own tokens.

use std::path::Path;
use std::time::Duration;

use vernier_sim::{SimConfig, SimHandle};

use vernier_sweep::Workload;

use crate::support::{config, journal_values, read_markdown, read_run_file, run, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calibration_hits_the_target_prompt_tokens() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .prefill_tokens_per_s(1e6)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    // 7000 tokens is longer than either corpus: the prompt cycles through it.
    let outcome = sweep_prompt_lengths(&sim, out.path(), &[40, 333, 1234, 7000]).await;
    assert_eq!(outcome.run.cells.len(), 8);
    let journal = journal_values(&outcome.journal);
    assert_eq!(calibrations(&journal, "tokenize_chat").len(), 8);
    // Every measured request records its actual prompt tokens and its own nonce.
    let attempts: Vec<_> = journal
        .iter()
        .filter(|line| line["type"] == "attempt")
        .collect();
    assert_eq!(attempts.len(), 16);
    let mut nonces: Vec<&str> = attempts
        .iter()
        .map(|a| a["nonce"].as_str().expect("nonce"))
        .collect();
    nonces.sort_unstable();
    nonces.dedup();
    assert_eq!(nonces.len(), 16, "every request has its own nonce");
    assert!(attempts.iter().all(|a| a["prompt_tokens_actual"].is_u64()));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tokenize_probe_requests_hit_the_target_and_the_method_is_recorded() {
    let sim = start_sim(
        SimConfig::builder()
            .tokenize_endpoint(false)
            .decode_step(Duration::from_millis(1))
            .prefill_tokens_per_s(1e6)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    // A corpus unit is one simulator token, so the closest length the calibration promises is
    // the target itself.
    let outcome = sweep_prompt_lengths(&sim, out.path(), &[40, 333, 1234]).await;
    assert_eq!(outcome.run.cells.len(), 6);
    let journal = journal_values(&outcome.journal);
    let calibrations = calibrations(&journal, "probe_requests");
    assert_eq!(calibrations.len(), 6);
    let n_probes: u64 = calibrations
        .iter()
        .map(|line| line["n_probes"].as_u64().expect("n_probes"))
        .sum();
    // Every probe was a real generation request for one token, not streamed; only the
    // measured requests streamed.
    let truth = sim.ground_truth();
    let probes: Vec<_> = truth.iter().filter(|t| !t.stream).collect();
    assert_eq!(probes.len() as u64, n_probes);
    assert!(
        probes.iter().all(|t| t.completion_tokens == 1),
        "{probes:#?}"
    );
    assert_eq!(truth.iter().filter(|t| t.stream).count(), 12);
    // The run file and the report say how prompt tokens were counted.
    assert_eq!(outcome.run.calibrations.len(), 6);
    assert!(
        outcome
            .run
            .calibrations
            .iter()
            .all(|c| c.method == "probe_requests")
    );
    let run_file = read_run_file(&outcome);
    assert_eq!(run_file["calibrations"][0]["method"], "probe_requests");
    let markdown = read_markdown(&outcome);
    assert!(
        markdown.contains("probe requests with `max_tokens: 1`"),
        "{markdown}"
    );
    sim.shutdown().await;
}

/// Sweeps both workloads at `prompt_tokens` (4 output tokens, two repetitions, no warm-up)
/// and checks that every measured prompt hit its target.
async fn sweep_prompt_lengths(
    sim: &SimHandle,
    out: &Path,
    prompt_tokens: &[u32],
) -> vernier_sweep::SweepOutcome {
    let mut config = config(&[Workload::Prose, Workload::Code], prompt_tokens, &[4], 2);
    config.warmup = 0;
    let outcome = run(&sim.base_url(), out, config)
        .await
        .expect("the sweep runs");
    for cell in &outcome.run.cells {
        let actual = cell.prompt_tokens_actual.expect("prompt tokens recorded");
        let target = f64::from(cell.prompt_tokens_target);
        assert!(
            (actual.min - target).abs() < 0.5 && (actual.max - target).abs() < 0.5,
            "{cell:?}"
        );
    }
    outcome
}

/// The calibration lines of a journal, each checked to have used `method` and hit its target.
fn calibrations<'a>(journal: &'a [serde_json::Value], method: &str) -> Vec<&'a serde_json::Value> {
    let lines: Vec<_> = journal
        .iter()
        .filter(|line| line["type"] == "calibration")
        .collect();
    for line in &lines {
        assert_eq!(line["method"], method, "{line}");
        assert_eq!(line["prompt_tokens_actual"], line["prompt_tokens_target"]);
    }
    lines
}
