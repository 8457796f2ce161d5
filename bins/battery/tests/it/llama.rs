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

/// The bundled seed-004 study, scaled, against a real `llama-server`: the ruler, four tasks
/// with a re-run of the cut-off ones, a bounded watch and a short soak, with one command.
#[test]
fn the_seed_004_study_runs_scaled_against_a_real_llama_server() {
    let test = "the_seed_004_study_runs_scaled_against_a_real_llama_server";
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
            "--metrics",
        ],
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("seed-004");
    let base_url = format!("http://127.0.0.1:{}", server.port);
    let run = crate::study::run_bundled("seed-004", Some(&base_url), &out);
    let stdout = succeeded(&run);
    let file = read_json(&out.join("battery.json"));
    let parts = file["parts"].as_array().expect("parts");
    let statuses: Vec<&str> = parts.iter().filter_map(|p| p["status"].as_str()).collect();
    assert_eq!(statuses, ["done", "done", "done", "done"], "{file}");
    assert!(
        file["model"]
            .as_str()
            .is_some_and(|model| !model.is_empty()),
        "the model measured is named"
    );
    // The ruler's decode rate comes from the server's own counts.
    assert!(stdout.contains("decode per stream"), "{stdout}");
    assert!(
        file["totals"]
            .as_array()
            .is_some_and(|rows| rows.iter().any(|row| row["dimension"] == "total")),
        "{file}"
    );
}

/// The bundled seed-000 study, scaled, against a real `llama-server` with a projector: every
/// dimension (images, video, output lengths, parallel requests, context, reasoning, tools) with
/// one command, thinking off in every request.
#[test]
fn the_seed_000_study_runs_scaled_against_a_real_llama_server() {
    let test = "the_seed_000_study_runs_scaled_against_a_real_llama_server";
    let Some(mmproj) = llama_server::locate_mmproj(test) else {
        return;
    };
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
            "--mmproj",
            &mmproj,
        ],
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("seed-000");
    let base_url = format!("http://127.0.0.1:{}", server.port);
    let run = crate::study::run_bundled("seed-000", Some(&base_url), &out);
    let stdout = succeeded(&run);
    let file = read_json(&out.join("battery.json"));
    let parts = file["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 7);
    assert!(
        parts.iter().all(|part| part["status"] == "done"),
        "every part done: {file}"
    );
    let dimensions: Vec<&str> = file["totals"]
        .as_array()
        .expect("totals")
        .iter()
        .filter_map(|row| row["dimension"].as_str())
        .collect();
    for wanted in ["vision", "video", "context", "math", "tools", "total"] {
        assert!(dimensions.contains(&wanted), "{wanted} in {dimensions:?}");
    }
    assert!(stdout.contains("time:"), "{stdout}");
}
