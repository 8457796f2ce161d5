//! The commands: `run`, `compare` and `self-check`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use clap::ValueEnum as _;
use futures::StreamExt as _;
use serde_json::{Map, Value};
use vernier_grader::{Grader, GraderConfig};
use vernier_openai::{ClientBuilder, Timeouts};
use vernier_sim::{Sim, SimHandle};
use vernier_tasks::{Category, OutcomeKind, SelfCheckReport, Suite, self_check};

use crate::cli::{Args, Command, CompareArgs, Preset, RunArgs, SelfCheckArgs, SuiteArgs};
use crate::compare::{Comparison, compare, render_comparison, render_comparison_markdown};
use crate::demo::{SIMULATOR_BANNER, demo_simulator_config};
use crate::error::HardsuiteError;
use crate::journal::{
    BudgetFlags, JOURNAL_VERSION, JournalLine, JournalWriter, LoadedJournal, Phase, RunHeader,
    Sampling, read_journal, unix_ms,
};
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
pub struct RunOutcome {
    /// The results, as written to `results.json`.
    pub results: ResultsFile,
    /// The terminal table.
    pub table: String,
    /// Where everything was written.
    pub files: RunFiles,
    /// Scored attempts kept from the journal by `--resume`.
    pub kept_attempts: usize,
}

/// What a command gives back for printing.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CommandOutput {
    /// `run`.
    Run(Box<RunOutcome>),
    /// `compare`: the comparison and its text.
    Compare(Box<Comparison>, String),
    /// `self-check`: the printed report.
    SelfCheck(String),
}

impl CommandOutput {
    /// The text for standard output.
    pub fn text(&self) -> &str {
        match self {
            Self::Run(outcome) => &outcome.table,
            Self::Compare(_, text) | Self::SelfCheck(text) => text,
        }
    }
}

/// Runs the command the arguments name (`run` when none).
pub async fn run(args: Args, command_line: Vec<String>) -> Result<CommandOutput, HardsuiteError> {
    match args.command {
        None => Ok(CommandOutput::Run(Box::new(
            run_suite(args.run, command_line).await?,
        ))),
        Some(Command::Run(run_args)) => Ok(CommandOutput::Run(Box::new(
            run_suite(run_args, command_line).await?,
        ))),
        Some(Command::Compare(compare_args)) => run_compare(&compare_args),
        Some(Command::SelfCheck(check_args)) => run_self_check(&check_args).await,
    }
}

fn run_compare(args: &CompareArgs) -> Result<CommandOutput, HardsuiteError> {
    let a = ResultsFile::load(&args.a)?;
    let b = ResultsFile::load(&args.b)?;
    let comparison = compare(&a, &b, args.resamples, args.seed)?;
    if let Some(path) = &args.markdown {
        std::fs::write(path, render_comparison_markdown(&comparison))
            .map_err(|source| HardsuiteError::io("write", path, source))?;
    }
    if let Some(path) = &args.json {
        let mut text = serde_json::to_string_pretty(&comparison)
            .map_err(|error| HardsuiteError::io("encode", path, error.into()))?;
        text.push('\n');
        std::fs::write(path, text).map_err(|source| HardsuiteError::io("write", path, source))?;
    }
    let text = render_comparison(&comparison);
    Ok(CommandOutput::Compare(Box::new(comparison), text))
}

