//! The hard suite against a real vLLM (its CPU build, installed and cached by
//! `scripts/vllm.sh`): `SmolLM2-135M-Instruct` served with vLLM's hermes tool parser answers a
//! draw of every family and of a standard dataset, each task sent, answered and scored (none
//! `infra`); a vLLM without a tool parser gets its tool tasks marked `unsupported`, not
//! failed; and a budget over the context vLLM states is refused before any request, naming
//! the flag that fixes it. Each test checks that vLLM itself answered.

use std::path::PathBuf;
use std::process::{Command, Output};

use vernier_test_support::vllm::{Launch, Server};

use crate::json_lines;

/// `SmolLM2` with vLLM's hermes tool parser and a 4096-token context.
fn smollm2() -> Launch {
    Launch::smollm2().max_model_len(4096).args([
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
    ])
}

/// The tiny model with no tool parser (what most users' vLLM runs), 2048 tokens of context;
/// the launch the sweep's vLLM tests share.
fn tiny() -> Launch {
    Launch::tiny().args(["--enable-prefix-caching", "--enable-prompt-tokens-details"])
}

fn hardsuite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run hardsuite")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The MMLU file `scripts/datasets.sh` cached.
fn mmlu() -> PathBuf {
    if let Some(path) = std::env::var_os("VERNIER_MMLU") {
        return PathBuf::from(path);
    }
    let printed = vernier_test_support::check_script("datasets.sh");
    vernier_test_support::value_of(&printed, "VERNIER_MMLU")
        .map(PathBuf::from)
        .expect("MMLU is not cached: run scripts/datasets.sh (scripts/test.sh does)")
}

/// The attempts of a journal, each checked to be vLLM's answer, scored, and not `infra`.
fn assert_all_scored(journal: &std::path::Path) -> Vec<serde_json::Value> {
    let lines = json_lines(journal);
    let header = &lines[0];
    assert_eq!(header["server"]["kind"], "vllm", "{header}");
    let attempts: Vec<serde_json::Value> = lines
        .into_iter()
        .filter(|line| line["type"] == "attempt")
        .collect();
    for attempt in &attempts {
        assert_ne!(attempt["outcome"], "infra", "{attempt}");
        if attempt["outcome"] != "unsupported" {
            assert!(
                attempt["completion_tokens"].as_u64().is_some(),
                "vLLM's usage: {attempt}"
            );
        }
    }
    attempts
}

