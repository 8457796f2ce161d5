//! The ten coding tasks of the bundled suite.
//!
//! Each task is a [`CodeTaskSpec`]: the prompt (exact signature, behaviour and edge
//! cases), the hidden harness that calls the submission and turns its answer into plain
//! JSON, a Python reference that must pass every case, the negative controls that must
//! fail, and the cases. Every expected value is computed here, in Rust, by a small
//! reference implementation or generator in the task's module; large inputs are
//! generated from fixed seeds, so the suite is the same on every machine.
//!
//! The harnesses never compare: they return what the submission gave, converted to
//! exact built-in types (`python/harness_common.py`), and the grader compares on the
//! Rust side. Python sources live under `python/` and are compiled in with
//! `include_str!`.
//!
//! Time limits: the self-check measures the reference in the sandbox and grants
//! `max(time_floor, 10 × reference time)`. The workloads are sized so that the
//! controls meant to time out are far beyond that (the O(n) LRU eviction control is
//! about 700 times slower than the reference on the 200,000-operation case).

#[cfg(feature = "grader")]
mod count_islands;
#[cfg(feature = "grader")]
mod csv_split;
#[cfg(feature = "grader")]
mod expression_eval;
#[cfg(all(test, feature = "grader"))]
mod local_runner;
#[cfg(feature = "grader")]
mod lru_cache;
#[cfg(feature = "grader")]
mod maze_path;
#[cfg(feature = "grader")]
mod merge_intervals;
#[cfg(feature = "grader")]
mod parse_duration;
#[cfg(feature = "grader")]
mod roman_numerals;
#[cfg(feature = "grader")]
mod spec;
#[cfg(feature = "grader")]
mod topo_order;
#[cfg(feature = "grader")]
mod wrap_text;

#[cfg(feature = "grader")]
use crate::code_check::ExpectedFailure;
#[cfg(feature = "grader")]
use crate::draw::Draw;
use crate::kind::Kind;
use crate::task::{Category, Checker};
#[cfg(feature = "grader")]
pub(crate) use spec::{CaseDraw, CodeTaskSpec, NegativeControl};

impl Category {
    /// Coding tasks graded by hidden tests in a sandbox.
    pub const CODE: Self = Self::new("code");
}

/// The code family: a program graded by hidden tests in the Docker sandbox.
pub(crate) const KIND: Kind = Kind {
    category: Category::CODE,
    description: "coding tasks graded by hidden tests in a sandbox",
    default_budget: 12_000,
    fits: fits_code,
    prove: None,
};

#[cfg(feature = "grader")]
fn fits_code(checker: &Checker) -> bool {
    matches!(checker, Checker::Code(_))
}

#[cfg(not(feature = "grader"))]
fn fits_code(_: &Checker) -> bool {
    false
}

/// The coding tasks, in the catalogue's order, with the cases of `draw`.
#[cfg(feature = "grader")]
pub(crate) fn code_task_specs(draw: Draw) -> Vec<CodeTaskSpec> {
    let draw = CaseDraw { draw };
    vec![
        merge_intervals::spec(draw),
        expression_eval::spec(draw),
        lru_cache::spec(draw),
        count_islands::spec(draw),
        parse_duration::spec(draw),
        roman_numerals::spec(draw),
        topo_order::spec(draw),
        csv_split::spec(draw),
        maze_path::spec(draw),
        wrap_text::spec(draw),
    ]
}

/// Grading-integrity controls, written as submissions for `merge-intervals`.
///
/// Each is built so that it would pass if the sandbox let it through: the network,
/// write and forgery controls return right answers when their trick works.
#[cfg(feature = "grader")]
pub(crate) fn integrity_controls() -> Vec<NegativeControl> {
    vec![
        NegativeControl {
            name: "eq-always-true",
            code: include_str!("python/integrity/always_equal.py"),
            must_fail_with: ExpectedFailure::FailedCases,
        },
        NegativeControl {
            name: "sys-exit-at-import",
            code: include_str!("python/integrity/exit_at_import.py"),
            must_fail_with: ExpectedFailure::AnyFailure,
        },
        NegativeControl {
            name: "exit-during-call",
            code: include_str!("python/integrity/exit_during_call.py"),
            must_fail_with: ExpectedFailure::AnyFailure,
        },
        NegativeControl {
            name: "forged-result-lines",
            code: include_str!("python/integrity/forged_results.py"),
            must_fail_with: ExpectedFailure::FailedCases,
        },
        NegativeControl {
            name: "infinite-loop",
            code: include_str!("python/integrity/infinite_loop.py"),
            must_fail_with: ExpectedFailure::Timeout,
        },
        NegativeControl {
            name: "memory-bomb",
            code: include_str!("python/integrity/memory_bomb.py"),
            must_fail_with: ExpectedFailure::OutOfMemory,
        },
        NegativeControl {
            name: "fork-bomb",
            code: include_str!("python/integrity/fork_bomb.py"),
            must_fail_with: ExpectedFailure::Timeout,
        },
        NegativeControl {
            name: "network-call",
            code: concat!(
                include_str!("python/integrity/network_call.py"),
                include_str!("python/integrity/correct_merge.py")
            ),
            must_fail_with: ExpectedFailure::FailedCases,
        },
        NegativeControl {
            name: "write-outside-tmp",
            code: concat!(
                include_str!("python/integrity/write_outside.py"),
                include_str!("python/integrity/correct_merge.py")
            ),
            must_fail_with: ExpectedFailure::FailedCases,
        },
        NegativeControl {
            name: "write-work-dir",
            code: concat!(
                include_str!("python/integrity/write_work_dir.py"),
                include_str!("python/integrity/correct_merge.py")
            ),
            must_fail_with: ExpectedFailure::FailedCases,
        },
    ]
}

