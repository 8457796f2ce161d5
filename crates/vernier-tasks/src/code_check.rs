//! A code task's check: the hidden harness and cases, guards, limits, and the controls that
//! prove the tests bite (the grader feature only).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use vernier_grader::{Case, GradeReason, Guard, Limits, Submission};

/// The task's code check: hidden harness and cases, guards, limits and the controls that
/// prove the tests bite.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CodeCheck {
    /// Python defining `run_case(solution, case_input)`.
    pub harness: String,
    /// Hidden cases with their expected values.
    pub cases: Vec<Case>,
    /// Forbidden names in the submission.
    pub guards: Vec<Guard>,
    /// Sandbox limits; `wall_time` is the task's time limit (its floor until a self-check
    /// calibrates it, see [`crate::SelfCheckReport::apply`]).
    pub limits: Limits,
    /// The smallest time limit the task may get.
    pub time_floor: Duration,
    /// The reference solution, which must pass every case.
    pub reference: Option<String>,
    /// Submissions that must fail.
    pub controls: Vec<CodeControl>,
    /// Lines put before every submission when it is graded (a code dataset's prompt imports);
    /// empty for the bundled tasks.
    pub preamble: String,
}

impl CodeCheck {
    /// A code check with default limits whose time limit is `time_floor`.
    pub fn new(harness: impl Into<String>, cases: Vec<Case>, time_floor: Duration) -> Self {
        let mut limits = Limits::default();
        limits.wall_time = time_floor;
        Self {
            harness: harness.into(),
            cases,
            guards: Vec::new(),
            limits,
            time_floor,
            reference: None,
            controls: Vec::new(),
            preamble: String::new(),
        }
    }

    /// The program graded for `code`: the preamble, then the code; the code's `from __future__`
    /// imports stay first, where Python requires them.
    pub fn graded_program(&self, code: &str) -> String {
        if self.preamble.is_empty() {
            return code.to_owned();
        }
        let (future, rest): (Vec<&str>, Vec<&str>) = code
            .lines()
            .partition(|line| line.starts_with("from __future__ import"));
        if future.is_empty() {
            return format!("{}{code}", self.preamble);
        }
        format!(
            "{}\n{}{}\n",
            future.join("\n"),
            self.preamble,
            rest.join("\n")
        )
    }

    /// A submission of `code` (after the preamble) under this check's harness, cases, limits
    /// and guards.
    pub fn submission(&self, code: impl Into<String>) -> Submission {
        let code: String = code.into();
        Submission::new(
            self.graded_program(&code),
            self.harness.clone(),
            self.cases.clone(),
        )
        .with_limits(self.limits)
        .with_guards(self.guards.clone())
    }
}

/// A submission that must fail, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeControl {
    /// Short name, e.g. `returns-input`.
    pub name: String,
    /// The Python source.
    pub code: String,
    /// The failure it must produce.
    pub must_fail_with: ExpectedFailure,
    /// A grading-integrity control (sandbox escape or result forgery) rather than a
    /// task-specific negative control.
    pub integrity: bool,
}

/// The failure a control must produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExpectedFailure {
    /// Some hidden case fails (or results are missing).
    FailedCases,
    /// The time limit kills it.
    Timeout,
    /// The memory limit kills it.
    OutOfMemory,
    /// A static guard rejects it.
    GuardViolation,
    /// Any failure except an infrastructure one: used where more than one verdict is
    /// right (a submission that exits at import gives no results; the grader may call
    /// that failed cases or a crash).
    AnyFailure,
}

impl ExpectedFailure {
    /// Whether a grade's reason is this failure.
    pub fn matches(self, reason: &GradeReason) -> bool {
        match self {
            Self::FailedCases => matches!(reason, GradeReason::FailedCases(_)),
            Self::Timeout => matches!(reason, GradeReason::Timeout),
            Self::OutOfMemory => matches!(reason, GradeReason::OutOfMemory),
            Self::GuardViolation => matches!(reason, GradeReason::GuardViolation(_)),
            Self::AnyFailure => !matches!(reason, GradeReason::Passed | GradeReason::Infra(_)),
        }
    }
}
