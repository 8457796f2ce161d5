//! With K > 1 samples per task, scores and comparisons use task-clustered errors: each task's
//! samples are averaged first (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640).
//!
//! Expected values were computed independently with numpy 2.4.6, per-task means first, then
//! mean and SE = std(ddof=1)/√(tasks), interval mean ± 1.959963984540054·SE:
//!
//! ```text
//! python3 -c "import numpy as np
//! def c(t):
//!     m = np.array([np.mean(x) for x in t]); se = m.std(ddof=1) / np.sqrt(len(m))
//!     print(m.mean(), se, m.mean() - 1.959963984540054 * se, m.mean() + 1.959963984540054 * se)
//! c([[1,1],[1,0],[0,0],[1,0],[1,1],[1]])   # total
//! c([[1,1],[1,0],[0,0],[1,0]])             # math
//! a = [[1,1],[1,0],[0,0],[1,1],[1,0],[1,1]]; b = [[1,0],[0,0],[0,1],[1,1],[0,0],[0,1]]
//! c([np.subtract(x, y) for x, y in zip(a, b)])"   # A - B, per task
//! ```
//!
//! which prints
//!
//! ```text
//! 0.6666666666666666 0.16666666666666669 0.3400060025766576 0.9933273307566757
//! 0.5 0.2041241452319315 0.09992402697039082 0.9000759730296092
//! 0.25 0.17078251276599332 -0.0847275742105989 0.5847275742105988
//! ```

use std::path::Path;

use hardsuite::CommandOutput;
use serde_json::json;
use vernier_hardsuite::{ResultsFile, render_markdown, render_table};

use vernier_test_support::assert_close;

use crate::{arg, run_cli};

/// The figures here are exact sums and ratios: equal to rounding.
const EXACT: f64 = 1e-12;

/// Writes a journal with two samples per task: `(category, outcome of sample 0, of sample 1)`.
fn write_two_sample_journal(path: &Path, model: &str, tasks: &[(&str, &str, &str)]) {
    let ids: Vec<String> = (0..tasks.len()).map(|i| format!("task-{i:03}")).collect();
    let mut lines = vec![json!({
        "type": "header", "journal_version": 1, "suite": "synthetic", "suite_path": null,
        "task_ids": ids, "model": model, "base_url": "http://127.0.0.1:8000", "simulated": false,
        "sampling": {"temperature": 0.6, "top_p": 0.95, "top_k": null, "presence_penalty": null},
        "extra_body": null, "budget_flags": {"math": null, "code": null, "tools": null},
        "samples": 2, "rerun_budget": null, "self_checked": true, "grader_image": null,
        "command_line": ["hardsuite"], "started_unix_ms": 0
    })];
    for (id, (category, first, second)) in ids.iter().zip(tasks) {
        for (sample, outcome) in [first, second].into_iter().enumerate() {
            lines.push(json!({
                "type": "attempt", "task_id": id, "category": category, "sample": sample,
                "phase": "main", "try_number": 1, "budget_tokens": 16000, "outcome": outcome,
                "detail": if *outcome == "infra" { "infra:connection refused" } else { "" },
                "answer": null, "finish_reason": "stop", "completion_tokens": 1000,
                "token_source": "final_usage", "token_count_is_lower_bound": false,
                "reasoning_tokens": null, "content_chars": 10, "reasoning_chars": 0,
                "n_tool_calls": 0, "ended_in_reasoning": false, "hit_budget": false,
                "elapsed_ms": 1000.0, "ttft_ms": 10.0, "decode_tokens_per_s": 50.0,
                "grade_ms": 0.1
            }));
        }
    }
    let text: String = lines.iter().map(|line| line.to_string() + "\n").collect();
    std::fs::write(path, text).expect("write journal");
}

