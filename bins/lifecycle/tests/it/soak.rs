//! `lifecycle soak` against launched simulators with the crash fault: every death recorded with
//! the requests in flight and their depths (checked against the simulator's own scheduler
//! dump), relaunches, a configuration that cannot reach the crash, interleaved slices, resume.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::ports::free_port;
use std::time::Duration;

use clap::Parser as _;
use vernier_lifecycle::{DeathKind, DeathRecord, SoakJournalLine, SoakRun, read_soak_journal};

/// Not a test of its own: serves the simulator with the arguments in `VERNIER_SOAK_SIM`
/// (whitespace-separated), and on a crash writes the crash's log lines and exits 1, as the
/// `vernier-sim-server` binary does.
#[test]
fn serve_crashing_sim_when_asked() {
    let Ok(spec) = std::env::var("VERNIER_SOAK_SIM") else {
        return;
    };
    let words = std::iter::once("vernier-sim-server").chain(spec.split_whitespace());
    let args = vernier_sim_server::Args::parse_from(words);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let crash = runtime
        .block_on(vernier_sim_server::run(
            &args,
            |_| {},
            std::future::pending(),
        ))
        .expect("serve the simulator");
    if let Some(crash) = crash {
        for line in crash.log_lines() {
            vernier_cli::note(&line);
        }
        std::process::exit(1);
    }
}

/// The launch command of a simulator on `port` with `extra` arguments.
fn sim_launch(port: u16, extra: &str) -> String {
    let exe = std::env::current_exe().expect("the test binary's path");
    format!(
        "VERNIER_SOAK_SIM='--port {port} --decode-step-ms 2 --fixed-overhead-ms 1 {extra}' exec '{}' --exact soak::serve_crashing_sim_when_asked --nocapture",
        exe.display()
    )
}

fn soak(words: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lifecycle"))
        .arg("soak")
        .args(words)
        .stdin(Stdio::null())
        .output()
        .expect("run lifecycle soak")
}

