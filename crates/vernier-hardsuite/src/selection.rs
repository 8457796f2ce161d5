//! Which suite a run measures: loading (bundled, drawn, generated or from a file), the
//! selection of tasks, the grader for code tasks and the self-check.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use vernier_grader::{Grader, GraderConfig};
use vernier_tasks::{
    Budgets, Category, ContextPlan, Draw, SelfCheckReport, Suite, context_suite, self_check,
};

use crate::config::SuiteSelection;
use crate::error::HardsuiteError;
use crate::journal::BudgetFlags;

/// Loads the suite (bundled, or the selection's file), applies the budgets and keeps the
/// selected tasks.
pub fn load_suite(selection: &SuiteSelection) -> Result<Suite, HardsuiteError> {
    check_selection(selection)?;
    load_suite_from(
        selection.suite.as_deref(),
        selection.draw,
        selection.budgets,
        selection.tasks.as_deref(),
        selection.context.as_ref().map(|context| &context.plan),
        Generated::of(selection),
        selection.dataset.as_ref(),
    )
}

/// The generated suites a selection or journal names, by seed (at most one is set).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Generated {
    pub(crate) vision: Option<u64>,
    pub(crate) instructions: Option<u64>,
    pub(crate) structured: Option<u64>,
    pub(crate) calls: Option<u64>,
    pub(crate) video: Option<u64>,
    pub(crate) probe: Option<u64>,
}

impl Generated {
    /// The generated suite a selection names.
    pub(crate) fn of(selection: &SuiteSelection) -> Self {
        Self {
            vision: selection.vision,
            instructions: selection.instructions,
            structured: selection.structured,
            calls: selection.calls,
            video: selection.video,
            probe: selection.probe,
        }
    }

    /// The suite drawn, if one is named.
    fn suite(self) -> Option<Suite> {
        let budgets = Budgets::default();
        if let Some(seed) = self.probe {
            Some(Suite::probe(seed, &budgets))
        } else if let Some(seed) = self.instructions {
            Some(vernier_tasks::instructions_suite(
                seed,
                budgets.for_category(Category::INSTRUCTIONS),
            ))
        } else if let Some(seed) = self.structured {
            Some(vernier_tasks::structured_suite(
                seed,
                budgets.for_category(Category::STRUCTURED),
            ))
        } else if let Some(seed) = self.calls {
            Some(vernier_tasks::calls_suite(
                seed,
                budgets.for_category(Category::CALLS),
            ))
        } else if let Some(seed) = self.video {
            Some(vernier_tasks::video_suite(
                seed,
                budgets.for_category(Category::VIDEO),
            ))
        } else {
            self.vision.map(|seed| {
                vernier_tasks::vision_suite(seed, budgets.for_category(Category::VISION))
            })
        }
    }

    fn count(self) -> usize {
        [
            self.vision,
            self.instructions,
            self.structured,
            self.calls,
            self.video,
            self.probe,
        ]
        .iter()
        .filter(|seed| seed.is_some())
        .count()
    }
}

/// A selection that names two suites at once, or a context plan that cannot be drawn.
pub(crate) fn check_selection(selection: &SuiteSelection) -> Result<(), HardsuiteError> {
    let generated = Generated::of(selection).count();
    if generated
        + usize::from(selection.context.is_some())
        + usize::from(selection.suite.is_some())
        + usize::from(selection.dataset.is_some())
        > 1
    {
        return Err(HardsuiteError::invalid(
            if selection.dataset.is_some() {
                "--dataset"
            } else {
                "--suite"
            },
            "name one suite: context, vision, video, instructions, structured, calls, probe, a suite file or a dataset",
        ));
    }
    if selection.dataset.is_some() && selection.draw.is_some() {
        return Err(HardsuiteError::invalid(
            "--level",
            "a dataset has no levels; --seed draws its questions, so drop --level",
        ));
    }
    if !selection.video_as.is_default() && selection.video.is_none() && selection.probe.is_none() {
        return Err(HardsuiteError::invalid(
            "--video-as",
            "only video tasks send clips; use it with --suite video or --suite probe",
        ));
    }
    let Some(context) = &selection.context else {
        return Ok(());
    };
    if selection.suite.is_some() {
        return Err(HardsuiteError::invalid(
            "--suite",
            "name one suite: the bundled `context` or a suite file",
        ));
    }
    if selection
        .draw
        .is_some_and(|draw| draw.level != Draw::BUNDLED.level)
    {
        return Err(HardsuiteError::invalid(
            "--level",
            "the context suite has no levels (its difficulty is the length); drop --level",
        ));
    }
    if let Some(problem) = context.plan.problem() {
        let (flag, detail) = problem.split_once(": ").unwrap_or(("--suite", &problem));
        return Err(HardsuiteError::invalid(flag, detail));
    }
    Ok(())
}

