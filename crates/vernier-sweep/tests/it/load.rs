//! Load as capacity planners mean it, checked against the simulator's own record of what it
//! served: aggregate throughput per window, steady load, open-loop schedules and the capacity
//! search.

use std::collections::BTreeMap;
use std::time::Duration;

use vernier_sim::{GroundTruth, SimConfig};
use vernier_sweep::{Arrival, LoadMode, Workload};

use crate::support::{config, journal_values, read_markdown, read_run_file, run, start_sim};

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    assert!(n > 0, "no values");
    if n % 2 == 1 {
        values[n / 2]
    } else {
        f64::midpoint(values[n / 2 - 1], values[n / 2])
    }
}

/// Measured, successful attempts of the journal, by (cell, rep): their nonces.
fn nonces_by_rep(journal: &std::path::Path) -> BTreeMap<(String, u64), Vec<String>> {
    let mut out: BTreeMap<(String, u64), Vec<String>> = BTreeMap::new();
    for line in journal_values(journal) {
        if line["type"] == "attempt" && line["phase"] == "measured" && line["status"] == "ok" {
            let key = (line["cell"].to_string(), line["rep"].as_u64().unwrap_or(0));
            out.entry(key)
                .or_default()
                .push(line["nonce"].as_str().unwrap_or_default().to_owned());
        }
    }
    out
}

/// The server-side window of some requests: first arrival to last token event sent.
fn server_window(records: &[&GroundTruth]) -> (u64, u64) {
    let start = records.iter().map(|r| r.arrival_unix_ns).min().unwrap_or(0);
    let end = records
        .iter()
        .map(|r| r.arrival_unix_ns + r.event_offsets_ns.last().copied().unwrap_or(0))
        .max()
        .unwrap_or(0);
    (start, end)
}

