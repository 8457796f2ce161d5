//! Standard datasets as suites: the bundled 280-question MMLU-Pro sample against the scripted
//! simulator (every outcome and extraction rule as scripted, question by question), pairing two
//! runs of one draw, refusing two draws, a file that does not match its kind, and a real
//! `llama-server`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vernier_hardsuite::{
    DatasetKind, DatasetSampling, DatasetSelection, SuiteSelection, load_suite, scripted_plan,
};

use crate::llama::llama_on;
use crate::{arg, json_lines, skip_docker_tests};

/// The bundled stratified sample: 20 questions from each of MMLU-Pro's 14 categories.
fn sample_280() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/datasets/mmlu-pro/sample-280.jsonl")
}

fn hardsuite<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hardsuite"))
        .args(args)
        .output()
        .expect("run hardsuite")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `args`, which must be refused as a usage error (exit 2) with `words` in the message.
fn refused<S: AsRef<std::ffi::OsStr>>(args: &[S], words: &str) {
    let output = hardsuite(args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains(words), "{message}");
}

/// A simulated run of `per_category` questions per category, drawn with `seed`, into `out`.
fn simulated_run(out: &Path, per_category: &str, seed: &str) -> Output {
    hardsuite(&[
        "run",
        "--quiet",
        "--dataset",
        "mmlu-pro",
        "--dataset-file",
        arg(&sample_280()),
        "--per-category",
        per_category,
        "--seed",
        seed,
        "--out",
        arg(out),
    ])
}

#[test]
fn every_question_gets_the_scripted_outcome_and_the_rule_that_reads_it() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("run");
    let run = simulated_run(&out, "2", "5");
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));

    // The script: the same draw, loaded as the run loads it.
    let mut selection = SuiteSelection::default();
    selection.dataset = Some(DatasetSelection::new(
        DatasetKind::MmluPro,
        sample_280(),
        DatasetSampling::PerCategory(2),
        5,
    ));
    let suite = load_suite(&selection).expect("the same draw");
    assert_eq!(suite.tasks.len(), 28, "2 from each of 14 categories");
    let plan = scripted_plan(&suite);

    let journal = json_lines(&out.join("journal.jsonl"));
    let header = &journal[0];
    let drawn: Vec<&str> = header["dataset"]["questions"]
        .as_array()
        .expect("the drawn questions are in the header")
        .iter()
        .map(|question| question["id"].as_str().expect("an id"))
        .collect();
    let planned: Vec<&str> = plan.iter().map(|task| task.task_id.as_str()).collect();
    assert_eq!(drawn, planned);
    assert_eq!(
        header["dataset"]["file_sha256"].as_str().map(str::len),
        Some(64)
    );
    let mut kinds_seen = std::collections::HashSet::new();
    for scripted in &plan {
        let attempt = journal
            .iter()
            .find(|line| line["type"] == "attempt" && line["task_id"] == scripted.task_id.as_str())
            .unwrap_or_else(|| panic!("no attempt of {}", scripted.task_id));
        assert_eq!(
            attempt["outcome"],
            scripted.kind.expected_outcome().as_str(),
            "{attempt}"
        );
        assert_eq!(
            attempt["rule"].as_str(),
            scripted.kind.expected_rule(true),
            "{attempt}"
        );
        kinds_seen.insert(format!("{:?}", scripted.kind));
    }
    // Every kind of the script was exercised: strict, four fallback forms, wrong, cut off, none.
    assert_eq!(kinds_seen.len(), 8, "{kinds_seen:?}");

    // Every reply is on file, and the right ones wrote "Question:" headings before answering.
    let replies = json_lines(&out.join("replies.jsonl"));
    assert_eq!(replies.len(), 28);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).expect("results"))
            .expect("JSON");
    let dataset = &results["dataset"];
    let expected = |kind: &str| {
        plan.iter()
            .filter(|task| task.kind.expected_outcome().as_str() == kind)
            .count()
    };
    assert_eq!(dataset["total"]["n_pass"], expected("pass"));
    assert_eq!(dataset["total"]["n_wrong"], expected("wrong"));
    assert_eq!(dataset["total"]["n_cut_off"], expected("cut_off"));
    assert_eq!(dataset["total"]["n_no_answer"], expected("no_answer"));
    assert_eq!(dataset["subjects"].as_array().map(Vec::len), Some(14));
    // `show` gives one question's evidence: its gold letter, its prompt and its reply.
    let wrong = plan
        .iter()
        .find(|task| task.kind.expected_outcome().as_str() == "wrong")
        .expect("a wrong one");
    let shown = hardsuite(&["show", arg(&out), &wrong.task_id]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    let question = suite.task(&wrong.task_id).expect("in the suite");
    let vernier_tasks::Checker::Choice { gold, .. } = question.checker else {
        panic!("a choice");
    };
    assert!(
        shown.contains(&format!("gold: \"{}\"", vernier_tasks::choice_letter(gold))),
        "{shown}"
    );
    assert!(
        shown.contains("Answer: Let's think step by step."),
        "{shown}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("## Dataset: mmlu-pro"), "{report}");
    assert!(report.contains("| last_line_letter |"), "{report}");
    assert!(
        report.contains("write \"Question:\" headings inside their answer"),
        "{report}"
    );
}

#[test]
fn two_runs_of_one_draw_pair_and_two_draws_are_refused_unless_unpaired() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let (a, b, c) = (
        folder.path().join("a"),
        folder.path().join("b"),
        folder.path().join("c"),
    );
    for (out, seed) in [(&a, "1"), (&b, "1"), (&c, "2")] {
        let run = simulated_run(out, "1", seed);
        assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    }
    let paired = hardsuite(&["compare", arg(&a), arg(&b)]);
    assert_eq!(paired.status.code(), Some(0), "{}", stderr(&paired));
    let text = String::from_utf8_lossy(&paired.stdout);
    assert!(text.contains("14"), "{text}");
    refused(&["compare", arg(&a), arg(&c)], "different questions drawn");
    let unpaired = hardsuite(&["compare", arg(&a), arg(&c), "--unpaired"]);
    assert_eq!(unpaired.status.code(), Some(0), "{}", stderr(&unpaired));
    // The same script twice never disagrees: nothing to plan from.
    assert!(
        text.contains("the runs disagree on 0.0% of the items: too few to plan"),
        "{text}"
    );
    // B with three passing questions turned wrong: 3 of 14 discordant. Connor (1987) eq. 3 by
    // hand (python3, NormalDist): ψ = 3/14, δ = 0.05 → 671 per arm, δ = 0.10 → 166.
    let results_b = b.join("results.json");
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results_b).expect("B's results"))
            .expect("JSON");
    let mut flipped = 0;
    for task in edited["tasks"].as_array_mut().expect("tasks") {
        let sample = &mut task["samples"][0];
        if flipped < 3 && sample["outcome"] == "pass" {
            sample["outcome"] = "wrong".into();
            flipped += 1;
        }
    }
    std::fs::write(&results_b, edited.to_string()).expect("write B");
    let planned = hardsuite(&["compare", arg(&a), arg(&results_b), "--detect", "5,10"]);
    let planned = String::from_utf8_lossy(&planned.stdout);
    assert!(
        planned.contains(
            "discordance of 21.4% (Connor 1987): 5 points: 671 per arm, 10 points: 166 per arm"
        ),
        "{planned}"
    );
}

