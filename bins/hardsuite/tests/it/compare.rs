//! `compare` on two runs reproduces statistics from independent sources.

use std::path::Path;

use hardsuite::CommandOutput;
use serde_json::json;
use vernier_hardsuite::ResultsFile;

use crate::{arg, run_cli};

use vernier_test_support::assert_close;

/// Writes a journal whose task `task-i` passes when `passes[i]`.
fn write_journal(path: &Path, model: &str, passes: &[bool], tokens: u64) {
    let ids: Vec<String> = (0..passes.len()).map(|i| format!("task-{i:03}")).collect();
    let mut lines = vec![json!({
        "type": "header", "journal_version": 1, "suite": "synthetic", "suite_path": null,
        "task_ids": ids, "model": model, "base_url": "http://127.0.0.1:8000", "simulated": false,
        "sampling": {"temperature": 0.6, "top_p": 0.95, "top_k": null, "presence_penalty": null},
        "extra_body": null, "budget_flags": {"math": null, "code": null, "tools": null},
        "samples": 1, "rerun_budget": null, "self_checked": true, "grader_image": null,
        "command_line": ["hardsuite"], "started_unix_ms": 0
    })];
    for (id, pass) in ids.iter().zip(passes) {
        lines.push(json!({
            "type": "attempt", "task_id": id, "category": "math", "sample": 0, "phase": "main",
            "try_number": 1, "budget_tokens": 16000,
            "outcome": if *pass { "pass" } else { "wrong" }, "detail": "", "answer": "1",
            "finish_reason": "stop", "completion_tokens": tokens, "token_source": "final_usage",
            "token_count_is_lower_bound": false, "reasoning_tokens": null, "content_chars": 10,
            "reasoning_chars": 0, "n_tool_calls": 0, "ended_in_reasoning": false,
            "hit_budget": false, "elapsed_ms": 1000.0, "ttft_ms": 10.0,
            "decode_tokens_per_s": 50.0, "grade_ms": 0.1
        }));
    }
    let text: String = lines.iter().map(|line| line.to_string() + "\n").collect();
    std::fs::write(path, text).expect("write journal");
}

/// Two runs from a paired 2×2 table.
fn paired_runs(
    both: usize,
    only_a: usize,
    only_b: usize,
    neither: usize,
) -> (Vec<bool>, Vec<bool>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for (count, pass_a, pass_b) in [
        (both, true, true),
        (only_a, true, false),
        (only_b, false, true),
        (neither, false, false),
    ] {
        a.extend(std::iter::repeat_n(pass_a, count));
        b.extend(std::iter::repeat_n(pass_b, count));
    }
    (a, b)
}

