//! A battery against a real `llama-server` (SmolLM2-135M-Instruct, built and cached by
//! `scripts/llama-server.sh`), sized to finish in about a minute: the sweep at one short
//! prompt, one stream and two, and two math tasks of the suite. Missing, the server fails the
//! test loudly unless `VERNIER_SKIP_LLAMA_TESTS=1`.

use crate::{battery, battery_json, read_json, succeeded};

use vernier_test_support::llama_server;

#[test]
fn a_battery_against_a_real_llama_server_finishes_with_one_command_and_a_verdict() {
    let test = "a_battery_against_a_real_llama_server_finishes_with_one_command_and_a_verdict";
    let Some(server) = llama_server::start_for(
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
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("llama");
    let base_url = format!("http://127.0.0.1:{}", server.port);
    let run = battery(&[
        "run",
        "--base-url",
        &base_url,
        "--preset",
        "quick",
        "--prompt-tokens",
        "64",
        "--output-tokens",
        "16",
        "--reps",
        "2",
        "--concurrency",
        "2",
        "--suite-tasks",
        "crt,digit-sum",
        "--suite-budget",
        "64",
        "--quiet",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    let stdout = succeeded(&run);
    assert!(
        stdout.lines().any(|line| line.starts_with("verdict: ")),
        "{stdout}"
    );
    let index = battery_json(&out);
    assert_eq!(index["simulated"], false);
    assert_eq!(index["target"], base_url.as_str());
    for part in index["parts"].as_array().expect("parts") {
        assert_eq!(part["status"], "done", "{part}");
    }
    // The sweep measured the real server in its own tokens at both loads.
    let run_file: serde_json::Value = read_json(&out.join("sweep/run.json"));
    assert_eq!(run_file["environment"]["server"]["kind"], "llama_cpp");
    let cells = run_file["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 4, "prose and code at one and two streams");
    assert!(
        cells.iter().all(|cell| cell["n_ok"].as_u64() >= Some(2)),
        "{cells:?}"
    );
    // The suite scored both tasks (right or wrong, never infra).
    let results: serde_json::Value = read_json(&out.join("suite/results.json"));
    assert_eq!(
        results["main"]["total"]["n_scored"], 2,
        "{}",
        results["main"]["total"]
    );
}