/// Loads the suite, applies budget flags and keeps the selected tasks.
fn load_suite(
    suite_path: Option<&Path>,
    budgets: BudgetFlags,
    selected: Option<&[String]>,
) -> Result<Suite, HardsuiteError> {
    let mut suite = match suite_path {
        Some(path) => Suite::from_path(path)?,
        None => Suite::bundled(),
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

fn budget_flags(args: &SuiteArgs) -> BudgetFlags {
    BudgetFlags {
        math: args.budget_math,
        code: args.budget_code,
        tools: args.budget_tools,
    }
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

async fn run_self_check(args: &SelfCheckArgs) -> Result<CommandOutput, HardsuiteError> {
    let suite = load_suite(
        args.suite.suite.as_deref(),
        budget_flags(&args.suite),
        args.suite.tasks.as_deref(),
    )?;
    let grader = connect_grader(&suite, args.suite.grader_image.as_deref()).await?;
    let report = self_check(&suite, grader.as_ref()).await?;
    Ok(CommandOutput::SelfCheck(render_self_check(&suite, &report)))
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

fn sampling_from(args: &RunArgs) -> Sampling {
    let mut sampling = match args.preset.unwrap_or_default() {
        Preset::QwenThinking => Sampling::qwen_thinking(),
        _ => Sampling::seed_default(),
    };
    if args.temperature.is_some() {
        sampling.temperature = args.temperature;
    }
    if args.top_p.is_some() {
        sampling.top_p = args.top_p;
    }
    if args.top_k.is_some() {
        sampling.top_k = args.top_k;
    }
    if args.presence_penalty.is_some() {
        sampling.presence_penalty = args.presence_penalty;
    }
    sampling
}

fn parse_extra_body(text: &str) -> Result<Map<String, Value>, HardsuiteError> {
    let value: Value = serde_json::from_str(text).map_err(|error| {
        HardsuiteError::invalid("--extra-body", format!("it is not JSON: {error}"))
    })?;
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
    Ok(fields)
}

/// The longest `--request-timeout` or `--idle-timeout` taken: 7 days, in seconds.
const MAX_TIMEOUT_SECS: u64 = 7 * 24 * 60 * 60;

/// The output directory when `--out` is not given.
const DEFAULT_OUT: &str = "hardsuite-out";

fn validate(args: &RunArgs) -> Result<(), HardsuiteError> {
    for (flag, seconds) in [
        ("--request-timeout", args.request_timeout),
        ("--idle-timeout", args.idle_timeout),
    ] {
        if seconds > MAX_TIMEOUT_SECS {
            return Err(HardsuiteError::invalid(
                flag,
                format!("{seconds} seconds is longer than 7 days; pass at most {MAX_TIMEOUT_SECS}"),
            ));
        }
    }
    if args.samples == Some(0) {
        return Err(HardsuiteError::invalid(
            "--samples",
            "it must be at least 1",
        ));
    }
    if args.concurrency == 0 {
        return Err(HardsuiteError::invalid(
            "--concurrency",
            "it must be at least 1",
        ));
    }
    if args.max_tries == 0 {
        return Err(HardsuiteError::invalid(
            "--max-tries",
            "it must be at least 1",
        ));
    }
    if args.rerun_cut_off == Some(0) {
        return Err(HardsuiteError::invalid(
            "--rerun-cut-off",
            "the budget must be positive",
        ));
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
    args: &RunArgs,
    header: &RunHeader,
    journal_dir: &Path,
) -> Result<Vec<String>, HardsuiteError> {
    let mut differences = Vec::new();
    if let Some(path) = &args.suite.suite
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
    if let Some(ids) = &args.suite.tasks {
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
    if let Some(model) = &args.model
        && *model != header.model
    {
        differences.push(format!(
            "--model {model} (the journal's run: {})",
            header.model
        ));
    }
    if let Some(url) = &args.base_url
        && header.simulated
    {
        differences.push(format!(
            "--base-url {url} (the journal's run used the in-process simulator; resume it without --base-url)"
        ));
    }
    sampling_differences(args, header, &mut differences);
    if let Some(text) = &args.extra_body {
        let given = parse_extra_body(text)?;
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
    other_differences(args, header, journal_dir, &mut differences);
    Ok(differences)
}

/// Budgets, samples, the re-run budget and the output directory given with `--resume` that
/// differ from the journal's run.
fn other_differences(
    args: &RunArgs,
    header: &RunHeader,
    journal_dir: &Path,
    differences: &mut Vec<String>,
) {
    let budgets = [
        (
            "--budget-math",
            args.suite.budget_math,
            header.budget_flags.math,
        ),
        (
            "--budget-code",
            args.suite.budget_code,
            header.budget_flags.code,
        ),
        (
            "--budget-tools",
            args.suite.budget_tools,
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
    if let Some(samples) = args.samples
        && samples != header.samples
    {
        differences.push(format!(
            "--samples {samples} (the journal's run: {})",
            header.samples
        ));
    }
    if let Some(budget) = args.rerun_cut_off
        && Some(budget) != header.rerun_budget
    {
        differences.push(format!(
            "--rerun-cut-off {budget} (the journal's run: {}; the re-run budget is fixed when a run starts)",
            shown(header.rerun_budget, "no re-run")
        ));
    }
    if let Some(out) = &args.out
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
fn sampling_differences(args: &RunArgs, header: &RunHeader, differences: &mut Vec<String>) {
    if let Some(preset) = args.preset {
        let sampling = sampling_from(args);
        if sampling != header.sampling {
            let name = preset
                .to_possible_value()
                .map_or_else(String::new, |value| value.get_name().to_owned());
            differences.push(format!(
                "--preset {name} and the sampling flags give {sampling} (the journal's run: {})",
                header.sampling
            ));
        }
    } else {
        let recorded = header.sampling;
        let floats = [
            ("--temperature", args.temperature, recorded.temperature),
            ("--top-p", args.top_p, recorded.top_p),
            (
                "--presence-penalty",
                args.presence_penalty,
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
        if let Some(value) = args.top_k
            && Some(value) != recorded.top_k
        {
            differences.push(format!(
                "--top-k {value} (the journal's run: {})",
                shown(recorded.top_k, "not sent")
            ));
        }
    }
}

fn resume_command(journal: &Path, args: &RunArgs, simulated: bool) -> String {
    let mut command = format!("hardsuite run --resume {}", journal.display());
    if !simulated && let Some(url) = &args.base_url {
        let _ = write!(command, " --base-url {url}");
    }
    if let Some(var) = &args.api_key_env {
        let _ = write!(command, " --api-key-env {var}");
    }
    command
}

/// What a run is: from the journal on `--resume`, else from the flags.
struct Settings {
    suite_path: Option<PathBuf>,
    flags: BudgetFlags,
    selected: Option<Vec<String>>,
    samples: u32,
    sampling: Sampling,
    rerun_budget: Option<u32>,
    simulated: bool,
    extra_body: Map<String, Value>,
}

fn settings(args: &RunArgs, previous: Option<&LoadedJournal>) -> Result<Settings, HardsuiteError> {
    Ok(match previous {
        Some(journal) => {
            let header = &journal.header;
            Settings {
                suite_path: header.suite_path.clone(),
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
            }
        }
        None => Settings {
            suite_path: args.suite.suite.clone(),
            flags: budget_flags(&args.suite),
            selected: args.suite.tasks.clone(),
            samples: args.samples.unwrap_or(1),
            sampling: sampling_from(args),
            rerun_budget: args.rerun_cut_off,
            simulated: args.base_url.is_none(),
            extra_body: match &args.extra_body {
                Some(text) => parse_extra_body(text)?,
                None => Map::new(),
            },
        },
    })
}

/// The resumed journal (if any), the output directory and the journal's path, once the flags
/// are checked against a resumed journal and a new run is known not to overwrite a journal.
type Destination = (Option<LoadedJournal>, PathBuf, PathBuf);

fn destination(args: &RunArgs) -> Result<Destination, HardsuiteError> {
    let previous = match &args.resume {
        Some(path) => Some(read_journal(path)?),
        None => None,
    };
    let out_dir = match &args.resume {
        Some(path) => path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_OUT)),
    };
    let journal_path = match &args.resume {
        Some(path) => path.clone(),
        None => out_dir.join("journal.jsonl"),
    };
    if let Some(journal) = &previous {
        let differences = resume_differences(args, &journal.header, &out_dir)?;
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
    args: &RunArgs,
    previous: Option<&LoadedJournal>,
    suite: &Suite,
) -> Result<(SimHandle, String, vernier_openai::Client, String), HardsuiteError> {
    let sim = Sim::start(demo_simulator_config(suite)?)
        .await
        .map_err(HardsuiteError::Simulator)?;
    let _ = writeln!(std::io::stderr().lock(), "{SIMULATOR_BANNER}");
    let base_url = sim.base_url();
    let model = match (previous, &args.model) {
        (Some(journal), _) => journal.header.model.clone(),
        (None, Some(model)) => model.clone(),
        (None, None) => "vernier-sim".to_owned(),
    };
    match build_client(args, &base_url) {
        Ok(client) => Ok((sim, base_url, client, model)),
        Err(error) => {
            sim.shutdown().await;
            Err(error)
        }
    }
}

async fn run_suite(args: RunArgs, command_line: Vec<String>) -> Result<RunOutcome, HardsuiteError> {
    // Everything that can be checked without Docker or the network is checked first, so a typo
    // fails at once rather than after the self-check.
    validate(&args)?;
    let (previous, out_dir, journal_path) = destination(&args)?;
    let settings = settings(&args, previous.as_ref())?;
    let mut suite = load_suite(
        settings.suite_path.as_deref(),
        settings.flags,
        settings.selected.as_deref(),
    )?;
    let server_client = if settings.simulated {
        None
    } else {
        let Some(base_url) = args.base_url.clone() else {
            return Err(HardsuiteError::invalid(
                "--resume",
                "the journal records a server run; pass --base-url URL to continue it",
            ));
        };
        let client = build_client(&args, &base_url)?;
        let model = resolve_model(&args, previous.as_ref(), &client, &base_url).await?;
        Some((base_url, client, model))
    };
    let grader = connect_grader(&suite, args.suite.grader_image.as_deref()).await?;
    let self_checked = if args.skip_self_check {
        false
    } else {
        let report = self_check(&suite, grader.as_ref()).await?;
        report.apply(&mut suite);
        if !args.quiet {
            let _ = writeln!(
                std::io::stderr().lock(),
                "self-check passed: {} checks on {} tasks",
                report.n_checks(),
                report.tasks.len()
            );
        }
        true
    };
    let (simulator, base_url, client, model) = if let Some((url, client, model)) = server_client {
        (None, url, client, model)
    } else {
        let (sim, url, client, model) = start_simulator(&args, previous.as_ref(), &suite).await?;
        (Some(sim), url, client, model)
    };
    let result = run_on_server(RunPlan {
        args: &args,
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
    })
    .await;
    if let Some(sim) = simulator {
        sim.shutdown().await;
    }
    result
}

struct RunPlan<'a> {
    args: &'a RunArgs,
    command_line: Vec<String>,
    suite: &'a Suite,
    grader: Option<Grader>,
    client: vernier_openai::Client,
    model: String,
    base_url: String,
    previous: Option<&'a LoadedJournal>,
    out_dir: PathBuf,
    journal_path: PathBuf,
    settings: Settings,
    self_checked: bool,
}

async fn run_on_server(plan: RunPlan<'_>) -> Result<RunOutcome, HardsuiteError> {
    let args = plan.args;
    std::fs::create_dir_all(&plan.out_dir)
        .map_err(|source| HardsuiteError::io("create", &plan.out_dir, source))?;
    let journal_path = plan.journal_path.clone();
    let (journal, finished, kept_attempts) = open_journal(&plan, &journal_path)?;
    let runner = Runner {
        client: plan.client.clone(),
        model: plan.model.clone(),
        sampling: plan.settings.sampling,
        extra_body: plan.settings.extra_body.clone(),
        grader: plan.grader.clone(),
        journal: Arc::clone(&journal),
        max_tries: args.max_tries,
        retry_backoff: Duration::from_millis(250),
        progress: !args.quiet,
        stop: AtomicBool::new(false),
        n_done: AtomicUsize::new(0),
        n_planned: AtomicUsize::new(0),
    };
    let main_jobs: Vec<(usize, u32)> = plan
        .suite
        .tasks
        .iter()
        .enumerate()
        .flat_map(|(index, task)| {
            (0..plan.settings.samples)
                .filter(|sample| !finished.contains(&(task.id.clone(), *sample, Phase::Main)))
                .map(move |sample| (index, sample))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut server_down = run_phase(
        &runner,
        plan.suite,
        &main_jobs,
        Phase::Main,
        None,
        args.concurrency,
    )
    .await?;
    if server_down.is_none()
        && let Some(budget) = plan.settings.rerun_budget
    {
        let loaded = read_journal(&journal_path)?;
        let so_far = ResultsFile::from_journal(&loaded.header, &loaded.attempts);
        let rerun_jobs = cut_off_jobs(plan.suite, &so_far, &finished);
        server_down = run_phase(
            &runner,
            plan.suite,
            &rerun_jobs,
            Phase::Rerun,
            Some(budget),
            args.concurrency,
        )
        .await?;
    }
    let loaded = read_journal(&journal_path)?;
    let results = ResultsFile::from_journal(&loaded.header, &loaded.attempts);
    let files = RunFiles {
        journal: journal_path.clone(),
        results: plan.out_dir.join("results.json"),
        report: plan.out_dir.join("report.md"),
    };
    results.write(&files.results)?;
    std::fs::write(&files.report, render_markdown(&results))
        .map_err(|source| HardsuiteError::io("write", &files.report, source))?;
    if let Some(detail) = server_down {
        return Err(HardsuiteError::ServerStopped {
            detail,
            journal: journal_path.clone(),
            resume_command: resume_command(&journal_path, args, plan.settings.simulated),
        });
    }
    let table = render_table(&results);
    Ok(RunOutcome {
        results,
        table,
        files,
        kept_attempts,
    })
}

/// Runs the jobs with `concurrency` in flight; returns why the server was given up on, if it was.
async fn run_phase(
    runner: &Runner,
    suite: &Suite,
    jobs: &[(usize, u32)],
    phase: Phase,
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
    args: &RunArgs,
    previous: Option<&LoadedJournal>,
    client: &vernier_openai::Client,
    base_url: &str,
) -> Result<String, HardsuiteError> {
    match (previous, &args.model) {
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
    finished: &HashSet<(String, u32, Phase)>,
) -> Vec<(usize, u32)> {
    let mut jobs = Vec::new();
    for (index, task) in suite.tasks.iter().enumerate() {
        let Some(result) = so_far.task(&task.id) else {
            continue;
        };
        for sample in &result.samples {
            if sample.outcome == OutcomeKind::CutOff
                && !finished.contains(&(task.id.clone(), sample.sample, Phase::Rerun))
            {
                jobs.push((index, sample.sample));
            }
        }
    }
    jobs
}

fn build_client(args: &RunArgs, base_url: &str) -> Result<vernier_openai::Client, HardsuiteError> {
    let mut builder = ClientBuilder::new(base_url).timeouts(
        Timeouts::new()
            .first_byte(Some(Duration::from_secs(
                args.idle_timeout.max(1).saturating_mul(2),
            )))
            .idle(Some(Duration::from_secs(args.idle_timeout.max(1))))
            .total(Some(Duration::from_secs(args.request_timeout.max(1)))),
    );
    if let Some(var) = &args.api_key_env {
        builder = builder.api_key_from_env(var);
    }
    builder.build().map_err(|source| HardsuiteError::Client {
        what: format!("set up the client for {base_url}"),
        source,
    })
}

type Finished = HashSet<(String, u32, Phase)>;

/// Opens the journal: a new one with its header, or the resumed one with a `resumed` line;
/// returns the finished attempts and how many there are.
fn open_journal(
    plan: &RunPlan<'_>,
    journal_path: &Path,
) -> Result<(Arc<JournalWriter>, Finished, usize), HardsuiteError> {
    let args = plan.args;
    let journal = Arc::new(JournalWriter::open(journal_path, plan.previous.is_some())?);
    let mut kept_attempts = 0;
    let mut finished: HashSet<(String, u32, Phase)> = HashSet::new();
    if let Some(previous) = plan.previous {
        for attempt in previous.attempts.iter().filter(|a| a.is_scored()) {
            finished.insert((attempt.task_id.clone(), attempt.sample, attempt.phase));
        }
        kept_attempts = finished.len();
        journal.append(&JournalLine::Resumed {
            kept_attempts,
            at_unix_ms: unix_ms(),
        })?;
        if !args.quiet {
            let _ = writeln!(
                std::io::stderr().lock(),
                "resuming {}: {kept_attempts} finished attempts kept",
                journal_path.display()
            );
        }
    } else {
        journal.append(&JournalLine::Header(RunHeader {
            journal_version: JOURNAL_VERSION,
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
        }))?;
    }
    Ok((journal, finished, kept_attempts))
}