#[test]
fn a_file_that_does_not_match_its_kind_or_a_missing_draw_is_a_usage_error() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("run");
    let file = sample_280();
    let run = |kind: &'static str, draw: &'static [&'static str]| -> Vec<String> {
        let mut args = vec!["run", "--dataset", kind, "--dataset-file", arg(&file)];
        args.extend_from_slice(draw);
        args.extend(["--out", arg(&out)]);
        args.into_iter().map(str::to_owned).collect()
    };
    refused(&run("gsm8k", &["--all"]), "line 1, field `answer`");
    refused(
        &run("mmlu-pro", &[]),
        "--per-category N, --sample N or --all",
    );
    refused(&run("mmlu_pr", &["--all"]), "did you mean mmlu-pro");
}

/// A run whose copy of the fixture, given as `flag` (`--dataset-file` or `--examples`), is
/// edited before `--resume`: the resume must refuse it by name.
fn resume_after_editing(flag: &str) {
    let folder = tempfile::tempdir().expect("temporary folder");
    let copy = folder.path().join("copy.jsonl");
    let text = std::fs::read_to_string(sample_280()).expect("fixture");
    std::fs::write(&copy, &text).expect("copy");
    let out = folder.path().join("run");
    let (dataset, examples) = if flag == "--examples" {
        (sample_280(), copy.clone())
    } else {
        (copy.clone(), sample_280())
    };
    let run = hardsuite(&[
        "run",
        "--quiet",
        "--dataset",
        "mmlu-pro",
        "--dataset-file",
        arg(&dataset),
        "--sample",
        "2",
        "--examples",
        arg(&examples),
        "--out",
        arg(&out),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    std::fs::write(&copy, text.replacen("\"answer\": \"", "\"answer\":\"", 1)).expect("edit");
    refused(
        &["run", "--resume", arg(&out.join("journal.jsonl"))],
        "copy.jsonl changed since the run started",
    );
}

#[test]
fn a_resume_refuses_a_dataset_file_that_changed() {
    resume_after_editing("--dataset-file");
}

#[test]
fn a_resume_refuses_an_examples_file_that_changed() {
    resume_after_editing("--examples");
}

#[test]
fn one_question_per_category_against_a_real_llama_server_leaves_every_reply_on_file() {
    let Some((_server, port)) = llama_on(
        "one_question_per_category_against_a_real_llama_server_leaves_every_reply_on_file",
        4096,
    ) else {
        return;
    };
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("run");
    let run = hardsuite(&[
        "run",
        "--quiet",
        "--base-url",
        &format!("http://127.0.0.1:{port}"),
        "--dataset",
        "mmlu-pro",
        "--dataset-file",
        arg(&sample_280()),
        "--per-category",
        "1",
        "--budget-dataset",
        "64",
        "--concurrency",
        "1",
        "--out",
        arg(&out),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let journal = json_lines(&out.join("journal.jsonl"));
    let attempts: Vec<&serde_json::Value> = journal
        .iter()
        .filter(|line| line["type"] == "attempt")
        .collect();
    assert_eq!(attempts.len(), 14, "one try per question");
    let replies = json_lines(&out.join("replies.jsonl"));
    for attempt in &attempts {
        assert_ne!(attempt["outcome"], "infra", "{attempt}");
        let reply = replies
            .iter()
            .find(|reply| reply["task_id"] == attempt["task_id"])
            .unwrap_or_else(|| panic!("no reply on file for {attempt}"));
        // The residue is honest: a reply stopped by the budget is cut off, whatever it holds.
        if reply["finish_reason"] == "length" {
            assert_eq!(attempt["outcome"], "cut_off", "{attempt}");
        }
        // A reply no rule can read is no_answer, and one the rules read is graded.
        let content = reply["content"].as_str().unwrap_or_default();
        let read = vernier_tasks::extract_choice(content);
        if attempt["outcome"] == "no_answer" {
            assert!(read.is_none(), "{content:?}");
        }
        if matches!(attempt["outcome"].as_str(), Some("pass" | "wrong")) {
            assert_eq!(
                attempt["rule"].as_str(),
                read.map(|r| r.rule),
                "{content:?}"
            );
        }
    }
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).expect("results"))
            .expect("JSON");
    let total = &results["dataset"]["total"];
    let counted: u64 = [
        "n_pass",
        "n_wrong",
        "n_no_answer",
        "n_cut_off",
        "n_unscored",
    ]
    .iter()
    .map(|key| total[key].as_u64().expect("a count"))
    .sum();
    assert_eq!(counted, 14, "{total}");
}

#[test]
fn worked_examples_go_before_each_question_and_are_recorded() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let out = folder.path().join("run");
    let run = hardsuite(&[
        "run",
        "--quiet",
        "--dataset",
        "mmlu-pro",
        "--dataset-file",
        arg(&sample_280()),
        "--sample",
        "2",
        "--examples",
        arg(&sample_280()),
        "--shots",
        "2",
        "--out",
        arg(&out),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let journal = json_lines(&out.join("journal.jsonl"));
    let record = &journal[0]["dataset"];
    assert_eq!(record["selection"]["shots"], 2);
    assert_eq!(record["examples_sha256"], record["file_sha256"]);
    let id = record["questions"][0]["id"].as_str().expect("an id");
    let shown = hardsuite(&["show", arg(&out), id]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    // Two examples of the question's own category, each with its answer, then the question.
    assert_eq!(
        shown.matches("Answer: The answer is (").count(),
        2,
        "{shown}"
    );
    assert_eq!(shown.matches("Question:\n").count(), 3, "{shown}");
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("2-shot"), "{report}");
}

#[test]
fn mbpp_shaped_questions_prove_their_reference_and_refuse_a_broken_one_in_the_sandbox() {
    if skip_docker_tests() {
        return;
    }
    // MBPP's record shape (Austin et al. 2021): `task_id`, `text`, `code`, `test_list`,
    // `test_setup_code`; the problem and its tests are written here.
    let good = serde_json::json!({
        "task_id": 1,
        "text": "Write a function to remove the first and last occurrence of a character from a string.",
        "code": "def remove_occ(s, ch):\n    first = s.find(ch)\n    if first < 0:\n        return s\n    s = s[:first] + s[first + 1:]\n    last = s.rfind(ch)\n    if last < 0:\n        return s\n    return s[:last] + s[last + 1:]\n",
        "test_list": [
            "assert remove_occ(\"hello\", \"l\") == \"heo\"",
            "assert remove_occ(\"abcda\", \"a\") == \"bcd\"",
            "assert remove_occ(\"PHP\", \"P\") == \"H\""
        ],
        "test_setup_code": ""
    });
    let mut broken = good.clone();
    broken["task_id"] = 2.into();
    // Removes the first occurrence only.
    broken["code"] = "def remove_occ(s, ch):\n    return s.replace(ch, \"\", 1)\n".into();
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = folder.path().join("mbpp.jsonl");
    std::fs::write(&file, format!("{good}\n{broken}\n")).expect("write");
    let check = |tasks: &str| {
        hardsuite(&[
            "self-check",
            "--dataset",
            "mbpp",
            "--dataset-file",
            arg(&file),
            "--all",
            "--tasks",
            tasks,
        ])
    };
    let proved = check("mbpp-1");
    assert_eq!(proved.status.code(), Some(0), "{}", stderr(&proved));
    let refused = check("mbpp-2");
    assert_eq!(refused.status.code(), Some(5), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("mbpp-2: the reference solution does not pass"),
        "{}",
        stderr(&refused)
    );
}
