//! The self-check: passes on the bundled suite, and fails naming the task when a gold answer,
//! a puzzle, a prompt, a checker, a reference or a hidden test is broken on purpose.

use vernier_grader::{Case, Grader, GraderConfig};
use vernier_tasks::{
    Category, Checker, Problem, RoundTable, SelfCheckError, Suite, Task, self_check,
};

use crate::block_on;

/// The bundled suite without its code tasks: everything that needs no Docker engine.
fn offline_suite() -> Suite {
    let mut suite = crate::bundled_suite().clone();
    suite.tasks.retain(|task| task.category != Category::CODE);
    suite
}

pub(crate) fn failures_of(suite: &Suite) -> Vec<(String, String)> {
    match block_on(self_check(suite, None)) {
        Ok(_) => Vec::new(),
        Err(error) => error
            .failures()
            .iter()
            .map(|f| (f.task_id.clone(), f.reason.clone()))
            .collect(),
    }
}

pub(crate) fn task_mut<'a>(suite: &'a mut Suite, id: &str) -> &'a mut Task {
    suite.tasks.iter_mut().find(|t| t.id == id).expect("task")
}

#[test]
fn the_bundled_math_and_tool_tasks_pass_without_docker() {
    let suite = offline_suite();
    assert_eq!(suite.count(Category::MATH), 14);
    assert_eq!(suite.count(Category::TOOLS), 4);
    let report = block_on(self_check(&suite, None)).expect("self-check passes");
    assert_eq!(report.tasks.len(), 18);
    // Math: 2 accepted forms, a wrong one, the last answer counts, cut-off, reasoning-only,
    // plus validation and parameter checks; tools: 7 probes each.
    assert!(report.tasks.iter().all(|t| t.n_checks >= 7), "{report:?}");
    assert_eq!(report.image_digest, None);
}

#[test]
fn code_tasks_need_a_grader() {
    let suite = crate::bundled_suite();
    let n_code_tasks = suite.count(Category::CODE);
    assert_eq!(n_code_tasks, 10, "the 10 coding tasks are bundled");
    match block_on(self_check(suite, None)) {
        Err(SelfCheckError::GraderRequired { n_code_tasks: n }) => assert_eq!(n, n_code_tasks),
        other => panic!("expected GraderRequired, got {other:?}"),
    }
}

#[test]
fn a_corrupted_gold_answer_is_named() {
    let mut suite = offline_suite();
    task_mut(&mut suite, "domino-tiling").checker = Checker::Integer(2132);
    let failures = failures_of(&suite);
    assert!(!failures.is_empty());
    assert!(
        failures.iter().all(|(id, _)| id == "domino-tiling"),
        "{failures:?}"
    );
    assert!(
        failures
            .iter()
            .any(|(_, reason)| reason.contains("2132") && reason.contains("2131")),
        "{failures:?}"
    );
}

#[test]
fn a_puzzle_with_no_solution_is_named() {
    let mut suite = offline_suite();
    let unsolvable = Problem::RoundTable(RoundTable {
        people: vec!['A', 'B', 'C', 'D', 'E', 'F'],
        adjacent: vec![('A', 'B'), ('A', 'F'), ('A', 'C')],
        not_adjacent: vec![],
        opposite: vec![('E', 'A')],
    });
    *task_mut(&mut suite, "round-table") = Task::from_problem("round-table", unsolvable, 16_000);
    let failures = failures_of(&suite);
    assert!(
        failures.iter().all(|(id, _)| id == "round-table"),
        "{failures:?}"
    );
    assert!(
        failures
            .iter()
            .any(|(_, reason)| reason.contains("positive")),
        "{failures:?}"
    );
}

#[test]
fn a_prompt_not_rendered_from_the_parameters_is_named() {
    let mut suite = offline_suite();
    let task = task_mut(&mut suite, "coin-change");
    task.messages[0].content = task.messages[0].content.replace("137", "173");
    let failures = failures_of(&suite);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].0, "coin-change");
    assert!(failures[0].1.contains("prompt"), "{failures:?}");
}

#[test]
fn an_unreduced_gold_fraction_is_named() {
    let mut suite = offline_suite();
    let task = task_mut(&mut suite, "dice-probability");
    task.checker = Checker::Fraction {
        num: 146,
        den: 1296,
        allow_unreduced: false,
    };
    task.spec = None;
    let failures = failures_of(&suite);
    assert!(
        failures.iter().all(|(id, _)| id == "dice-probability"),
        "{failures:?}"
    );
    assert!(
        failures
            .iter()
            .any(|(_, reason)| reason.contains("not reduced")),
        "{failures:?}"
    );
}

#[test]
fn a_tool_task_whose_function_is_not_offered_is_named() {
    let mut suite = offline_suite();
    let task = task_mut(&mut suite, "tool-search");
    task.tools.retain(|tool| tool.name != "search_files");
    let failures = failures_of(&suite);
    assert!(
        failures.iter().all(|(id, _)| id == "tool-search"),
        "{failures:?}"
    );
    assert!(
        failures
            .iter()
            .any(|(_, reason)| reason.contains("not among the tools")),
        "{failures:?}"
    );
}

