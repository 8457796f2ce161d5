//! Shards: four `sweep --shard I/4` processes against one simulator, started together at one
//! instant, merged with `sweep merge`, against one process sending the same load; and a merge
//! that lacks a shard, or holds one of another configuration, judged invalid.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use vernier_sim::SimConfig;

use crate::support::{journal_values, start_sim};

const SWEEP: &str = env!("CARGO_BIN_EXE_sweep");

/// The open-loop tolerance this test holds every shard to: a request's first byte within
/// 20 ms of its scheduled instant at the 99th percentile. The single-client goal on an idle
/// machine is 1 ms (the `open_loop` benchmark); here five sweep processes, the simulator and
/// other tests share two cores.
const LATE_P99_MS: f64 = 20.0;

/// The load both runs send: 40 requests a second for 3 s, three repetitions, one seed.
fn load(base_url: &str) -> Vec<String> {
    [
        "--base-url",
        base_url,
        "--rate",
        "40",
        "--duration",
        "3",
        "--reps",
        "3",
        "--warmup",
        "1",
        "--prompt-tokens",
        "64",
        "--output-tokens",
        "16",
        "--workload",
        "prose",
        "--seed",
        "7",
        "--quiet",
        "--shard-gap",
        "1",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn sweep(args: &[String]) -> std::process::Child {
    Command::new(SWEEP)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start sweep")
}

fn finished(child: std::process::Child, what: &str) -> Output {
    let output = child.wait_with_output().expect("wait for sweep");
    assert!(
        output.status.success(),
        "{what} failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn run_file(folder: &Path) -> Value {
    let text = std::fs::read_to_string(folder.join("run.json")).expect("read run.json");
    serde_json::from_str(&text).expect("run.json is JSON")
}

/// Per measured repetition: each request's stream (its place in the schedule) and its
/// scheduled instant from the repetition's first, ns.
fn schedules(journal: &Path) -> BTreeMap<u64, BTreeMap<u64, i64>> {
    let mut reps: BTreeMap<u64, BTreeMap<u64, i64>> = BTreeMap::new();
    for line in journal_values(journal) {
        if line["type"] == "attempt" && line["phase"] == "measured" && line["status"] == "ok" {
            let at = line["timeline"]["scheduled_unix_ns"]
                .as_i64()
                .expect("scheduled");
            reps.entry(line["rep"].as_u64().expect("rep"))
                .or_default()
                .insert(line["stream"].as_u64().expect("stream"), at);
        }
    }
    for rep in reps.values_mut() {
        let first = rep
            .get(&0)
            .copied()
            .expect("arrival 0 is in every repetition");
        for at in rep.values_mut() {
            *at -= first;
        }
    }
    reps
}

/// Whether two 95% intervals `[low, high]` overlap.
fn overlap(a: &Value, b: &Value) -> bool {
    let (a_low, a_high) = (
        a["low"].as_f64().expect("low"),
        a["high"].as_f64().expect("high"),
    );
    let (b_low, b_high) = (
        b["low"].as_f64().expect("low"),
        b["high"].as_f64().expect("high"),
    );
    a_low <= b_high && b_low <= a_high
}

fn reasons(run: &Value) -> String {
    run["validity"]["reasons"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_shards_merged_match_one_process_at_the_same_rate() {
    let sim = start_sim(SimConfig::default()).await;
    let base_url = sim.base_url().to_owned();
    let dir = tempfile::tempdir().expect("temporary folder");
    let folder = |name: &str| dir.path().join(name);
    let (single, merged) = (folder("single"), folder("merged"));
    let shards: Vec<PathBuf> = (0..4).map(|i| folder(&format!("shard-{i}"))).collect();
    let jobs = {
        let (base_url, single, shards, merged) = (
            base_url.clone(),
            single.clone(),
            shards.clone(),
            merged.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let mut one = load(&base_url);
            one.extend(["--out".to_owned(), single.display().to_string()]);
            finished(sweep(&one), "the one-process run");
            // Every shard waits for one instant, far enough ahead for their set-up.
            let start = vernier_run::rfc3339_ms(vernier_run::unix_ms() + 12_000);
            let children: Vec<_> = shards
                .iter()
                .enumerate()
                .map(|(i, out)| {
                    let mut args = load(&base_url);
                    args.extend([
                        "--shard".to_owned(),
                        format!("{i}/4"),
                        "--start-at".to_owned(),
                        start.clone(),
                        "--out".to_owned(),
                        out.display().to_string(),
                    ]);
                    sweep(&args)
                })
                .collect();
            for (i, child) in children.into_iter().enumerate() {
                finished(child, &format!("shard {i}"));
            }
            let mut merge = vec!["merge".to_owned(), merged.display().to_string()];
            merge.extend(shards.iter().map(|s| s.display().to_string()));
            finished(sweep(&merge), "sweep merge")
        })
    };
    let merge_output = jobs.await.expect("the runs");
    let table = String::from_utf8_lossy(&merge_output.stdout);
    assert!(table.contains("shard 3/4:"), "{table}");
    let (one, all) = (run_file(&single), run_file(&merged));
    assert_eq!(all["validity"]["verdict"], "valid", "{}", reasons(&all));
    assert_eq!(all["shards"]["count"], 4);
    assert_eq!(all["shards"]["merged"], true);

    // The union of the shards' schedules is the one-process schedule: the same arrivals in
    // every repetition, at the same offsets (each process anchors its wall clock once, so the
    // instants agree to well under a millisecond).
    let (a, b) = (
        schedules(&single.join("journal.jsonl")),
        schedules(&merged.join("journal.jsonl")),
    );
    assert_eq!(a.len(), 3);
    for (rep, arrivals) in &a {
        let merged_arrivals = &b[rep];
        assert_eq!(
            arrivals.keys().collect::<Vec<_>>(),
            merged_arrivals.keys().collect::<Vec<_>>(),
            "repetition {rep}: the shards sent other arrivals than the one process"
        );
        for (stream, offset) in arrivals {
            let apart = (offset - merged_arrivals[stream]).abs();
            assert!(
                apart < 1_000_000,
                "rep {rep} arrival {stream}: {apart} ns apart"
            );
        }
    }
    // Every shard sent its share, on time, and the shares add up.
    let mut total = 0;
    for shard in all["shards"]["shards"].as_array().expect("shards") {
        let index = shard["index"].as_u64().expect("index");
        let late = shard["lateness"]["p99_ms"].as_f64().expect("lateness");
        assert!(late <= LATE_P99_MS, "shard {index}: p99 {late} ms late");
        assert!(shard["start"]["clock"]["offset_ms"].is_number(), "{shard}");
        assert_eq!(shard["complete"], true);
        total += shard["n_ok"].as_u64().expect("n_ok");
    }
    let (cell_one, cell_all) = (&one["cells"][0], &all["cells"][0]);
    assert_eq!(cell_all["n_ok"], cell_one["n_ok"]);
    assert_eq!(Some(total), cell_one["n_ok"].as_u64());
    // The figures agree within their own intervals: aggregate output and request rates over
    // each repetition's window (the union of the shards'), TTFT and decode rate medians.
    for figure in ["output_tokens_per_s", "requests_per_s"] {
        let (x, y) = (
            &cell_one["aggregate"]["interval_95"][figure],
            &cell_all["aggregate"]["interval_95"][figure],
        );
        assert!(overlap(x, y), "{figure}: one process {x}, merged {y}");
    }
    for figure in ["ttft_ms", "decode_tokens_per_s"] {
        let (x, y) = (
            &cell_one["median_interval_95"][figure],
            &cell_all["median_interval_95"][figure],
        );
        assert!(overlap(x, y), "{figure}: one process {x}, merged {y}");
    }

    // Without shard 3 the merged run is invalid, and says which shard is missing.
    let partial = folder("partial");
    let status = Command::new(SWEEP)
        .arg("merge")
        .arg(&partial)
        .args(&shards[..3])
        .output()
        .expect("merge three");
    assert!(status.status.success());
    let run = run_file(&partial);
    assert_eq!(run["validity"]["verdict"], "invalid");
    assert!(
        reasons(&run).contains("shard 3 of 4 is missing"),
        "{}",
        reasons(&run)
    );
    assert!(
        std::fs::read_to_string(partial.join("report.md"))
            .expect("report")
            .contains("| 3 | **missing** |")
    );

    // A shard of another configuration (its journal says 5 repetitions) is left out, named.
    let stranger = folder("stranger");
    std::fs::create_dir_all(&stranger).expect("folder");
    let journal = std::fs::read_to_string(shards[3].join("journal.jsonl")).expect("journal");
    let (header, rest) = journal.split_once('\n').expect("a header line");
    let mut header: Value = serde_json::from_str(header).expect("header");
    header["config"]["reps"] = Value::from(5);
    std::fs::write(stranger.join("journal.jsonl"), format!("{header}\n{rest}")).expect("write");
    let mixed = folder("mixed");
    let output = Command::new(SWEEP)
        .arg("merge")
        .arg(&mixed)
        .args(&shards[..3])
        .arg(&stranger)
        .output()
        .expect("merge");
    assert!(output.status.success());
    let run = run_file(&mixed);
    assert_eq!(run["validity"]["verdict"], "invalid");
    let why = reasons(&run);
    assert!(
        why.contains("ran another configuration: reps: journal 3, now 5"),
        "{why}"
    );
    assert!(why.contains("shard 3 of 4 is missing"), "{why}");
    sim.shutdown().await;
}

#[test]
fn loads_shards_cannot_split_and_a_private_simulator_are_refused() {
    let refused = |args: &[&str], flag: &str| {
        let output = Command::new(SWEEP).args(args).output().expect("run sweep");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
        stderr.into_owned()
    };
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("out").display().to_string();
    let why = refused(&["--shard", "0/4", "--out", &out], "--shard");
    assert!(why.contains("barrier"), "{why}");
    let why = refused(
        &[
            "--shard",
            "0/4",
            "--rate",
            "4",
            "--duration",
            "2",
            "--out",
            &out,
        ],
        "--shard",
    );
    assert!(why.contains("vernier-sim-server"), "{why}");
    refused(&["--shard", "4/4", "--out", &out], "--shard");
    refused(
        &[
            "--start-at",
            "2026-12-04T18:00:00Z",
            "--rate",
            "4",
            "--duration",
            "2",
            "--out",
            &out,
        ],
        "--start-at",
    );
    refused(
        &["--shard", "0/2", "--start-at", "tomorrow", "--out", &out],
        "--start-at",
    );
}
