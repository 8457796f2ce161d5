//! Quality under load: a simulator whose answers are lost above 2 requests in flight shows a
//! drop whose interval lies above zero; one that never degrades shows no change, per suite and
//! per category; and the comparison is written beside both passes.

use hardsuite::CommandOutput;
use vernier_hardsuite::{LoadFinding, hardsuite_demo_simulator_config};
use vernier_sim::Sim;
use vernier_tasks::{Suite, structured_suite};

use crate::{arg, run_cli};

async fn under_load(
    suite: &Suite,
    degrade_above: Option<u32>,
    args: &[&str],
) -> (hardsuite::under_load::UnderLoadOutcome, tempfile::TempDir) {
    let mut config = hardsuite_demo_simulator_config(suite).expect("the demo script");
    config.degrade_above_in_flight = degrade_above;
    let sim = Sim::start(config).await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let url = sim.base_url();
    let mut words = vec![
        "hardsuite",
        "under-load",
        "--base-url",
        &url,
        "--quiet",
        "--out",
        arg(&out),
    ];
    words.extend_from_slice(args);
    let output = run_cli(&words).await.expect("both passes run");
    let CommandOutput::UnderLoad(outcome) = output else {
        panic!("under-load gives its own outcome");
    };
    (*outcome, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_lost_above_two_in_flight_show_a_drop_whose_interval_excludes_zero() {
    let suite = structured_suite(0, vernier_tasks::DEFAULT_STRUCTURED_BUDGET);
    let (outcome, _dir) = under_load(
        &suite,
        Some(2),
        &[
            "--suite",
            "structured",
            "--in-flight",
            "8",
            "--samples",
            "2",
        ],
    )
    .await;
    let quality = outcome.quality.expect("the comparison");
    let total = quality.total().expect("a total row");
    // One at a time the simulator answers as scripted: 8 of the 12 tasks right.
    assert!((total.alone - 8.0 / 12.0).abs() < 1e-9, "{total:?}");
    assert_eq!(total.n_items, 24);
    assert_eq!(total.finding, LoadFinding::Drops, "{total:?}");
    let interval = total.interval.expect("an interval");
    assert!(interval.low > 0.0 && total.drop > 0.3, "{total:?}");
    assert_eq!(total.method, "task_clustered");
    // The load is measured: the loaded pass's tries were sent with up to 8 in flight, most of
    // them with more than the 2 the simulator keeps its answers at.
    let seen = quality
        .loaded_in_flight
        .as_ref()
        .expect("the in-flight counts");
    assert_eq!(seen.n_tries, 24);
    assert!(seen.max <= 8 && seen.median > 2.0, "{seen:?}");
    let written = std::fs::read_to_string(&outcome.markdown).expect("load-quality.md");
    assert!(
        written.contains("Verdict: quality drops under load"),
        "{written}"
    );
    assert!(outcome.json.exists());
    let headlines = quality.headlines();
    assert_eq!(headlines.len(), 3);
    assert!(!headlines[2].higher_is_better);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_degrades_shows_no_change_per_category() {
    let bundled = Suite::bundled();
    let tasks = "domino-tiling,last-digits,knight-path,round-table,dice-probability,coin-change,\
                 fixed-points,crt,tool-search,tool-weather,tool-calc,tool-none";
    let (outcome, _dir) = under_load(&bundled, None, &["--tasks", tasks, "--in-flight", "6"]).await;
    let quality = outcome.quality.expect("the comparison");
    let names: Vec<&str> = quality.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["total", "math", "tools"]);
    // 12 tasks for 6 in flight: one sample each, Newcombe's paired interval.
    assert_eq!(quality.samples, 1);
    for row in &quality.rows {
        assert_eq!((row.lost, row.gained), (0, 0), "{row:?}");
        assert!(row.drop.abs() < 1e-12, "{row:?}");
        assert_eq!(row.method, "newcombe_paired");
        assert_ne!(row.finding, LoadFinding::Drops, "{row:?}");
        let interval = row.interval.expect("an interval");
        assert!(interval.low < 0.0 && interval.high > 0.0, "{row:?}");
    }
}

/// `--resume DIR` continues what the folder holds: a finished pass one at a time is kept as it
/// is, and the pass under load that never ran is run with the samples the first one ran with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_keeps_the_finished_pass_and_runs_the_other_with_its_samples() {
    let suite = structured_suite(0, vernier_tasks::DEFAULT_STRUCTURED_BUDGET);
    let config = hardsuite_demo_simulator_config(&suite).expect("the demo script");
    let sim = Sim::start(config).await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let url = sim.base_url();
    let alone = out.join("alone");
    let first = [
        "hardsuite",
        "run",
        "--suite",
        "structured",
        "--samples",
        "2",
        "--concurrency",
        "1",
        "--base-url",
        &url,
        "--quiet",
        "--out",
        arg(&alone),
    ];
    run_cli(&first).await.expect("the pass alone runs");
    let resumed = [
        "hardsuite",
        "under-load",
        "--in-flight",
        "4",
        "--suite",
        "structured",
        "--base-url",
        &url,
        "--quiet",
        "--resume",
        arg(&out),
    ];
    let output = run_cli(&resumed)
        .await
        .expect("the resume runs the other pass");
    let CommandOutput::UnderLoad(outcome) = output else {
        panic!("under-load gives its own outcome");
    };
    assert_eq!(outcome.alone.kept_attempts, 24, "the finished pass is kept");
    let loaded = outcome.loaded.expect("the pass under load");
    assert_eq!(loaded.results.samples, 2);
    let quality = outcome.quality.expect("the comparison");
    let total = quality.total().expect("a total row");
    assert_eq!(total.n_items, 24);
    assert_eq!(total.finding, LoadFinding::NoChange, "{total:?}");
}