#[cfg(all(test, feature = "grader"))]
mod tests {
    use std::time::Duration;

    use std::collections::HashSet;

    use super::*;

    const SPEC_ORDER: [&str; 10] = [
        "merge-intervals",
        "expression-eval",
        "lru-cache",
        "count-islands",
        "parse-duration",
        "roman-numerals",
        "topo-order",
        "csv-split",
        "maze-path",
        "wrap-text",
    ];

    #[test]
    fn the_ten_tasks_come_in_catalogue_order() {
        let ids: Vec<&str> = code_task_specs(Draw::BUNDLED)
            .iter()
            .map(|spec| spec.id)
            .collect();
        assert_eq!(ids, SPEC_ORDER);
    }

    #[test]
    fn every_task_is_complete() {
        for spec in code_task_specs(Draw::BUNDLED) {
            assert!(
                spec.prompt.contains("```python"),
                "{}: prompt lacks the answer format",
                spec.id
            );
            assert!(
                spec.harness.contains("def run_case(solution, case_input)"),
                "{}",
                spec.id
            );
            assert!(
                spec.harness.contains("def _exact_int"),
                "{}: harness lacks the helpers",
                spec.id
            );
            assert!(
                !spec.negative_controls.is_empty(),
                "{}: no negative control",
                spec.id
            );
            assert!(
                spec.cases.len() >= 5,
                "{}: only {} cases",
                spec.id,
                spec.cases.len()
            );
            assert!(spec.time_floor >= Duration::from_secs(1), "{}", spec.id);
            let names: HashSet<&str> = spec.cases.iter().map(|case| case.name.as_str()).collect();
            assert_eq!(
                names.len(),
                spec.cases.len(),
                "{}: duplicate case names",
                spec.id
            );
        }
    }

    #[test]
    fn case_inputs_stay_small_enough_to_upload() {
        let top = Draw::new(5, 3).expect("level");
        for spec in code_task_specs(Draw::BUNDLED)
            .into_iter()
            .chain(code_task_specs(top))
        {
            let bytes: usize = spec
                .cases
                .iter()
                .map(|case| {
                    serde_json::to_string(&case.input)
                        .expect("inputs serialise")
                        .len()
                })
                .sum();
            assert!(bytes < 4 << 20, "{}: {bytes} bytes of inputs", spec.id);
        }
    }

