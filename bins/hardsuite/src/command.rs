//! The commands: `run`, `compare` and `self-check`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

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
    BudgetFlags, JOURNAL_VERSION, JournalLine, JournalWriter, Phase, RunHeader, Sampling,
    read_journal, unix_ms,
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
            source,
        })
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
    let mut sampling = match args.preset {
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

fn validate(args: &RunArgs) -> Result<(), HardsuiteError> {
    if args.samples == 0 {
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

struct Server {
    base_url: String,
    simulator: Option<SimHandle>,
}

async fn start_server(
    args: &RunArgs,
    simulated: bool,
    suite: &Suite,
) -> Result<Server, HardsuiteError> {
    if simulated {
        let sim = Sim::start(demo_simulator_config(suite)?)
            .await
            .map_err(HardsuiteError::Simulator)?;
        let _ = writeln!(std::io::stderr().lock(), "{SIMULATOR_BANNER}");
        return Ok(Server {
            base_url: sim.base_url(),
            simulator: Some(sim),
        });
    }
    let Some(base_url) = args.base_url.clone() else {
        return Err(HardsuiteError::invalid(
            "--resume",
            "the journal records a server run; pass --base-url URL to continue it",
        ));
    };
    Ok(Server {
        base_url,
        simulator: None,
    })
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

async fn run_suite(args: RunArgs, command_line: Vec<String>) -> Result<RunOutcome, HardsuiteError> {
    validate(&args)?;
    let previous = match &args.resume {
        Some(path) => Some(read_journal(path)?),
        None => None,
    };
    let out_dir = match &args.resume {
        Some(path) => path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => args.out.clone(),
    };
    let extra_body = match (&previous, &args.extra_body) {
        (Some(journal), _) => match &journal.header.extra_body {
            Some(Value::Object(fields)) => fields.clone(),
            _ => Map::new(),
        },
        (None, Some(text)) => parse_extra_body(text)?,
        (None, None) => Map::new(),
    };
    let (suite_path, flags, selected, samples, sampling, rerun_budget, simulated) = match &previous
    {
        Some(journal) => {
            let header = &journal.header;
            (
                header.suite_path.clone(),
                header.budget_flags,
                Some(header.task_ids.clone()),
                header.samples,
                header.sampling,
                header.rerun_budget,
                header.simulated,
            )
        }
        None => (
            args.suite.suite.clone(),
            budget_flags(&args.suite),
            args.suite.tasks.clone(),
            args.samples,
            sampling_from(&args),
            args.rerun_cut_off,
            args.base_url.is_none(),
        ),
    };
    let mut suite = load_suite(suite_path.as_deref(), flags, selected.as_deref())?;
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
    let server = start_server(&args, simulated, &suite).await?;
    let result = run_on_server(RunPlan {
        args: &args,
        command_line,
        suite: &suite,
        grader,
        server: &server,
        previous: previous.as_ref(),
        out_dir,
        extra_body,
        samples,
        sampling,
        rerun_budget,
        simulated,
        self_checked,
        flags,
        suite_path,
    })
    .await;
    if let Some(sim) = server.simulator {
        sim.shutdown().await;
    }
    result
}

struct RunPlan<'a> {
    args: &'a RunArgs,
    command_line: Vec<String>,
    suite: &'a Suite,
    grader: Option<Grader>,
    server: &'a Server,
    previous: Option<&'a crate::journal::LoadedJournal>,
    out_dir: PathBuf,
    extra_body: Map<String, Value>,
    samples: u32,
    sampling: Sampling,
    rerun_budget: Option<u32>,
    simulated: bool,
    self_checked: bool,
    flags: BudgetFlags,
    suite_path: Option<PathBuf>,
}

async fn run_on_server(plan: RunPlan<'_>) -> Result<RunOutcome, HardsuiteError> {
    let args = plan.args;
    let client = build_client(args, &plan.server.base_url)?;
    let model = resolve_model(&plan, &client).await?;
    std::fs::create_dir_all(&plan.out_dir)
        .map_err(|source| HardsuiteError::io("create", &plan.out_dir, source))?;
    let journal_path = plan.out_dir.join("journal.jsonl");
    let journal_path = match &args.resume {
        Some(path) => path.clone(),
        None => journal_path,
    };
    let (journal, finished, kept_attempts) = open_journal(&plan, &model, &journal_path)?;
    let runner = Runner {
        client,
        model,
        sampling: plan.sampling,
        extra_body: plan.extra_body.clone(),
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
            (0..plan.samples)
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
        && let Some(budget) = plan.rerun_budget
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
            resume_command: resume_command(&journal_path, args, plan.simulated),
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
    plan: &RunPlan<'_>,
    client: &vernier_openai::Client,
) -> Result<String, HardsuiteError> {
    match (plan.previous, &plan.args.model) {
        (Some(journal), _) => Ok(journal.header.model.clone()),
        (None, Some(model)) => Ok(model.clone()),
        (None, None) if plan.simulated => Ok("vernier-sim".to_owned()),
        (None, None) => {
            let models = client
                .models()
                .await
                .map_err(|source| HardsuiteError::Client {
                    what: format!(
                        "list the models of {} (or pass --model)",
                        plan.server.base_url
                    ),
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
            .first_byte(Some(Duration::from_secs(args.idle_timeout.max(1) * 2)))
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
    model: &str,
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
            suite_path: plan.suite_path.clone(),
            task_ids: plan
                .suite
                .tasks
                .iter()
                .map(|task| task.id.clone())
                .collect(),
            model: model.to_owned(),
            base_url: plan.server.base_url.clone(),
            simulated: plan.simulated,
            sampling: plan.sampling,
            extra_body: (!plan.extra_body.is_empty())
                .then(|| Value::Object(plan.extra_body.clone())),
            budget_flags: plan.flags,
            samples: plan.samples,
            rerun_budget: plan.rerun_budget,
            self_checked: plan.self_checked,
            grader_image: plan.grader.as_ref().map(|g| g.image_digest().to_owned()),
            command_line: plan.command_line.clone(),
            started_unix_ms: unix_ms(),
        }))?;
    }
    Ok((journal, finished, kept_attempts))
}
