//! The `lifecycle` binary as a user runs it: exit codes, stdout, and Ctrl-C during `ready`.

use std::process::{Command, Stdio};
use std::time::Duration;

use vernier_sim::{Sim, SimConfig};

mod fault_matrix;
mod ports {
    pub(crate) use vernier_test_support::free_port;
}
mod progress;
mod resume;
mod soak;

fn lifecycle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lifecycle"))
}

use crate::ports::free_port;

#[test]
fn bad_flags_and_bad_settings_exit_with_usage() {
    let output = lifecycle().arg("no-such-subcommand").output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    let folder = tempfile::tempdir().expect("tempdir");
    let output = lifecycle()
        .args(["ready", "--launch", "true", "--reps", "0", "--out"])
        .arg(folder.path().join("run"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error: failed to use --reps"), "{stderr}");
}

#[test]
fn a_server_that_never_becomes_ready_exits_with_failure() {
    let folder = tempfile::tempdir().expect("tempdir");
    let output = lifecycle()
        .args([
            "ready",
            "--launch",
            "echo broken >&2; exit 3",
            "--reps",
            "1",
            "--quiet",
        ])
        .args(["--base-url", &format!("http://127.0.0.1:{}", free_port())])
        .arg("--out")
        .arg(folder.path().join("run"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("# Time to ready"), "{stdout}");
    assert!(stdout.contains("exited"), "{stdout}");
    assert!(folder.path().join("run/logs/rep-1.log").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_of_a_healthy_server_succeeds_and_prints_json_lines() {
    let sim = Sim::start(SimConfig::default()).await.expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("watch");
    let base_url = sim.base_url();
    let output = tokio::task::spawn_blocking(move || {
        lifecycle()
            .args(["watch", "--base-url", &base_url, "--max-probes", "2"])
            .args(["--interval", "0.1", "--timeout", "5", "--settle", "0.1"])
            .arg("--out")
            .arg(&out)
            .output()
            .expect("run")
    })
    .await
    .expect("join");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every stdout line is JSON"))
        .collect();
    assert_eq!(lines[0]["type"], "start");
    assert_eq!(lines[0]["counter"], "vllm:generation_tokens_total");
    let probes = lines.iter().filter(|line| line["type"] == "probe").count();
    assert_eq!(probes, 2);
    assert_eq!(
        lines.last().map(|line| line["type"].clone()),
        Some("stop".into())
    );
    assert!(folder.path().join("watch/watch.jsonl").exists());
}

#[test]
fn ctrl_c_during_ready_stops_the_server_and_exits_130() {
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("run");
    // A "server" that never opens its port, with a child of its own.
    let mut child = lifecycle()
        .args([
            "ready",
            "--launch",
            "sleep 60 & sleep 60",
            "--reps",
            "2",
            "--quiet",
        ])
        .args(["--base-url", &format!("http://127.0.0.1:{}", free_port())])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(800));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    let journal = std::fs::read_to_string(out.join("journal.jsonl")).expect("journal");
    let launch: serde_json::Value = journal
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
        .find(|line| line["type"] == "launch")
        .expect("the interrupted repetition is journalled");
    assert_eq!(launch["interrupted"], true);
    let pgid = u32::try_from(launch["pgid"].as_u64().expect("pgid")).expect("u32");
    assert!(
        !vernier_lifecycle::group_alive(pgid),
        "the launched process group outlived Ctrl-C"
    );
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read as _;
        let _ = pipe.read_to_string(&mut stderr);
    }
    assert!(stderr.contains("--resume"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_ends_a_watch_cleanly() {
    let sim = Sim::start(SimConfig::default()).await.expect("simulator");
    let folder = tempfile::tempdir().expect("tempdir");
    let child = lifecycle()
        .args(["watch", "--base-url", &sim.base_url(), "--interval", "0.1"])
        .arg("--out")
        .arg(folder.path().join("watch"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let output = tokio::task::spawn_blocking(move || {
        std::thread::sleep(Duration::from_millis(600));
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        child.wait_with_output().expect("wait")
    })
    .await
    .expect("join");
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("a line")).expect("JSON");
    assert_eq!(last["type"], "stop");
    assert_eq!(last["reason"], "interrupted");
}

#[test]
fn help_groups_the_flags_and_shows_examples() {
    let help = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_lifecycle"))
            .args(args)
            .output()
            .expect("run lifecycle --help");
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let top = help(&["--help"]);
    assert!(top.lines().any(|l| l == "Examples:"), "{top}");
    let watch = help(&["watch", "--help"]);
    for heading in ["Server:", "Probes:", "Actions:", "Output:"] {
        assert!(
            watch.lines().any(|l| l == heading),
            "no {heading} in {watch}"
        );
    }
    let ready = help(&["ready", "--help"]);
    for heading in ["Server:", "Measurement:", "Output:"] {
        assert!(
            ready.lines().any(|l| l == heading),
            "no {heading} in {ready}"
        );
    }
}

/// One default server address: `ready`, `watch` and `soak` without `--base-url` point at the same
/// server (before, `ready` defaulted to port 8080 and `watch` to 8000), and `--help` says which.
#[test]
fn ready_and_watch_default_to_one_server_address() {
    let defaults: Vec<String> = ["ready", "watch", "soak"]
        .into_iter()
        .map(|command| {
            let cli = lifecycle::Cli::parse_from(["lifecycle", command]);
            match cli.command {
                lifecycle::Command::Ready(args) => args.server.base_url.unwrap_or_default(),
                lifecycle::Command::Watch(args) => args.server.base_url.unwrap_or_default(),
                lifecycle::Command::Soak(args) => args.server.base_url.unwrap_or_default(),
                lifecycle::Command::Completions { .. } => unreachable!("not asked for"),
            }
        })
        .collect();
    assert_eq!(defaults, ["http://127.0.0.1:8000"; 3]);
    for command in ["ready", "watch", "soak"] {
        let help = lifecycle().args([command, "--help"]).output().expect("run");
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(
            text.contains("[default: http://127.0.0.1:8000]"),
            "{command}: {text}"
        );
    }
}

#[test]
fn a_launch_onto_a_port_something_answers_on_is_refused() {
    // Before the fix the run measured the listener as "ready in 0.00 s".
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let folder = tempfile::tempdir().expect("tempdir");
    let output = lifecycle()
        .args(["ready", "--launch", "sleep 30", "--reps", "1", "--quiet"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}")])
        .arg("--out")
        .arg(folder.path().join("run"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("something already answers at 127.0.0.1:{port}")),
        "{stderr}"
    );
}

/// `sleep DURATION` processes (not zombies), by pid.
fn sleeping(duration: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(command) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let words: Vec<&[u8]> = command.split(|b| *b == 0).collect();
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        });
        if words.len() >= 2
            && words[0].ends_with(b"sleep")
            && words[1] == duration.as_bytes()
            && !zombie
        {
            found.push(name);
        }
    }
    found
}

#[test]
fn a_kill_9_of_lifecycle_leaves_no_launched_server_behind() {
    // A duration no other process uses, so the test finds only its own server's `sleep`.
    let duration = format!("{}.{}", 900 + std::process::id() % 97, std::process::id());
    let folder = tempfile::tempdir().expect("tempdir");
    let mut child = lifecycle()
        .args([
            "ready",
            "--launch",
            &format!("sleep {duration}; echo done"),
            "--reps",
            "1",
            "--quiet",
        ])
        .args(["--base-url", &format!("http://127.0.0.1:{}", free_port())])
        .arg("--out")
        .arg(folder.path().join("run"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while sleeping(&duration).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !sleeping(&duration).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the launched server outlived its killed parent: {:?}",
            sleeping(&duration)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
