//! `hardsuite tasks` and `run --level/--seed`: level 2 / seed 0 is the bundled suite, other
//! draws are recorded in the journal and results, and their parameters and golds agree with
//! an independent recomputation.

use hardsuite::CommandOutput;
use vernier_cli::Failure as _;

use crate::{arg, run_cli};

async fn listing(args: &[&str]) -> Vec<serde_json::Value> {
    let Ok(CommandOutput::Tasks(text)) = run_cli(args).await else {
        panic!("tasks output");
    };
    serde_json::from_str(&text).expect("JSON listing")
}

#[tokio::test]
async fn tasks_at_level_two_seed_zero_print_todays_prompts_and_golds() {
    // Captured from the suite before families existed.
    let fixture: Vec<serde_json::Value> = serde_json::from_str(include_str!(
        "../../../../crates/vernier-tasks/tests/fixtures/bundled-level2-seed0.json"
    ))
    .expect("fixture");
    let printed = listing(&[
        "hardsuite",
        "tasks",
        "--level",
        "2",
        "--seed",
        "0",
        "--json",
    ])
    .await;
    let default = listing(&["hardsuite", "tasks", "--json"]).await;
    assert_eq!(printed, default);
    assert_eq!(printed.len(), 28);
    for (task, captured) in printed.iter().zip(&fixture) {
        assert_eq!(task["id"], captured["id"]);
        let prompt = captured["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .map(|m| m["content"].clone())
            .expect("user message");
        assert_eq!(task["prompt"], prompt, "{}", task["id"]);
        match captured["category"].as_str() {
            Some("math") => assert_eq!(task["gold"], captured["gold"], "{}", task["id"]),
            Some("code") => assert_eq!(
                task["gold"]["case_names"], captured["gold"]["case_names"],
                "{}",
                task["id"]
            ),
            _ => {}
        }
        assert_eq!(
            (task["level"].as_u64(), task["seed"].as_u64()),
            (Some(2), Some(0))
        );
    }
}

/// Tilings of a 2×n board are Fibonacci numbers F(n+1) (OEIS A000045); of a 3×2m board,
/// a(m) = 4a(m−1) − a(m−2) (OEIS A001835).
fn tilings(width: u64, length: u64) -> Option<u128> {
    match width {
        2 => {
            let (mut a, mut b) = (1_u128, 1_u128);
            for _ in 0..length {
                (a, b) = (b, a + b);
            }
            Some(a)
        }
        3 => {
            let (mut a, mut b) = (1_i128, 3_i128);
            for _ in 1..length / 2 {
                (a, b) = (b, 4 * b - a);
            }
            u128::try_from(b).ok()
        }
        _ => None,
    }
}

/// Balanced strings of 2n brackets with depth at most h, by brute force over every string.
fn brackets_brute_force(pairs: u64, max_depth: i64) -> String {
    (0_u64..1 << (2 * pairs))
        .filter(|bits| {
            let mut depth = 0_i64;
            (0..2 * pairs).all(|i| {
                depth += if bits >> i & 1 == 1 { 1 } else { -1 };
                (0..=max_depth).contains(&depth)
            }) && depth == 0
        })
        .count()
        .to_string()
}

/// Rencontres numbers: C(n, k) from Pascal's triangle times the derangements of n − k by
/// D(m) = (m − 1)(D(m − 1) + D(m − 2)) (OEIS A008290).
fn rencontres(n: usize, k: usize) -> String {
    let mut pascal = vec![vec![0_u128; n + 1]; n + 1];
    for i in 0..=n {
        pascal[i][0] = 1;
        for j in 1..=i {
            pascal[i][j] = pascal[i - 1][j - 1] + if j < i { pascal[i - 1][j] } else { 0 };
        }
    }
    let mut derangements = vec![1_u128, 0];
    for m in 2..=n - k {
        derangements.push((m as u128 - 1) * (derangements[m - 1] + derangements[m - 2]));
    }
    (pascal[n][k] * derangements[n - k]).to_string()
}

fn number(parameters: &serde_json::Value, key: &str) -> u64 {
    parameters[key].as_u64().expect("numeric parameter")
}

#[tokio::test]
async fn printed_parameters_and_golds_agree_with_an_independent_recomputation() {
    for (level, seed) in [("1", "3"), ("2", "11"), ("3", "5"), ("5", "1")] {
        let printed = listing(&[
            "hardsuite",
            "tasks",
            "--level",
            level,
            "--seed",
            seed,
            "--json",
        ])
        .await;
        for task in &printed {
            let p = &task["parameters"];
            let independent: Option<String> = match task["id"].as_str() {
                Some("domino-tiling") => {
                    tilings(number(p, "width"), number(p, "length")).map(|v| v.to_string())
                }
                Some("bracket-depth") if number(p, "pairs") <= 12 => Some(brackets_brute_force(
                    number(p, "pairs"),
                    i64::try_from(number(p, "max_depth")).expect("depth"),
                )),
                Some("fixed-points") => Some(rencontres(
                    usize::try_from(number(p, "n")).expect("n"),
                    usize::try_from(number(p, "k")).expect("k"),
                )),
                _ => None,
            };
            if let Some(expected) = independent {
                assert_eq!(
                    task["gold"].as_str(),
                    Some(expected.as_str()),
                    "level {level} seed {seed} {}",
                    task["id"]
                );
            }
            assert_eq!(
                task["level"].as_u64().map(|l| l.to_string()),
                Some(level.to_owned())
            );
        }
    }
}

#[tokio::test]
async fn compare_of_different_instances_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let header = |level: u8| {
        serde_json::json!({
            "type": "header", "journal_version": 1, "suite": "hardsuite", "suite_path": null,
            "task_ids": ["crt"], "model": "m", "base_url": "http://127.0.0.1:1",
            "simulated": false,
            "sampling": {"temperature": 0.6, "top_p": 0.95, "top_k": null, "presence_penalty": null},
            "extra_body": null, "budget_flags": {"math": null, "code": null, "tools": null},
            "samples": 1, "rerun_budget": null, "self_checked": true, "grader_image": null,
            "command_line": [], "started_unix_ms": 0, "draw": {"level": level, "seed": 1}
        })
    };
    let attempt = serde_json::json!({
        "type": "attempt", "task_id": "crt", "category": "math", "sample": 0, "phase": "main",
        "try_number": 1, "budget_tokens": 16000, "outcome": "pass", "detail": "", "answer": "1",
        "finish_reason": "stop", "completion_tokens": 10, "token_source": "final_usage",
        "token_count_is_lower_bound": false, "reasoning_tokens": null, "content_chars": 1,
        "reasoning_chars": 0, "n_tool_calls": 0, "ended_in_reasoning": false,
        "hit_budget": false, "elapsed_ms": 1.0, "ttft_ms": 1.0, "decode_tokens_per_s": 1.0,
        "grade_ms": 0.1
    });
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    for (path, level) in [(&a, 3), (&b, 4)] {
        std::fs::write(path, format!("{}\n{attempt}\n", header(level))).expect("journal");
    }
    let error = run_cli(&["hardsuite", "compare", arg(&a), arg(&b)])
        .await
        .expect_err("refused");
    assert_eq!(error.exit_code(), 2);
    assert!(
        error
            .to_string()
            .contains("A level 3 seed 1, B level 4 seed 1"),
        "{error}"
    );
    let Ok(CommandOutput::Compare(comparison, text)) =
        run_cli(&["hardsuite", "compare", arg(&a), arg(&b), "--unpaired"]).await
    else {
        panic!("unpaired comparison");
    };
    assert!(comparison.unpaired);
    assert!(text.contains("UNPAIRED"), "{text}");
}
