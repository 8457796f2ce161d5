//! A board of five simulated servers whose speed and pass rate are known before any run: each
//! candidate's decode step (`--decode-step-ms`) sets its decode rate, and a script that answers
//! every MMLU-Pro question with one letter sets its pass rate to the share of that letter
//! among the answers of `fixtures/datasets/mmlu-pro/sample-280.jsonl` (counted here from the
//! file: A 43, B 31, C 21, D 30, E 20, J 31 of 280).

use std::path::Path;

use clap::Parser as _;
use vernier_test_support::fault_matrix::SimChild;

use crate::{SERVE, repository, runs, succeeded, sweep_once};

struct Truth {
    name: &'static str,
    decode_step_ms: f64,
    letter: char,
}

const CANDIDATES: [Truth; 5] = [
    Truth {
        name: "cand-a",
        decode_step_ms: 5.0,
        letter: 'E',
    },
    Truth {
        name: "cand-b",
        decode_step_ms: 10.0,
        letter: 'A',
    },
    Truth {
        name: "cand-c",
        decode_step_ms: 15.0,
        letter: 'J',
    },
    Truth {
        name: "cand-d",
        decode_step_ms: 20.0,
        letter: 'D',
    },
    Truth {
        name: "cand-e",
        decode_step_ms: 20.0,
        letter: 'C',
    },
];

fn dataset() -> std::path::PathBuf {
    repository().join("fixtures/datasets/mmlu-pro/sample-280.jsonl")
}

/// How many of the file's answers are `letter`, and how many answers there are.
fn letter_share(letter: char) -> (u64, u64) {
    let text = std::fs::read_to_string(dataset()).expect("the MMLU-Pro sample");
    let answers: Vec<String> = text
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            row["answer"].as_str().expect("answer").to_owned()
        })
        .collect();
    let hits = answers
        .iter()
        .filter(|answer| answer.starts_with(letter))
        .count();
    (hits as u64, answers.len() as u64)
}

/// Every question of the sample, in-process, against `base_url`, into `out`.
fn dataset_run(base_url: &str, model: &str, out: &Path) {
    let file = dataset().display().to_string();
    let out_text = out.display().to_string();
    let words = [
        "hardsuite",
        "run",
        "--quiet",
        "--base-url",
        base_url,
        "--model",
        model,
        "--dataset",
        "mmlu-pro",
        "--dataset-file",
        &file,
        "--all",
        "--concurrency",
        "8",
        "--out",
        &out_text,
    ];
    let finished = hardsuite::execute(hardsuite::Args::parse_from(words), vec![])
        .expect("the dataset run finishes");
    assert_eq!(
        finished.kind,
        vernier_cli::ExitKind::Success,
        "{finished:?}"
    );
}