#[test]
fn k2_scores_are_means_of_per_task_fractions_with_clustered_errors() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let journal = dir.path().join("journal.jsonl");
    // Per-task pass fractions: math 1, 1/2, 0, 1/2; code 1, and 1 on its one scored sample
    // (the other failed on infrastructure every try and is not scored).
    write_two_sample_journal(
        &journal,
        "model-a",
        &[
            ("math", "pass", "pass"),
            ("math", "pass", "wrong"),
            ("math", "wrong", "wrong"),
            ("math", "pass", "cut_off"),
            ("code", "pass", "pass"),
            ("code", "pass", "infra"),
        ],
    );
    // Through a written and re-read results.json.
    let path = dir.path().join("results.json");
    ResultsFile::load(&journal)
        .expect("journal")
        .write(&path)
        .expect("write results");
    let results = ResultsFile::load(&path).expect("results");

    let total = &results.main.total;
    assert_eq!((total.n_pass, total.n_scored, total.n_unscored), (7, 11, 1));
    // No Wilson over the 11 samples: they are not independent.
    assert_eq!(total.wilson, None);
    let clustered = total.task_clustered.expect("K = 2 is task-clustered");
    assert_eq!(clustered.n_tasks, 6);
    // The mean of the per-task fractions (4/6), not the share of samples (7/11).
    assert_close(clustered.mean, 0.666_666_666_666_666_6, EXACT);
    assert_close(total.pass_rate().expect("scored"), clustered.mean, EXACT);
    assert_close(
        clustered.se.expect("6 tasks"),
        0.166_666_666_666_666_69,
        EXACT,
    );
    let interval = clustered.interval.expect("6 tasks");
    assert_close(interval.low, 0.340_006_002_576_657_6, EXACT);
    assert_close(interval.high, 0.993_327_330_756_675_7, EXACT);
    assert_eq!(total.interval(), Some(interval));

    let math = &results.main.categories[0];
    assert_eq!(math.name, "math");
    let math = math.task_clustered.expect("task-clustered");
    assert_close(math.mean, 0.5, EXACT);
    assert_close(math.se.expect("4 tasks"), 0.204_124_145_231_931_5, EXACT);
    let math_interval = math.interval.expect("4 tasks");
    assert_close(math_interval.low, 0.099_924_026_970_390_82, EXACT);
    assert_close(math_interval.high, 0.900_075_973_029_609_2, EXACT);
    // Both code tasks always pass when scored: no spread, a zero-width interval at 1.
    let code = results.main.categories[1]
        .task_clustered
        .expect("task-clustered");
    assert_eq!(
        (code.mean, code.se, code.interval.map(|i| (i.low, i.high))),
        (1.0, Some(0.0), Some((1.0, 1.0)))
    );

    let table = render_table(&results);
    assert!(table.contains("95% task-clustered"), "{table}");
    assert!(!table.contains("Wilson"), "{table}");
    assert!(
        table.contains("total                    7/11   66.7%       [34.0, 99.3]"),
        "{table}"
    );
    assert!(
        table.contains("2 samples per task: the rate is the mean over tasks"),
        "{table}"
    );
    assert!(
        table.contains("With 6 tasks (2 samples each, averaged per task)"),
        "{table}"
    );
    let markdown = render_markdown(&results);
    assert!(
        markdown.contains(
            "| category | pass / scored | rate | 95% task-clustered | wrong | cut off | no answer | extra calls | unscored |"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("| math | 4/8 | 50.0% | [10.0, 90.0] |"),
        "{markdown}"
    );
}

#[tokio::test]
async fn k2_compare_uses_per_task_differences() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (path_a, path_b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    write_two_sample_journal(
        &path_a,
        "model-a",
        &[
            ("math", "pass", "pass"),
            ("math", "pass", "wrong"),
            ("math", "wrong", "wrong"),
            ("math", "pass", "pass"),
            ("math", "pass", "wrong"),
            ("math", "pass", "pass"),
        ],
    );
    write_two_sample_journal(
        &path_b,
        "model-b",
        &[
            ("math", "pass", "wrong"),
            ("math", "wrong", "wrong"),
            ("math", "wrong", "pass"),
            ("math", "pass", "pass"),
            ("math", "wrong", "wrong"),
            ("math", "wrong", "pass"),
        ],
    );
    let output = run_cli(&["hardsuite", "compare", arg(&path_a), arg(&path_b)])
        .await
        .expect("compare");
    let CommandOutput::Compare(comparison, text) = output else {
        panic!("compare gives a comparison");
    };
    assert_eq!(
        (
            comparison.n_items,
            comparison.n_tasks,
            comparison.max_samples_per_task
        ),
        (12, 6, 2)
    );
    // numpy: mean of per-task means of a and of b → 0.6666666666666666, 0.4166666666666667.
    assert_close(comparison.pass_rate_a, 0.666_666_666_666_666_6, EXACT);
    assert_close(comparison.pass_rate_b, 0.416_666_666_666_666_7, EXACT);
    assert_close(comparison.difference, 0.25, EXACT);
    let clustered = comparison.task_clustered.expect("K = 2 is task-clustered");
    assert_eq!(clustered.n_tasks, 6);
    assert_close(clustered.mean, 0.25, EXACT);
    assert_close(
        clustered.se.expect("6 tasks"),
        0.170_782_512_765_993_32,
        EXACT,
    );
    let interval = clustered.interval.expect("6 tasks");
    assert_close(interval.low, -0.084_727_574_210_598_9, EXACT);
    assert_close(interval.high, 0.584_727_574_210_598_8, EXACT);
    // No statistic that takes the 12 samples as independent pairs.
    assert_eq!(
        (
            comparison.newcombe,
            comparison.mcnemar_exact_p,
            comparison.mcnemar_mid_p
        ),
        (None, None, None)
    );
    // The bootstrap resamples tasks; it is a cross-check on the same per-task differences.
    let bootstrap = comparison.bootstrap.expect("6 tasks resample");
    assert!(bootstrap.contains(0.25), "{bootstrap:?}");
    assert!(
        text.contains(
            "difference A − B: +25.0 points, 95% task-clustered paired interval [−8.5, +58.5] points"
        ),
        "{text}"
    );
    assert!(
        text.contains("McNemar and Newcombe: not computed"),
        "{text}"
    );
    assert!(!text.contains("exact McNemar p"), "{text}");
    assert!(
        text.contains("80% power, 6 tasks)") && text.contains("With 6 tasks"),
        "{text}"
    );
}
