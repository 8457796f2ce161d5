//! `battery tune` end to end: simulators launched with configurations whose speed and
//! capacity are known from the simulator's timing model (the winner, the front and the
//! capacities checked against that truth, the rounds' order against the journal), a
//! configuration that cannot start and one that dies under load, and a real `llama-server`
//! at two thread counts, interrupted and resumed.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use vernier_test_support::{free_port, launch_command, llama_server};

use crate::{battery, read_json, succeeded, text};

/// The simulator in a process of its own (this test binary, run again) with `args`.
fn sim(args: &str) -> String {
    launch_command("launch::serve_simulator_when_asked", args, 0, 0)
}

/// A study of one sweep part: prose prompts of 64 tokens, 24 output tokens, at `loads`.
fn study(dir: &Path, port: u16, loads: &str, reps: u32) -> std::path::PathBuf {
    let path = dir.join("study.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"tune\"\n[target]\nbase-url = \"http://127.0.0.1:{port}\"\n\n[[part]]\nkind = \"sweep\"\nname = \"speed\"\nworkload = [\"prose\"]\nprompt-tokens = [64]\noutput-tokens = [24]\nconcurrency = [{loads}]\nreps = {reps}\nwarmup = 0\n"
        ),
    )
    .expect("write the study");
    path
}

fn journal(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("tune.jsonl"))
        .expect("the tune's journal")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["event"] == event).collect()
}

fn config<'a>(analysis: &'a Value, name: &str) -> &'a Value {
    analysis["configs"]
        .as_array()
        .expect("configs")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {analysis}"))
}

/// The simulator's model (`vernier_sim::SimConfig`): a request waits for one of
/// `--max-num-seqs` slots; its first token comes after `--fixed-overhead-ms` (5) plus the
/// prompt at `--prefill-rate` (5000 tokens/s); each later token one decode step, the step
/// `d · (1 + k · (running − 1))`. Loads of 1, 4 and 16 streams sent at once: a load above the
/// slots queues a whole request (at least 23 steps, over 100 ms) before some first token, so
/// TTFT p90 ≤ 100 ms holds exactly at the loads within the slots. At a load within them,
/// every stream runs: per request 1000 / step tokens/s, together `load` times that.
struct Truth {
    name: &'static str,
    slots: u32,
    step_ms: f64,
}

const SLOWDOWN: f64 = 0.1;
const LOADS: [u32; 3] = [1, 4, 16];

impl Truth {
    fn capacity(&self) -> u32 {
        LOADS
            .into_iter()
            .filter(|load| *load <= self.slots)
            .max()
            .expect("a load within")
    }
    fn step(&self) -> f64 {
        self.step_ms * (1.0 + SLOWDOWN * f64::from(self.capacity() - 1))
    }
    /// Output tokens/s over a burst window: 24 tokens per request in overhead + prefill +
    /// 23 steps.
    fn goodput(&self) -> f64 {
        let request_ms = 5.0 + 64.0 / 5000.0 * 1000.0 + 23.0 * self.step();
        f64::from(self.capacity()) * 24.0 / (request_ms / 1000.0)
    }
    fn decode(&self) -> f64 {
        1000.0 / self.step()
    }
}

/// One configuration's capacity, goodput, decode rate and stated flag against its truth.
fn matches_truth(result: &Value, truth: &Truth) {
    assert_eq!(result["standing"], "meets", "{result}");
    assert_eq!(
        result["capacity"].as_f64(),
        Some(f64::from(truth.capacity())),
        "{result}"
    );
    let goodput = result["goodput"]["value"].as_f64().expect("goodput");
    assert!(
        (goodput / truth.goodput() - 1.0).abs() < 0.15,
        "{}: {goodput} against {}",
        truth.name,
        truth.goodput()
    );
    let decode = result["decode"]["value"].as_f64().expect("decode");
    assert!(
        (decode / truth.decode() - 1.0).abs() < 0.15,
        "{}: {decode} against {}",
        truth.name,
        truth.decode()
    );
    // The one flag that differs is stated by the server as asked.
    let seqs = result["stated"]
        .as_array()
        .expect("stated")
        .iter()
        .find(|s| s["flag"] == "--max-num-seqs")
        .expect("--max-num-seqs stated");
    assert_eq!(seqs["verdict"], "as asked", "{seqs}");
    assert_eq!(seqs["stated"], truth.slots.to_string(), "{seqs}");
}

