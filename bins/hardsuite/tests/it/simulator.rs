//! End to end against the in-process simulator with scripted answers whose score is known in
//! advance (the script is built from the suite's own gold answers and reference code).

use std::collections::HashMap;
use vernier_cli::Failure as _;

use hardsuite::CommandOutput;
use vernier_hardsuite::{HardsuiteError, ScriptedKind, scripted_plan};
use vernier_tasks::{OutcomeKind, Suite};

use crate::{arg, json_lines, run_cli, skip_docker_tests};

/// The scripted score, task by task, written out by hand from the plan documented on
/// `scripted_plan`: math 2nd wrong, 3rd cut off inside its reasoning, 4th without an answer
/// line, 1st right after one dropped stream; code 2nd a negative control, 3rd cut off; the
/// 2nd tool-call task calls twice; everything else right.
const EXPECTED: [(&str, OutcomeKind); 28] = [
    ("domino-tiling", OutcomeKind::Pass),
    ("last-digits", OutcomeKind::Wrong),
    ("knight-path", OutcomeKind::CutOff),
    ("round-table", OutcomeKind::NoAnswer),
    ("dice-probability", OutcomeKind::Pass),
    ("coin-change", OutcomeKind::Pass),
    ("fixed-points", OutcomeKind::Pass),
    ("crt", OutcomeKind::Pass),
    ("digit-sum", OutcomeKind::Pass),
    ("collatz", OutcomeKind::Pass),
    ("subset-sum", OutcomeKind::Pass),
    ("lattice-paths", OutcomeKind::Pass),
    ("friday-13", OutcomeKind::Pass),
    ("bracket-depth", OutcomeKind::Pass),
    ("merge-intervals", OutcomeKind::Pass),
    ("expression-eval", OutcomeKind::Wrong),
    ("lru-cache", OutcomeKind::CutOff),
    ("count-islands", OutcomeKind::Pass),
    ("parse-duration", OutcomeKind::Pass),
    ("roman-numerals", OutcomeKind::Pass),
    ("topo-order", OutcomeKind::Pass),
    ("csv-split", OutcomeKind::Pass),
    ("maze-path", OutcomeKind::Pass),
    ("wrap-text", OutcomeKind::Pass),
    ("tool-search", OutcomeKind::Pass),
    ("tool-weather", OutcomeKind::ExtraCalls),
    ("tool-calc", OutcomeKind::Pass),
    ("tool-none", OutcomeKind::Pass),
];

