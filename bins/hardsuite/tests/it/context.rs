//! The long-context suite on the simulator: its scripted model reads the needles out of each
//! prompt and misses the 75% depth from 32k tokens on; lengths beyond its context are left out
//! (default lengths) or refused by it with vLLM's error (lengths asked for).

use std::path::Path;

use hardsuite::CommandOutput;
use vernier_hardsuite::{
    DEMO_CONTEXT_LIMIT, DEMO_CONTEXT_MISS_DEPTH, DEMO_CONTEXT_MISS_FROM, ResultsFile,
};

use crate::{arg, json_lines, run_cli};

async fn run(out: &Path, extra: &[&str]) -> ResultsFile {
    let mut args = vec!["hardsuite", "run", "--suite", "context", "--quiet", "--out"];
    args.push(arg(out));
    args.extend_from_slice(extra);
    match run_cli(&args).await.expect("the context run completes") {
        CommandOutput::Run(outcome) => outcome.results,
        _ => panic!("a run gives a run outcome"),
    }
}

fn outcome_of(results: &ResultsFile, id: &str) -> String {
    results
        .task(id)
        .unwrap_or_else(|| panic!("task {id}"))
        .samples[0]
        .outcome
        .as_str()
        .to_owned()
}

#[tokio::test]
async fn the_scripted_misses_are_reproduced_cell_by_cell_and_long_lengths_are_left_out() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run(&out, &["--depths", "0,50,75,100"]).await;
    // The simulator's context is 40,960 tokens with a 2,000-token budget: 64k and 128k cannot
    // fit and were left out before anything was sent, each with the reason.
    let context = results.context.as_ref().expect("a context view");
    let dropped: Vec<u32> = context.dropped.iter().map(|d| d.tokens).collect();
    assert_eq!(dropped, vec![65_536, 131_072]);
    assert!(
        context.dropped[0]
            .reason
            .contains(&DEMO_CONTEXT_LIMIT.to_string()),
        "{:?}",
        context.dropped
    );
    let lengths: Vec<u32> = context.lengths.iter().map(|l| l.target_tokens).collect();
    assert_eq!(lengths, vec![1_024, 4_096, 16_384, 32_768]);
    // Every cell as scripted: wrong exactly at 75% from 32k on, right everywhere else
    // (including the multi-needle task, whose needles sit at 16, 50 and 83%).
    for length in &lengths {
        let label = vernier_tasks::length_label(*length);
        for depth in [0u8, 50, 75, 100] {
            let id = format!("context-{label}-d{depth}-s0");
            let want = if depth == DEMO_CONTEXT_MISS_DEPTH && *length >= DEMO_CONTEXT_MISS_FROM {
                "wrong"
            } else {
                "pass"
            };
            assert_eq!(outcome_of(&results, &id), want, "{id}");
            let cell = context.cell(*length, Some(depth)).expect("a cell");
            assert_eq!(
                (cell.n_pass, cell.n_scored),
                (u64::from(want == "pass"), 1),
                "{id}"
            );
        }
        assert_eq!(
            outcome_of(&results, &format!("context-{label}-multi-s0")),
            "pass"
        );
    }
    // Each request's prompt is the length asked for in the server's own count, and no
    // request shares a prefix with another (the simulator reports no cached tokens).
    for length in &context.lengths {
        assert!(
            length.max_deviation_pct.expect("counted") <= 2.0,
            "{length:?}"
        );
        assert_eq!(length.cached_prompt_tokens, Some(0), "{length:?}");
        assert!(length.median_prefill_tokens_per_s.is_some());
    }
    let attempts: Vec<serde_json::Value> = json_lines(&out.join("journal.jsonl"))
        .into_iter()
        .filter(|line| line["type"] == "attempt")
        .collect();
    let nonces: std::collections::HashSet<&str> = attempts
        .iter()
        .filter_map(|line| line["context"]["nonce"].as_str())
        .collect();
    assert_eq!(nonces.len(), attempts.len(), "one nonce per request");
    for line in &attempts {
        assert_eq!(line["context"]["count_method"], "tokenize_chat");
    }
    // The report shows the table, and the heat map is written beside it.
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(
        report.contains("| 32k | 1/1 | 1/1 | 0/1 | 1/1 | 1/1 |"),
        "{report}"
    );
    assert!(
        report.contains("64k left out before anything was sent"),
        "{report}"
    );
    let svg = std::fs::read_to_string(out.join("context-heatmap.svg")).expect("heat map");
    assert!(svg.starts_with("<svg") && svg.contains(">0/1<"), "{svg}");
}