#[test]
fn duplicate_ids_are_named() {
    let mut suite = offline_suite();
    let copy = suite.tasks[0].clone();
    suite.tasks.push(copy);
    let failures = failures_of(&suite);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].0, "domino-tiling");
}

#[test]
fn the_error_message_names_every_failing_task() {
    let mut suite = offline_suite();
    task_mut(&mut suite, "crt").checker = Checker::Integer(864);
    task_mut(&mut suite, "collatz").checker = Checker::Integer(0);
    let error = block_on(self_check(&suite, None)).expect_err("two broken tasks");
    let message = error.to_string();
    assert!(
        message.contains("task crt:") && message.contains("task collatz:"),
        "{message}"
    );
}

// ----- Docker: the code tasks -------------------------------------------------------------

/// A connected grader, or `None` when `VERNIER_SKIP_DOCKER_TESTS=1`. Without an engine the
/// test fails loudly.
fn grader() -> Option<Grader> {
    if std::env::var("VERNIER_SKIP_DOCKER_TESTS").is_ok_and(|v| v == "1") {
        return None;
    }
    let grader = block_on(Grader::connect(GraderConfig::default())).expect(
        "connect to a Docker engine with the grader image (see docker/ in the repository); \
         set VERNIER_SKIP_DOCKER_TESTS=1 to skip",
    );
    Some(grader)
}

fn only(id: &str) -> Suite {
    let mut suite = crate::bundled_suite().clone();
    suite.tasks.retain(|task| task.id == id);
    assert_eq!(suite.tasks.len(), 1, "bundled task {id}");
    suite
}

fn code_check_mut(suite: &mut Suite) -> &mut vernier_tasks::CodeCheck {
    match &mut suite.tasks[0].checker {
        Checker::Code(check) => check,
        _ => panic!("not a code task"),
    }
}

#[test]
fn the_bundled_suite_passes_its_self_check_in_docker() {
    let Some(grader) = grader() else { return };
    let mut suite = Suite::bundled();
    assert_eq!(
        suite.count(Category::CODE),
        10,
        "the 10 coding tasks are bundled"
    );
    let report =
        block_on(self_check(&suite, Some(&grader))).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        report
            .image_digest
            .as_deref()
            .is_some_and(|d| !d.is_empty())
    );
    report.apply(&mut suite);
    for task in &suite.tasks {
        if let Checker::Code(check) = &task.checker {
            let limit = report.limits_for(&task.id).expect("calibrated limit");
            assert!(limit >= check.time_floor, "{}", task.id);
            assert_eq!(check.limits.wall_time, limit, "{}", task.id);
        }
    }
}

#[test]
fn drawn_suites_pass_their_self_check_in_docker() {
    // References pass and controls fail on the hidden cases drawn at the lowest and the
    // highest level, and every math gold agrees with its second method.
    let Some(grader) = grader() else { return };
    for (level, seed) in [(1, 4), (5, 3)] {
        let draw = vernier_tasks::Draw::new(level, seed).expect("level");
        let suite = Suite::drawn(draw, &vernier_tasks::Budgets::default());
        let report = block_on(self_check(&suite, Some(&grader)))
            .unwrap_or_else(|error| panic!("{draw}: {error}"));
        assert_eq!(report.tasks.len(), 28);
    }
}

#[test]
fn a_wrong_reference_is_named_in_docker() {
    let Some(grader) = grader() else { return };
    let mut suite = only("merge-intervals");
    code_check_mut(&mut suite).reference =
        Some("def merge_intervals(intervals):\n    return list(intervals)\n".to_owned());
    let error = block_on(self_check(&suite, Some(&grader))).expect_err("broken reference");
    let failures = error.failures();
    assert_eq!(failures.len(), 1, "{error}");
    assert_eq!(failures[0].task_id, "merge-intervals");
    assert!(failures[0].reason.contains("reference"), "{error}");
}

#[test]
fn a_wrong_hidden_test_is_named_in_docker() {
    let Some(grader) = grader() else { return };
    let mut suite = only("roman-numerals");
    let check = code_check_mut(&mut suite);
    let first = check
        .cases
        .iter()
        .position(|c| matches!(c.expected, vernier_grader::Expected::Value(_)));
    let index = first.expect("a value case");
    let name = check.cases[index].name.clone();
    let input = check.cases[index].input.clone();
    check.cases[index] = Case::new(
        name.clone(),
        input,
        serde_json::json!("definitely not right"),
    );
    let error = block_on(self_check(&suite, Some(&grader))).expect_err("broken test");
    let failures = error.failures();
    assert_eq!(failures[0].task_id, "roman-numerals", "{error}");
    assert!(failures[0].reason.contains(&name), "{error}");
}

