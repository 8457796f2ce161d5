//! A battery against a real vLLM (its CPU build, installed and cached by `scripts/vllm.sh`)
//! whose context cannot hold the suites' budgets: refused before the sweep measures anything,
//! naming the battery's own flag, with every part left to run.

use vernier_test_support::vllm::{Launch, Server};

use crate::battery;

#[test]
fn a_suite_budget_over_vllms_context_stops_the_battery_before_its_sweep() {
    // The launch the other vLLM tests share: the tiny model, 2048 tokens of context.
    let server = Server::shared(
        "vllm battery budget",
        &Launch::tiny().args(["--enable-prefix-caching", "--enable-prompt-tokens-details"]),
    );
    let folder = tempfile::tempdir().expect("a folder");
    let out = folder.path().join("battery");
    let out_arg = out.to_string_lossy().into_owned();
    let run = battery(&[
        "run",
        "--preset",
        "quick",
        "--quiet",
        "--base-url",
        &server.base_url(),
        "--out",
        &out_arg,
    ]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    // vLLM's /v1/models states max_model_len 2048; the quick preset's math budget is 16,000.
    assert_eq!(run.status.code(), Some(2), "{said}");
    assert!(said.contains("--suite-budget 1024"), "{said}");
    assert!(said.contains("2048 tokens (max_model_len)"), "{said}");
    assert!(
        !out.join("sweep").join("journal.jsonl").exists(),
        "the sweep measured before the refusal"
    );
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("battery.json")).expect("battery.json"),
    )
    .expect("JSON");
    for part in record["parts"].as_array().expect("parts") {
        assert_eq!(part["status"], "pending", "{part}");
    }
}
