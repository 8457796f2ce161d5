//! Evidence for every verdict: the raw replies are kept beside the journal, and `show` prints
//! them with the prompt, the answer, the gold and the outcome.

use hardsuite::CommandOutput;

use crate::{arg, json_lines, run_cli};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_prints_the_raw_reply_of_a_task_and_a_no_answer_reply_has_no_answer_line() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    // The simulator's script for this selection (see `scripted_plan`): the 2nd math task
    // answers wrongly, the 3rd is cut off inside its reasoning, the 4th answers without an
    // answer line, the 2nd tool task calls twice (no Docker needed for these).
    let CommandOutput::Run(outcome) = run_cli(&[
        "hardsuite",
        "run",
        "--out",
        arg(&out),
        "--quiet",
        "--tasks",
        "domino-tiling,last-digits,knight-path,round-table,tool-search,tool-weather",
    ])
    .await
    .expect("the simulator run") else {
        panic!("run gives a run outcome");
    };
    // One reply line per try, written beside the journal.
    let replies = json_lines(&out.join("replies.jsonl"));
    let tries = json_lines(&outcome.files.journal)
        .iter()
        .filter(|line| line["type"] == "attempt")
        .count();
    assert!(
        replies.len() >= 4 && replies.len() <= tries,
        "{} replies, {tries} tries",
        replies.len()
    );

    // The report audits itself and links every row that did not pass to its evidence.
    let report = std::fs::read_to_string(&outcome.files.report).expect("report");
    assert!(report.contains("## Self-audit"), "{report}");
    assert!(
        report.contains("Replies on file (`replies.jsonl`), by outcome: "),
        "{report}"
    );
    assert!(
        report.contains("[evidence](replies.jsonl) (`hardsuite show OUT round-table`)"),
        "{report}"
    );
    assert!(
        !report.contains("`hardsuite show OUT domino-tiling`"),
        "a pass needs no link"
    );
    let audit = outcome.results.audit.as_ref().expect("an audit");
    assert!(
        audit.evidence.iter().all(|e| e.n_with_reply == e.n_samples),
        "{audit:?}"
    );

    let show = |args: &[&str]| {
        let mut words = vec!["hardsuite", "show", arg(&out)];
        words.extend_from_slice(args);
        let words: Vec<String> = words.iter().map(ToString::to_string).collect();
        async move {
            let refs: Vec<&str> = words.iter().map(String::as_str).collect();
            match run_cli(&refs).await.expect("show works") {
                CommandOutput::Show(text) => text,
                _ => panic!("show gives text"),
            }
        }
    };
    let text = show(&["round-table"]).await;
    assert!(text.contains("outcome: no_answer"), "{text}");
    assert!(
        text.contains("--- prompt ---") && text.contains("--- content ---"),
        "{text}"
    );
    assert!(text.contains("gold: "), "{text}");
    // The reply shown is the model's whole content, and it holds no answer line.
    let content = text
        .split("--- content ---\n")
        .nth(1)
        .expect("a content section")
        .split("\n---")
        .next()
        .unwrap_or_default();
    assert!(!content.is_empty(), "{text}");
    assert!(
        !content.contains("ANSWER:") && !content.contains("\\boxed{"),
        "{content}"
    );
    let wrong = show(&["last-digits"]).await;
    assert!(
        wrong.contains("outcome: wrong") && wrong.contains("ANSWER:"),
        "{wrong}"
    );
    let tools = show(&["tool-weather"]).await;
    assert!(
        tools.matches("tool call: get_weather").count() >= 2,
        "{tools}"
    );
    let failures = show(&["--all-failures"]).await;
    for id in ["last-digits", "knight-path", "round-table", "tool-weather"] {
        assert!(failures.contains(&format!("=== {id} #0")), "{failures}");
    }
    assert!(
        !failures.contains("=== domino-tiling"),
        "a pass is not a failure"
    );
    // A task the run does not hold is a usage error naming the tasks it does hold.
    let error = run_cli(&["hardsuite", "show", arg(&out), "crt"])
        .await
        .expect_err("no such task");
    assert!(error.to_string().contains("domino-tiling"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_prints_what_the_grader_saw_for_a_failing_code_task() {
    if crate::skip_docker_tests() {
        return;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    // The 2nd code task of the selection answers with a negative control: it runs and fails.
    run_cli(&[
        "hardsuite",
        "run",
        "--out",
        arg(&out),
        "--quiet",
        "--tasks",
        "merge-intervals,expression-eval",
    ])
    .await
    .expect("the simulator run (it needs the Docker engine and the grader image)");
    let CommandOutput::Show(text) = run_cli(&["hardsuite", "show", arg(&out), "expression-eval"])
        .await
        .expect("show")
    else {
        panic!("show gives text");
    };
    assert!(text.contains("outcome: wrong (failed_cases:["), "{text}");
    assert!(text.contains("--- grader: "), "{text}");
    // Human text, not Rust's debug form: it printed `exit Some(1)`, `(Code)`, `try 1 (Main)`.
    for debug in ["Some(", "(Main)", "(Code)"] {
        assert!(!text.contains(debug), "{debug} in {text}");
    }
    assert!(text.contains("--- try 1 (main run)"), "{text}");
    assert!(
        text.contains("--- submission as graded ---\n") && text.contains("def evaluate"),
        "{text}"
    );
    assert!(
        text.contains("case ") && text.contains("expected"),
        "{text}"
    );
}
