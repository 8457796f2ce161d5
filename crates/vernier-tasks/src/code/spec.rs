//! What each coding task is made of, shared by the ten tasks' files: the spec, its negative
//! controls, the draw of generated cases, and the macros that compile in the Python sources.

use std::time::Duration;

use vernier_grader::{Case, Guard};
use vernier_stats::SplitMix64;

use crate::code_check::ExpectedFailure;
use crate::draw::Draw;

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
    pub(crate) fn described(description: &str) -> Self {
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

/// The harness of a task: the shared helpers followed by the task's `run_case`.
macro_rules! harness {
    ($task:literal) => {
        concat!(
            include_str!("python/harness_common.py"),
            include_str!(concat!("python/", $task, "/harness.py"))
        )
    };
}
pub(crate) use harness;

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
        $crate::code::spec::CodeTaskSpec {
            id: $id,
            harness: $crate::code::spec::harness!($folder),
            reference: include_str!(concat!("python/", $folder, "/reference.py")),
            negative_controls: vec![$crate::code::spec::NegativeControl {
                name: $control,
                code: include_str!(concat!("python/", $folder, "/", $file)),
                must_fail_with: $crate::code_check::ExpectedFailure::FailedCases,
            }],
            cases: $cases,
            ..$crate::code::spec::CodeTaskSpec::described($description)
        }
    };
}
pub(crate) use single_control_spec;

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
