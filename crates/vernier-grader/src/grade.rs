//! What the grader hands back.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Why a submission got its grade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GradeReason {
    /// Every case gave its expected result and the program ended cleanly.
    Passed,
    /// These cases (by name) failed or gave no result.
    FailedCases(Vec<String>),
    /// The wall-clock limit killed the container.
    Timeout,
    /// The kernel killed the container for exceeding its memory.
    OutOfMemory,
    /// The program did not get through its cases: an import error, a signal, a non-zero exit.
    Crashed(String),
    /// A static guard matched this name in the submission.
    GuardViolation(String),
    /// The reply held no code to run.
    NoCode,
    /// The engine, the image or the harness failed; not the submission's fault.
    Infra(String),
}

impl GradeReason {
    /// A short machine string: `passed`, `failed_cases:[a,b]`, `timeout`, `out_of_memory`,
    /// `crashed`, `guard:eval`, `no_code`, `infra`.
    pub fn detail(&self) -> String {
        match self {
            Self::Passed => "passed".to_owned(),
            Self::FailedCases(names) => format!("failed_cases:[{}]", names.join(",")),
            Self::Timeout => "timeout".to_owned(),
            Self::OutOfMemory => "out_of_memory".to_owned(),
            Self::Crashed(_) => "crashed".to_owned(),
            Self::GuardViolation(name) => format!("guard:{name}"),
            Self::NoCode => "no_code".to_owned(),
            Self::Infra(_) => "infra".to_owned(),
        }
    }

    /// Whether the submission passed.
    pub fn is_passed(&self) -> bool {
        matches!(self, Self::Passed)
    }
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseOutcome {
    /// The case's name.
    pub name: String,
    /// Whether the result matched.
    pub passed: bool,
    /// What happened, e.g. `"expected 3, got 4"`, `"raised TypeError: ..."`, `"no result"`.
    pub detail: String,
}

/// The grade of one submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grade {
    /// Why.
    pub reason: GradeReason,
    /// One outcome per case, in the submission's order (always `n_expected` of them).
    pub cases: Vec<CaseOutcome>,
    /// The number of cases.
    pub n_expected: usize,
    /// What the submission printed on stdout (result records removed), bounded.
    pub stdout_excerpt: String,
    /// What the submission printed on stderr, bounded.
    pub stderr_excerpt: String,
    /// Whether either stream went past the bound.
    pub output_truncated: bool,
    /// Time from container start to exit (zero when no container ran).
    #[serde(with = "duration_seconds")]
    pub wall_time: Duration,
    /// The container's exit code, when it ran.
    pub exit_code: Option<i64>,
    /// Whether the kernel's OOM killer stopped it.
    pub oom_killed: bool,
    /// The image ID (`sha256:...`) the grader ran, or empty when none ran.
    pub image_digest: String,
}

impl Grade {
    /// The number of passed cases.
    pub fn n_passed(&self) -> usize {
        self.cases.iter().filter(|case| case.passed).count()
    }

    pub(crate) fn without_run(
        reason: GradeReason,
        case_names: impl Iterator<Item = String>,
        detail: &str,
        image_digest: &str,
    ) -> Self {
        let cases: Vec<CaseOutcome> = case_names
            .map(|name| CaseOutcome {
                name,
                passed: false,
                detail: detail.to_owned(),
            })
            .collect();
        Self {
            reason,
            n_expected: cases.len(),
            cases,
            stdout_excerpt: String::new(),
            stderr_excerpt: String::new(),
            output_truncated: false,
            wall_time: Duration::ZERO,
            exit_code: None,
            oom_killed: false,
            image_digest: image_digest.to_owned(),
        }
    }
}

mod duration_seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        value: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(value.as_secs_f64())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        let seconds = f64::deserialize(deserializer)?;
        Duration::try_from_secs_f64(seconds).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_are_short_machine_strings() {
        let failed = GradeReason::FailedCases(vec!["a".into(), "b".into()]);
        assert_eq!(failed.detail(), "failed_cases:[a,b]");
        assert_eq!(
            GradeReason::GuardViolation("eval".into()).detail(),
            "guard:eval"
        );
        assert_eq!(
            GradeReason::Crashed("exit code 1".into()).detail(),
            "crashed"
        );
        assert_eq!(GradeReason::OutOfMemory.detail(), "out_of_memory");
        assert_eq!(GradeReason::NoCode.detail(), "no_code");
    }

    #[test]
    fn reasons_serialise_with_snake_case_tags() {
        let json =
            serde_json::to_string(&GradeReason::FailedCases(vec!["x".into()])).expect("serialise");
        assert_eq!(json, r#"{"failed_cases":["x"]}"#);
        assert_eq!(
            serde_json::to_string(&GradeReason::OutOfMemory).expect("serialise"),
            r#""out_of_memory""#
        );
    }

    #[test]
    fn grade_round_trips_with_seconds() {
        let mut grade = Grade::without_run(
            GradeReason::NoCode,
            ["a".to_owned()].into_iter(),
            "not run",
            "",
        );
        grade.wall_time = Duration::from_millis(1500);
        let json = serde_json::to_value(&grade).expect("serialise");
        assert_eq!(json["wall_time"], serde_json::json!(1.5));
        let back: Grade = serde_json::from_value(json).expect("deserialise");
        assert_eq!(back, grade);
    }
}
