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

mod count_islands;
mod csv_split;
mod expression_eval;
#[cfg(test)]
mod local_runner;
mod lru_cache;
mod maze_path;
mod merge_intervals;
mod parse_duration;
mod roman_numerals;
mod topo_order;
mod wrap_text;

use std::time::Duration;

use vernier_grader::{Case, Guard};
use vernier_stats::SplitMix64;

use crate::family::Draw;
use crate::task::ExpectedFailure;

/// One coding task: prompt, hidden harness, reference, controls and cases.
pub(crate) struct CodeTaskSpec {
    /// Stable task id, e.g. `"merge-intervals"`.
    pub(crate) id: &'static str,
    /// The full user prompt, ending with the instruction to answer in one final
    /// ```` ```python ```` block.
    pub(crate) prompt: String,
    /// Python defining `run_case(solution, case_input)`.
    pub(crate) harness: &'static str,
    /// Python reference implementation; passes every case.
    pub(crate) reference: &'static str,
    /// Submissions that must fail, each in a stated way.
    pub(crate) negative_controls: Vec<NegativeControl>,
    /// Inputs with expected values computed in Rust.
    pub(crate) cases: Vec<Case>,
    /// Static checks on the submission.
    pub(crate) guards: Vec<Guard>,
    /// The least wall time the task is granted, whatever the reference measures.
    pub(crate) time_floor: Duration,
}

impl CodeTaskSpec {
    /// What most tasks share: the prompt wrapped around `description`, no guards and the
    /// default time floor. Each task fills in the rest with struct update syntax.
    fn described(description: &str) -> Self {
        Self {
            id: "",
            prompt: prompt(description),
            harness: "",
            reference: "",
            negative_controls: Vec::new(),
            cases: Vec::new(),
            guards: Vec::new(),
            time_floor: DEFAULT_TIME_FLOOR,
        }
    }
}

/// A submission that must fail, and how.
#[derive(Debug, Clone)]
pub(crate) struct NegativeControl {
    /// Short name used in self-check failures, e.g. `"returns-input-unchanged"`.
    pub(crate) name: &'static str,
    /// The Python source submitted.
    pub(crate) code: &'static str,
    /// The failure it must produce.
    pub(crate) must_fail_with: ExpectedFailure,
}

/// How a draw shapes a code task's generated cases: each generator seed comes from the
/// run's seed (seed 0 keeps the bundled constants), the random cases' sizes and how many
/// extra random cases there are come from the level. The fixed edge cases never change, and
/// the adversarial cases the controls need (full LRU cache, 300×300 grids) never shrink
/// below their bundled size. Level 2 with seed 0 gives exactly the bundled cases.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaseDraw {
    pub(crate) draw: Draw,
}

impl CaseDraw {
    /// The generator seed of a generated case whose bundled seed is `constant`.
    pub(crate) fn seed(self, constant: u64) -> u64 {
        if self.draw.seed == 0 {
            constant
        } else {
            SplitMix64::new(constant ^ self.draw.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .next_u64()
        }
    }

    /// Percent of the bundled size a random case has: 50 / 100 / 150 / 200 / 300 by level.
    pub(crate) fn random_scale_percent(self) -> usize {
        [50, 100, 150, 200, 300][usize::from(self.draw.level.clamp(1, 5) - 1)]
    }

    /// Percent of the bundled size an adversarial case has: 100 / 100 / 125 / 150 / 200.
    pub(crate) fn adversarial_scale_percent(self) -> usize {
        [100, 100, 125, 150, 200][usize::from(self.draw.level.clamp(1, 5) - 1)]
    }

    /// A random case's size at this level.
    pub(crate) fn random_size(self, bundled: usize) -> usize {
        (bundled * self.random_scale_percent() / 100).max(1)
    }

    /// An adversarial case's size at this level.
    pub(crate) fn adversarial_size(self, bundled: usize) -> usize {
        bundled * self.adversarial_scale_percent() / 100
    }

    /// Extra random cases beyond the bundled ones: 0, 0, 1, 2, 3 by level.
    pub(crate) fn extra_cases(self) -> u64 {
        u64::from(self.draw.level.saturating_sub(2))
    }

    /// The seed of extra random case `index` (from 1) of a generator whose bundled seed is
    /// `constant`.
    pub(crate) fn extra_seed(self, constant: u64, index: u64) -> u64 {
        self.seed(constant.wrapping_add(index.wrapping_mul(0x1_0000_0000)))
    }

    /// Random cases a task without bundled random cases draws: none for the bundled suite
    /// (level 2, seed 0, which stays as it was), else `bundled_equivalent` scaled by level.
    pub(crate) fn drawn_cases(self, bundled_equivalent: usize) -> usize {
        if self.draw == Draw::BUNDLED {
            0
        } else {
            self.random_size(bundled_equivalent)
        }
    }

    /// The generator of a task's drawn cases, from the run's seed and the task's `constant`.
    pub(crate) fn generator(self, constant: u64) -> SplitMix64 {
        SplitMix64::new(
            self.seed(constant) ^ u64::from(self.draw.level).wrapping_mul(0xA24B_AED4_963E_E407),
        )
    }

    /// What the task's instance records.
    pub(crate) fn parameters(self, cases: &[Case]) -> serde_json::Value {
        serde_json::json!({
            "random_scale_percent": self.random_scale_percent(),
            "adversarial_scale_percent": self.adversarial_scale_percent(),
            "extra_random_cases": self.extra_cases(),
            "n_cases": cases.len(),
        })
    }
}

/// The coding tasks, in the catalogue's order, with the cases of `draw`.
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

/// The harness of a task: the shared helpers followed by the task's `run_case`.
macro_rules! harness {
    ($task:literal) => {
        concat!(
            include_str!("python/harness_common.py"),
            include_str!(concat!("python/", $task, "/harness.py"))
        )
    };
}
use harness;

/// The spec of a task whose one negative control must fail cases. The task's Python lives
/// in `python/<folder>/`: `harness.py`, `reference.py` and the control's file.
macro_rules! single_control_spec {
    (
        id: $id:literal,
        folder: $folder:literal,
        control: $control:literal => $file:literal,
        cases: $cases:expr,
        description: $description:expr $(,)?
    ) => {
        $crate::code::CodeTaskSpec {
            id: $id,
            harness: $crate::code::harness!($folder),
            reference: include_str!(concat!("python/", $folder, "/reference.py")),
            negative_controls: vec![$crate::code::NegativeControl {
                name: $control,
                code: include_str!(concat!("python/", $folder, "/", $file)),
                must_fail_with: $crate::task::ExpectedFailure::FailedCases,
            }],
            cases: $cases,
            ..$crate::code::CodeTaskSpec::described($description)
        }
    };
}
use single_control_spec;

/// Wraps a task's description into the full prompt.
fn prompt(description: &str) -> String {
    format!(
        "{}\n\nUse only the Python 3 standard library. Do not read input or print anything: \
         hidden tests import your code and call it directly, with a time limit.\n\n\
         Answer with your complete solution in one final ```python fenced code block.",
        description.trim_end()
    )
}

/// The usual floor of a task's wall-time limit: covers interpreter start and slow
/// sandboxes for tasks whose reference runs in milliseconds.
const DEFAULT_TIME_FLOOR: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
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
