//! The figures agree with the simulator's ground truth.

use std::time::Duration;

use vernier_sim::{SimConfig, TokensPerEvent};
use vernier_sweep::Workload;

use crate::support::{config, read_markdown, read_run_file, run, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "one run, then each check against the ground truth"
)]
async fn decode_and_prefill_match_ground_truth_and_the_report_states_the_under_count() {
    let sim = start_sim(
        SimConfig::builder()
            .tokens_per_event(TokensPerEvent::Fixed(3))
            .decode_step(Duration::from_millis(20))
            .prefill_tokens_per_s(4000.0)
            .fixed_overhead(Duration::ZERO)
            .prefix_cache(true)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run(
        &sim.base_url(),
        out.path(),
        config(&[Workload::Prose], &[400, 1600], &[90], 3),
    )
    .await
    .expect("the sweep runs");

    let truth: Vec<_> = sim
        .ground_truth()
        .into_iter()
        .filter(|t| t.stream)
        .collect();
    // One warm-up and three measured requests per cell.
    assert_eq!(truth.len(), 8, "{truth:#?}");
    assert!(
        truth.iter().all(|t| !t.cache_hit && t.cached_tokens == 0),
        "the cache must be defeated"
    );
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        if n % 2 == 1 {
            values[n / 2]
        } else {
            f64::midpoint(values[n / 2 - 1], values[n / 2])
        }
    };
    assert_eq!(outcome.run.cells.len(), 2);
    for (cell, prompt) in outcome.run.cells.iter().zip([400_u32, 1600]) {
        // The measured requests are the last three of the cell (after the warm-up).
        let cell_truth: Vec<_> = truth
            .iter()
            .filter(|t| t.prompt_tokens == prompt)
            .skip(1)
            .collect();
        assert_eq!(cell_truth.len(), 3);
        let true_decode = median(
            cell_truth
                .iter()
                .map(|t| t.true_decode_tokens_per_s.expect("decode truth"))
                .collect(),
        );
        let true_prefill = median(
            cell_truth
                .iter()
                .map(|t| {
                    f64::from(t.prompt_tokens)
                        / (t.first_token_event_ns.expect("first token") as f64 / 1e9)
                })
                .collect(),
        );
        let decode = cell.median.decode_tokens_per_s.expect("decode measured");
        let prefill = cell.median.prefill_tokens_per_s.expect("prefill measured");
        assert!(
            (decode / true_decode - 1.0).abs() < 0.01,
            "decode {decode} vs truth {true_decode}"
        );
        assert!(
            (prefill / true_prefill - 1.0).abs() < 0.03,
            "prefill {prefill} vs truth {true_prefill}"
        );
        // The configured rate is the independent check on the truth itself.
        assert!(
            (true_decode / 150.0 - 1.0).abs() < 0.01,
            "3 tokens per 20 ms step is 150 tok/s, truth {true_decode}"
        );
        assert_eq!(cell.n_ok, 3);
        assert_eq!(cell.cached_prompt_tokens_max, 0);
        assert_eq!(cell.n_cache_hits, 0);
        let actual = cell.prompt_tokens_actual.expect("prompt tokens").median;
        assert!(
            (actual - f64::from(prompt)).abs() < 0.5,
            "prompt tokens {actual}"
        );
        let per_event = cell.median.tokens_per_event.expect("tokens per event");
        assert!((per_event - 3.0).abs() < 0.01, "{per_event}");
        let events = cell.median.event_rate_per_s.expect("event rate");
        assert!(
            (decode / events - 3.0).abs() < 0.06,
            "event counting reads {events} against {decode}"
        );
    }

    let markdown = read_markdown(&outcome);
    assert!(
        markdown.contains("would under-report the decode rate by about 3.0×"),
        "{markdown}"
    );
    assert!(
        markdown.contains("no measured request reported cached prompt tokens"),
        "{markdown}"
    );
    for file in [&outcome.files.run_file, &outcome.files.csv] {
        assert!(
            std::fs::metadata(file).expect("report file").len() > 100,
            "{}",
            file.display()
        );
    }
    assert_eq!(outcome.files.charts.len(), 4);
    for chart in &outcome.files.charts {
        let svg = std::fs::read_to_string(chart).expect("chart");
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{}",
            chart.display()
        );
    }
    let run = read_run_file(&outcome);
    assert_eq!(run["schema_version"], 1);
    for key in [
        "workload",
        "concurrency",
        "prompt_tokens_target",
        "output_tokens",
        "n_ok",
        "n_failed",
        "cached_prompt_tokens_max",
    ] {
        assert!(!run["cells"][0][key].is_null(), "cells[0].{key} missing");
    }
    for figure in [
        "ttft_ms",
        "prefill_tokens_per_s",
        "decode_tokens_per_s",
        "event_rate_per_s",
        "tokens_per_event",
    ] {
        for stat in ["median", "p10", "p90"] {
            assert!(
                run["cells"][0][stat][figure].is_number(),
                "cells[0].{stat}.{figure} missing"
            );
        }
    }
    sim.shutdown().await;
}