#[test]
#[allow(clippy::too_many_lines)] // the runs, then each of the truth's claims in turn
fn a_board_of_five_simulated_servers_ranks_them_as_their_truth_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("runs.sqlite").display().to_string();
    for truth in &CANDIDATES {
        let script = dir.path().join(format!("{}.json", truth.name));
        std::fs::write(
            &script,
            serde_json::json!({ "rules": [{
                "pattern": "(?s).*",
                "reply": { "content": format!("The answer is ({}).", truth.letter) }
            }]})
            .to_string(),
        )
        .expect("write the script");
        let speed = SimChild::start(
            SERVE,
            &format!(
                "--model {} --decode-step-ms {}",
                truth.name, truth.decode_step_ms
            ),
        );
        let sweep_out = dir.path().join(format!("{}-sweep", truth.name));
        sweep_once(&speed.base_url(), &sweep_out);
        drop(speed);
        let answers = SimChild::start(
            SERVE,
            &format!(
                "--model {} --decode-step-ms 1 --script {}",
                truth.name,
                script.display()
            ),
        );
        let dataset_out = dir.path().join(format!("{}-mmlu", truth.name));
        dataset_run(&answers.base_url(), truth.name, &dataset_out);
        drop(answers);
        succeeded(&runs(
            &store,
            &[
                "register",
                &sweep_out.display().to_string(),
                &dataset_out.display().to_string(),
            ],
        ));
    }
    let out = dir.path().join("board");
    let output = runs(&store, &["board", "--out", &out.display().to_string()]);
    succeeded(&output);
    let board: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("board.json")).expect("board.json"))
            .expect("JSON");
    let dimension = |name: &str| -> serde_json::Value {
        board["dimensions"]
            .as_array()
            .expect("dimensions")
            .iter()
            .find(|d| d["name"] == name)
            .unwrap_or_else(|| panic!("a dimension {name}: {board}"))
            .clone()
    };
    let order = |d: &serde_json::Value| -> Vec<String> {
        d["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| e["candidate"].as_str().expect("candidate").to_owned())
            .collect()
    };
    let pair = |d: &serde_json::Value, a: &str, b: &str| -> bool {
        d["pairs"]
            .as_array()
            .expect("pairs")
            .iter()
            .find(|p| {
                (p["ahead"] == a && p["behind"] == b) || (p["ahead"] == b && p["behind"] == a)
            })
            .unwrap_or_else(|| panic!("a pair {a}, {b}: {d}"))["distinguishable"]
            .as_bool()
            .expect("distinguishable")
    };

    // Speed: the decode step orders them, fastest first; d and e share a step.
    let decode = dimension("decode per stream at 1 in flight (median over cells)");
    let decode_order = order(&decode);
    assert_eq!(
        decode_order[..3],
        ["cand-a", "cand-b", "cand-c"],
        "{decode}"
    );
    assert!(pair(&decode, "cand-a", "cand-b"), "{decode}");
    // The same step: not distinguishable, unless the machine drifted between the two runs
    // (they are measured minutes apart, each interval only as wide as its own run's spread,
    // and a loaded machine shifts one run's pace by a fraction of a percent); then the two
    // rates stand within 2% of each other, far from the 33% between the steps around them.
    let rate = |name: &str| -> f64 {
        decode["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .find(|e| e["candidate"] == name)
            .and_then(|e| e["value"].as_f64())
            .unwrap_or_else(|| panic!("{name}'s rate: {decode}"))
    };
    let (d, e) = (rate("cand-d"), rate("cand-e"));
    assert!(
        !pair(&decode, "cand-d", "cand-e") || (d / e - 1.0).abs() < 0.02,
        "the same decode step is told apart by more than drift ({d} against {e}): {decode}"
    );

    // Quality: the letters' shares in the file order them exactly.
    let mut truth: Vec<(&str, u64)> = CANDIDATES
        .iter()
        .map(|c| (c.name, letter_share(c.letter).0))
        .collect();
    truth.sort_by_key(|(_, hits)| std::cmp::Reverse(*hits));
    let quality = dimension("pass rate: total");
    let expected: Vec<String> = truth.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(order(&quality), expected, "{quality}");
    for entry in quality["entries"].as_array().expect("entries") {
        let name = entry["candidate"].as_str().expect("name");
        let letter = CANDIDATES
            .iter()
            .find(|c| c.name == name)
            .expect("known")
            .letter;
        let (hits, total) = letter_share(letter);
        vernier_test_support::assert_close(
            entry["value"].as_f64().expect("value"),
            hits as f64 / total as f64 * 100.0,
            1e-9,
        );
    }
    // c and d answer 31 and 30 of 280 right: inside each other's intervals. b and a, 43 and
    // 20: apart, even after Holm's correction over the ten pairs.
    assert!(!pair(&quality, "cand-c", "cand-d"), "{quality}");
    assert!(pair(&quality, "cand-b", "cand-a"), "{quality}");

    // The decode row rests on runs whose servers were launched with different decode steps,
    // and says so; the pass-rate row's servers differ in nothing but the model's name.
    let confounders = |d: &serde_json::Value| -> Vec<String> {
        d["confounded_by"]
            .as_array()
            .expect("confounded_by")
            .iter()
            .map(|key| key.as_str().expect("a key").to_owned())
            .collect()
    };
    assert!(
        confounders(&decode).contains(&"server.simulator_config.decode_step_ms".to_owned()),
        "{decode}"
    );
    assert_eq!(confounders(&quality), Vec::<String>::new(), "{quality}");
    // What one solved question cost is a dimension of its own.
    assert_eq!(
        order(&dimension("seconds per solved task")).len(),
        CANDIDATES.len()
    );

    // The front of quality against speed: a is fastest, b is best, and b beats c, d and e on
    // both (the truth's non-dominated set, worked from the table above).
    let mut front: Vec<String> = board["front"]["on_front"]
        .as_array()
        .expect("front")
        .iter()
        .map(|name| name.as_str().expect("name").to_owned())
        .collect();
    front.sort();
    assert_eq!(front, ["cand-a", "cand-b"], "{}", board["front"]);

    // The page: every candidate, and nothing it would fetch.
    let html = std::fs::read_to_string(out.join("board.html")).expect("board.html");
    for truth in &CANDIDATES {
        assert!(html.contains(truth.name), "{}", truth.name);
    }
    crate::browser::renders_every_name_and_fetches_nothing(
        &html,
        &CANDIDATES.iter().map(|c| c.name).collect::<Vec<_>>(),
    );
}
