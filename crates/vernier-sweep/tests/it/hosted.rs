//! Hosted endpoints: a server that rate-limits most requests, and one that refuses
//! `max_tokens`.

use vernier_sweep::{SweepConfig, Workload};

use crate::support::{config, journal_values, read_run_file, run, start_sim};

/// One prose cell of three measured repetitions, no warm-up.
fn small() -> SweepConfig {
    let mut config = config(&[Workload::Prose], &[64], &[24], 3);
    config.warmup = 0;
    config
}

fn decode_median(run: &serde_json::Value) -> f64 {
    run["cells"][0]["median"]["decode_tokens_per_s"]
        .as_f64()
        .expect("a decode median")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_60_percent_with_retry_after_is_waited_on_and_measured_as_a_clean_one() {
    // 600 of every 1000 generation requests answered 429 with Retry-After: 1.
    let limited = start_sim(vernier_test_support::rate_limited_sim(Some((600, 1)))).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run(&limited.base_url(), out.path(), small())
        .await
        .expect("the rate-limited sweep finishes");
    let run_file = read_run_file(&outcome);
    assert_eq!(run_file["complete"], true);
    assert_eq!(run_file["cells"][0]["n_ok"], 3);
    assert_eq!(run_file["cells"][0]["n_failed"], 0);
    // Every wait is journaled with its cause, and lasted at least what the server asked for.
    let waits: Vec<serde_json::Value> = journal_values(&outcome.journal)
        .into_iter()
        .filter(|l| l["type"] == "attempt" && !l["wait"].is_null())
        .map(|l| l["wait"].clone())
        .collect();
    assert!(
        !waits.is_empty(),
        "60% of requests are refused: some waits must happen"
    );
    for wait in &waits {
        assert_eq!(wait["cause"], "server_asked", "{wait}");
        let (waited, asked) = (wait["waited_ms"].as_f64(), wait["asked_ms"].as_f64());
        assert!(asked == Some(1000.0) && waited >= asked, "{wait}");
    }
    assert_eq!(
        run_file["rate_limited"]["n_waits"].as_u64(),
        Some(waits.len() as u64)
    );
    let report = std::fs::read_to_string(&outcome.files.markdown).expect("report");
    assert!(report.contains("s on rate limits"), "{report}");
    limited.shutdown().await;

    // The same sweep against a clean server: the figures agree (waits are outside every
    // measured interval).
    let clean = start_sim(vernier_test_support::rate_limited_sim(None)).await;
    let clean_out = tempfile::tempdir().expect("temporary folder");
    let clean_outcome = run(&clean.base_url(), clean_out.path(), small())
        .await
        .expect("the clean sweep finishes");
    let (throttled, unthrottled) = (
        decode_median(&run_file),
        decode_median(&read_run_file(&clean_outcome)),
    );
    assert!(
        (throttled - unthrottled).abs() / unthrottled < 0.05,
        "decode {throttled:.1} throttled vs {unthrottled:.1} clean"
    );
    assert!(read_run_file(&clean_outcome)["rate_limited"].is_null());
    clean.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_max_tokens_is_sent_as_max_completion_tokens_and_the_report_says_so() {
    let mut config = vernier_test_support::rate_limited_sim(None);
    config.refuse_max_tokens = true;
    let sim = start_sim(config).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run(&sim.base_url(), out.path(), small())
        .await
        .expect("the sweep switches and finishes");
    let run = read_run_file(&outcome);
    assert_eq!(run["cells"][0]["n_ok"], 3);
    assert_eq!(run["fields_dropped"][0]["field"], "max_tokens");
    let report = std::fs::read_to_string(&outcome.files.markdown).expect("report");
    assert!(
        report.contains("sent as max_completion_tokens instead"),
        "{report}"
    );
    // Output length is still as asked: the simulator honours max_completion_tokens.
    assert_eq!(run["cells"][0]["n_length_mismatch"], 0);
    sim.shutdown().await;
}
