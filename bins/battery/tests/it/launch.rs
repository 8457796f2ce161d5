//! `--launch`: time to ready measured first, then the server started once more for the other
//! parts and stopped at the end. The server is the simulator in a process of its own: this very
//! test binary, run again by `vernier_test_support::launch_command`.

use crate::{battery, battery_json, read_json, succeeded, text, versus};

use vernier_test_support::free_port;

vernier_test_support::simulator_entry_point!();

#[test]
fn a_launched_server_is_timed_to_ready_then_measured_then_stopped() {
    let port = free_port();
    // A start that takes a moment, as a real server's does.
    let launch = vernier_test_support::launch_command(
        "launch::serve_simulator_when_asked",
        &format!("--port {port} --decode-step-ms 1"),
        200,
        0,
    );
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("launched");
    let base_url = format!("http://127.0.0.1:{port}");
    let run = battery(&[
        "run",
        "--base-url",
        &base_url,
        "--launch",
        &launch,
        "--ready-reps",
        "2",
        "--preset",
        "quick",
        "--prompt-tokens",
        "64",
        "--reps",
        "2",
        "--concurrency",
        "2",
        "--suite-tasks",
        "crt",
        "--suite-budget",
        "64",
        "--quiet",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    succeeded(&run);
    let index = battery_json(&out);
    let names: Vec<&str> = index["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter_map(|part| part["part"].as_str())
        .collect();
    assert_eq!(names, ["ready", "sweep", "suite"], "ready comes first");
    for part in index["parts"].as_array().expect("parts") {
        assert_eq!(part["status"], "done", "{part}");
    }
    let ready: serde_json::Value = read_json(&out.join("ready/run.json"));
    assert_eq!(ready["complete_reps"], 2, "{ready}");
    assert!(
        ready["milestones"]["first_token_s"]["median"].as_f64() > Some(0.2),
        "{ready}"
    );
    // The server the other parts measured was stopped at the end.
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the launched server still answers"
    );
    assert!(out.join("server.log").is_file());
    // The head-to-head puts time to ready first among the figures.
    let versus_out = dir.path().join("v");
    let compared = versus(&out, &out, &versus_out);
    let table = succeeded(&compared);
    assert!(
        table.contains("time to ready: launch → first token, s (medians of 2 and 2 launches)"),
        "{table}"
    );
    // A lone `lifecycle ready` run (the battery's ready folder is one) compares on its own.
    let lone = versus(
        &out.join("ready"),
        &out.join("ready"),
        &dir.path().join("v2"),
    );
    let lone_table = text(&lone.stdout);
    assert_eq!(lone.status.code(), Some(0), "{}", text(&lone.stderr));
    assert!(
        lone_table.contains("time to ready: launch → health 200, s"),
        "{lone_table}"
    );
    let markdown = std::fs::read_to_string(dir.path().join("v2/versus.md")).expect("versus.md");
    assert!(
        markdown.contains("not compared: speed: neither side has a sweep"),
        "{markdown}"
    );
}

/// A launch onto a port something already answers on is refused before anything runs (the
/// battery would measure that server instead), naming the address; nothing is written.
#[test]
fn a_launch_onto_a_port_already_taken_is_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("taken");
    let run = battery(&[
        "run",
        "--base-url",
        &format!("http://127.0.0.1:{port}"),
        "--launch",
        "sleep 30",
        "--preset",
        "quick",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("something already answers at 127.0.0.1:{port}")),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written for a refused launch");
    drop(listener);
}
