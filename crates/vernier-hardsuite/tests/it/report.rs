//! The reports rendered from a fixed journal (snapshots: layout, not statistics).

use std::path::PathBuf;

use vernier_hardsuite::{ResultsFile, render_markdown, render_table};
use vernier_tasks::OutcomeKind;

fn fixture() -> ResultsFile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    ResultsFile::load(&path).expect("fixture journal")
}

#[test]
fn results_from_a_fixed_journal() {
    let results = fixture();
    let main = &results.main.total;
    assert_eq!(
        (
            main.n_pass,
            main.n_scored,
            main.n_cut_off,
            main.n_wrong,
            main.n_extra_calls
        ),
        (2, 6, 2, 1, 1)
    );
    // The infra try was retried and is not scored; the task counts once, as its second try.
    assert_eq!(results.n_infra_tries, 1);
    let merge = results.task("merge-intervals").expect("task");
    assert_eq!(
        (
            merge.samples.len(),
            merge.samples[0].outcome,
            merge.samples[0].n_tries
        ),
        (1, OutcomeKind::Pass, 2)
    );
    assert_eq!(results.main.ended_in_reasoning, ["knight-path"]);
    assert_eq!(results.main.hit_budget, ["knight-path", "lru-cache"]);
    // Median of 1,267 and 2,210.
    assert_eq!(results.main.median_tokens_solved, Some(1738.5));
    let after = results.after_rerun.as_ref().expect("re-run");
    assert_eq!(
        (
            after.total.n_pass,
            after.total.n_cut_off,
            after.total.n_wrong
        ),
        (3, 0, 2)
    );
}

#[test]
fn markdown_report_snapshot() {
    insta::assert_snapshot!(render_markdown(&fixture()));
}

#[test]
fn terminal_table_snapshot() {
    insta::assert_snapshot!(render_table(&fixture()));
}
