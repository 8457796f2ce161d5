//! Prompts hit the wanted length in the server's own tokens.

use std::time::Duration;

use vernier_sim::{Sim, SimConfig};

use crate::{args, journal_values};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calibration_hits_the_target_prompt_tokens() {
    let sim = Sim::start(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .prefill_tokens_per_s(1e6)
            .build(),
    )
    .await
    .expect("start the simulator");
    let out = tempfile::tempdir().expect("temporary folder");
    // 7000 tokens is longer than either corpus: the prompt cycles through it.
    let outcome = sweep::run(
        args(
            &sim.base_url(),
            out.path(),
            &[
                "--prompt-tokens",
                "40,333,1234,7000",
                "--output-tokens",
                "4",
                "--reps",
                "2",
                "--warmup",
                "0",
            ],
        ),
        vec!["sweep".to_owned()],
    )
    .await
    .expect("the sweep runs");
    assert_eq!(outcome.run.cells.len(), 8);
    for cell in &outcome.run.cells {
        let actual = cell.prompt_tokens_actual.expect("prompt tokens recorded");
        let target = f64::from(cell.prompt_tokens_target);
        assert!(
            (actual.min - target).abs() < 0.5 && (actual.max - target).abs() < 0.5,
            "{cell:?}"
        );
    }
    let journal = journal_values(&outcome.journal);
    let calibrations: Vec<_> = journal
        .iter()
        .filter(|line| line["type"] == "calibration")
        .collect();
    assert_eq!(calibrations.len(), 8);
    for line in calibrations {
        assert_eq!(line["method"], "tokenize_chat");
        assert_eq!(line["prompt_tokens_actual"], line["prompt_tokens_target"]);
    }
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
    let sim = Sim::start(
        SimConfig::builder()
            .tokenize_endpoint(false)
            .decode_step(Duration::from_millis(1))
            .prefill_tokens_per_s(1e6)
            .build(),
    )
    .await
    .expect("start the simulator");
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = sweep::run(
        args(
            &sim.base_url(),
            out.path(),
            &[
                "--prompt-tokens",
                "40,333,1234",
                "--output-tokens",
                "4",
                "--reps",
                "2",
                "--warmup",
                "0",
            ],
        ),
        vec!["sweep".to_owned()],
    )
    .await
    .expect("the sweep runs without /tokenize");
    assert_eq!(outcome.run.cells.len(), 6);
    // A corpus unit is one simulator token, so the closest length the calibration promises is
    // the target itself.
    for cell in &outcome.run.cells {
        let actual = cell.prompt_tokens_actual.expect("prompt tokens recorded");
        let target = f64::from(cell.prompt_tokens_target);
        assert!(
            (actual.min - target).abs() < 0.5 && (actual.max - target).abs() < 0.5,
            "{cell:?}"
        );
    }
    let journal = journal_values(&outcome.journal);
    let calibrations: Vec<_> = journal
        .iter()
        .filter(|line| line["type"] == "calibration")
        .collect();
    assert_eq!(calibrations.len(), 6);
    let mut n_probes = 0;
    for line in &calibrations {
        assert_eq!(line["method"], "probe_requests", "{line}");
        assert_eq!(line["prompt_tokens_actual"], line["prompt_tokens_target"]);
        n_probes += line["n_probes"].as_u64().expect("n_probes");
    }
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
    let run_file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outcome.files.run_file).expect("run.json"))
            .expect("run.json is JSON");
    assert_eq!(run_file["calibrations"][0]["method"], "probe_requests");
    let markdown = std::fs::read_to_string(&outcome.files.markdown).expect("report.md");
    assert!(
        markdown.contains("probe requests with `max_tokens: 1`"),
        "{markdown}"
    );
    sim.shutdown().await;
}
