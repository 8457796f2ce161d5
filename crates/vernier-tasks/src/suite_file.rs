//! A user's suite read from a `.toml` or `.json` file (the crate docs give the format).

use std::path::Path;
#[cfg(feature = "grader")]
use std::path::PathBuf;
#[cfg(feature = "grader")]
use std::time::Duration;

use serde::Deserialize;
#[cfg(feature = "grader")]
use vernier_grader::{Case, Guard};

use crate::answer::{gcd, parse_fraction};
use crate::budgets::Budgets;
#[cfg(feature = "grader")]
use crate::code_check::{CodeCheck, CodeControl, ExpectedFailure};
use crate::error::SuiteError;
use crate::suite::Suite;
use crate::task::{Category, Checker, Message, Task};

impl Suite {
    /// Reads a user-defined suite from a `.toml` or `.json` file; code tasks' harness, cases,
    /// reference and control files are read relative to the suite file. See the crate docs
    /// for the format.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, SuiteError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SuiteError::Read {
            path: path.to_owned(),
            source,
        })?;
        let file: SuiteFile = match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => toml::from_str(&text).map_err(|e| SuiteError::Parse {
                path: path.to_owned(),
                message: e.to_string(),
            })?,
            Some("json") => serde_json::from_str(&text).map_err(|e| SuiteError::Parse {
                path: path.to_owned(),
                message: e.to_string(),
            })?,
            _ => {
                return Err(SuiteError::UnknownFormat {
                    path: path.to_owned(),
                });
            }
        };
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        let budgets = file.budgets.unwrap_or_default();
        let mut tasks: Vec<Task> = Vec::with_capacity(file.tasks.len());
        for entry in file.tasks {
            if tasks.iter().any(|t| t.id == entry.id) {
                return Err(SuiteError::DuplicateId {
                    path: path.to_owned(),
                    id: entry.id,
                });
            }
            tasks.push(entry.into_task(path, base, &budgets)?);
        }
        Ok(Self::new(file.name, tasks))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: String,
    budgets: Option<Budgets>,
    #[serde(default)]
    tasks: Vec<TaskEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskEntry {
    id: String,
    category: Category,
    prompt: String,
    system: Option<String>,
    budget_tokens: Option<u32>,
    answer: Option<AnswerEntry>,
    /// With a `fraction` answer: accept any form equal in value, not only the reduced one.
    allow_unreduced: Option<bool>,
    #[serde(default)]
    positive: bool,
    #[cfg(feature = "grader")]
    code: Option<CodeEntry>,
    /// Without the `grader` feature a code task is refused; its `code` table is read as is.
    #[cfg(not(feature = "grader"))]
    code: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum AnswerEntry {
    Integer(i128),
    Fraction(String),
    Exact(String),
}

#[cfg(feature = "grader")]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CodeEntry {
    harness: PathBuf,
    cases: PathBuf,
    reference: Option<PathBuf>,
    #[serde(default)]
    guards: Vec<String>,
    #[serde(default = "default_time_floor")]
    time_floor_seconds: f64,
    #[serde(default)]
    negative_controls: Vec<ControlEntry>,
}

#[cfg(feature = "grader")]
fn default_time_floor() -> f64 {
    5.0
}

#[cfg(feature = "grader")]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ControlEntry {
    name: String,
    path: PathBuf,
    must_fail_with: ExpectedFailure,
}

#[cfg(feature = "grader")]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    name: String,
    input: serde_json::Value,
    expected: Option<serde_json::Value>,
    raises: Option<String>,
}

