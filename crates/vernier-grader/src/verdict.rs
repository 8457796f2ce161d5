//! Turning what came out of a container into a [`Grade`].

use std::time::Duration;

use serde_json::Value;

use crate::compare::{compare, render, shorten};
use crate::config::{Expected, Submission};
use crate::grade::{CaseOutcome, Grade, GradeReason};
use crate::protocol::{CapturedOutput, RecordKey};

/// What the sandbox observed about one run.
#[derive(Debug)]
pub(crate) struct RunObservation {
    pub(crate) output: CapturedOutput,
    pub(crate) timed_out: bool,
    pub(crate) exit_code: Option<i64>,
    pub(crate) oom_killed: bool,
    pub(crate) wall_time: Duration,
}

/// Grades a finished run. Expected values are only ever read here, outside the container.
pub(crate) fn judge(submission: &Submission, run: RunObservation, image_digest: &str) -> Grade {
    let output = run.output;
    let cases: Vec<CaseOutcome> = submission
        .cases
        .iter()
        .enumerate()
        .map(|(index, case)| {
            let (passed, detail) = match output
                .records
                .get(&RecordKey::Case(index))
                .map(Vec::as_slice)
            {
                None | Some([]) if output.n_malformed > 0 => (
                    false,
                    format!("no result ({} unreadable result lines)", output.n_malformed),
                ),
                None | Some([]) => (false, "no result".to_owned()),
                Some([record]) => judge_case(&case.expected, record),
                Some(_) => (false, "more than one result".to_owned()),
            };
            CaseOutcome {
                name: case.name.clone(),
                passed,
                detail,
            }
        })
        .collect();
    let setup = output
        .records
        .get(&RecordKey::Setup)
        .and_then(|records| records.first());
    let failed: Vec<String> = cases
        .iter()
        .filter(|case| !case.passed)
        .map(|case| case.name.clone())
        .collect();

    // A case process killed by the kernel's OOM killer ends the run; the container's own
    // flag covers the runner itself being killed (and may or may not be set for a child).
    let case_out_of_memory = output.records.iter().any(|(key, records)| {
        matches!(key, RecordKey::Case(_))
            && records
                .iter()
                .any(|record| record.get("out_of_memory") == Some(&Value::Bool(true)))
    });
    let oom_killed = run.oom_killed || case_out_of_memory;

    let reason = if run.timed_out {
        GradeReason::Timeout
    } else if oom_killed {
        GradeReason::OutOfMemory
    } else if let Some(setup) = setup {
        let stage = setup
            .get("stage")
            .and_then(Value::as_str)
            .unwrap_or("setup");
        let raised = exception_summary(setup);
        match stage {
            "solution" => GradeReason::Crashed(format!("solution.py raised on import: {raised}")),
            other => GradeReason::Infra(format!("the runner failed at {other}: {raised}")),
        }
    } else if run.exit_code != Some(0) {
        GradeReason::Crashed(exit_description(run.exit_code))
    } else if failed.is_empty() {
        GradeReason::Passed
    } else {
        GradeReason::FailedCases(failed)
    };

    let cases = if setup.is_some() {
        cases
            .into_iter()
            .map(|case| CaseOutcome {
                detail: "not run: the runner stopped before the cases".to_owned(),
                ..case
            })
            .collect()
    } else {
        cases
    };

    Grade {
        reason,
        n_expected: submission.cases.len(),
        cases,
        stdout_excerpt: output.stdout,
        stderr_excerpt: output.stderr,
        output_truncated: output.truncated,
        wall_time: run.wall_time,
        exit_code: run.exit_code,
        oom_killed,
        image_digest: image_digest.to_owned(),
    }
}