/// `soak` against the server launched on `port`, into `out`, with `flags` and the quick watch
/// every test here uses.
fn soak_at(port: u16, out: &Path, flags: &[&str]) -> std::process::Output {
    let base_url = format!("http://127.0.0.1:{port}");
    let out = out.display().to_string();
    let watch = [
        "--probe-interval",
        "0.2",
        "--stop-grace",
        "2",
        "--ready-timeout",
        "30",
    ];
    soak(&words(
        &[flags, &watch, &["--base-url", &base_url, "--out", &out]].concat(),
    ))
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

fn run_file(out: &Path) -> SoakRun {
    let text = std::fs::read_to_string(out.join("run.json")).expect("run.json");
    serde_json::from_str(&text).expect("run.json parses")
}

fn deaths(out: &Path) -> Vec<DeathRecord> {
    read_soak_journal(&out.join("journal.jsonl"))
        .expect("journal")
        .into_iter()
        .filter_map(|line| match line {
            SoakJournalLine::Death(record) => Some(*record),
            _ => None,
        })
        .collect()
}

/// The simulator's own account of a crash, from the dump line in the death's log tail.
fn dump_depths(death: &DeathRecord) -> Vec<u64> {
    let log = death
        .log
        .as_ref()
        .expect("a launched server's death keeps its log");
    let line = log
        .tail
        .iter()
        .find_map(|line| line.strip_prefix("vernier-sim scheduler dump: "))
        .unwrap_or_else(|| panic!("no scheduler dump in the log tail: {:?}", log.tail));
    let dump: serde_json::Value = serde_json::from_str(line).expect("the dump is JSON");
    let mut depths: Vec<u64> = dump["streams"]
        .as_array()
        .expect("streams")
        .iter()
        .filter_map(|s| s["tokens"].as_u64())
        .collect();
    depths.sort_unstable();
    depths
}

#[test]
fn every_death_is_recorded_with_its_in_flight_requests_and_the_soak_goes_on() {
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("soak");
    let port = free_port();
    // Three streams each 40 tokens deep kill the server, five times a second while that holds.
    let launch = sim_launch(port, "--crash-streams 3 --crash-depth 40 --crash-rate 5");
    let output = soak_at(
        port,
        &out,
        &[
            "--launch",
            &launch,
            "--concurrency",
            "3",
            "--max-tokens",
            "2000",
            "--duration",
            "5s",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let deaths = deaths(&out);
    assert!(
        deaths.len() >= 2,
        "expected several deaths in 5 s: {stderr}"
    );
    for death in &deaths {
        assert!(
            matches!(death.how, DeathKind::Exit { ref status, .. } if status.contains('1')),
            "{:?}",
            death.how
        );
        // Every slot was taken, each stream at least the crash's depth: as the simulator's
        // scheduler dump says, request for request.
        assert_eq!(death.in_flight.len(), 3, "{death:?}");
        let mut recorded: Vec<u64> = death.in_flight.iter().map(|r| r.tokens).collect();
        recorded.sort_unstable();
        let dumped = dump_depths(death);
        assert_eq!(dumped.len(), 3, "{dumped:?}");
        for (ours, theirs) in recorded.iter().zip(&dumped) {
            assert!(*theirs >= 40, "{dumped:?}");
            // No token leaves after the dump, but the last events counted in it may still be in
            // the server's write buffer when the crash cuts the connection: a few fewer at most.
            assert!(
                (theirs.saturating_sub(3)..=*theirs).contains(ours),
                "recorded depths {recorded:?}, the simulator's {dumped:?}"
            );
        }
        for request in &death.in_flight {
            assert_eq!(request.token_source, "server usage");
            assert_eq!(request.settings["max_tokens"], 2000);
            assert_eq!(request.settings["ignore_eos"], true);
        }
        let log = death.log.as_ref().expect("log");
        let markers: Vec<&str> = log.markers.iter().map(|m| m.marker.as_str()).collect();
        assert!(
            markers.contains(&"Xid") && markers.contains(&"illegal memory access"),
            "{markers:?}"
        );
    }
    let run = run_file(&out);
    let arm = &run.arms[0];
    assert_eq!(arm.deaths, deaths.len());
    // The load was held for its duration, relaunches not counted.
    assert!((arm.loaded_s - 5.0).abs() < 0.5, "{}", arm.loaded_s);
    let pattern = arm.pattern.as_ref().expect("a pattern");
    assert_eq!(pattern.all_slots_full, deaths.len());
    assert!(pattern.depth_min >= 40);
    let launched = read_soak_journal(&out.join("journal.jsonl"))
        .expect("journal")
        .into_iter()
        .filter(|line| matches!(line, SoakJournalLine::Launched { .. }))
        .count();
    // One launch, then one per death, but after a death within half a second of the end.
    let last = deaths.last().expect("a death");
    let relaunched_after_last = 5.0 - last.loaded_s >= 0.5;
    assert_eq!(
        launched,
        deaths.len() + usize::from(relaunched_after_last),
        "launches against deaths"
    );
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("every slot of 3 was taken"), "{report}");
}

#[test]
fn a_configuration_that_cannot_reach_the_crash_records_no_death_and_slices_interleave() {
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("soak");
    let port = free_port();
    let crash = "--crash-streams 3 --crash-depth 30 --crash-rate 20";
    let four = sim_launch(port, &format!("{crash} --max-num-seqs 4"));
    let two = sim_launch(port, &format!("{crash} --max-num-seqs 2"));
    let output = soak_at(
        port,
        &out,
        &[
            "--config",
            &format!("four={four}"),
            "--config",
            &format!("two={two}"),
            "--concurrency",
            "3",
            "--max-tokens",
            "2000",
            "--duration",
            "3s",
            "--round",
            "1.5s",
            "--hang-after",
            "30",
            "--quiet",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let run = run_file(&out);
    let (four, two) = (&run.arms[0], &run.arms[1]);
    assert!(four.deaths >= 1, "{stderr}");
    assert_eq!(two.deaths, 0, "two slots never hold three deep streams");
    for arm in [four, two] {
        assert!(
            (arm.loaded_s - 3.0).abs() < 0.5,
            "{}: {}",
            arm.name,
            arm.loaded_s
        );
    }
    // Requests beyond the two slots wait; they run or stop at the slice's end, never fail.
    assert!(two.tokens > 0 && two.requests_failed == 0, "{two:?}");
    let order: Vec<String> = read_soak_journal(&out.join("journal.jsonl"))
        .expect("journal")
        .into_iter()
        .filter_map(|line| match line {
            SoakJournalLine::SliceStart { arm, .. } => Some(arm),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["four", "two", "two", "four"]);
    assert_eq!(run.comparisons.len(), 1);
    assert!(
        run.comparisons[0].verdict.contains("four"),
        "{:?}",
        run.comparisons
    );
}

#[test]
fn an_interrupted_soak_resumes_with_the_time_already_spent() {
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("soak");
    let port = free_port();
    let launch = sim_launch(port, "");
    let base_url = format!("http://127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_lifecycle"))
        .args(["soak", "--launch", &launch, "--base-url", &base_url])
        .args([
            "--concurrency",
            "2",
            "--max-tokens",
            "300",
            "--duration",
            "4s",
        ])
        .args([
            "--probe-interval",
            "0.2",
            "--stop-grace",
            "2",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start soak");
    // Wait until the load runs, then Ctrl-C.
    let journal = out.join("journal.jsonl");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        if text.contains("\"type\":\"ready\"") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the soak never got ready"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let output = child.wait_with_output().expect("soak ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    let held = run_file(&out).arms[0].loaded_s;
    assert!(held > 1.0 && held < 3.5, "{held}");
    // Resumed: only the rest is held, and a flag that changes the load is refused.
    let refused = soak(&words(&[
        "--resume",
        &out.display().to_string(),
        "--concurrency",
        "3",
    ]));
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--concurrency"));
    let resumed = soak(&words(&["--resume", &out.display().to_string(), "--quiet"]));
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(0), "{stderr}");
    let run = run_file(&out);
    assert!(
        (run.arms[0].loaded_s - 4.0).abs() < 0.5,
        "{}",
        run.arms[0].loaded_s
    );
    assert!(!run.interrupted);
}

#[test]
fn the_same_configuration_at_two_concurrencies_dies_only_at_the_higher() {
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("soak");
    let port = free_port();
    let launch = sim_launch(port, "--crash-streams 3 --crash-depth 30 --crash-rate 20");
    let output = soak_at(
        port,
        &out,
        &[
            "--launch",
            &launch,
            "--concurrency",
            "2,4",
            "--max-tokens",
            "2000",
            "--duration",
            "2s",
            "--quiet",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let run = run_file(&out);
    let names: Vec<&str> = run.arms.iter().map(|arm| arm.name.as_str()).collect();
    assert_eq!(names, ["default c=2", "default c=4"]);
    assert_eq!(
        run.arms[0].deaths, 0,
        "two requests never make three deep streams"
    );
    assert!(run.arms[1].deaths >= 1);
    for death in &run.deaths {
        assert_eq!(death.arm, "default c=4");
        assert_eq!(death.concurrency, 4);
        // Four in flight, at least three of them past the crash's depth.
        assert_eq!(death.in_flight.len(), 4);
        assert!(death.in_flight.iter().filter(|r| r.tokens >= 30).count() >= 3);
    }
}
