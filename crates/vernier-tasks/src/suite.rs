//! Suites: the bundled 28 tasks and user-defined suites read from TOML or JSON files.

use std::path::Path;
#[cfg(feature = "grader")]
use std::path::PathBuf;
#[cfg(feature = "grader")]
use std::time::Duration;

use serde::Deserialize;
#[cfg(feature = "grader")]
use vernier_grader::{Case, Guard};

use crate::answer::{gcd, parse_fraction};
#[cfg(feature = "grader")]
use crate::code::{CaseDraw, code_task_specs, integrity_controls};
use crate::error::SuiteError;
use crate::family::{Draw, Instance, draw_problems};
use crate::task::{Category, Checker, Message, Task};
#[cfg(feature = "grader")]
use crate::task::{CodeCheck, CodeControl, ExpectedFailure};
use crate::tools::bundled_tool_tasks;

/// Completion-token budgets per category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct Budgets {
    /// Math and logic tasks (default 16,000).
    pub math: u32,
    /// Coding tasks (default 12,000).
    pub code: u32,
    /// Tool tasks (default 2,000).
    pub tools: u32,
    /// Long-context tasks (default 2,000).
    pub context: u32,
    /// Vision tasks (default 2,000).
    pub vision: u32,
    /// Video tasks (default 2,000).
    pub video: u32,
    /// Dataset questions.
    pub dataset: u32,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            math: 16_000,
            code: 12_000,
            tools: 2_000,
            context: crate::context::DEFAULT_CONTEXT_BUDGET,
            vision: crate::vision::DEFAULT_VISION_BUDGET,
            video: crate::video::DEFAULT_VIDEO_BUDGET,
            dataset: crate::dataset::DEFAULT_DATASET_BUDGET,
        }
    }
}

impl Budgets {
    /// The budget for a category.
    pub fn for_category(&self, category: Category) -> u32 {
        match category {
            Category::Math => self.math,
            Category::Code => self.code,
            Category::Tools => self.tools,
            Category::Context => self.context,
            Category::Vision => self.vision,
            Category::Video => self.video,
            Category::Dataset => self.dataset,
        }
    }

    /// These budgets with `category` set to `tokens`.
    #[must_use]
    pub fn with(mut self, category: Category, tokens: u32) -> Self {
        match category {
            Category::Math => self.math = tokens,
            Category::Code => self.code = tokens,
            Category::Tools => self.tools = tokens,
            Category::Context => self.context = tokens,
            Category::Vision => self.vision = tokens,
            Category::Video => self.video = tokens,
            Category::Dataset => self.dataset = tokens,
        }
        self
    }
}

/// Target prompt lengths of the probe's context tasks, in the server's tokens.
pub const PROBE_CONTEXT_LENGTHS: [u32; 2] = [1_024, 4_096];

/// Needle depths of the probe's context tasks, in percent.
pub const PROBE_CONTEXT_DEPTHS: [u8; 3] = [0, 50, 100];

/// A named list of tasks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Suite {
    /// Suite name (`hardsuite` for the bundled one).
    pub name: String,
    /// The tasks, in order.
    pub tasks: Vec<Task>,
}

impl Suite {
    /// A suite from its parts.
    pub fn new(name: impl Into<String>, tasks: Vec<Task>) -> Self {
        Self {
            name: name.into(),
            tasks,
        }
    }

    /// The bundled suite with the default budgets: 14 math, 10 code and 4 tool tasks, with
    /// every gold answer computed now from the parameters rendered into its prompt.
    pub fn bundled() -> Self {
        Self::bundled_with(Budgets::default())
    }

    /// The bundled suite with these budgets.
    pub fn bundled_with(budgets: Budgets) -> Self {
        Self::drawn(Draw::BUNDLED, budgets)
    }

    /// The bundled suite's families drawn at `draw`'s level and seed: every math parameter
    /// and every generated hidden case comes from the pair, and each task records its
    /// [`Instance`]. `Draw::BUNDLED` (level 2, seed 0) is exactly [`Suite::bundled_with`].
    pub fn drawn(draw: Draw, budgets: Budgets) -> Self {
        let mut tasks: Vec<Task> = draw_problems(draw)
            .into_iter()
            .map(|(id, problem, redraws)| {
                let mut instance = Instance::new(id, draw, problem.parameters());
                instance.redraws = redraws;
                let mut task = Task::from_problem(id, problem, budgets.math);
                task.instance = Some(instance);
                task
            })
            .collect();
        #[cfg(feature = "grader")]
        push_code_tasks(&mut tasks, &budgets, draw);
        for mut task in bundled_tool_tasks(budgets.tools) {
            task.instance = Some(Instance::new(
                task.id.clone(),
                draw,
                serde_json::Value::Object(serde_json::Map::new()),
            ));
            tasks.push(task);
        }
        Self::new("hardsuite", tasks)
    }

