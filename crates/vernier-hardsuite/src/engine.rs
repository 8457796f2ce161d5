//! The engine: self-check, run (new or resumed) and the files it writes.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use serde_json::{Map, Value};
use vernier_grader::{Grader, GraderConfig};
use vernier_openai::{ClientBuilder, Timeouts};
use vernier_sim::{Sim, SimHandle};
use vernier_tasks::{
    Budgets, Category, ContextPlan, Draw, OutcomeKind, SelfCheckReport, Suite, context_suite,
    self_check,
};

use crate::config::{MAX_TIMEOUT_SECS, RunConfig, RunTarget, SuiteSelection};
use crate::demo::{HARDSUITE_SIMULATOR_BANNER, hardsuite_demo_simulator_config};
use crate::error::HardsuiteError;
use crate::journal::VideoAs;
use crate::journal::{
    AttemptPhase, BudgetFlags, DroppedLength, HARDSUITE_JOURNAL_VERSION, HardsuiteJournalLine,
    HardsuiteJournalWriter, LoadedHardsuiteJournal, RecordedLimit, RunHeader, Sampling,
    read_hardsuite_journal, unix_ms,
};
use crate::ladder::{Ladder, LadderRung, render_ladder};
use crate::observer::RunObserver;
use crate::report::{render_markdown, render_table};
use crate::results::ResultsFile;
use crate::runner::{AttemptEnd, Runner};

/// The files a run wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunFiles {
    /// `OUT/journal.jsonl`.
    pub journal: PathBuf,
    /// `OUT/results.json`.
    pub results: PathBuf,
    /// `OUT/report.md`.
    pub report: PathBuf,
}

/// What a finished run gives back.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HardsuiteOutcome {
    /// The results, as written to `results.json`.
    pub results: ResultsFile,
    /// The terminal table.
    pub table: String,
    /// Where everything was written.
    pub files: RunFiles,
    /// Scored attempts kept from the journal by a resume.
    pub kept_attempts: usize,
}

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
    )
}

/// The generated suites a selection or journal names, by seed (at most one is set).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Generated {
    vision: Option<u64>,
    video: Option<u64>,
    probe: Option<u64>,
}

impl Generated {
    /// The generated suite a selection names.
    fn of(selection: &SuiteSelection) -> Self {
        Self {
            vision: selection.vision,
            video: selection.video,
            probe: selection.probe,
        }
    }

    /// The suite drawn, if one is named.
    fn suite(self) -> Option<Suite> {
        let budgets = Budgets::default();
        if let Some(seed) = self.probe {
            Some(Suite::probe(seed, budgets))
        } else if let Some(seed) = self.video {
            Some(vernier_tasks::video_suite(seed, budgets.video))
        } else {
            self.vision
                .map(|seed| vernier_tasks::vision_suite(seed, budgets.vision))
        }
    }

    fn count(self) -> usize {
        [self.vision, self.video, self.probe]
            .iter()
            .filter(|seed| seed.is_some())
            .count()
    }
}