/// The rounds in the journal: A B C D, then D C B A, each launched once, ready, stopped with
/// its port closed.
fn rounds_in_order(out: &Path, file: &Value) {
    let lines = journal(out);
    let launched: Vec<&str> = events(&lines, "launching")
        .iter()
        .filter_map(|line| line["config"].as_str())
        .collect();
    assert_eq!(
        launched,
        [
            "seqs1", "seqs4", "seqs16", "slow4", "slow4", "seqs16", "seqs4", "seqs1"
        ]
    );
    assert_eq!(events(&lines, "ready").len(), 8);
    for stopped in events(&lines, "stopped") {
        assert_eq!(stopped["port_closed"], true, "{stopped}");
    }
    for turn in file["turns"].as_array().expect("turns") {
        assert_eq!(turn["status"], "done", "{turn}");
        assert!(turn["ready_s"].as_f64().is_some(), "{turn}");
    }
}

/// `battery tune` of the simulators `truths` describe, with TTFT p90 ≤ 100 ms as its target:
/// what it printed.
fn tune_of(truths: &[Truth], port: u16, study: &Path, out: &Path) -> String {
    let configs: Vec<String> = truths
        .iter()
        .map(|t| {
            format!(
                "{}={}",
                t.name,
                sim(&format!(
                    "--port {port} --decode-step-ms {} --slowdown-per-running-request {SLOWDOWN} --max-num-seqs {}",
                    t.step_ms, t.slots
                ))
            )
        })
        .collect();
    let mut words = vec![
        "tune".to_owned(),
        "--study".to_owned(),
        study.display().to_string(),
        "--target".to_owned(),
        "ttft_p90<=100ms".to_owned(),
        "--quiet".to_owned(),
        "--out".to_owned(),
        out.display().to_string(),
    ];
    for config in &configs {
        words.push("--config".to_owned());
        words.push(config.clone());
    }
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    succeeded(&battery(&words))
}

#[test]
fn a_tune_names_the_configuration_the_simulators_truth_says_wins_with_its_front_and_rounds() {
    let port = free_port();
    let dir = tempfile::tempdir().expect("temporary folder");
    let study = study(dir.path(), port, "1, 4, 16", 3);
    let truths = [
        Truth {
            name: "seqs1",
            slots: 1,
            step_ms: 5.0,
        },
        Truth {
            name: "seqs4",
            slots: 4,
            step_ms: 5.0,
        },
        Truth {
            name: "seqs16",
            slots: 16,
            step_ms: 5.0,
        },
        Truth {
            name: "slow4",
            slots: 4,
            step_ms: 12.0,
        },
    ];
    let out = dir.path().join("tune");
    let stdout = tune_of(&truths, port, &study, &out);

    let file: Value = read_json(&out.join("tune.json"));
    let analysis = &file["analysis"];

    // The winner: the most goodput among the configurations meeting the target.
    let best = truths
        .iter()
        .max_by(|a, b| a.goodput().total_cmp(&b.goodput()))
        .expect("a best");
    assert_eq!(analysis["winner"], best.name, "{stdout}");
    assert!(
        analysis["verdict"]
            .as_str()
            .is_some_and(|v| v.starts_with(&format!("{} wins", best.name))),
        "{analysis}"
    );
    // The ranking follows the truth's goodput, each capacity the truth's, each goodput and
    // decode rate within 15% of the model's (the model ignores the ramp of a burst; a loaded machine slows a simulator a little).
    let mut by_truth: Vec<&Truth> = truths.iter().collect();
    by_truth.sort_by(|a, b| b.goodput().total_cmp(&a.goodput()));
    let ranked: Vec<&str> = analysis["configs"]
        .as_array()
        .expect("configs")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let expected: Vec<&str> = by_truth.iter().map(|t| t.name).collect();
    assert_eq!(ranked, expected, "{stdout}");
    for truth in &truths {
        matches_truth(config(analysis, truth.name), truth);
    }
    // Every pair is told apart (their goodputs differ by 40% or more).
    for pair in analysis["pairs"].as_array().expect("pairs") {
        assert_eq!(pair["distinguishable"], true, "{pair}");
    }
    // The front of goodput against per-request decode: the truth's own.
    let truth_front: BTreeSet<&str> = truths
        .iter()
        .filter(|p| {
            !truths
                .iter()
                .any(|q| q.name != p.name && q.decode() >= p.decode() && q.goodput() >= p.goodput())
        })
        .map(|t| t.name)
        .collect();
    assert_eq!(truth_front, BTreeSet::from(["seqs1", "seqs4", "seqs16"]));
    let front: BTreeSet<&str> = analysis["fronts"][0]["on_front"]
        .as_array()
        .expect("the front")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(front, truth_front, "{analysis}");
    rounds_in_order(&out, &file);
    let page = std::fs::read_to_string(out.join("tune.html")).expect("the page");
    assert!(
        page.contains("<svg") && page.contains("Pareto front"),
        "the front drawn"
    );
    assert!(out.join("tune.md").is_file());
}

