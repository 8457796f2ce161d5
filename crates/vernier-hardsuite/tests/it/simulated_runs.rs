//! Runs against the in-process simulator through the engine's API: re-runs of cut-off tasks,
//! and resuming a journal cut short.

use std::path::Path;

use vernier_hardsuite::{
    HardsuiteError, HardsuiteOutcome, ResultsFile, RunConfig, RunTarget, SilentObserver, run_suite,
};
use vernier_tasks::OutcomeKind;

/// Task ids from a comma-separated list.
pub(crate) fn tasks(ids: &str) -> Vec<String> {
    ids.split(',').map(str::to_owned).collect()
}

/// Runs `config` into `target` with nothing shown.
pub(crate) async fn run(
    config: &RunConfig,
    target: &RunTarget,
) -> Result<HardsuiteOutcome, HardsuiteError> {
    run_suite(
        config,
        target,
        vec!["hardsuite".to_owned()],
        &SilentObserver,
    )
    .await
}

/// Every line of a JSON Lines file.
pub(crate) fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("journal readable")
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("journal line is JSON"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_is_re_run_and_both_scores_are_reported() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let mut config = RunConfig::default();
    config.suite.tasks = Some(tasks("domino-tiling,last-digits,knight-path,tool-calc"));
    config.rerun_cut_off = Some(32_000);
    let outcome = run(&config, &RunTarget::new_run(&out))
        .await
        .expect("math and tool tasks need no Docker engine");
    let knight = outcome.results.task("knight-path").expect("task");
    assert_eq!(
        knight.samples[0].outcome,
        OutcomeKind::CutOff,
        "a cut-off is cut_off, not wrong"
    );
    assert_eq!(knight.samples[0].detail, "length");
    assert!(knight.samples[0].ended_in_reasoning);
    assert_eq!(knight.rerun.len(), 1);
    assert_eq!(knight.rerun[0].budget_tokens, 32_000);
    let after = outcome.results.after_rerun.as_ref().expect("re-run scores");
    assert_eq!(after.rerun_budget, Some(32_000));
    assert_eq!(outcome.results.main.total.n_cut_off, 1);
    assert_eq!(outcome.results.main.total.n_wrong, 1);
    // Only the cut-off task was re-run.
    let reruns = json_lines(&outcome.files.journal)
        .into_iter()
        .filter(|line| line["type"] == "attempt" && line["phase"] == "rerun")
        .count();
    assert_eq!(reruns, 1);
    assert!(
        outcome
            .table
            .contains("Re-run of the cut-off tasks at 32,000 tokens")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_does_not_redo_finished_attempts() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let mut config = RunConfig::default();
    config.suite.tasks = Some(tasks(
        "dice-probability,coin-change,crt,collatz,tool-search,tool-none",
    ));
    config.samples = Some(2);
    let first = run(&config, &RunTarget::new_run(&out))
        .await
        .expect("first run");
    let journal_path = first.files.journal.clone();
    let text = std::fs::read_to_string(&journal_path).expect("journal");
    let lines: Vec<&str> = text.lines().collect();
    let scored_key = |line: &serde_json::Value| -> Option<(String, u64)> {
        (line["type"] == "attempt" && line["outcome"] != "infra").then(|| {
            (
                line["task_id"].as_str().expect("id").to_owned(),
                line["sample"].as_u64().expect("sample"),
            )
        })
    };
    let parsed: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    assert_eq!(
        parsed.iter().filter_map(scored_key).count(),
        12,
        "one scored try per task sample"
    );
    // A crash after five attempt lines, in the middle of writing the sixth.
    let mut crashed = lines[..6].join("\n");
    crashed.push('\n');
    crashed.push_str(&lines[6][..lines[6].len() / 2]);
    std::fs::write(&journal_path, crashed).expect("truncate the journal");
    let kept_keys: Vec<(String, u64)> = parsed[1..6].iter().filter_map(scored_key).collect();
    assert!(!kept_keys.is_empty());

    let resumed = run(&RunConfig::default(), &RunTarget::resume(&journal_path))
        .await
        .expect("resumed run");
    assert_eq!(resumed.kept_attempts, kept_keys.len());
    let journal = json_lines(&journal_path);
    let resumed_at = journal
        .iter()
        .position(|line| line["type"] == "resumed")
        .expect("a resumed line");
    assert_eq!(journal[resumed_at]["kept_attempts"], kept_keys.len());
    let after: Vec<(String, u64)> = journal[resumed_at + 1..]
        .iter()
        .filter_map(scored_key)
        .collect();
    assert_eq!(
        after.len(),
        12 - kept_keys.len(),
        "only the unfinished attempts ran: {after:?}"
    );
    for key in &kept_keys {
        assert!(!after.contains(key), "{key:?} was redone");
    }
    // The resumed run's results equal a complete run's, sample by sample.
    let outcomes = |results: &ResultsFile| -> Vec<(String, u32, OutcomeKind)> {
        results
            .tasks
            .iter()
            .flat_map(|task| {
                task.samples
                    .iter()
                    .map(|s| (task.id.clone(), s.sample, s.outcome))
            })
            .collect()
    };
    assert_eq!(outcomes(&resumed.results), outcomes(&first.results));
    assert_eq!(resumed.results.main.total.n_scored, 12);
}