/// A simulator whose decode step grows by 8% per extra running request.
fn slowing_sim() -> SimConfig {
    SimConfig::builder()
        .decode_step(Duration::from_millis(4))
        .slowdown_per_running_request(0.08)
        .prefill_tokens_per_s(50_000.0)
        .fixed_overhead(Duration::from_millis(1))
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_output_rate_matches_the_servers_tokens_over_the_window_at_1_4_and_16() {
    let sim = start_sim(slowing_sim()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = config(&[Workload::Prose], &[64], &[48], 3);
    config.concurrency = vec![1, 4, 16];
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("the sweep runs");
    let truth = sim.ground_truth();
    let by_salt: BTreeMap<&str, &GroundTruth> = truth
        .iter()
        .filter_map(|t| Some((t.cache_salt.as_deref()?, t)))
        .collect();
    // Ground truth per repetition: the tokens the server sent over its own window.
    let mut truth_rates: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for ((cell, _rep), nonces) in nonces_by_rep(&outcome.journal) {
        let records: Vec<&GroundTruth> = nonces.iter().map(|n| by_salt[n.as_str()]).collect();
        let (start, end) = server_window(&records);
        let tokens: f64 = records.iter().map(|r| f64::from(r.completion_tokens)).sum();
        truth_rates
            .entry(cell)
            .or_default()
            .push(tokens / ((end - start) as f64 / 1e9));
    }
    let run = read_run_file(&outcome);
    let cells = run["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 3);
    let mut aggregates = Vec::new();
    for cell in cells {
        let concurrency = cell["concurrency"].as_u64().expect("concurrency");
        let aggregate = &cell["aggregate"];
        let measured = aggregate["median"]["output_tokens_per_s"]
            .as_f64()
            .expect("aggregate rate");
        assert_eq!(aggregate["n_windows"], 3, "{aggregate}");
        assert!(aggregate["p10"]["output_tokens_per_s"].is_number());
        assert!(aggregate["p90"]["requests_per_s"].is_number());
        assert!(aggregate["interval_95"]["output_tokens_per_s"]["low"].is_number());
        let key = truth_rates
            .keys()
            .find(|k| k.contains(&format!("\"concurrency\":{concurrency}")))
            .expect("the cell's ground truth")
            .clone();
        let truth = median(truth_rates[&key].clone());
        let error = (measured - truth).abs() / truth;
        assert!(
            error < 0.02,
            "c{concurrency}: measured {measured:.1} tok/s, truth {truth:.1} (error {error:.4})"
        );
        // Per-stream decode still matches the server's own rate per request.
        let per_stream = cell["median"]["decode_tokens_per_s"]
            .as_f64()
            .expect("decode");
        let nonces: Vec<String> = nonces_by_rep(&outcome.journal)
            .into_iter()
            .filter(|((c, _), _)| c == &key)
            .flat_map(|(_, n)| n)
            .collect();
        let true_decode = median(
            nonces
                .iter()
                .filter_map(|n| by_salt[n.as_str()].true_decode_tokens_per_s)
                .collect(),
        );
        let error = (per_stream - true_decode).abs() / true_decode;
        assert!(
            error < 0.02,
            "c{concurrency}: per-stream {per_stream:.1}, truth {true_decode:.1}"
        );
        aggregates.push(measured);
    }
    // More streams, more throughput in all, even as each slows down.
    assert!(
        aggregates[0] < aggregates[1] && aggregates[1] < aggregates[2],
        "{aggregates:?}"
    );
    let report = read_markdown(&outcome);
    assert!(report.contains("## Aggregate throughput"), "{report}");
    assert!(report.contains("from the first request sent to the last token received"));
    assert!(out.path().join("throughput.svg").exists());
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steady_load_keeps_every_slot_busy_and_measures_the_steady_window() {
    let sim = start_sim(slowing_sim()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = config(&[Workload::Prose], &[64], &[24], 1);
    config.concurrency = vec![4];
    config.load = LoadMode::Steady;
    config.duration_s = Some(1.5);
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("the steady sweep runs");
    let lines = journal_values(&outcome.journal);
    let measured: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["type"] == "attempt" && l["phase"] == "measured" && l["status"] == "ok")
        .collect();
    // Each of the 4 slots sent requests one after another, numbered in order.
    for slot in 0..4 {
        let sequences: Vec<u64> = measured
            .iter()
            .filter(|l| l["stream"] == slot)
            .map(|l| l["sequence"].as_u64().expect("a sequence number"))
            .collect();
        assert!(sequences.len() >= 3, "slot {slot}: {sequences:?}");
        assert_eq!(sequences, (0..sequences.len() as u64).collect::<Vec<_>>());
    }
    // The steady window by the documented rule, from the journal's timelines.
    let ns = |l: &serde_json::Value, field: &str| l["timeline"][field].as_u64().expect(field);
    let mut start = 0;
    let mut end = u64::MAX;
    for slot in 0..4 {
        let slot_lines: Vec<_> = measured.iter().filter(|l| l["stream"] == slot).collect();
        start = start.max(ns(slot_lines[0], "first_token_unix_ns"));
        end = end.min(ns(slot_lines[slot_lines.len() - 1], "last_token_unix_ns"));
    }
    assert!(end > start);
    // The server's own count of the tokens it sent inside that window, event by event.
    let truth = sim.ground_truth();
    let tokens_inside: f64 = truth
        .iter()
        .flat_map(|t| {
            t.event_offsets_ns
                .iter()
                .zip(&t.tokens_per_event)
                .map(move |(offset, tokens)| (t.arrival_unix_ns + offset, *tokens))
        })
        .filter(|(at, _)| (start..=end).contains(at))
        .map(|(_, tokens)| f64::from(tokens))
        .sum();
    let truth_rate = tokens_inside / ((end - start) as f64 / 1e9);
    let run = read_run_file(&outcome);
    let aggregate = &run["cells"][0]["aggregate"];
    let measured_rate = aggregate["median"]["output_tokens_per_s"]
        .as_f64()
        .expect("rate");
    let error = (measured_rate - truth_rate).abs() / truth_rate;
    assert!(
        error < 0.03,
        "steady: measured {measured_rate:.1}, server {truth_rate:.1}"
    );
    assert!(
        aggregate["window"]
            .as_str()
            .is_some_and(|w| w.starts_with("steady"))
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_loop_run_sends_every_scheduled_request_and_reports_its_lateness() {
    let sim = start_sim(slowing_sim()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    // What `--rate 10,40` sets: open-loop load at those rates.
    let mut config = config(&[Workload::Prose], &[64], &[16], 1);
    config.load = LoadMode::Rate;
    config.rates_per_s = vec![10.0, 40.0];
    config.arrival = Some(Arrival::Constant);
    config.duration_s = Some(1.0);
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("the open-loop sweep runs");
    let run = read_run_file(&outcome);
    let cells = run["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 2);
    // A constant schedule over 1 s at 10 and 40 requests per second: 10 and 40 requests.
    for (cell, expected) in cells.iter().zip([10, 40]) {
        assert_eq!(cell["n_ok"], expected, "{cell}");
        assert_eq!(cell["schedule_lateness"]["n_requests"], expected);
        assert!(cell["schedule_lateness"]["p99_ms"].is_number());
        assert!(cell["median"]["ttft_ms"].is_number());
    }
    // The server saw them spread over the second, not in a burst: the span between the first
    // and last arrival of the 40/s cell is 39 gaps of 25 ms (0.975 s), give or take the
    // client's lateness.
    let truth = sim.ground_truth();
    let lines = journal_values(&outcome.journal);
    let salts: Vec<&str> = lines
        .iter()
        .filter(|l| {
            l["type"] == "attempt"
                && l["phase"] == "measured"
                && l["cell"]["rate_milli_per_s"] == 40_000
        })
        .filter_map(|l| l["nonce"].as_str())
        .collect();
    let arrivals: Vec<u64> = truth
        .iter()
        .filter(|t| t.cache_salt.as_deref().is_some_and(|s| salts.contains(&s)))
        .map(|t| t.arrival_unix_ns)
        .collect();
    assert_eq!(arrivals.len(), 40);
    let span =
        (arrivals.iter().max().unwrap_or(&0) - arrivals.iter().min().unwrap_or(&0)) as f64 / 1e9;
    assert!((0.9..1.1).contains(&span), "span {span} s");
    let report = read_markdown(&outcome);
    assert!(
        report.contains("## Open loop: requests against their schedule"),
        "{report}"
    );
    assert!(report.contains("of schedule (p99 of the worst cell)"));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_finds_the_knee_of_a_server_with_six_slots() {
    // Six requests run at once; a seventh waits for a whole answer (24 tokens of 4 ms steps,
    // slowed by the batch): TTFT jumps from a few ms to over 100 ms past six streams.
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(4))
            .slowdown_per_running_request(0.05)
            .max_num_seqs(Some(6))
            .prefill_tokens_per_s(50_000.0)
            .fixed_overhead(Duration::from_millis(1))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = config(&[Workload::Prose], &[64], &[24], 2);
    config.capacity_target = Some("ttft_p90<=60ms".to_owned());
    config.max_load = Some(32.0);
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("the search runs");
    let run = read_run_file(&outcome);
    let capacity = &run["capacity"];
    assert_eq!(capacity["capacity"], 6.0, "{capacity}");
    assert_eq!(capacity["first_miss"]["load"], 7.0, "{capacity}");
    let loads: Vec<f64> = capacity["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["load"].as_f64())
        .collect();
    // Doubling 1, 2, 4, 8, then bisecting 6, 7.
    assert_eq!(loads, vec![1.0, 2.0, 4.0, 6.0, 7.0, 8.0]);
    assert_eq!(run["complete"], true);
    let report = read_markdown(&outcome);
    assert!(
        report.contains("**Capacity: 6 concurrent streams**"),
        "{report}"
    );
    assert!(report.contains("The first load that missed: 7"), "{report}");
    let chart = std::fs::read_to_string(out.path().join("capacity.svg")).expect("capacity chart");
    assert!(chart.contains("capacity 6"), "{chart}");
    sim.shutdown().await;
}