/// A selection that names two suites at once, or a context plan that cannot be drawn.
fn check_selection(selection: &SuiteSelection) -> Result<(), HardsuiteError> {
    let generated = Generated::of(selection).count();
    if generated + usize::from(selection.context.is_some()) + usize::from(selection.suite.is_some())
        > 1
    {
        return Err(HardsuiteError::invalid(
            "--suite",
            "name one suite: context, vision, video, probe or a suite file",
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

fn load_suite_from(
    suite_path: Option<&Path>,
    draw: Option<Draw>,
    budgets: BudgetFlags,
    selected: Option<&[String]>,
    context: Option<&ContextPlan>,
    generated: Generated,
) -> Result<Suite, HardsuiteError> {
    debug_assert!(generated.count() <= 1);
    let mut suite = match (generated.suite(), suite_path, draw) {
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
        (None, None, draw) => Suite::drawn(draw.unwrap_or(Draw::BUNDLED), Budgets::default()),
    };
    for task in &mut suite.tasks {
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

async fn connect_grader(
    suite: &Suite,
    image: Option<&str>,
) -> Result<Option<Grader>, HardsuiteError> {
    let n_code_tasks = suite.count(Category::Code);
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
        .filter(|task| task.category != Category::Code)
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

fn sampling_from(config: &RunConfig) -> Sampling {
    let mut sampling = config.preset.unwrap_or_default().sampling();
    if config.temperature.is_some() {
        sampling.temperature = config.temperature;
    }
    if config.top_p.is_some() {
        sampling.top_p = config.top_p;
    }
    if config.top_k.is_some() {
        sampling.top_k = config.top_k;
    }
    if config.presence_penalty.is_some() {
        sampling.presence_penalty = config.presence_penalty;
    }
    sampling
}

fn check_extra_body(value: &Value) -> Result<Map<String, Value>, HardsuiteError> {
    let Value::Object(fields) = value else {
        return Err(HardsuiteError::invalid(
            "--extra-body",
            "it must be a JSON object, e.g. '{\"chat_template_kwargs\": {\"enable_thinking\": true}}'",
        ));
    };
    if fields.contains_key("stop") {
        return Err(HardsuiteError::invalid(
            "--extra-body",
            "it sets `stop`; hardsuite never sends stop sequences (they would end answers early); remove it",
        ));
    }
    Ok(fields.clone())
}

fn validate(config: &RunConfig) -> Result<(), HardsuiteError> {
    check_selection(&config.suite)?;
    for (flag, seconds) in [
        ("--request-timeout", config.request_timeout_secs),
        ("--idle-timeout", config.idle_timeout_secs),
    ] {
        if seconds > MAX_TIMEOUT_SECS {
            return Err(HardsuiteError::invalid(
                flag,
                format!("{seconds} seconds is longer than 7 days; pass at most {MAX_TIMEOUT_SECS}"),
            ));
        }
    }
    let positive = [
        (
            "--samples",
            config.samples == Some(0),
            "it must be at least 1",
        ),
        (
            "--concurrency",
            config.concurrency == 0,
            "it must be at least 1",
        ),
        (
            "--max-tries",
            config.max_tries == 0,
            "it must be at least 1",
        ),
        (
            "--rerun-cut-off",
            config.rerun_cut_off == Some(0),
            "the budget must be positive",
        ),
        (
            "--max-rps",
            config
                .max_rps
                .is_some_and(|rps| !(rps.is_finite() && rps > 0.0)),
            "give a positive number of requests per second, e.g. 2",
        ),
        (
            "--max-wait",
            config
                .max_wait_secs
                .is_some_and(|s| !(s.is_finite() && (0.0..=7.0 * 86_400.0).contains(&s))),
            "give seconds from 0 to 604800 (7 days)",
        ),
    ];
    for (flag, refused, detail) in positive {
        if refused {
            return Err(HardsuiteError::invalid(flag, detail));
        }
    }
    Ok(())
}

/// Two paths name the same file (as given, or once resolved).
fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

fn shown<T: std::fmt::Display>(value: Option<T>, absent: &str) -> String {
    value.map_or_else(|| absent.to_owned(), |value| value.to_string())
}

/// The run-shaping flags given with `--resume` that differ from the journal's run, one entry
/// each; flags left out take the journal's values.
fn resume_differences(
    config: &RunConfig,
    header: &RunHeader,
    journal_dir: &Path,
    out_given: Option<&Path>,
) -> Result<Vec<String>, HardsuiteError> {
    let mut differences = Vec::new();
    if let Some(path) = &config.suite.suite
        && !header
            .suite_path
            .as_deref()
            .is_some_and(|recorded| same_path(recorded, path))
    {
        differences.push(format!(
            "--suite {} (the journal's run: {})",
            path.display(),
            header.suite_path.as_ref().map_or_else(
                || "the bundled suite".to_owned(),
                |p| p.display().to_string()
            )
        ));
    }
    if let Some(draw) = config.suite.draw
        && Some(draw) != header.effective_draw()
    {
        differences.push(format!(
            "--level {} --seed {} (the journal's run: {})",
            draw.level,
            draw.seed,
            header
                .effective_draw()
                .map_or_else(|| "a suite file".to_owned(), |d| d.to_string())
        ));
    }
    if let Some(ids) = &config.suite.tasks {
        let sorted = |ids: &[String]| {
            let mut ids = ids.to_vec();
            ids.sort();
            ids.dedup();
            ids
        };
        if sorted(ids) != sorted(&header.task_ids) {
            differences.push(format!(
                "--tasks {} (the journal's run: {})",
                ids.join(","),
                header.task_ids.join(",")
            ));
        }
    }
    if let Some(model) = &config.model
        && *model != header.model
    {
        differences.push(format!(
            "--model {model} (the journal's run: {})",
            header.model
        ));
    }
    if let Some(url) = &config.base_url
        && header.simulated
    {
        differences.push(format!(
            "--base-url {url} (the journal's run used the in-process simulator; resume it without --base-url)"
        ));
    }
    sampling_differences(config, header, &mut differences);
    if let Some(value) = &config.extra_body {
        let given = check_extra_body(value)?;
        let recorded = match &header.extra_body {
            Some(Value::Object(fields)) => fields.clone(),
            _ => Map::new(),
        };
        if given != recorded {
            differences.push(format!(
                "--extra-body {} (the journal's run: {})",
                Value::Object(given),
                Value::Object(recorded)
            ));
        }
    }
    other_differences(config, header, journal_dir, out_given, &mut differences);
    Ok(differences)
}

/// Budgets, samples, the re-run budget and the output directory given with `--resume` that
/// differ from the journal's run.
fn other_differences(
    config: &RunConfig,
    header: &RunHeader,
    journal_dir: &Path,
    out_given: Option<&Path>,
    differences: &mut Vec<String>,
) {
    let budgets = [
        (
            "--budget-math",
            config.suite.budgets.math,
            header.budget_flags.math,
        ),
        (
            "--budget-code",
            config.suite.budgets.code,
            header.budget_flags.code,
        ),
        (
            "--budget-tools",
            config.suite.budgets.tools,
            header.budget_flags.tools,
        ),
    ];
    for (flag, given, recorded) in budgets {
        if let Some(value) = given
            && Some(value) != recorded
        {
            differences.push(format!(
                "{flag} {value} (the journal's run: {})",
                shown(recorded, "the suite's budget")
            ));
        }
    }
    if let Some(samples) = config.samples
        && samples != header.samples
    {
        differences.push(format!(
            "--samples {samples} (the journal's run: {})",
            header.samples
        ));
    }
    if let Some(budget) = config.rerun_cut_off
        && Some(budget) != header.rerun_budget
    {
        differences.push(format!(
            "--rerun-cut-off {budget} (the journal's run: {}; the re-run budget is fixed when a run starts)",
            shown(header.rerun_budget, "no re-run")
        ));
    }
    if let Some(out) = out_given
        && !same_path(out, journal_dir)
    {
        differences.push(format!(
            "--out {} (a resumed run writes next to its journal, in {})",
            out.display(),
            journal_dir.display()
        ));
    }
}

/// The sampling flags given with `--resume` that differ from the journal's sampling: with
/// `--preset`, the sampling the flags make; without it, each flag given.
fn sampling_differences(config: &RunConfig, header: &RunHeader, differences: &mut Vec<String>) {
    if let Some(preset) = config.preset {
        let sampling = sampling_from(config);
        if sampling != header.sampling {
            let name = preset.as_str();
            differences.push(format!(
                "--preset {name} and the sampling flags give {sampling} (the journal's run: {})",
                header.sampling
            ));
        }
    } else {
        let recorded = header.sampling;
        let floats = [
            ("--temperature", config.temperature, recorded.temperature),
            ("--top-p", config.top_p, recorded.top_p),
            (
                "--presence-penalty",
                config.presence_penalty,
                recorded.presence_penalty,
            ),
        ];
        for (flag, given, recorded) in floats {
            if let Some(value) = given
                && Some(value) != recorded
            {
                differences.push(format!(
                    "{flag} {value} (the journal's run: {})",
                    shown(recorded, "not sent")
                ));
            }
        }
        if let Some(value) = config.top_k
            && Some(value) != recorded.top_k
        {
            differences.push(format!(
                "--top-k {value} (the journal's run: {})",
                shown(recorded.top_k, "not sent")
            ));
        }
    }
}

/// What a run is: from the journal on `--resume`, else from the flags.
struct Settings {
    suite_path: Option<PathBuf>,
    draw: Option<Draw>,
    flags: BudgetFlags,
    selected: Option<Vec<String>>,
    samples: u32,
    sampling: Sampling,
    rerun_budget: Option<u32>,
    simulated: bool,
    extra_body: Map<String, Value>,
    /// The long-context plan, and whether its lengths are final (given, or read back).
    context: Option<(ContextPlan, bool)>,
    /// The generated suite's seed (vision, video or probe).
    generated: Generated,
    /// How video tasks send their clips.
    video_as: VideoAs,
    /// The server's context and the lengths left out for it (a new context run).
    context_fit: ContextFit,
}

/// The server's context and the default lengths left out because they cannot fit it.
#[derive(Debug, Clone, Default)]
struct ContextFit {
    limit: Option<RecordedLimit>,
    dropped: Vec<DroppedLength>,
}

fn settings(
    config: &RunConfig,
    previous: Option<&LoadedHardsuiteJournal>,
) -> Result<Settings, HardsuiteError> {
    Ok(match previous {
        Some(journal) => {
            let header = &journal.header;
            Settings {
                suite_path: header.suite_path.clone(),
                draw: header.draw,
                flags: header.budget_flags,
                selected: Some(header.task_ids.clone()),
                samples: header.samples,
                sampling: header.sampling,
                rerun_budget: header.rerun_budget,
                simulated: header.simulated,
                extra_body: match &header.extra_body {
                    Some(Value::Object(fields)) => fields.clone(),
                    _ => Map::new(),
                },
                context: header.context.clone().map(|plan| (plan, true)),
                generated: Generated {
                    vision: header.vision_seed,
                    video: header.video_seed,
                    probe: header.probe_seed,
                },
                video_as: header.video_as,
                context_fit: ContextFit {
                    limit: header.context_limit.clone(),
                    dropped: header.context_dropped.clone(),
                },
            }
        }
        None => Settings {
            suite_path: config.suite.suite.clone(),
            draw: match (
                &config.suite.suite,
                config.suite.draw,
                &config.suite.context,
            ) {
                (_, _, Some(_)) => None,
                (None, None, None) => Some(Draw::BUNDLED),
                (_, draw, None) => draw,
            },
            flags: config.suite.budgets,
            selected: config.suite.tasks.clone(),
            samples: config.samples.unwrap_or(1),
            sampling: sampling_from(config),
            rerun_budget: config.rerun_cut_off,
            simulated: config.base_url.is_none(),
            extra_body: match &config.extra_body {
                Some(value) => check_extra_body(value)?,
                None => Map::new(),
            },
            context: config
                .suite
                .context
                .clone()
                .map(|context| (context.plan, context.lengths_given)),
            generated: Generated::of(&config.suite),
            video_as: config.suite.video_as,
            context_fit: ContextFit::default(),
        },
    })
}

/// The resumed journal (if any), the output directory and the journal's path, once the
/// settings are checked against a resumed journal and a new run is known not to overwrite a
/// journal.
type Destination = (Option<LoadedHardsuiteJournal>, PathBuf, PathBuf);

fn destination(config: &RunConfig, target: &RunTarget) -> Result<Destination, HardsuiteError> {
    let (previous, out_dir, journal_path) = match target {
        RunTarget::Resume { journal, .. } => (
            Some(read_hardsuite_journal(journal)?),
            journal
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            journal.clone(),
        ),
        RunTarget::New { out_dir } => (None, out_dir.clone(), out_dir.join("journal.jsonl")),
    };
    let out_given = match target {
        RunTarget::Resume { out_dir, .. } => out_dir.as_deref(),
        RunTarget::New { .. } => None,
    };
    if let Some(journal) = &previous {
        let differences = resume_differences(config, &journal.header, &out_dir, out_given)?;
        if !differences.is_empty() {
            return Err(HardsuiteError::ConfigMismatch {
                journal: journal_path,
                differences: differences.join("; "),
            });
        }
    } else if journal_path.exists() {
        return Err(HardsuiteError::JournalExists {
            out: out_dir,
            journal: journal_path,
        });
    }
    Ok((previous, out_dir, journal_path))
}

/// Starts the in-process simulator and a client for it; gives the simulator, its URL, the
/// client and the model id to send.
async fn start_simulator(
    config: &RunConfig,
    previous: Option<&LoadedHardsuiteJournal>,
    suite: &Suite,
    observer: &dyn RunObserver,
) -> Result<(SimHandle, String, vernier_openai::Client, String), HardsuiteError> {
    let sim = Sim::start(hardsuite_demo_simulator_config(suite)?)
        .await
        .map_err(HardsuiteError::Simulator)?;
    observer.simulator_started(HARDSUITE_SIMULATOR_BANNER);
    let base_url = sim.base_url();
    let model = match (previous, &config.model) {
        (Some(journal), _) => journal.header.model.clone(),
        (None, Some(model)) => model.clone(),
        (None, None) => "vernier-sim".to_owned(),
    };
    match build_client(config, &base_url) {
        Ok(client) => Ok((sim, base_url, client, model)),
        Err(error) => {
            sim.shutdown().await;
            Err(error)
        }
    }
}

/// Runs the suite: checks the configuration (against the journal when resuming), connects to
/// the server named by `config.base_url` (or starts the in-process simulator), connects the
/// grader for code tasks, self-checks, runs every attempt not yet finished, then writes
/// `results.json` and `report.md` next to the journal. `command_line` is recorded in a new
/// journal's header. Progress goes to `observer`.
///
/// A server that stops answering ends the run with [`HardsuiteError::ServerStopped`] once
/// everything measured is on disk; resume it with [`RunTarget::Resume`].
pub async fn run_suite(
    config: &RunConfig,
    target: &RunTarget,
    command_line: Vec<String>,
    observer: &dyn RunObserver,
) -> Result<HardsuiteOutcome, HardsuiteError> {
    // Everything that can be checked without Docker or the network is checked first, so a typo
    // fails at once rather than after the self-check.
    validate(config)?;
    let (previous, out_dir, journal_path) = destination(config, target)?;
    let mut settings = settings(config, previous.as_ref())?;
    let mut suite = settings_suite(&settings)?;
    let server_client = if settings.simulated {
        None
    } else {
        let Some(base_url) = config.base_url.clone() else {
            return Err(HardsuiteError::invalid(
                "--resume",
                "the journal records a server run; pass --base-url URL to continue it",
            ));
        };
        let client = build_client(config, &base_url)?;
        let model = resolve_model(config, previous.as_ref(), &client, &base_url).await?;
        Some((base_url, client, model))
    };
    let (simulator, base_url, client, model) = if let Some((url, client, model)) = server_client {
        (None, url, client, model)
    } else {
        let (sim, url, client, model) =
            start_simulator(config, previous.as_ref(), &suite, observer).await?;
        (Some(sim), url, client, model)
    };
    let result = async {
        if fit_context(&mut settings, &client, &model, observer).await {
            suite = settings_suite(&settings)?;
        }
        let grader = connect_grader(&suite, config.suite.grader_image.as_deref()).await?;
        let self_checked = if config.skip_self_check {
            false
        } else {
            let report = self_check(&suite, grader.as_ref()).await?;
            report.apply(&mut suite);
            observer.note(&format!(
                "self-check passed: {} checks on {} tasks",
                report.n_checks(),
                report.tasks.len()
            ));
            true
        };
        run_on_server(RunPlan {
            config,
            command_line,
            suite: &suite,
            grader,
            client,
            model,
            base_url,
            previous: previous.as_ref(),
            out_dir,
            journal_path,
            settings,
            self_checked,
            observer,
        })
        .await
    }
    .await;
    if let Some(sim) = simulator {
        sim.shutdown().await;
    }
    result
}

/// The suite the settings name.
fn settings_suite(settings: &Settings) -> Result<Suite, HardsuiteError> {
    load_suite_from(
        settings.suite_path.as_deref(),
        settings.draw.filter(|_| settings.suite_path.is_none()),
        settings.flags,
        settings.selected.as_deref(),
        settings.context.as_ref().map(|(plan, _)| plan),
        settings.generated,
    )
}

/// Below the server's context, this many tokens are kept free beside the answer budget when
/// the longest length that fits is added (chat templates differ by a few tokens per request).
const CONTEXT_MARGIN: u64 = 64;

/// For a new context run with default lengths: reads the server's context and leaves out every
/// length whose prompt and answer budget cannot fit it, adding the longest length that does
/// (a multiple of 256). Gives whether the plan changed.
async fn fit_context(
    settings: &mut Settings,
    client: &vernier_openai::Client,
    model: &str,
    observer: &dyn RunObserver,
) -> bool {
    let budget = settings
        .flags
        .context
        .unwrap_or(vernier_tasks::DEFAULT_CONTEXT_BUDGET);
    let Some((plan, final_lengths)) = &mut settings.context else {
        return false;
    };
    if *final_lengths {
        if settings.context_fit.limit.is_none() {
            settings.context_fit.limit = read_context_limit(client, model).await;
        }
        return false;
    }
    *final_lengths = true;
    let Some(limit) = read_context_limit(client, model).await else {
        observer.note(
            "the server does not say its context length; every length is sent, and any it refuses is context_exceeded",
        );
        return false;
    };
    let room = limit.tokens.saturating_sub(u64::from(budget));
    let (kept, dropped): (Vec<u32>, Vec<u32>) = plan
        .lengths
        .iter()
        .partition(|length| u64::from(**length) <= room);
    if dropped.is_empty() {
        settings.context_fit.limit = Some(limit);
        return false;
    }
    for length in &dropped {
        settings.context_fit.dropped.push(DroppedLength {
            tokens: *length,
            reason: format!(
                "{} prompt tokens and a {budget}-token answer budget exceed the server's context of {} tokens ({})",
                length, limit.tokens, limit.source
            ),
        });
    }
    let longest = room.saturating_sub(CONTEXT_MARGIN) / 256 * 256;
    let largest_kept = kept.iter().copied().max().unwrap_or(0);
    plan.lengths = kept;
    if let Ok(longest) = u32::try_from(longest)
        && longest >= 256
        && f64::from(longest) > f64::from(largest_kept) * 1.2
    {
        plan.lengths.push(longest);
    }
    observer.note(&format!(
        "context: lengths {} left out (the server's context is {} tokens, {}); running {}",
        dropped
            .iter()
            .map(|l| vernier_tasks::length_label(*l))
            .collect::<Vec<_>>()
            .join(", "),
        limit.tokens,
        limit.source,
        plan.lengths
            .iter()
            .map(|l| vernier_tasks::length_label(*l))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    settings.context_fit.limit = Some(limit);
    // A selection by id keeps the tasks whose lengths are still run.
    if let Some(selected) = &mut settings.selected {
        let ids: HashSet<String> = vernier_tasks::context_task_ids(plan).into_iter().collect();
        selected.retain(|id| ids.contains(id));
    }
    true
}

/// The server's context, from whatever it offers.
async fn read_context_limit(client: &vernier_openai::Client, model: &str) -> Option<RecordedLimit> {
    let models = client.models().await.unwrap_or_default();
    let identity = client.server_identity().await;
    vernier_openai::context_limit(&models, model, &identity).map(|limit| RecordedLimit {
        tokens: limit.tokens,
        source: limit.source.to_owned(),
    })
}

struct RunPlan<'a> {
    config: &'a RunConfig,
    command_line: Vec<String>,
    suite: &'a Suite,
    grader: Option<Grader>,
    client: vernier_openai::Client,
    model: String,
    base_url: String,
    previous: Option<&'a LoadedHardsuiteJournal>,
    out_dir: PathBuf,
    journal_path: PathBuf,
    settings: Settings,
    self_checked: bool,
    observer: &'a dyn RunObserver,
}

async fn run_on_server(plan: RunPlan<'_>) -> Result<HardsuiteOutcome, HardsuiteError> {
    let config = plan.config;
    std::fs::create_dir_all(&plan.out_dir)
        .map_err(|source| HardsuiteError::io("create", &plan.out_dir, source))?;
    let journal_path = plan.journal_path.clone();
    let (journal, finished, kept_attempts) = open_journal(&plan, &journal_path)?;
    let replies = open_replies(&journal_path, plan.previous.is_some())?;
    let context_sizer = context_sizer(&plan).await;
    let runner = Runner {
        client: plan.client.clone(),
        model: plan.model.clone(),
        sampling: plan.settings.sampling,
        extra_body: plan.settings.extra_body.clone(),
        grader: plan.grader.clone(),
        journal: Arc::clone(&journal),
        max_tries: config.max_tries,
        retry_backoff: Duration::from_millis(250),
        observer: plan.observer,
        stop: AtomicBool::new(false),
        n_done: AtomicUsize::new(0),
        n_planned: AtomicUsize::new(0),
        replies,
        pacer: vernier_openai::RequestPacer::new(config.max_rps),
        slots: vernier_openai::AdaptiveConcurrency::new(config.concurrency),
        adaptive: config.adaptive_concurrency,
        wait_budget: vernier_openai::WaitBudget::new(
            wait_budget(config),
            crate::journal::unix_ms(),
        ),
        completion_cap: AtomicBool::new(false),
        context_sizer,
        refused_cache_fields: std::sync::Mutex::new(Vec::new()),
        media_nonce: std::sync::atomic::AtomicU64::new(unix_ms()),
        video_as: plan.settings.video_as,
    };
    let main_jobs: Vec<(usize, u32)> = plan
        .suite
        .tasks
        .iter()
        .enumerate()
        .flat_map(|(index, task)| {
            (0..plan.settings.samples)
                .filter(|sample| {
                    !finished.contains(&(task.id.clone(), *sample, AttemptPhase::Main))
                })
                .map(move |sample| (index, sample))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut server_down = run_phase(
        &runner,
        plan.suite,
        &main_jobs,
        AttemptPhase::Main,
        None,
        config.concurrency,
    )
    .await?;
    if server_down.is_none()
        && let Some(budget) = plan.settings.rerun_budget
    {
        let loaded = read_hardsuite_journal(&journal_path)?;
        let so_far = ResultsFile::from_journal(&loaded.header, &loaded.attempts);
        let rerun_jobs = cut_off_jobs(plan.suite, &so_far, &finished);
        server_down = run_phase(
            &runner,
            plan.suite,
            &rerun_jobs,
            AttemptPhase::Rerun,
            Some(budget),
            config.concurrency,
        )
        .await?;
    }
    let (results, files) = write_results(&journal_path, &plan.out_dir)?;
    if let Some(detail) = server_down {
        return Err(HardsuiteError::ServerStopped {
            detail,
            journal: journal_path,
            base_url: (!plan.settings.simulated)
                .then(|| config.base_url.clone())
                .flatten(),
            api_key_env: config.api_key_env.clone(),
        });
    }
    let table = render_table(&results);
    Ok(HardsuiteOutcome {
        results,
        table,
        files,
        kept_attempts,
    })
}

/// Derives the results from the journal and the replies, and writes `results.json`,
/// `report.md` and, for context tasks, `context-heatmap.svg`.
fn write_results(
    journal_path: &Path,
    out_dir: &Path,
) -> Result<(ResultsFile, RunFiles), HardsuiteError> {
    let loaded = read_hardsuite_journal(journal_path)?;
    let mut results = ResultsFile::from_journal(&loaded.header, &loaded.attempts);
    let replies = crate::replies::read_replies(&crate::replies::replies_path(journal_path))?;
    results.audit = Some(crate::replies::audit(&results, &replies));
    let files = RunFiles {
        journal: journal_path.to_owned(),
        results: out_dir.join("results.json"),
        report: out_dir.join("report.md"),
    };
    results.write(&files.results)?;
    std::fs::write(&files.report, render_markdown(&results))
        .map_err(|source| HardsuiteError::io("write", &files.report, source))?;
    if let Some(context) = &results.context {
        let heat_map = out_dir.join("context-heatmap.svg");
        std::fs::write(
            &heat_map,
            crate::context_report::render_context_svg(context),
        )
        .map_err(|source| HardsuiteError::io("write", &heat_map, source))?;
    }
    Ok((results, files))
}

/// The prompt sizer of a suite with context tasks: the server's own count when it has one.
async fn context_sizer(plan: &RunPlan<'_>) -> Option<crate::context_run::ContextSizer> {
    if plan.suite.count(Category::Context) == 0 {
        return None;
    }
    let sizer = crate::context_run::ContextSizer::new(&plan.client, &plan.model, unix_ms()).await;
    plan.observer.note(&format!(
        "context: prompts sized by {}",
        match sizer.method {
            crate::context_run::SizeMethod::TokenizeChat =>
                "the server's own count of every prompt (/tokenize)",
            crate::context_run::SizeMethod::UsageRatio =>
                "units per token from usage.prompt_tokens (the server has no chat /tokenize)",
        }
    ));
    Some(sizer)
}

/// Runs the jobs with `concurrency` in flight; returns why the server was given up on, if it was.
async fn run_phase(
    runner: &Runner<'_>,
    suite: &Suite,
    jobs: &[(usize, u32)],
    phase: AttemptPhase,
    budget: Option<u32>,
    concurrency: usize,
) -> Result<Option<String>, HardsuiteError> {
    runner.n_done.store(0, Ordering::SeqCst);
    runner.n_planned.store(jobs.len(), Ordering::SeqCst);
    let mut attempts = futures::stream::iter(jobs.iter().map(|&(index, sample)| {
        let task = &suite.tasks[index];
        runner.attempt(task, sample, phase, budget.unwrap_or(task.budget_tokens))
    }))
    .buffer_unordered(concurrency.max(1));
    let mut server_down = None;
    while let Some(end) = attempts.next().await {
        match end {
            Ok(AttemptEnd::ServerDown(detail)) => {
                server_down.get_or_insert(detail);
            }
            Ok(AttemptEnd::Done | AttemptEnd::NotStarted) => {}
            Err(error) => {
                runner.stop.store(true, Ordering::SeqCst);
                return Err(error);
            }
        }
    }
    Ok(server_down)
}

async fn resolve_model(
    config: &RunConfig,
    previous: Option<&LoadedHardsuiteJournal>,
    client: &vernier_openai::Client,
    base_url: &str,
) -> Result<String, HardsuiteError> {
    match (previous, &config.model) {
        (Some(journal), _) => Ok(journal.header.model.clone()),
        (None, Some(model)) => Ok(model.clone()),
        (None, None) => {
            let models = client
                .models()
                .await
                .map_err(|source| HardsuiteError::Client {
                    what: format!("list the models of {base_url} (or pass --model)"),
                    source,
                })?;
            Ok(models
                .first()
                .map(|model| model.id.clone())
                .ok_or_else(|| {
                    HardsuiteError::invalid("--model", "the server lists no model; name one")
                })?)
        }
    }
}
/// The main-run samples that were cut off and have no finished re-run yet.
fn cut_off_jobs(
    suite: &Suite,
    so_far: &ResultsFile,
    finished: &HashSet<(String, u32, AttemptPhase)>,
) -> Vec<(usize, u32)> {
    let mut jobs = Vec::new();
    for (index, task) in suite.tasks.iter().enumerate() {
        let Some(result) = so_far.task(&task.id) else {
            continue;
        };
        for sample in &result.samples {
            if sample.outcome == OutcomeKind::CutOff
                && !finished.contains(&(task.id.clone(), sample.sample, AttemptPhase::Rerun))
            {
                jobs.push((index, sample.sample));
            }
        }
    }
    jobs
}
fn build_client(
    config: &RunConfig,
    base_url: &str,
) -> Result<vernier_openai::Client, HardsuiteError> {
    let mut builder = ClientBuilder::new(base_url).timeouts(
        Timeouts::new()
            .first_byte(Some(Duration::from_secs(
                config.idle_timeout_secs.max(1).saturating_mul(2),
            )))
            .idle(Some(Duration::from_secs(config.idle_timeout_secs.max(1))))
            .total(Some(Duration::from_secs(
                config.request_timeout_secs.max(1),
            ))),
    );
    if let Some(var) = &config.api_key_env {
        builder = builder.api_key_from_env(var);
    }
    if let Some(path) = &config.ca_cert {
        let pem = std::fs::read(path)
            .map_err(|source| HardsuiteError::io("read the CA certificate", path, source))?;
        builder = builder.ca_cert_pem(path.display().to_string(), pem);
    }
    builder.build().map_err(|source| HardsuiteError::Client {
        what: format!("set up the client for {base_url}"),
        source,
    })
}

type Finished = HashSet<(String, u32, AttemptPhase)>;

/// The run's budget for waits on rate limits (`--max-wait`, default 900 s).
fn wait_budget(config: &RunConfig) -> Duration {
    Duration::try_from_secs_f64(config.max_wait_secs.unwrap_or(900.0))
        .unwrap_or(Duration::from_secs(900))
}

/// `replies.jsonl` beside the journal: continued on a resume, new otherwise.
fn open_replies(
    journal_path: &Path,
    resumed: bool,
) -> Result<Arc<vernier_journal::JournalWriter>, HardsuiteError> {
    let path = crate::replies::replies_path(journal_path);
    Ok(Arc::new(if resumed && path.exists() {
        vernier_journal::JournalWriter::open_append(&path)?
    } else {
        vernier_journal::JournalWriter::create(&path)?
    }))
}

/// Opens the journal: a new one with its header, or the resumed one with a `resumed` line;
/// returns the finished attempts and how many there are.
fn open_journal(
    plan: &RunPlan<'_>,
    journal_path: &Path,
) -> Result<(Arc<HardsuiteJournalWriter>, Finished, usize), HardsuiteError> {
    let journal = Arc::new(HardsuiteJournalWriter::open(
        journal_path,
        plan.previous.is_some(),
    )?);
    let mut kept_attempts = 0;
    let mut finished: HashSet<(String, u32, AttemptPhase)> = HashSet::new();
    if let Some(previous) = plan.previous {
        for attempt in previous.attempts.iter().filter(|a| a.is_scored()) {
            finished.insert((attempt.task_id.clone(), attempt.sample, attempt.phase));
        }
        kept_attempts = finished.len();
        journal.append(&HardsuiteJournalLine::Resumed {
            kept_attempts,
            at_unix_ms: unix_ms(),
        })?;
        plan.observer.note(&format!(
            "resuming {}: {kept_attempts} finished attempts kept",
            journal_path.display()
        ));
    } else {
        journal.append(&HardsuiteJournalLine::Header(RunHeader {
            journal_version: HARDSUITE_JOURNAL_VERSION,
            suite: plan.suite.name.clone(),
            suite_path: plan.settings.suite_path.clone(),
            task_ids: plan
                .suite
                .tasks
                .iter()
                .map(|task| task.id.clone())
                .collect(),
            model: plan.model.clone(),
            base_url: plan.base_url.clone(),
            simulated: plan.settings.simulated,
            sampling: plan.settings.sampling,
            extra_body: (!plan.settings.extra_body.is_empty())
                .then(|| Value::Object(plan.settings.extra_body.clone())),
            budget_flags: plan.settings.flags,
            samples: plan.settings.samples,
            rerun_budget: plan.settings.rerun_budget,
            self_checked: plan.self_checked,
            grader_image: plan.grader.as_ref().map(|g| g.image_digest().to_owned()),
            command_line: plan.command_line.clone(),
            started_unix_ms: unix_ms(),
            draw: plan.settings.draw,
            instances: plan
                .suite
                .tasks
                .iter()
                .filter_map(|task| task.instance.clone())
                .collect(),
            context: plan.settings.context.as_ref().map(|(plan, _)| plan.clone()),
            vision_seed: plan.settings.generated.vision,
            video_seed: plan.settings.generated.video,
            probe_seed: plan.settings.generated.probe,
            video_as: plan.settings.video_as,
            context_limit: plan.settings.context_fit.limit.clone(),
            context_dropped: plan.settings.context_fit.dropped.clone(),
        }))?;
    }
    Ok((journal, finished, kept_attempts))
}

/// What a finished ladder run gives back.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LadderOutcome {
    /// The ladder, as written to `ladder.json`.
    pub ladder: Ladder,
    /// Each level's run, lowest level first.
    pub runs: Vec<HardsuiteOutcome>,
    /// The terminal table.
    pub table: String,
}

/// Runs the suite once per level in `levels` (each drawn at the level and the seed of
/// `config.suite.draw`, 0 when absent), each in `OUT/level-L/` with its own journal and
/// results, then writes `OUT/ladder.json`, `OUT/ladder.md` and `OUT/ladder.svg`.
pub async fn run_ladder(
    config: &RunConfig,
    out_dir: &Path,
    levels: &[u8],
    command_line: Vec<String>,
    observer: &dyn RunObserver,
) -> Result<LadderOutcome, HardsuiteError> {
    if config.suite.suite.is_some() {
        return Err(HardsuiteError::invalid(
            "--levels",
            "a ladder draws the bundled suite at each level; drop --suite",
        ));
    }
    let seed = config.suite.draw.map_or(0, |draw| draw.seed);
    let mut runs = Vec::with_capacity(levels.len());
    let mut ladder_rungs = Vec::with_capacity(levels.len());
    for &level in levels {
        let draw = Draw::new(level, seed)?;
        let mut level_config = config.clone();
        level_config.suite.draw = Some(draw);
        let dir = out_dir.join(format!("level-{level}"));
        observer.note(&format!("ladder: {draw} into {}", dir.display()));
        let outcome = run_suite(
            &level_config,
            &RunTarget::new_run(&dir),
            command_line.clone(),
            observer,
        )
        .await?;
        ladder_rungs.push(LadderRung::from_results(
            level,
            seed,
            PathBuf::from(format!("level-{level}")).join("results.json"),
            &outcome.results,
        ));
        runs.push(outcome);
    }
    let ladder = Ladder {
        model: runs
            .first()
            .map(|run| run.results.model.clone())
            .unwrap_or_default(),
        simulated: runs.first().is_some_and(|run| run.results.simulated),
        rungs: ladder_rungs,
    };
    ladder.write(out_dir)?;
    let table = render_ladder(&ladder);
    Ok(LadderOutcome {
        ladder,
        runs,
        table,
    })
}