fn judge_case(expected: &Expected, record: &Value) -> (bool, String) {
    if let Some(actual) = record.get("value") {
        return match expected {
            Expected::Value(expected) => match compare(expected, actual) {
                Ok(()) => (true, "ok".to_owned()),
                Err(message) => (false, message),
            },
            Expected::Raises(class) => (
                false,
                format!("expected {class} to be raised, got {}", render(actual)),
            ),
        };
    }
    if record.get("raised").is_some() {
        let summary = exception_summary(record);
        let raised_expected =
            match expected {
                Expected::Raises(class) => record
                    .get("raised")
                    .and_then(Value::as_array)
                    .is_some_and(|names| {
                        names
                            .iter()
                            .any(|name| name.as_str() == Some(class.as_str()))
                    }),
                Expected::Value(_) => false,
            };
        return (raised_expected, format!("raised {summary}"));
    }
    if let Some(why) = record.get("unserialisable") {
        let why = why.as_str().unwrap_or("?");
        return (
            false,
            format!(
                "the result could not be serialised as JSON ({})",
                shorten(why, 200)
            ),
        );
    }
    if let Some(why) = record.get("died").and_then(Value::as_str) {
        // The case's process ended before sending a result: an exit, a crash or a kill.
        return (false, shorten(why, 200));
    }
    if let Some(why) = record.get("not_run").and_then(Value::as_str) {
        return (false, format!("not run: {}", shorten(why, 200)));
    }
    if let Some(size) = record.get("too_large") {
        return (
            false,
            format!("the result was too large ({size} bytes of JSON)"),
        );
    }
    (false, "unreadable result".to_owned())
}

/// `ValueError: message` from a record's `raised` and `message`.
fn exception_summary(record: &Value) -> String {
    let class = record
        .get("raised")
        .and_then(Value::as_array)
        .and_then(|names| names.first())
        .and_then(Value::as_str)
        .unwrap_or("an exception");
    match record.get("message").and_then(Value::as_str) {
        Some(message) if !message.is_empty() => format!("{class}: {}", shorten(message, 200)),
        _ => class.to_owned(),
    }
}