    /// The probe drawn from `seed`, in the spirit of a quick look at what a server can do: the
    /// vision and video suites, the context suite at [`PROBE_CONTEXT_LENGTHS`] and
    /// [`PROBE_CONTEXT_DEPTHS`] (one multi-needle task per length), and the bundled tool tasks.
    pub fn probe(seed: u64, budgets: Budgets) -> Self {
        let plan = crate::context::ContextPlan {
            lengths: PROBE_CONTEXT_LENGTHS.to_vec(),
            depths: PROBE_CONTEXT_DEPTHS.to_vec(),
            seed,
            ..crate::context::ContextPlan::default()
        };
        let mut tasks = crate::vision::vision_suite(seed, budgets.vision).tasks;
        tasks.extend(crate::video::video_suite(seed, budgets.video).tasks);
        tasks.extend(crate::context::context_suite(&plan, budgets.context).tasks);
        tasks.extend(bundled_tool_tasks(budgets.tools));
        Self::new("probe", tasks)
    }

    /// The draw every task of the suite comes from, when they all share one.
    pub fn draw(&self) -> Option<Draw> {
        let mut draws = self.tasks.iter().map(|task| {
            task.instance.as_ref().map(|instance| Draw {
                level: instance.level,
                seed: instance.seed,
            })
        });
        let first = draws.next()??;
        draws.all(|d| d == Some(first)).then_some(first)
    }

    /// Sets every task's budget from its category.
    pub fn apply_budgets(&mut self, budgets: &Budgets) {
        for task in &mut self.tasks {
            task.budget_tokens = budgets.for_category(task.category);
        }
    }

    /// The task with this id.
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|task| task.id == id)
    }

    /// How many tasks of a category the suite holds.
    pub fn count(&self, category: Category) -> usize {
        self.tasks
            .iter()
            .filter(|task| task.category == category)
            .count()
    }

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
            (Category::Math, Some(answer), None) => match answer {
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
            (Category::Code, None, Some(code)) => Checker::Code(code.load(base, &invalid)?),
            #[cfg(not(feature = "grader"))]
            (Category::Code, None, Some(_)) => {
                let _ = base;
                return Err(invalid(
                    "code tasks need vernier-tasks' `grader` feature (the Docker sandbox)"
                        .to_owned(),
                ));
            }
            (Category::Math, _, _) => {
                return Err(invalid(
                    "a math task needs `answer` and no `code`".to_owned(),
                ));
            }
            (Category::Code, _, _) => {
                return Err(invalid(
                    "a code task needs `code` and no `answer`".to_owned(),
                ));
            }
            (
                Category::Tools
                | Category::Context
                | Category::Vision
                | Category::Video
                | Category::Dataset,
                _,
                _,
            ) => {
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

/// The bundled code tasks, with their controls, at the code budget.
#[cfg(feature = "grader")]
fn push_code_tasks(tasks: &mut Vec<Task>, budgets: &Budgets, draw: Draw) {
    let integrity: Vec<CodeControl> = integrity_controls()
        .into_iter()
        .map(|control| CodeControl {
            name: control.name.to_owned(),
            code: control.code.to_owned(),
            must_fail_with: control.must_fail_with,
            integrity: true,
        })
        .collect();
    for spec in code_task_specs(draw) {
        let parameters = CaseDraw { draw }.parameters(&spec.cases);
        let mut check = CodeCheck::new(spec.harness, spec.cases, spec.time_floor);
        check.guards = spec.guards;
        check.reference = Some(spec.reference.to_owned());
        check.controls = spec
            .negative_controls
            .into_iter()
            .map(|control| CodeControl {
                name: control.name.to_owned(),
                code: control.code.to_owned(),
                must_fail_with: control.must_fail_with,
                integrity: false,
            })
            .collect();
        if spec.id == "merge-intervals" {
            check.controls.extend(integrity.iter().cloned());
        }
        let mut task = Task::new(
            spec.id,
            Category::Code,
            spec.prompt,
            budgets.code,
            Checker::Code(check),
        );
        task.instance = Some(Instance::new(spec.id, draw, parameters));
        tasks.push(task);
    }
}