#[tokio::test]
async fn lengths_asked_for_beyond_the_context_are_context_exceeded_with_the_servers_words() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run(
        &out,
        &[
            "--lengths",
            "1k,48k",
            "--depths",
            "50",
            "--multi-needles",
            "0",
        ],
    )
    .await;
    assert_eq!(outcome_of(&results, "context-1k-d50-s0"), "pass");
    let refused = results.task("context-48k-d50-s0").expect("task").samples[0].clone();
    assert_eq!(refused.outcome.as_str(), "context_exceeded");
    let message = refused.server_message.expect("the server's words");
    assert!(
        message.contains("maximum context length is 40960 tokens"),
        "{message}"
    );
    // Not scored, not a model failure, not retried.
    assert_eq!(results.main.total.n_scored, 1);
    assert_eq!(results.main.total.n_context_exceeded, 1);
    assert_eq!(results.main.total.n_wrong, 0);
    assert_eq!(refused.n_tries, 1);
    let context = results.context.expect("a context view");
    assert!(context.dropped.is_empty(), "asked-for lengths are all sent");
    assert!(
        context.largest_accepted_tokens.expect("one accepted") <= 1_100,
        "{context:?}"
    );
}

#[tokio::test]
async fn compare_pairs_two_context_runs_cell_by_cell() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let (a, b) = (folder.path().join("a"), folder.path().join("b"));
    let flags = ["--lengths", "1k,32k", "--depths", "25,75"];
    run(&a, &flags).await;
    run(&b, &flags).await;
    let output = run_cli(&[
        "hardsuite",
        "compare",
        arg(&a.join("results.json")),
        arg(&b.join("results.json")),
    ])
    .await
    .expect("compare");
    let CommandOutput::Compare(comparison, _) = output else {
        panic!("a comparison");
    };
    // Six tasks (two lengths × two depths, plus each length's multi-needle task) pair one to
    // one, and agree: the 32k / 75% cell failed in both.
    assert_eq!(comparison.tasks.len(), 6);
    assert_eq!(comparison.n_items, 6);
    assert!(comparison.instance_differences.is_empty());
    assert_eq!(
        (
            comparison.both,
            comparison.only_a,
            comparison.only_b,
            comparison.neither
        ),
        (5, 0, 0, 1)
    );
    let failed: Vec<&str> = comparison
        .tasks
        .iter()
        .filter(|t| t.a[0].as_str() == "wrong")
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(failed, vec!["context-32k-d75-s0"]);
    // Another seed draws other needles: a paired comparison is refused, naming why.
    let c = folder.path().join("c");
    let mut other = flags.to_vec();
    other.extend(["--seed", "9"]);
    run(&c, &other).await;
    let error = run_cli(&[
        "hardsuite",
        "compare",
        arg(&a.join("results.json")),
        arg(&c.join("results.json")),
    ])
    .await
    .expect_err("different needles are not paired");
    assert!(error.to_string().contains("seed 0 in A, 9 in B"), "{error}");
}