/// Math, tool calls through vLLM's hermes parser, and a dataset draw: vLLM's own paths. Code
/// tasks are graded in the Docker sandbox whatever the server, and their self-check's timed
/// integrity controls can run past their limits on two cores beside a CPU vLLM engine; the
/// `llama-server` tests cover code answers from a real server.
#[test]
fn smollm2_on_vllm_answers_math_tools_and_a_dataset_draw_none_infra() {
    let server = Server::shared("vllm hardsuite", &smollm2());
    let base_url = server.base_url();
    let folder = tempfile::tempdir().expect("a folder");
    let out = folder.path().join("suite");
    let out_arg = out.to_string_lossy().into_owned();
    let run = hardsuite(&[
        "run",
        "--quiet",
        "--base-url",
        &base_url,
        "--tasks",
        "last-digits,tool-weather,tool-none",
        "--budget-math",
        "160",
        "--budget-tools",
        "120",
        "--out",
        &out_arg,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let attempts = assert_all_scored(&out.join("journal.jsonl"));
    assert_eq!(attempts.len(), 3, "{attempts:?}");
    let journal = json_lines(&out.join("journal.jsonl"));
    assert_eq!(
        journal[0]["context_limit"]["tokens"], 4096,
        "{}",
        journal[0]
    );
    assert_eq!(journal[0]["context_limit"]["source"], "max_model_len");
    // The tool tasks went through vLLM's hermes parser: answered, not refused.
    for attempt in attempts.iter().filter(|a| a["category"] == "tools") {
        assert_ne!(attempt["outcome"], "unsupported", "{attempt}");
    }

    let draw = folder.path().join("dataset");
    let draw_arg = draw.to_string_lossy().into_owned();
    let mmlu = mmlu();
    let run = hardsuite(&[
        "run",
        "--quiet",
        "--base-url",
        &base_url,
        "--dataset",
        "mmlu",
        "--dataset-file",
        &mmlu.to_string_lossy(),
        "--sample",
        "3",
        "--budget-dataset",
        "96",
        "--out",
        &draw_arg,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let attempts = assert_all_scored(&draw.join("journal.jsonl"));
    assert_eq!(attempts.len(), 3, "{attempts:?}");

    // Structured outputs (a JSON schema and the json_object mode) and tool calls graded by
    // structure (a forced call, a named one, a result returned): vLLM takes each request.
    for (suite, tasks) in [
        (
            "structured",
            "structured-l1-1,structured-l2-3,structured-l4-1",
        ),
        ("calls", "calls-single-1,calls-named-1,calls-result-1"),
    ] {
        let out = folder.path().join(suite);
        let out_arg = out.to_string_lossy().into_owned();
        let budget = format!("--budget-{suite}");
        let run = hardsuite(&[
            "run",
            "--quiet",
            "--base-url",
            &base_url,
            "--suite",
            suite,
            "--tasks",
            tasks,
            &budget,
            "200",
            "--out",
            &out_arg,
        ]);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run));
        let attempts = assert_all_scored(&out.join("journal.jsonl"));
        assert_eq!(attempts.len(), 3, "{attempts:?}");
        for attempt in &attempts {
            assert_ne!(attempt["outcome"], "unsupported", "{attempt}");
            // vLLM's structured outputs held each finished reply to the schema.
            let detail = attempt["detail"].as_str().unwrap_or_default();
            if suite == "structured" && attempt["outcome"] != "cut_off" {
                assert!(!detail.starts_with("invalid_json"), "{attempt}");
                // The third task of a level asks for `json_object` only: any JSON object.
                let json_schema = !attempt["task_id"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with("-3");
                assert!(!(json_schema && detail.starts_with("schema")), "{attempt}");
            }
        }
    }
}

#[test]
fn a_vllm_without_a_tool_parser_leaves_tool_tasks_unsupported_not_failed() {
    let server = Server::shared("vllm tool refusal", &tiny());
    let folder = tempfile::tempdir().expect("a folder");
    let out = folder.path().join("tools");
    let out_arg = out.to_string_lossy().into_owned();
    let run = hardsuite(&[
        "run",
        "--quiet",
        "--base-url",
        &server.base_url(),
        "--tasks",
        "tool-weather,last-digits",
        "--budget-tools",
        "32",
        "--budget-math",
        "32",
        "--out",
        &out_arg,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let attempts = assert_all_scored(&out.join("journal.jsonl"));
    let tool = attempts
        .iter()
        .find(|a| a["task_id"] == "tool-weather")
        .expect("the tool task");
    assert_eq!(tool["outcome"], "unsupported", "{tool}");
    let message = tool["server_message"].as_str().expect("vLLM's words");
    assert!(message.contains("--tool-call-parser"), "{message}");
    let math = attempts
        .iter()
        .find(|a| a["task_id"] == "last-digits")
        .expect("the math task");
    assert_ne!(math["outcome"], "unsupported", "{math}");
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(
        report.contains("The server parses no tool calls"),
        "{report}"
    );
}

#[test]
fn a_budget_over_vllms_context_is_refused_before_any_request_naming_the_flag() {
    let server = Server::shared("vllm budget", &tiny());
    let folder = tempfile::tempdir().expect("a folder");
    // The suite's default math budget, 16,000 tokens, against vLLM's 2,048.
    let out = folder.path().join("suite");
    let out_arg = out.to_string_lossy().into_owned();
    let run = hardsuite(&[
        "run",
        "--quiet",
        "--base-url",
        &server.base_url(),
        "--tasks",
        "last-digits",
        "--out",
        &out_arg,
    ]);
    let said = text(&run);
    assert_eq!(run.status.code(), Some(2), "{said}");
    assert!(said.contains("--budget-math 1024"), "{said}");
    assert!(said.contains("2048 tokens (max_model_len)"), "{said}");
    assert!(
        !out.join("journal.jsonl").exists(),
        "nothing was to be sent"
    );
}
