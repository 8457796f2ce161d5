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