#[test]
fn the_script_plan_is_the_one_written_out_here() {
    let plan = scripted_plan(&Suite::bundled());
    let planned: Vec<(&str, OutcomeKind)> = plan
        .iter()
        .map(|task| (task.task_id.as_str(), task.kind.expected_outcome()))
        .collect();
    assert_eq!(planned, EXPECTED);
    let dropped: Vec<&str> = plan
        .iter()
        .filter(|task| task.kind == ScriptedKind::RightAfterDrop)
        .map(|task| task.task_id.as_str())
        .collect();
    assert_eq!(dropped, ["domino-tiling"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_suite_against_the_simulator_reproduces_the_scripted_score() {
    if skip_docker_tests() {
        return;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let output = run_cli(&["hardsuite", "run", "--out", arg(&out), "--quiet"])
        .await
        .expect("the full suite needs a Docker engine and the grader image (docker/build-grader-image.sh); set VERNIER_SKIP_DOCKER_TESTS=1 to skip on purpose");
    let CommandOutput::Run(outcome) = output else {
        panic!("run gives a run outcome");
    };
    let results = &outcome.results;
    assert!(results.simulated && results.self_checked);
    let got: Vec<(&str, OutcomeKind)> = results
        .tasks
        .iter()
        .map(|task| {
            assert_eq!(task.samples.len(), 1, "{}", task.id);
            (task.id.as_str(), task.samples[0].outcome)
        })
        .collect();
    assert_eq!(got, EXPECTED, "outcome by outcome");

    let count = |kind| EXPECTED.iter().filter(|(_, k)| *k == kind).count() as u64;
    let total = &results.main.total;
    assert_eq!((total.n_pass, total.n_scored), (22, 28));
    assert_eq!(total.n_wrong, count(OutcomeKind::Wrong));
    assert_eq!(total.n_cut_off, 2);
    assert_eq!(
        (total.n_no_answer, total.n_extra_calls, total.n_unscored),
        (1, 1, 0)
    );
    let per_category: HashMap<&str, (u64, u64)> = results
        .main
        .categories
        .iter()
        .map(|score| (score.name.as_str(), (score.n_pass, score.n_scored)))
        .collect();
    assert_eq!(per_category["math"], (11, 14));
    assert_eq!(per_category["code"], (8, 10));
    assert_eq!(per_category["tools"], (3, 4));
    // Cut-offs are their own outcome, ended inside the reasoning, and hit the budget.
    assert_eq!(
        results.main.ended_in_reasoning,
        ["knight-path", "lru-cache"]
    );
    assert_eq!(results.main.hit_budget, ["knight-path", "lru-cache"]);

    // The dropped stream: one infra try, then one scored try, counted once.
    let journal = json_lines(&outcome.files.journal);
    let domino: Vec<&serde_json::Value> = journal
        .iter()
        .filter(|line| line["type"] == "attempt" && line["task_id"] == "domino-tiling")
        .collect();
    assert_eq!(domino.len(), 2, "{domino:#?}");
    assert_eq!(domino[0]["outcome"], "infra");
    assert!(
        domino[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("connection ended")),
        "{}",
        domino[0]["detail"]
    );
    assert_eq!(domino[1]["outcome"], "pass");
    assert_eq!(results.n_infra_tries, 1);
    assert_eq!(
        results.task("domino-tiling").expect("task").samples[0].n_tries,
        2
    );

    // The report files say the same.
    let markdown = std::fs::read_to_string(&outcome.files.report).expect("report.md");
    assert!(markdown.contains("| total | 22/28 |"), "{markdown}");
    assert!(markdown.contains("about ±14 points"), "{markdown}");
    let written =
        vernier_hardsuite::ResultsFile::load(&outcome.files.results).expect("results.json");
    let counts = |board: &vernier_hardsuite::Scoreboard| -> Vec<(String, u64, u64, u64)> {
        board
            .categories
            .iter()
            .chain([&board.total])
            .map(|s| (s.name.clone(), s.n_pass, s.n_scored, s.n_cut_off))
            .collect()
    };
    assert_eq!(counts(&written.main), counts(&results.main));
    assert!(outcome.table.contains("in-process simulator"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_server_stops_the_run_with_the_resume_command() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener); // nothing listens there now: every connect is refused
    let url = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--base-url",
        &url,
        "--model",
        "m",
        "--out",
        arg(&out),
        "--quiet",
        "--tasks",
        "crt,collatz",
        "--max-tries",
        "2",
    ])
    .await
    .expect_err("no server");
    let HardsuiteError::Run(vernier_run::RunError::ServerStopped {
        journal,
        resume_command,
        ..
    }) = &error
    else {
        panic!("expected ServerStopped, got {error}");
    };
    assert!(
        resume_command.starts_with("hardsuite run --base-url ")
            && resume_command.contains(&format!(" --resume {}", journal.display())),
        "{resume_command}"
    );
    assert!(
        resume_command.contains(&format!("--base-url {url}")),
        "{resume_command}"
    );
    let lines = json_lines(journal);
    assert_eq!(lines[0]["type"], "header");
    assert!(lines[1..].iter().all(|line| line["outcome"] == "infra"));
    assert!(out.join("results.json").exists() && out.join("report.md").exists());
    let message = hardsuite::error_text(&error);
    assert!(
        message.contains("; continue with: hardsuite run --base-url "),
        "{message}"
    );
    assert_eq!(error.exit_code(), vernier_cli::exit_code::SERVER_STOPPED);
}