#[tokio::test]
async fn a_context_run_cut_short_resumes_with_its_plan_and_finishes_the_rest() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let whole = run(&out, &["--lengths", "1k,4k", "--depths", "0,50"]).await;
    let journal = out.join("journal.jsonl");
    // Keep the header and the first three tries, as a run stopped there would have left it.
    let text = std::fs::read_to_string(&journal).expect("journal");
    let mut kept = text.lines().take(4).collect::<Vec<_>>().join("\n");
    kept.push('\n');
    std::fs::write(&journal, kept).expect("cut the journal");
    let output = run_cli(&["hardsuite", "run", "--quiet", "--resume", arg(&journal)])
        .await
        .expect("the resume completes");
    let CommandOutput::Run(resumed) = output else {
        panic!("a run outcome");
    };
    assert_eq!(resumed.kept_attempts, 3);
    let ids = |results: &ResultsFile| -> Vec<(String, String)> {
        results
            .tasks
            .iter()
            .map(|t| (t.id.clone(), t.samples[0].outcome.as_str().to_owned()))
            .collect()
    };
    assert_eq!(ids(&resumed.results), ids(&whole));
    // Every task has exactly one try: nothing was sent twice.
    let attempts = json_lines(&journal)
        .iter()
        .filter(|line| line["type"] == "attempt")
        .count();
    assert_eq!(attempts, whole.tasks.len());
}

#[tokio::test]
async fn the_context_suite_self_checks_without_docker_or_a_server() {
    let output = run_cli(&["hardsuite", "self-check", "--suite", "context"])
        .await
        .expect("the self-check passes");
    let CommandOutput::SelfCheck(text) = output else {
        panic!("a self-check report");
    };
    assert!(text.starts_with("self-check passed"), "{text}");
    // Six default lengths × (five depths + one multi-needle task), each proved.
    assert!(text.contains("on 36 tasks of suite context"), "{text}");
    assert!(text.contains("context-128k-multi-s0"), "{text}");
}

#[tokio::test]
async fn prompts_that_fit_alone_but_not_together_run_alone_and_are_scored() {
    // A server whose running requests share 8,192 KV cells and does not say so (the
    // simulator serves no /props): two 4k prompts with 2,000-token budgets fit alone, not
    // together, and the second of a pair fails mid-stream with llama.cpp's words.
    let mut plan = vernier_tasks::ContextPlan::default();
    plan.lengths = vec![4_096];
    plan.depths = vec![0, 50, 100];
    let suite = vernier_tasks::context_suite(&plan, vernier_tasks::DEFAULT_CONTEXT_BUDGET);
    let mut config =
        vernier_hardsuite::hardsuite_demo_simulator_config(&suite).expect("the demo config");
    config.shared_kv_tokens = Some(8_192);
    // A prefill of 0.4 s per prompt: the two tries in flight overlap.
    config.prefill_tokens_per_s = 10_000.0;
    let sim = vernier_sim::Sim::start(config)
        .await
        .expect("the simulator starts");
    let url = sim.base_url();
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run(
        &out,
        &[
            "--base-url",
            &url,
            "--model",
            "vernier-sim",
            "--lengths",
            "4k",
            "--depths",
            "0,50,100",
            "--concurrency",
            "2",
        ],
    )
    .await;
    sim.shutdown().await;
    // Every task is scored as the scripted model answers (it finds every needle below 32k):
    // none is infra, though tries were failed for capacity.
    assert_eq!(results.tasks.len(), 4);
    for task in &results.tasks {
        assert_eq!(task.samples[0].outcome.as_str(), "pass", "{}", task.id);
    }
    let alone = results.ran_alone.as_ref().expect("some attempts ran alone");
    assert!(!alone.attempts.is_empty());
    assert!(
        alone.why.contains("Context size has been exceeded"),
        "{}",
        alone.why
    );
    // Each failed try is on file, before the try that ran alone.
    let lines = json_lines(&out.join("journal.jsonl"));
    let failed = lines
        .iter()
        .filter(|line| {
            line["detail"]
                .as_str()
                .is_some_and(|d| d.contains("Context size has been exceeded"))
        })
        .count();
    let ran_alone = lines
        .iter()
        .filter(|line| line["alone"].is_string())
        .count();
    assert_eq!(failed, alone.attempts.len());
    assert_eq!(ran_alone, alone.attempts.len());
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(
        report.contains("ran alone, with nothing else in flight"),
        "{report}"
    );
}