    /// Runs every reference and every negative control with the local `python3`.
    /// References must pass every case (generous limit: this machine is shared and
    /// noisy). Controls that must fail by cases get a generous limit too, so they fail
    /// on answers, not time. Controls that must time out are killed at 30 × the
    /// reference's local time (three times stricter than the sandbox's 10×, to prove
    /// the margin), and must not finish by then.
    #[test]
    fn references_pass_and_controls_fail_on_local_python() {
        let generous = Duration::from_secs(60);
        let mut problems = Vec::new();
        for spec in code_task_specs(Draw::BUNDLED) {
            let reference = local_runner::run(
                spec.reference,
                spec.harness,
                &spec.cases,
                &spec.guards,
                generous,
            );
            if reference.outcome != local_runner::LocalOutcome::Passed {
                problems.push(format!(
                    "{}: reference gave {:?}",
                    spec.id, reference.outcome
                ));
                continue;
            }
            for control in &spec.negative_controls {
                let limit = match control.must_fail_with {
                    ExpectedFailure::Timeout => spec.time_floor.max(reference.elapsed * 30),
                    _ => generous,
                };
                let run =
                    local_runner::run(control.code, spec.harness, &spec.cases, &spec.guards, limit);
                let right = match (control.must_fail_with, &run.outcome) {
                    (
                        ExpectedFailure::FailedCases,
                        local_runner::LocalOutcome::FailedCases { .. },
                    )
                    | (ExpectedFailure::Timeout, local_runner::LocalOutcome::Timeout)
                    | (ExpectedFailure::GuardViolation, local_runner::LocalOutcome::Guard(_)) => {
                        true
                    }
                    (ExpectedFailure::AnyFailure, outcome) => {
                        *outcome != local_runner::LocalOutcome::Passed
                    }
                    _ => false,
                };
                if !right {
                    problems.push(format!(
                        "{}: control {} must fail with {:?} but gave {:?} after {:?}",
                        spec.id, control.name, control.must_fail_with, run.outcome, run.elapsed
                    ));
                }
                if spec.id == "count-islands"
                    && !matches!(&run.outcome, local_runner::LocalOutcome::FailedCases { raised, .. } if raised.iter().any(|name| name == "RecursionError"))
                {
                    problems.push(format!(
                        "count-islands: the recursive control did not hit RecursionError: {:?}",
                        run.outcome
                    ));
                }
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn guard_controls_are_legal_python_apart_from_the_guard() {
        // Without guards, the eval-based control runs and still fails the malformed
        // cases ("2**3" is 8 to eval), so the guard is not the only line of defence.
        let spec = code_task_specs(Draw::BUNDLED)
            .into_iter()
            .find(|spec| spec.id == "expression-eval")
            .expect("task exists");
        let control = spec
            .negative_controls
            .iter()
            .find(|control| control.name == "uses-eval")
            .expect("control exists");
        let run = local_runner::run(
            control.code,
            spec.harness,
            &spec.cases,
            &[],
            Duration::from_secs(60),
        );
        assert!(
            matches!(&run.outcome, local_runner::LocalOutcome::FailedCases { failed, .. } if failed.contains(&"power".to_owned())),
            "{:?}",
            run.outcome
        );
    }

    #[test]
    fn harmless_integrity_controls_fail_locally_and_all_are_valid_python() {
        let spec = code_task_specs(Draw::BUNDLED)
            .into_iter()
            .next()
            .expect("merge-intervals comes first");
        for control in integrity_controls() {
            if ["eq-always-true", "sys-exit-at-import", "exit-during-call"].contains(&control.name)
            {
                let run = local_runner::run(
                    control.code,
                    spec.harness,
                    &spec.cases,
                    &spec.guards,
                    Duration::from_secs(60),
                );
                assert_ne!(
                    run.outcome,
                    local_runner::LocalOutcome::Passed,
                    "{}",
                    control.name
                );
            }
        }
        let mut sources: Vec<&str> = integrity_controls()
            .iter()
            .map(|control| control.code)
            .collect();
        let specs = code_task_specs(Draw::BUNDLED);
        for spec in &specs {
            sources.extend([spec.harness, spec.reference]);
            sources.extend(spec.negative_controls.iter().map(|control| control.code));
        }
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import ast, json, sys\nfor source in json.load(sys.stdin): ast.parse(source)",
            ])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("python3 must be installed to run the coding-task tests");
        let stdin = child.stdin.take().expect("piped stdin");
        serde_json::to_writer(stdin, &sources).expect("send the sources");
        assert!(
            child.wait().expect("python3 runs").success(),
            "a Python source does not parse"
        );
    }

    #[test]
    fn integrity_controls_cover_the_spec() {
        let controls = integrity_controls();
        let failure = |name: &str| {
            controls
                .iter()
                .find(|control| control.name == name)
                .unwrap_or_else(|| panic!("missing control {name}"))
                .must_fail_with
        };
        assert_eq!(failure("eq-always-true"), ExpectedFailure::FailedCases);
        assert_eq!(failure("sys-exit-at-import"), ExpectedFailure::AnyFailure);
        assert_eq!(failure("forged-result-lines"), ExpectedFailure::FailedCases);
        assert_eq!(failure("infinite-loop"), ExpectedFailure::Timeout);
        assert_eq!(failure("memory-bomb"), ExpectedFailure::OutOfMemory);
        assert_eq!(failure("fork-bomb"), ExpectedFailure::Timeout);
        assert_eq!(failure("network-call"), ExpectedFailure::FailedCases);
        assert_eq!(failure("write-outside-tmp"), ExpectedFailure::FailedCases);
        assert_eq!(failure("write-work-dir"), ExpectedFailure::FailedCases);
        for control in &controls {
            assert!(
                control.code.contains("def merge_intervals("),
                "{}",
                control.name
            );
        }
    }
}