#[test]
fn a_configuration_that_cannot_start_or_dies_under_load_is_ranked_last_with_its_evidence() {
    let port = free_port();
    let dir = tempfile::tempdir().expect("temporary folder");
    let study = study(dir.path(), port, "1, 4", 2);
    let out = dir.path().join("tune");
    let fine_config = format!("fine={}", sim(&format!("--port {port} --decode-step-ms 2")));
    // A flag the server does not know: it exits at once with its usage error.
    let refusing_config = format!("refuses={}", sim(&format!("--port {port} --no-such-flag")));
    // Four streams five tokens deep kill it at once (1000 crashes a second while they are):
    // the load of 4 does.
    let dying_config = format!(
        "dies={}",
        sim(&format!(
            "--port {port} --decode-step-ms 2 --crash-streams 4 --crash-depth 5 --crash-rate 1000"
        ))
    );
    let run = battery(&[
        "tune",
        "--study",
        study.to_str().expect("UTF-8"),
        "--config",
        &fine_config,
        "--config",
        &refusing_config,
        "--config",
        &dying_config,
        "--rounds",
        "1",
        "--target",
        "ttft_p90<=1s",
        "--quiet",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    let stdout = succeeded(&run);
    let file: Value = read_json(&out.join("tune.json"));
    let analysis = &file["analysis"];
    assert_eq!(analysis["winner"], "fine", "{stdout}");
    let ranked: Vec<(&str, &str)> = analysis["configs"]
        .as_array()
        .expect("configs")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or(""),
                c["standing"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        ranked,
        [
            ("fine", "meets"),
            ("dies", "crashed"),
            ("refuses", "failed_to_start")
        ],
        "{stdout}"
    );
    let death = &config(analysis, "refuses")["deaths"][0];
    assert!(
        death["detail"]
            .as_str()
            .is_some_and(|d| d.contains("exited")),
        "{death}"
    );
    assert!(
        death["log_tail"].as_array().is_some_and(|tail| tail
            .iter()
            .any(|l| l.as_str().is_some_and(|l| l.contains("no-such-flag")))),
        "the usage error kept: {death}"
    );
    let death = &config(analysis, "dies")["deaths"][0];
    assert_eq!(death["exit"], "exit status: 1", "{death}");
    assert!(death["since_ready_s"].as_f64().is_some(), "{death}");
    assert!(
        death["log_tail"].as_array().is_some_and(|tail| tail
            .iter()
            .any(|l| l.as_str().is_some_and(|l| l.contains("Xid")))),
        "the crash's own lines kept: {death}"
    );
    assert!(out.join(death["log"].as_str().expect("log")).is_file());
    // Its measured load of 1 is kept, not dropped: the study's part says what stopped it.
    assert!(
        death["part"]
            .as_str()
            .is_some_and(|p| p.starts_with("speed")),
        "{death}"
    );
    let statuses: Vec<&str> = file["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .filter_map(|t| t["status"].as_str())
        .collect();
    assert_eq!(statuses, ["done", "start_failed", "crashed"]);
    // Nothing answers on the port once the tune is over.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// Sends SIGINT to the tune once its first turn is over, and checks it stopped as an
/// interrupted run does: exit 130 and the command that continues it.
fn interrupt_after_first_turn(mut child: std::process::Child, out: &Path) {
    let began = Instant::now();
    while !out.join("tune.jsonl").is_file()
        || !events(&journal(out), "ended")
            .iter()
            .any(|e| e["status"] == "done")
    {
        assert!(
            began.elapsed() < Duration::from_secs(300),
            "the first turn never ended"
        );
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the tune ended before it was interrupted: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("send SIGINT");
    assert!(sent.success());
    let stopped = child.wait_with_output().expect("the tune stops");
    assert_eq!(
        stopped.status.code(),
        Some(130),
        "{}",
        text(&stopped.stderr)
    );
    assert!(
        text(&stopped.stderr).contains("tune --resume"),
        "{}",
        text(&stopped.stderr)
    );
}

/// llama.cpp shows no thread count: said, not guessed; its slots (`-np`) it states.
fn threads_unstated_slots_as_asked(result: &Value) {
    let threads = result["stated"]
        .as_array()
        .expect("stated")
        .iter()
        .find(|s| s["flag"] == "-t")
        .expect("-t read");
    assert_eq!(threads["verdict"], "not stated by the server", "{threads}");
    let slots = result["stated"]
        .as_array()
        .expect("stated")
        .iter()
        .find(|s| s["flag"] == "-np")
        .expect("-np read");
    assert_eq!(slots["verdict"], "as asked", "{slots}");
}

#[test]
fn a_tune_of_a_real_llama_server_at_two_thread_counts_resumes_without_relaunching_a_finished_turn()
{
    let test = "a_tune_of_a_real_llama_server_at_two_thread_counts_resumes_without_relaunching_a_finished_turn";
    let Some((server, model)) = llama_server::locate(test) else {
        return;
    };
    let port = free_port();
    let dir = tempfile::tempdir().expect("temporary folder");
    let study = dir.path().join("study.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"threads\"\n[target]\nbase-url = \"http://127.0.0.1:{port}\"\n\n[[part]]\nkind = \"sweep\"\nname = \"speed\"\nworkload = [\"prose\"]\nprompt-tokens = [128]\noutput-tokens = [16]\nconcurrency = [1]\nreps = 2\nwarmup = 0\n"
        ),
    )
    .expect("write the study");
    let command = |threads: u32| {
        format!(
            "threads{threads}='{server}' -m '{model}' --port {port} -t {threads} -c 1024 -np 1 --no-warmup"
        )
    };
    let out = dir.path().join("tune");
    let child = Command::new(env!("CARGO_BIN_EXE_battery"))
        .args([
            "tune",
            "--study",
            study.to_str().expect("UTF-8"),
            "--config",
            &command(1),
            "--config",
            &command(2),
            "--quiet",
            "--out",
            out.to_str().expect("UTF-8"),
        ])
        .env("VERNIER_STORE", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start battery tune");
    interrupt_after_first_turn(child, &out);
    // The interrupted tune left no server behind: the port closes (at once, or as a server
    // still loading lets go of it).
    let began = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "a server still answers on {port} after the interrupted tune ended"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let resumed = battery(&["tune", "--resume", out.to_str().expect("UTF-8"), "--quiet"]);
    let stdout = succeeded(&resumed);
    let lines = journal(&out);
    assert_eq!(events(&lines, "resumed").len(), 1);
    // The first turn was launched once: it is never relaunched.
    let first_turn_launches = events(&lines, "launching")
        .iter()
        .filter(|e| e["round"] == 1 && e["config"] == "threads1")
        .count();
    assert_eq!(first_turn_launches, 1, "{lines:?}");
    let file: Value = read_json(&out.join("tune.json"));
    for turn in file["turns"].as_array().expect("turns") {
        assert_eq!(turn["status"], "done", "{turn}");
        assert_eq!(turn["port_closed"], true, "{turn}");
    }
    let analysis = &file["analysis"];
    assert!(
        analysis["verdict"]
            .as_str()
            .is_some_and(|v| v.contains(" wins")),
        "{stdout}"
    );
    for name in ["threads1", "threads2"] {
        let result = config(analysis, name);
        assert_eq!(result["rounds_done"], 2, "{result}");
        assert!(
            result["goodput"]["value"].as_f64().is_some_and(|g| g > 0.0),
            "{result}"
        );
        threads_unstated_slots_as_asked(result);
    }
}

#[test]
fn a_grid_expands_to_its_product_lists_its_rounds_and_refuses_what_cannot_run() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let port = free_port();
    let study = study(dir.path(), port, "1", 1);
    let study = study.to_str().expect("UTF-8");
    let listed = battery(&[
        "tune",
        "--study",
        study,
        "--grid-base",
        "vllm serve m --port 8000",
        "--grid",
        "--max-num-seqs=8,32",
        "--grid",
        "--kv-cache-dtype=auto,fp8",
        "--rounds",
        "3",
        "--dry-run",
    ]);
    let stdout = succeeded(&listed);
    for (name, command) in [
        (
            "max-num-seqs=8,kv-cache-dtype=auto",
            "vllm serve m --port 8000 --max-num-seqs 8 --kv-cache-dtype auto",
        ),
        (
            "max-num-seqs=32,kv-cache-dtype=fp8",
            "vllm serve m --port 8000 --max-num-seqs 32 --kv-cache-dtype fp8",
        ),
    ] {
        assert!(
            stdout
                .lines()
                .any(|line| line.trim_start().starts_with(name) && line.ends_with(command)),
            "{name}: {stdout}"
        );
    }
    assert!(stdout.starts_with("4 configurations, 3 rounds"), "{stdout}");
    assert!(
        stdout.contains(
            "round 2: max-num-seqs=32,kv-cache-dtype=fp8 → max-num-seqs=32,kv-cache-dtype=auto → max-num-seqs=8,kv-cache-dtype=fp8 → max-num-seqs=8,kv-cache-dtype=auto"
        ),
        "{stdout}"
    );
    assert!(
        !dir.path().join("tune-out").exists(),
        "a dry run writes nothing"
    );
}

#[test]
fn a_tune_refuses_a_grid_over_its_cap_a_launching_study_and_a_pass_rate_without_a_suite() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let study = study(dir.path(), free_port(), "1", 1);
    let study = study.to_str().expect("UTF-8");
    // Over the cap: refused with its size, before anything starts.
    let over = battery(&[
        "tune",
        "--study",
        study,
        "--grid-base",
        "serve",
        "--grid",
        "--a=1,2,3",
        "--grid",
        "--b=1,2,3",
        "--max-configs",
        "8",
    ]);
    assert_eq!(over.status.code(), Some(2), "{}", text(&over.stderr));
    assert!(
        text(&over.stderr).contains("9 configurations"),
        "{}",
        text(&over.stderr)
    );
    // A study that launches its own server, and one with a part that does: each would fight
    // the configurations' servers for the port.
    for (name, text_of_study, words) in [
        (
            "launching.toml",
            "[target]\nbase-url = \"http://127.0.0.1:9\"\nlaunch = \"serve\"\n[[part]]\nkind = \"sweep\"\nname = \"s\"\n",
            "[target] launch",
        ),
        (
            "readying.toml",
            "[target]\nbase-url = \"http://127.0.0.1:9\"\n[[part]]\nkind = \"ready\"\nname = \"r\"\n",
            "launches a server of its own",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text_of_study).expect("write");
        let refused = battery(&[
            "tune",
            "--study",
            path.to_str().expect("UTF-8"),
            "--config",
            "a=serve -a",
            "--config",
            "b=serve -b",
        ]);
        assert_eq!(refused.status.code(), Some(2), "{name}");
        assert!(
            text(&refused.stderr).contains(words),
            "{name}: {}",
            text(&refused.stderr)
        );
    }
    // A dry run lists a new tune; it never continues one.
    let both = battery(&["tune", "--resume", study, "--dry-run"]);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both.stderr));
    let no_suite = battery(&[
        "tune",
        "--study",
        study,
        "--config",
        "a=serve -a",
        "--config",
        "b=serve -b",
        "--target",
        "pass_rate>=0.5",
    ]);
    assert_eq!(no_suite.status.code(), Some(2));
    assert!(
        text(&no_suite.stderr).contains("scored part"),
        "{}",
        text(&no_suite.stderr)
    );
}
