//! `until_ci_percent` (`--until-ci PCT`): repetitions go on past `reps` until the 95% interval
//! on the median decode rate is narrower than PCT% of the median, or `max_reps` is reached.

use std::time::Duration;

use vernier_sim::{SimConfig, TokensPerEvent};
use vernier_sweep::{SweepConfig, Workload};

use crate::support::{config, journal_values, read_markdown, run, start_sim};

/// One code cell of at least 3 measured repetitions and no warm-up, repeated until the
/// interval is narrower than `until_ci` percent of the median, at most `max_reps` times.
fn until_ci_config(until_ci: f64, max_reps: u32) -> SweepConfig {
    let mut config = config(&[Workload::Code], &[64], &[48], 3);
    config.warmup = 0;
    config.until_ci_percent = Some(until_ci);
    config.max_reps = max_reps;
    config
}

fn reps_done(lines: &[serde_json::Value]) -> usize {
    lines.iter().filter(|l| l["type"] == "rep_done").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repetitions_stop_at_the_cap_when_the_interval_stays_too_wide_and_at_the_minimum_when_it_is_met()
 {
    // Speculative decoding draws a different number of tokens per step for every request, so
    // decode rates differ from request to request and the interval has a real width.
    let sim = start_sim(
        SimConfig::builder()
            .tokens_per_event(TokensPerEvent::speculative())
            .decode_step(Duration::from_millis(1))
            .prefill_tokens_per_s(1e6)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");

    // A target no interval can meet: repetition continues past --reps 3 to the cap of 6.
    let tight = run(
        &sim.base_url(),
        &out.path().join("tight"),
        until_ci_config(0.0001, 6),
    )
    .await
    .expect("the sweep runs");
    let cell = &tight.run.cells[0];
    assert_eq!((cell.n_reps, cell.n_ok), (6, 6), "{cell:?}");
    assert_eq!(cell.until_ci_met, Some(false), "{cell:?}");
    let interval = cell
        .median_interval_95
        .decode_tokens_per_s
        .expect("an interval");
    let median = cell.median.decode_tokens_per_s.expect("a median");
    assert!(
        (interval.high - interval.low) / median * 100.0 >= 0.0001,
        "{interval:?} around {median}"
    );
    assert_eq!(reps_done(&journal_values(&tight.journal)), 6);
    let markdown = read_markdown(&tight);
    assert!(
        markdown.contains("**Interval target not met** (`--until-ci 0.0001`, at most 6 repetitions): in 1 of 1 cells"),
        "{markdown}"
    );
    assert!(
        markdown.contains("code prompt 64 c1 (6 repetitions)"),
        "{markdown}"
    );

    // A target any interval meets: the minimum, --reps 3, is enough.
    let loose = run(
        &sim.base_url(),
        &out.path().join("loose"),
        until_ci_config(1000.0, 6),
    )
    .await
    .expect("the sweep runs");
    let cell = &loose.run.cells[0];
    assert_eq!((cell.n_reps, cell.n_ok), (3, 3), "{cell:?}");
    assert_eq!(cell.until_ci_met, Some(true), "{cell:?}");
    assert_eq!(reps_done(&journal_values(&loose.journal)), 3);
    let markdown = read_markdown(&loose);
    assert!(
        markdown.contains("Interval target (`--until-ci 1000`): met in every cell"),
        "{markdown}"
    );
    sim.shutdown().await;
}