impl TaskEntry {
    fn into_task(
        self,
        suite_path: &Path,
        base: &Path,
        budgets: &Budgets,
    ) -> Result<Task, SuiteError> {
        let invalid = |reason: String| SuiteError::InvalidTask {
            path: suite_path.to_owned(),
            id: self.id.clone(),
            reason,
        };
        if self.allow_unreduced.is_some() && !matches!(self.answer, Some(AnswerEntry::Fraction(_)))
        {
            return Err(invalid(
                "`allow_unreduced` applies only to a task whose answer is a `fraction`".to_owned(),
            ));
        }
        let checker = match (self.category, &self.answer, &self.code) {
            (Category::MATH, Some(answer), None) => match answer {
                AnswerEntry::Integer(value) => Checker::Integer(*value),
                AnswerEntry::Exact(value) => Checker::ExactString(value.trim().to_owned()),
                AnswerEntry::Fraction(text) => {
                    let (num, den) = parse_fraction(text).ok_or_else(|| {
                        invalid(format!("fraction {text:?} is not of the form p/q"))
                    })?;
                    if gcd(num, den) > 1 {
                        return Err(invalid(format!(
                            "fraction {text:?} is not reduced (write the gold answer reduced; \
                             `allow_unreduced = true` lets the model's answer be unreduced)"
                        )));
                    }
                    Checker::Fraction {
                        num,
                        den,
                        allow_unreduced: self.allow_unreduced.unwrap_or(false),
                    }
                }
            },
            #[cfg(feature = "grader")]
            (Category::CODE, None, Some(code)) => Checker::Code(code.load(base, &invalid)?),
            #[cfg(not(feature = "grader"))]
            (Category::CODE, None, Some(_)) => {
                let _ = base;
                return Err(invalid(
                    "code tasks need vernier-tasks' `grader` feature (the Docker sandbox)"
                        .to_owned(),
                ));
            }
            (Category::MATH, _, _) => {
                return Err(invalid(
                    "a math task needs `answer` and no `code`".to_owned(),
                ));
            }
            (Category::CODE, _, _) => {
                return Err(invalid(
                    "a code task needs `code` and no `answer`".to_owned(),
                ));
            }
            _ => {
                return Err(invalid(format!(
                    "{} tasks are not supported in suite files; use category math or code",
                    self.category
                )));
            }
        };
        let budget = self
            .budget_tokens
            .unwrap_or_else(|| budgets.for_category(self.category));
        let mut task = Task::new(
            self.id.clone(),
            self.category,
            self.prompt.clone(),
            budget,
            checker,
        );
        if let Some(system) = &self.system {
            task.messages.insert(0, Message::system(system.clone()));
        }
        task.expect_positive = self.positive;
        Ok(task)
    }
}

#[cfg(feature = "grader")]
impl CodeEntry {
    fn load(
        &self,
        base: &Path,
        invalid: &dyn Fn(String) -> SuiteError,
    ) -> Result<CodeCheck, SuiteError> {
        let read = |relative: &Path| {
            let full = base.join(relative);
            std::fs::read_to_string(&full).map_err(|source| SuiteError::Read { path: full, source })
        };
        let harness = read(&self.harness)?;
        let cases_text = read(&self.cases)?;
        let entries: Vec<CaseEntry> =
            serde_json::from_str(&cases_text).map_err(|e| SuiteError::Parse {
                path: base.join(&self.cases),
                message: e.to_string(),
            })?;
        let mut cases = Vec::with_capacity(entries.len());
        for entry in entries {
            cases.push(match (entry.expected, entry.raises) {
                (Some(expected), None) => Case::new(entry.name, entry.input, expected),
                (None, Some(exception)) => Case::raises(entry.name, entry.input, exception),
                _ => {
                    return Err(invalid(format!(
                        "case {:?} needs exactly one of `expected` and `raises`",
                        entry.name
                    )));
                }
            });
        }
        if cases.is_empty() {
            return Err(invalid("the cases file holds no cases".to_owned()));
        }
        // `try_from_secs_f64` refuses NaN, negative and too-large values instead of panicking.
        let time_floor = Duration::try_from_secs_f64(self.time_floor_seconds)
            .ok()
            .filter(|floor| !floor.is_zero())
            .ok_or_else(|| {
                invalid(format!(
                    "time_floor_seconds = {} is not a usable time limit; give a positive number of seconds such as 5.0",
                    self.time_floor_seconds
                ))
            })?;
        let mut check = CodeCheck::new(harness, cases, time_floor);
        check.guards = self
            .guards
            .iter()
            .map(|name| Guard::ForbiddenName(name.clone()))
            .collect();
        check.reference = self.reference.as_deref().map(read).transpose()?;
        for control in &self.negative_controls {
            check.controls.push(CodeControl {
                name: control.name.clone(),
                code: read(&control.path)?,
                must_fail_with: control.must_fail_with,
                integrity: false,
            });
        }
        Ok(check)
    }
}