fn exit_description(exit_code: Option<i64>) -> String {
    match exit_code {
        None => "no exit code".to_owned(),
        Some(code) if code > 128 && code < 160 => {
            let signal = match code - 128 {
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                15 => " (SIGTERM)",
                _ => "",
            };
            format!("exit code {code}{signal}")
        }
        Some(code) => format!("exit code {code}"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::Case;

    fn submission() -> Submission {
        Submission::new(
            "",
            "",
            vec![
                Case::new("one", json!(1), json!(1)),
                Case::raises("bad", json!(-1), "ValueError"),
            ],
        )
    }

    fn run(records: Vec<(RecordKey, Value)>, exit_code: Option<i64>) -> RunObservation {
        let mut map: BTreeMap<RecordKey, Vec<Value>> = BTreeMap::new();
        for (key, value) in records {
            map.entry(key).or_default().push(value);
        }
        RunObservation {
            output: CapturedOutput {
                records: map,
                ..CapturedOutput::default()
            },
            timed_out: false,
            exit_code,
            oom_killed: false,
            wall_time: Duration::from_millis(5),
        }
    }

    fn raised(names: &[&str]) -> Value {
        json!({"raised": names, "message": "negative"})
    }

    #[test]
    fn passes_when_every_case_matches() {
        let grade = judge(
            &submission(),
            run(
                vec![
                    (RecordKey::Case(0), json!({"value": 1.0})),
                    (
                        RecordKey::Case(1),
                        raised(&["ValueError", "Exception", "BaseException"]),
                    ),
                ],
                Some(0),
            ),
            "sha256:x",
        );
        assert_eq!(grade.reason, GradeReason::Passed);
        assert_eq!(grade.n_passed(), 2);
        assert_eq!(grade.cases[1].detail, "raised ValueError: negative");
    }

    #[test]
    fn a_subclass_satisfies_raises() {
        let grade = judge(
            &submission(),
            run(
                vec![
                    (RecordKey::Case(0), json!({"value": 1})),
                    (
                        RecordKey::Case(1),
                        raised(&["JSONDecodeError", "ValueError", "Exception"]),
                    ),
                ],
                Some(0),
            ),
            "",
        );
        assert_eq!(grade.reason, GradeReason::Passed);
    }

    #[test]
    fn missing_duplicate_and_wrong_results_fail_by_name() {
        let grade = judge(
            &submission(),
            run(vec![(RecordKey::Case(0), json!({"value": 2}))], Some(0)),
            "",
        );
        assert_eq!(
            grade.reason,
            GradeReason::FailedCases(vec!["one".into(), "bad".into()])
        );
        assert_eq!(grade.cases[0].detail, "expected 1, got 2");
        assert_eq!(grade.cases[1].detail, "no result");

        let grade = judge(
            &submission(),
            run(
                vec![
                    (RecordKey::Case(0), json!({"value": 1})),
                    (RecordKey::Case(0), json!({"value": 1})),
                    (RecordKey::Case(1), raised(&["TypeError"])),
                ],
                Some(0),
            ),
            "",
        );
        assert_eq!(grade.cases[0].detail, "more than one result");
        assert_eq!(grade.cases[1].detail, "raised TypeError: negative");
    }

    #[test]
    fn unserialisable_results_fail() {
        let grade = judge(
            &submission(),
            run(
                vec![(
                    RecordKey::Case(0),
                    json!({"unserialisable": "TypeError: Object of type X is not JSON serializable"}),
                )],
                Some(0),
            ),
            "",
        );
        assert!(!grade.cases[0].passed);
        assert!(
            grade.cases[0].detail.contains("could not be serialised"),
            "{}",
            grade.cases[0].detail
        );
    }

    #[test]
    fn timeout_oom_and_exit_codes_come_first() {
        let mut timed_out = run(vec![], Some(137));
        timed_out.timed_out = true;
        assert_eq!(
            judge(&submission(), timed_out, "").reason,
            GradeReason::Timeout
        );
        let mut oom = run(vec![], Some(137));
        oom.oom_killed = true;
        assert_eq!(
            judge(&submission(), oom, "").reason,
            GradeReason::OutOfMemory
        );
        let crashed = judge(
            &submission(),
            run(vec![(RecordKey::Case(0), json!({"value": 1}))], Some(139)),
            "",
        );
        assert_eq!(
            crashed.reason,
            GradeReason::Crashed("exit code 139 (SIGSEGV)".into())
        );
    }

    #[test]
    fn a_dead_case_process_fails_its_case_and_an_oom_kill_is_out_of_memory() {
        let died = json!({"died": "exited with status 0 before returning"});
        let grade = judge(
            &submission(),
            run(
                vec![
                    (RecordKey::Case(0), json!({"value": 1})),
                    (RecordKey::Case(1), died),
                ],
                Some(0),
            ),
            "",
        );
        assert_eq!(grade.reason, GradeReason::FailedCases(vec!["bad".into()]));
        assert_eq!(
            grade.cases[1].detail,
            "exited with status 0 before returning"
        );
        assert!(!grade.oom_killed);

        let oom =
            json!({"died": "killed by signal 9 (SIGKILL): out of memory", "out_of_memory": true});
        let not_run = json!({"not_run": "an earlier case ran out of memory"});
        let grade = judge(
            &submission(),
            run(
                vec![(RecordKey::Case(0), oom), (RecordKey::Case(1), not_run)],
                Some(0),
            ),
            "",
        );
        assert_eq!(grade.reason, GradeReason::OutOfMemory);
        assert!(grade.oom_killed, "a case's OOM kill sets the flag");
        assert_eq!(
            grade.cases[1].detail,
            "not run: an earlier case ran out of memory"
        );
    }

    #[test]
    fn import_failures_crash_and_harness_failures_are_infra() {
        let setup =
            json!({"stage": "solution", "raised": ["SyntaxError"], "message": "invalid syntax"});
        let grade = judge(
            &submission(),
            run(vec![(RecordKey::Setup, setup)], Some(0)),
            "",
        );
        assert_eq!(
            grade.reason,
            GradeReason::Crashed(
                "solution.py raised on import: SyntaxError: invalid syntax".into()
            )
        );
        assert!(grade.cases.iter().all(|case| !case.passed));
        let setup = json!({"stage": "harness", "raised": ["NameError"], "message": "x"});
        let grade = judge(
            &submission(),
            run(vec![(RecordKey::Setup, setup)], Some(2)),
            "",
        );
        assert!(matches!(grade.reason, GradeReason::Infra(_)));
    }
}
