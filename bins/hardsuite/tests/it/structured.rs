//! Structured output and tool calls graded by structure: a scripted simulator's plan (right,
//! a wrong value, not JSON, cut off, empty; a right call, one too many, a wrong argument type,
//! no call where one was needed, a wrong value, a call where none fits) reproduced task by task,
//! a server refusing `response_format` making every structured task `unsupported` with its
//! words, and a real `llama-server` answering both suites with none lost to the infrastructure.

use std::process::Command;

use hardsuite::CommandOutput;
use vernier_hardsuite::{ScriptedKind, hardsuite_demo_simulator_config, scripted_plan};
use vernier_sim::Sim;
use vernier_tasks::{OutcomeKind, calls_suite, structured_suite};
use vernier_test_support::llama_server;

use crate::vision::run;
use crate::{arg, run_cli};

/// Each task's outcome against the plan; every planned kind in `must_show` appears.
fn assert_plan(
    suite: &vernier_tasks::Suite,
    results: &vernier_hardsuite::ResultsFile,
    must_show: &[ScriptedKind],
) {
    let plan = scripted_plan(suite);
    assert_eq!(results.tasks.len(), suite.tasks.len());
    for ((task, planned), result) in suite.tasks.iter().zip(&plan).zip(&results.tasks) {
        assert_eq!(task.id, result.id);
        let sample = &result.samples[0];
        assert_eq!(
            sample.outcome,
            planned.kind.expected_outcome(),
            "{} ({:?}): {}",
            task.id,
            planned.kind,
            sample.detail
        );
    }
    for kind in must_show {
        assert!(
            plan.iter().any(|p| p.kind == *kind),
            "the plan has no {kind:?}"
        );
    }
}

#[tokio::test]
async fn the_structured_plan_is_reproduced_task_by_task_with_each_failure_named() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run("structured", &out, &["--seed", "3"]).await;
    let suite = structured_suite(3, vernier_tasks::DEFAULT_STRUCTURED_BUDGET);
    assert_plan(
        &suite,
        &results,
        &[
            ScriptedKind::Wrong,
            ScriptedKind::InvalidJson,
            ScriptedKind::CutOffInReasoning,
            ScriptedKind::NoAnswer,
        ],
    );
    let details: Vec<&str> = results
        .tasks
        .iter()
        .map(|t| t.samples[0].detail.as_str())
        .collect();
    assert!(details[1].starts_with("value: "), "{}", details[1]);
    assert!(details[2].starts_with("invalid_json: "), "{}", details[2]);
    assert_eq!(
        (results.main.total.n_pass, results.main.total.n_scored),
        (8, 12)
    );
    // The report's breakdown counts the plan's failures by class: level 1 holds the wrong
    // value (2nd) and the reply that is not JSON (3rd); level 2 the cut-off (5th) and the
    // empty reply (6th).
    let report = std::fs::read_to_string(out.join("report.md")).expect("the report");
    assert!(report.contains("## Structured output"), "{report}");
    assert!(report.contains("| l1 | 1/3 ["), "{report}");
    assert!(report.contains("| 1 | 0 | 1 | 0 |"), "{report}");
    assert!(report.contains("| l2 | 1/3 ["), "{report}");
}