pub(crate) fn load_suite_from(
    suite_path: Option<&Path>,
    draw: Option<Draw>,
    budgets: BudgetFlags,
    selected: Option<&[String]>,
    context: Option<&ContextPlan>,
    generated: Generated,
    dataset: Option<&crate::dataset_run::DatasetSelection>,
) -> Result<Suite, HardsuiteError> {
    debug_assert!(generated.count() <= 1);
    let dataset_budget = budgets
        .dataset
        .unwrap_or(vernier_tasks::DEFAULT_DATASET_BUDGET);
    let from_dataset = dataset
        .map(|selection| crate::dataset_run::dataset_suite_of(selection, dataset_budget))
        .transpose()?
        .map(|(suite, _)| suite);
    let mut suite = match (from_dataset.or_else(|| generated.suite()), suite_path, draw) {
        (Some(suite), _, _) => suite,
        _ if context.is_some() => {
            let plan = context.cloned().unwrap_or_default();
            context_suite(
                &plan,
                budgets
                    .context
                    .unwrap_or(vernier_tasks::DEFAULT_CONTEXT_BUDGET),
            )
        }
        (None, Some(_), Some(_)) => {
            return Err(HardsuiteError::invalid(
                "--level/--seed",
                "levels and seeds draw the bundled suite; drop them, or drop --suite",
            ));
        }
        (None, Some(path), None) => Suite::from_path(path)?,
        (None, None, draw) => Suite::drawn(draw.unwrap_or(Draw::BUNDLED), &Budgets::default()),
    };
    // A dataset's questions (its code ones too) already have `--budget-dataset`.
    for task in suite
        .tasks
        .iter_mut()
        .filter(|task| task.spec::<vernier_tasks::DatasetSpec>().is_none())
    {
        if let Some(budget) = budgets.for_category(task.category) {
            task.budget_tokens = budget;
        }
    }
    if let Some(ids) = selected {
        let known: HashSet<&str> = suite.tasks.iter().map(|task| task.id.as_str()).collect();
        if let Some(unknown) = ids.iter().find(|id| !known.contains(id.as_str())) {
            let names: Vec<&str> = suite.tasks.iter().map(|task| task.id.as_str()).collect();
            return Err(HardsuiteError::invalid(
                "--tasks",
                format!(
                    "no task {unknown:?} in suite {}; known: {}",
                    suite.name,
                    names.join(", ")
                ),
            ));
        }
        suite.tasks.retain(|task| ids.contains(&task.id));
    }
    if suite.tasks.is_empty() {
        return Err(HardsuiteError::invalid(
            "--tasks",
            "no task is left to run; name at least one",
        ));
    }
    Ok(suite)
}

pub(crate) async fn connect_grader(
    suite: &Suite,
    image: Option<&str>,
) -> Result<Option<Grader>, HardsuiteError> {
    let n_code_tasks = suite.count(Category::CODE);
    if n_code_tasks == 0 {
        return Ok(None);
    }
    let mut config = GraderConfig::default();
    if let Some(image) = image {
        config = config.with_image(image);
    }
    Grader::connect(config)
        .await
        .map(Some)
        .map_err(|source| HardsuiteError::Grader {
            n_code_tasks,
            leave_out: leave_out_code_tasks(suite),
            source,
        })
}

/// How to run a suite without its code tasks: `--tasks` and every other task id.
fn leave_out_code_tasks(suite: &Suite) -> String {
    let others: Vec<&str> = suite
        .tasks
        .iter()
        .filter(|task| task.category != Category::CODE)
        .map(|task| task.id.as_str())
        .collect();
    if others.is_empty() {
        "choose tasks other than code ones (this selection has only code tasks)".to_owned()
    } else {
        format!(
            "leave the code tasks out with `--tasks {}`",
            others.join(",")
        )
    }
}

/// Loads the selected suite, connects the grader when it has code tasks, and self-checks it:
/// the suite and what was proved ([`render_self_check`] prints it).
pub async fn self_check_suite(
    selection: &SuiteSelection,
) -> Result<(Suite, SelfCheckReport), HardsuiteError> {
    let suite = load_suite(selection)?;
    let grader = connect_grader(&suite, selection.grader_image.as_deref()).await?;
    let report = self_check(&suite, grader.as_ref()).await?;
    Ok((suite, report))
}

/// The self-check report: what was proved, per task.
pub fn render_self_check(suite: &Suite, report: &SelfCheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "self-check passed: {} checks on {} tasks of suite {}",
        report.n_checks(),
        report.tasks.len(),
        suite.name
    );
    if let Some(digest) = &report.image_digest {
        let _ = writeln!(out, "grader image: {digest}");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<24} {:<8} {:>7} {:>14} {:>11}",
        "task", "category", "checks", "reference (s)", "limit (s)"
    );
    for checked in &report.tasks {
        let category = suite
            .task(&checked.task_id)
            .map_or("-", |task| task.category.as_str());
        let seconds = |value: Option<Duration>| {
            value.map_or_else(|| "-".to_owned(), |d| format!("{:.2}", d.as_secs_f64()))
        };
        let _ = writeln!(
            out,
            "{:<24} {:<8} {:>7} {:>14} {:>11}",
            checked.task_id,
            category,
            checked.n_checks,
            seconds(checked.reference_time),
            seconds(checked.time_limit),
        );
    }
    out
}