#[test]
fn a_negative_control_that_passes_is_named_in_docker() {
    let Some(grader) = grader() else { return };
    let mut suite = only("csv-split");
    let check = code_check_mut(&mut suite);
    let reference = check.reference.clone().expect("reference");
    check.controls[0].code = reference;
    let name = check.controls[0].name.clone();
    let error = block_on(self_check(&suite, Some(&grader))).expect_err("toothless control");
    let failures = error.failures();
    assert_eq!(failures.len(), 1, "{error}");
    assert_eq!(failures[0].task_id, "csv-split");
    assert!(
        failures[0].reason.contains(&name) && failures[0].reason.contains("passed"),
        "{error}"
    );
}

#[test]
fn a_crashed_submission_keeps_its_exception_and_the_code_as_graded() {
    let Some(grader) = grader() else {
        return;
    };
    let suite = only("merge-intervals");
    let code = "def merge(intervals):\n    return [x for x in intervals if\n";
    let reply = vernier_tasks::Reply::stopped(format!("Here it is:\n```python\n{code}```\n"));
    let outcome = block_on(suite.tasks[0].check(&reply, Some(&grader)));
    assert_eq!(
        outcome.kind,
        vernier_tasks::OutcomeKind::Wrong,
        "{outcome:?}"
    );
    // The detail stays short and machine-readable; the evidence holds the rest.
    assert_eq!(outcome.detail, "crashed:SyntaxError", "{outcome:?}");
    let evidence = outcome.evidence.expect("a graded submission has evidence");
    let crash = evidence.crash.expect("the crash is described");
    assert!(crash.contains("SyntaxError"), "{crash}");
    assert_eq!(evidence.submission, code);
    assert!(!evidence.image_digest.is_empty());
    // A wrong but running submission names its first failing cases with expected and actual.
    let wrong = "def merge_intervals(intervals):\n    return intervals\n";
    let reply = vernier_tasks::Reply::stopped(format!("```python\n{wrong}```\n"));
    let outcome = block_on(suite.tasks[0].check(&reply, Some(&grader)));
    assert!(outcome.detail.starts_with("failed_cases:["), "{outcome:?}");
    let evidence = outcome.evidence.expect("evidence");
    assert!(evidence.n_failed_cases >= 1 && !evidence.failing_cases.is_empty());
    assert!(
        evidence
            .failing_cases
            .iter()
            .any(|(_, detail)| detail.contains("expected")),
        "{:?}",
        evidence.failing_cases
    );
}

#[test]
fn a_humaneval_reply_gets_the_prompts_helpers_before_it_and_keeps_future_imports_first() {
    let Some(grader) = grader() else {
        return;
    };
    // HumanEval's shape (Chen et al. 2021): like HumanEval/38, the prompt defines a helper the
    // test calls, and asks for the function after it; written here.
    let record = serde_json::json!({
        "task_id": "Shape/38",
        "prompt": "from typing import List\n\n\ndef encode_pair(s: str) -> str:\n    \"\"\"Reverses s.\"\"\"\n    return s[::-1]\n\n\ndef decode_pair(s: str) -> str:\n    \"\"\"Undoes encode_pair.\"\"\"\n",
        "canonical_solution": "    return encode_pair(s)\n",
        "test": "\n\ndef check(candidate):\n    assert candidate(encode_pair('abc')) == 'abc'\n    assert candidate('') == ''\n",
        "entry_point": "decode_pair"
    });
    let loaded = vernier_tasks::load_dataset_bytes(
        std::path::Path::new("shape.jsonl"),
        record.to_string().as_bytes(),
        vernier_tasks::DatasetKind::HumanEval,
    )
    .expect("reads");
    let task = vernier_tasks::question_task(
        vernier_tasks::DatasetKind::HumanEval,
        &loaded.questions[0],
        &[],
        512,
    );
    let grade = |code: &str| {
        block_on(task.check(
            &vernier_tasks::Reply::stopped(format!("Here it is.\n```python\n{code}```\n")),
            Some(&grader),
        ))
    };
    // Only the function asked for: the helper comes from the prompt.
    let alone = grade("def decode_pair(s: str) -> str:\n    return encode_pair(s)\n");
    assert_eq!(
        alone.kind,
        vernier_tasks::OutcomeKind::Pass,
        "{}",
        alone.detail
    );
    let future = grade(
        "from __future__ import annotations\n\ndef decode_pair(s: str) -> str:\n    return encode_pair(s)\n",
    );
    assert_eq!(
        future.kind,
        vernier_tasks::OutcomeKind::Pass,
        "{}",
        future.detail
    );
    let evidence = future.evidence.expect("the graded program is kept");
    assert!(
        evidence
            .submission
            .starts_with("from __future__ import annotations\n"),
        "{}",
        evidence.submission
    );
    let wrong = grade("def decode_pair(s: str) -> str:\n    return s\n");
    assert_eq!(
        wrong.kind,
        vernier_tasks::OutcomeKind::Wrong,
        "{}",
        wrong.detail
    );
}