/// A server upgraded while the sweep runs (its `/version` answers another version after the
/// first requests) is caught by the end-of-work identity check: the run file says `invalid`,
/// names the change, and the Markdown report opens with the same verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_upgraded_mid_run_makes_the_run_invalid_and_says_why() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .version_changes_after(Some(2))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run(
        &sim.base_url(),
        out.path(),
        config(&[Workload::Prose], &[64], &[8], 2),
    )
    .await
    .expect("the sweep runs");
    let verdict = &outcome.run.validity;
    assert_eq!(
        verdict.verdict,
        vernier_run::VerdictLevel::Invalid,
        "{verdict:?}"
    );
    assert_eq!(verdict.reasons[0].code, "server_changed");
    assert!(
        verdict.reasons[0].detail.contains("(upgraded)"),
        "{:?}",
        verdict.reasons[0]
    );
    let written = read_run_file(&outcome);
    assert_eq!(written["validity"]["verdict"], "invalid");
    let markdown = read_markdown(&outcome);
    assert!(
        markdown.contains("verdict: invalid: the server changed during the run"),
        "{markdown}"
    );
}

/// A sweep whose prompts repeat (the cache defeat turned off) against a server with a prefix
/// cache: the measured requests hit it, and the run says `invalid` by name, with the count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_cache_hits_make_the_run_invalid_and_say_how_many() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .prefix_cache(true)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut repeated = config(&[Workload::Prose], &[256], &[8], 3);
    repeated.defeat_prefix_cache = false;
    repeated.cache_salt = false;
    repeated.cache_prompt_field = false;
    let outcome = run(&sim.base_url(), out.path(), repeated)
        .await
        .expect("the sweep runs");
    let truth_hits = sim
        .ground_truth()
        .iter()
        .filter(|t| t.stream && t.cache_hit)
        .count();
    assert!(
        truth_hits >= 3,
        "the simulator served {truth_hits} requests from its cache"
    );
    let verdict = &outcome.run.validity;
    assert_eq!(
        verdict.verdict,
        vernier_run::VerdictLevel::Invalid,
        "{verdict:?}"
    );
    let hit = verdict
        .reasons
        .iter()
        .find(|reason| reason.code == "prefix_cache_hit")
        .expect("the cache hit is named");
    assert!(
        hit.detail.starts_with("3 requests hit the prefix cache"),
        "{hit:?}"
    );
}

/// More streams than the server's slots: the report's checks say the streams queued, with the
/// server's own counts; one stream on the same server waits for nothing, and the check says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_beyond_the_servers_slots_are_said_to_have_queued() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(10))
            .max_num_seqs(Some(1))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    // Four streams on one slot: each repetition has requests waiting for its first 1.9 s of
    // 2.6 s, so the sampler (once a second) sees the queue whatever its phase.
    let mut four = config(&[Workload::Prose], &[64], &[64], 2);
    four.concurrency = vec![1, 4];
    let outcome = run(&sim.base_url(), out.path(), four)
        .await
        .expect("the sweep runs");
    let truth_waited = sim.ground_truth().iter().any(|t| t.queue_ms > 1.0);
    assert!(truth_waited, "the simulator queued a request");
    let markdown = read_markdown(&outcome);
    let check = markdown
        .lines()
        .find(|line| line.contains("**Streams queued:**"))
        .unwrap_or_else(|| panic!("no queue check: {markdown}"));
    assert!(check.contains("in 1 of 2 cells sampled"), "{check}");
    assert!(check.contains("prose prompt 64 c4"), "{check}");
    assert!(!check.contains("c1 "), "{check}");
}