#[tokio::test]
async fn compare_on_two_journals_matches_published_and_scipy_values() {
    // Fagerland, Lydersen and Laake (2017), Statistical Analysis of Contingency Tables, ch. 8,
    // Cavo et al. (2012) data (59, 6, 16, 80): Newcombe's paired interval for the difference
    // "estimate = -0.0621 (95% CI -0.1186 to -0.0046)".
    let dir = tempfile::tempdir().expect("temporary directory");
    let (a, b) = paired_runs(59, 6, 16, 80);
    let (path_a, path_b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    write_journal(&path_a, "model-a", &a, 1200);
    write_journal(&path_b, "model-b", &b, 3400);
    let markdown = dir.path().join("compare.md");
    let json = dir.path().join("compare.json");
    let output = run_cli(&[
        "hardsuite",
        "compare",
        arg(&path_a),
        arg(&path_b),
        "--markdown",
        arg(&markdown),
        "--json",
        arg(&json),
    ])
    .await
    .expect("compare");
    let CommandOutput::Compare(comparison, text) = output else {
        panic!("compare gives a comparison");
    };
    assert_eq!(
        (
            comparison.both,
            comparison.only_a,
            comparison.only_b,
            comparison.neither
        ),
        (59, 6, 16, 80)
    );
    assert_close(comparison.difference, -0.0621, 5e-5);
    // One sample per task: the classic paired statistics, no task-clustered interval.
    assert_eq!(comparison.task_clustered, None);
    let newcombe = comparison.newcombe.expect("one sample per task");
    assert_close(newcombe.low, -0.1186, 5e-5);
    assert_close(newcombe.high, -0.0046, 5e-5);
    // python3 -c "from scipy.stats import binomtest; print(binomtest(6, 22, 0.5).pvalue)"
    // (scipy 1.17.1) → 0.052478790283203125
    assert_close(
        comparison.mcnemar_exact_p.expect("one sample per task"),
        0.052_478_790_283_203_125,
        1e-12,
    );
    // python3: (norm.ppf(0.975) + norm.ppf(0.8)) * sqrt(2 p (1 - p) / 161), p = (65 + 75) / 322
    // → 0.15479243684531804
    assert_close(
        comparison.min_detectable_difference,
        0.154_792_436_845_318_04,
        1e-9,
    );
    // The bootstrap cross-check agrees in sign and size with Newcombe's interval.
    let bootstrap = comparison
        .bootstrap
        .expect("161 tasks are enough to resample");
    assert!(bootstrap.contains(comparison.difference), "{bootstrap:?}");
    assert!(
        bootstrap.width() < 2.0 * newcombe.width() && bootstrap.width() > 0.5 * newcombe.width()
    );
    assert_eq!(comparison.solved_only_by_a.len(), 6);
    assert_eq!(comparison.solved_only_by_b.len(), 16);
    assert_eq!(comparison.median_tokens_solved_a, Some(1200.0));
    assert_eq!(comparison.median_tokens_solved_b, Some(3400.0));
    assert!(text.contains("exact McNemar p = 0.0525"), "{text}");
    assert!(
        text.contains("95% Newcombe paired interval [−11.9, −0.5] points"),
        "{text}"
    );
    let written = std::fs::read_to_string(&markdown).expect("markdown written");
    assert!(written.starts_with("# hardsuite compare: model-a vs model-b"));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written")).expect("JSON");
    assert_eq!(written["n_items"], 161);
    assert_eq!(written["a_model"], "model-a");
    assert!(written["task_clustered"].is_null());
    assert!(written["newcombe"]["low"].is_f64());
}

#[tokio::test]
async fn compare_on_two_results_files_of_28_tasks() {
    // A 28-task table in the shape of the seed's comparison: A 24/28, B 15/28, 10 tasks only A
    // solved and 1 only B solved.
    let dir = tempfile::tempdir().expect("temporary directory");
    let (a, b) = paired_runs(14, 10, 1, 3);
    let (journal_a, journal_b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    write_journal(&journal_a, "model-a", &a, 1000);
    write_journal(&journal_b, "model-b", &b, 3000);
    // Through results.json files this time.
    let (results_a, results_b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    ResultsFile::load(&journal_a)
        .expect("journal a")
        .write(&results_a)
        .expect("write a");
    ResultsFile::load(&journal_b)
        .expect("journal b")
        .write(&results_b)
        .expect("write b");
    let loaded_a = ResultsFile::load(&results_a).expect("results a");
    // python3 -c "from scipy.stats import binomtest; print(binomtest(24, 28).proportion_ci(
    //   confidence_level=0.95, method='wilson'))" → (0.6851019783647471, 0.943009946802506)
    let wilson_a = loaded_a.main.total.wilson.expect("scored");
    assert_close(wilson_a.low, 0.685_101_978_364_747_1, 1e-9);
    assert_close(wilson_a.high, 0.943_009_946_802_506, 1e-9);
    let loaded_b = ResultsFile::load(&results_b).expect("results b");
    // binomtest(15, 28).proportion_ci(method='wilson') → (0.3581268923446791, 0.7046843001720463)
    let wilson_b = loaded_b.main.total.wilson.expect("scored");
    assert_close(wilson_b.low, 0.358_126_892_344_679_1, 1e-9);
    assert_close(wilson_b.high, 0.704_684_300_172_046_3, 1e-9);

    let output = run_cli(&["hardsuite", "compare", arg(&results_a), arg(&results_b)])
        .await
        .expect("compare");
    let CommandOutput::Compare(comparison, text) = output else {
        panic!("compare gives a comparison");
    };
    assert_eq!(comparison.n_items, 28);
    // python3 -c "from scipy.stats import binomtest; print(binomtest(10, 11, 0.5).pvalue)"
    // → 0.01171875
    assert_close(
        comparison.mcnemar_exact_p.expect("one sample per task"),
        0.011_718_75,
        1e-12,
    );
    // (norm.ppf(0.975) + norm.ppf(0.8)) * sqrt(2 p (1 - p) / 28), p = 39 / 56 → 0.34427743342150413
    assert_close(
        comparison.min_detectable_difference,
        0.344_277_433_421_504_13,
        1e-9,
    );
    let newcombe = comparison.newcombe.expect("one sample per task");
    assert!(newcombe.contains(9.0 / 28.0));
    assert!(
        newcombe.low > 0.0,
        "a 9-task gap on 28 is clear: {newcombe:?}"
    );
    assert!(
        text.contains("With 28 items, the 95% interval on a difference is about ±14 points"),
        "{text}"
    );
}

#[tokio::test]
async fn compare_names_a_file_it_cannot_read() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path_a = dir.path().join("a.jsonl");
    write_journal(&path_a, "a", &[true], 10);
    let path_b = dir.path().join("b.json");
    std::fs::write(&path_b, "{\"schema_version\": 99}").expect("write");
    let error = run_cli(&["hardsuite", "compare", arg(&path_a), arg(&path_b)])
        .await
        .expect_err("not a results file");
    assert!(error.to_string().contains("b.json"), "{error}");
}
