//! The server's context: cells that cannot fit are named and left out before anything is sent,
//! and a length error that still comes back leaves its cell out as `context_exceeded` while
//! the run goes on.

use std::time::Duration;
use vernier_cli::Failure as _;

use vernier_sim::SimConfig;
use vernier_sweep::Workload;

use crate::support::{
    config, journal_values, object, read_markdown, read_run_file, run, start_sim,
};

fn small_context() -> SimConfig {
    SimConfig::builder()
        .max_model_len(1024)
        .decode_step(Duration::from_millis(2))
        .prefill_tokens_per_s(50_000.0)
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cells_beyond_the_context_are_left_out_before_sending_and_the_rest_is_measured() {
    let sim = start_sim(small_context()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run(
        &sim.base_url(),
        out.path(),
        config(&[Workload::Prose], &[100, 600, 2000], &[32], 2),
    )
    .await
    .expect("the sweep finishes");
    let run = read_run_file(&outcome);
    assert_eq!(
        run["complete"], true,
        "left-out cells do not make a run incomplete"
    );
    let cells = run["cells"].as_array().expect("cells");
    assert_eq!(cells[0]["n_ok"], 2);
    assert_eq!(cells[1]["n_ok"], 2);
    assert_eq!(cells[2]["n_ok"], 0);
    let reason = cells[2]["context_exceeded"].as_str().expect("a reason");
    assert!(
        reason.contains("exceed the server's context of 1024 tokens (max_model_len)"),
        "{reason}"
    );
    // Nothing of 2000 tokens was ever sent (the simulator saw no such prompt).
    assert!(sim.ground_truth().iter().all(|t| t.prompt_tokens < 1024));
    let report = read_markdown(&outcome);
    assert!(
        report.contains("## Cells left out: context exceeded"),
        "{report}"
    );
    assert!(
        report.contains("The longest cell measured asked for 632 tokens"),
        "{report}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_length_error_mid_run_leaves_the_cell_out_with_the_servers_message() {
    let sim = start_sim(small_context()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    // The extra body asks for 4000 output tokens: the server refuses every request for its
    // length, although each cell's own figures would fit.
    let mut config = config(&[Workload::Prose], &[100, 200], &[32], 2);
    config.extra_body = object(serde_json::json!({"max_tokens": 4000}));
    // Every cell is left out, so nothing was measured: that is a failure (exit 1), said with
    // each cell's reason, and the run file and the journal still say why.
    let error = run(&sim.base_url(), out.path(), config)
        .await
        .expect_err("a run that measured nothing fails");
    assert!(
        matches!(error, vernier_sweep::SweepError::NothingMeasured { .. }),
        "{error}"
    );
    assert_eq!(error.exit_code(), 1);
    assert!(
        error
            .to_string()
            .contains("maximum context length is 1024 tokens"),
        "{error}"
    );
    let run: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("run.json")).expect("run.json is written"),
    )
    .expect("run.json is JSON");
    let report = std::fs::read_to_string(out.path().join("report.md")).expect("report.md");
    assert!(report.contains("Nothing was measured"), "{report}");
    assert!(
        !report.contains("every measured request produced the requested number"),
        "{report}"
    );
    for cell in run["cells"].as_array().expect("cells") {
        let reason = cell["context_exceeded"].as_str().expect("left out");
        assert!(
            reason.contains("maximum context length is 1024 tokens"),
            "{reason}"
        );
        assert_eq!(cell["n_failed"], 0, "a length refusal is not a failure");
    }
    let skipped = journal_values(&out.path().join("journal.jsonl"))
        .iter()
        .filter(|l| l["type"] == "cell_skipped")
        .count();
    assert_eq!(skipped, 2);
    sim.shutdown().await;
}