#[tokio::test]
async fn the_tool_call_plan_is_reproduced_task_by_task_with_extra_calls_apart() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let results = run("calls", &out, &["--seed", "5"]).await;
    let suite = calls_suite(5, vernier_tasks::DEFAULT_CALLS_BUDGET);
    assert_plan(
        &suite,
        &results,
        &[
            ScriptedKind::ExtraCalls,
            ScriptedKind::WrongArgumentType,
            ScriptedKind::MissingCall,
            ScriptedKind::Wrong,
            ScriptedKind::UnwantedCall,
        ],
    );
    let detail = |id: &str| {
        results
            .tasks
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.samples[0].detail.clone())
            .unwrap_or_default()
    };
    assert!(
        detail("calls-number-1").contains("schema: /"),
        "{}",
        detail("calls-number-1")
    );
    assert!(
        detail("calls-nested-1").starts_with("no_call"),
        "{}",
        detail("calls-nested-1")
    );
    assert!(
        detail("calls-none-fits-1").starts_with("unexpected_call"),
        "{}",
        detail("calls-none-fits-1")
    );
    let extra = results
        .tasks
        .iter()
        .filter(|t| t.samples[0].outcome == OutcomeKind::ExtraCalls)
        .count();
    assert_eq!(extra, 1);
    let report = std::fs::read_to_string(out.join("report.md")).expect("the report");
    let choose = report
        .lines()
        .find(|line| line.starts_with("| choose |"))
        .unwrap_or_else(|| panic!("a row for the choose task: {report}"));
    assert!(
        choose.starts_with("| choose | 0/1 [") && choose.ends_with("| 0 | 1 | 0 |"),
        "{choose}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_response_format_makes_every_structured_task_unsupported() {
    let suite = structured_suite(0, vernier_tasks::DEFAULT_STRUCTURED_BUDGET);
    let mut config = hardsuite_demo_simulator_config(&suite).expect("the demo script");
    config.refuse_response_format = true;
    let sim = Sim::start(config).await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let url = sim.base_url();
    let output = run_cli(&[
        "hardsuite",
        "run",
        "--suite",
        "structured",
        "--base-url",
        &url,
        "--out",
        arg(&out),
        "--quiet",
    ])
    .await;
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).expect("the journal");
    let attempts: Vec<serde_json::Value> = journal
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["type"] == "attempt")
        .collect();
    assert_eq!(attempts.len(), 12, "each task tried once, never retried");
    for attempt in &attempts {
        assert_eq!(attempt["outcome"], "unsupported", "{attempt}");
        let words = attempt["server_message"].as_str().unwrap_or_default();
        assert!(words.contains("'response_format' of type"), "{attempt}");
    }
    if let Ok(CommandOutput::Run(outcome)) = output {
        assert_eq!(outcome.results.main.total.n_scored, 0);
    }
}

/// `SmolLM2` on a real llama-server with its chat template's tool calls (`--jinja`), two slots.
pub(crate) fn smollm2_with_jinja(test: &str) -> Option<llama_server::Server> {
    llama_server::start_for(
        test,
        &[
            "-t",
            "2",
            "-c",
            "4096",
            "-np",
            "2",
            "--jinja",
            "--no-warmup",
        ],
    )
}

/// A run of `suite` against the real server at `port` with `budget` tokens a task: every task
/// answered and scored, none lost to the infrastructure.
pub(crate) fn run_against_llama(
    suite: &str,
    port: u16,
    n_tasks: usize,
    budget: &str,
) -> serde_json::Value {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["run", "--suite", suite, "--concurrency", "2"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}")])
        .args([&format!("--budget-{suite}"), budget, "--quiet", "--out"])
        .arg(&out)
        .env("VERNIER_STORE", "off")
        .output()
        .expect("run hardsuite");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).expect("results"))
            .expect("JSON");
    let tasks = results["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), n_tasks);
    for task in tasks {
        let outcome = task["samples"][0]["outcome"].as_str().unwrap_or_default();
        assert!(
            ["pass", "wrong", "cut_off", "no_answer", "extra_calls"].contains(&outcome),
            "{task}"
        );
    }
    assert_eq!(results["n_infra_tries"], 0, "{results}");
    assert_eq!(results["main"]["total"]["n_scored"], n_tasks, "{results}");
    results
}

#[test]
fn a_real_llama_server_takes_response_format_and_tool_calls_and_every_task_is_scored() {
    let test = "a_real_llama_server_takes_response_format_and_tool_calls_and_every_task_is_scored";
    let Some(server) = crate::structured::smollm2_with_jinja(test) else {
        return;
    };
    let structured = run_against_llama("structured", server.port, 12, "200");
    // The server took the schema: every reply that finished is JSON (a grammar holds it to the
    // schema), so none is graded "invalid_json" unless the budget cut it off.
    for task in structured["tasks"].as_array().into_iter().flatten() {
        let sample = &task["samples"][0];
        let detail = sample["detail"].as_str().unwrap_or_default();
        if sample["outcome"] != "cut_off" {
            assert!(!detail.starts_with("invalid_json"), "{task}");
        }
    }
    run_against_llama("calls", server.port, 13, "200");
}
