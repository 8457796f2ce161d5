//! The engine: a run (new or resumed) against a server or the in-process simulator, its
//! journal, and the files it writes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use serde_json::Value;
use vernier_grader::Grader;
use vernier_openai::Timeouts;
use vernier_run::{
    ClientOptions, InProcessSimulator, Interrupt, RefusedFields, RunError, ServerFingerprint,
    StopReason, unix_ms,
};
use vernier_tasks::{Category, OutcomeKind, Suite, self_check};

use crate::config::{RunConfig, RunTarget};
use crate::context_fit::{check_budgets_fit, fit_context, server_context};
use crate::demo::{HARDSUITE_SIMULATOR_BANNER, hardsuite_demo_simulator_config};
use crate::error::HardsuiteError;
use crate::journal::{
    AttemptPhase, HARDSUITE_JOURNAL_VERSION, HardsuiteJournalLine, HardsuiteJournalWriter,
    LoadedHardsuiteJournal, RecordedCapacity, RunHeader, read_hardsuite_journal,
};
use crate::observer::RunObserver;
use crate::report::{render_markdown, render_table};
use crate::results::ResultsFile;
use crate::resume::destination;
use crate::runner::{AttemptEnd, Runner};
use crate::selection::connect_grader;
use crate::settings::{Settings, settings, settings_suite, validate};

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
    /// The run was interrupted ([`run_suite_until`]): the files hold what was measured, and
    /// the journal continues with a [`RunTarget::Resume`].
    pub interrupted: bool,
    /// The command that continues an interrupted run (`None` when the run finished).
    pub resume_command: Option<String>,
}

/// The server a run measures: where it answers, a client for it, the model, and the
/// in-process simulator when that is the server.
struct Target {
    simulator: Option<InProcessSimulator>,
    base_url: String,
    client: vernier_openai::Client,
    model: String,
    fingerprint: ServerFingerprint,
    /// The KV cache the server's requests share, where its identity says.
    shared_capacity: Option<vernier_openai::SharedCapacity>,
    /// The server's GPUs: the source to sample and the interval, and what was read.
    gpu: vernier_run::OpenedGpu,
    /// What the server states it loaded.
    weights: vernier_run::LoadedWeights,
}

/// Connects to the server the configuration names (or starts the in-process simulator),
/// resolves the model with the one rule of every engine, and on a resume refuses a server that
/// is not the one the journal measured.
async fn connect(
    config: &RunConfig,
    settings: &Settings,
    previous: Option<&LoadedHardsuiteJournal>,
    journal_path: &Path,
    suite: &Suite,
    observer: &dyn RunObserver,
) -> Result<Target, HardsuiteError> {
    let (simulator, base_url) = if settings.simulated {
        let simulator = InProcessSimulator::start(hardsuite_demo_simulator_config(suite)?).await?;
        observer.simulator_started(HARDSUITE_SIMULATOR_BANNER);
        let url = simulator.base_url().to_owned();
        (Some(simulator), url)
    } else {
        let Some(base_url) = config.base_url.clone() else {
            return Err(HardsuiteError::invalid(
                "--resume",
                "the journal records a server run; pass --base-url URL to continue it",
            ));
        };
        (None, base_url)
    };
    let target = async {
        let client = client_for(config, &base_url)?;
        let wanted = match previous {
            Some(journal) => Some(journal.header.model.clone()),
            None if settings.simulated => Some(
                config
                    .model
                    .clone()
                    .unwrap_or_else(|| "vernier-sim".to_owned()),
            ),
            None => config.model.clone(),
        };
        let resumed = previous.map(|_| journal_path);
        let resolved = vernier_run::resolve_model(&client, wanted.as_deref(), resumed).await?;
        let model = resolved.id.clone();
        let identity = client.server_identity().await;
        let weights = vernier_run::read_loaded_weights(&client, &resolved, &identity).await;
        let fingerprint = vernier_run::fingerprint(&model, &identity);
        let shared_capacity = vernier_openai::shared_capacity(&identity);
        if let Some(recorded) = previous.and_then(|journal| journal.header.server.as_ref()) {
            vernier_run::check_same_server(journal_path, recorded, &fingerprint)?;
        }
        Ok::<_, HardsuiteError>((client, model, fingerprint, shared_capacity, weights))
    }
    .await;
    match target {
        Ok((client, model, fingerprint, shared_capacity, weights)) => {
            let gpu = crate::gpu_run::open_gpu(config, &base_url, settings.simulated).await;
            observer.note(&gpu.record.summary_line());
            if let Some(warning) = weights.warning() {
                observer.warn(&warning);
            }
            Ok(Target {
                simulator,
                base_url,
                client,
                model,
                fingerprint,
                shared_capacity,
                gpu,
                weights,
            })
        }
        Err(error) => {
            if let Some(simulator) = simulator {
                simulator.shutdown().await;
            }
            Err(error)
        }
    }
}

/// Checks, before anything is sent, that `config`'s suite fits the server at
/// `config.base_url`: every task's answer budget (and the cut-off re-run's) below the context
/// the server states. A battery calls this for each of its suites before its first part
/// measures; a run of the suite checks the same at its start. Nothing is checked without a
/// server (the simulator takes any budget) or when the server states no context.
pub async fn check_suite_fits_server(config: &RunConfig) -> Result<(), HardsuiteError> {
    let Some(base_url) = config.base_url.as_deref() else {
        return Ok(());
    };
    let suite = crate::selection::load_suite(&config.suite)?;
    let client = client_for(config, base_url)?;
    let model = vernier_run::resolve_model(&client, config.model.as_deref(), None)
        .await?
        .id;
    let limit = crate::context_fit::read_context_limit(&client, &model).await;
    check_budgets_fit(&suite, config.rerun_cut_off, limit.as_ref())
}

/// Runs the suite: checks the configuration (against the journal when resuming), connects to
/// the server named by `config.base_url` (or starts the in-process simulator), connects the
/// grader for code tasks, self-checks, runs every attempt not yet finished, then writes
/// `results.json` and `report.md` next to the journal. `command_line` is recorded in a new
/// journal's header. Progress goes to `observer`.
///
/// A server that stops answering ends the run with [`vernier_run::RunError::ServerStopped`]
/// (naming the command that continues it) once everything measured is on disk; a resumed run
/// whose server is not the journal's is refused with [`vernier_run::RunError::ServerChanged`].
pub async fn run_suite(
    config: &RunConfig,
    target: &RunTarget,
    command_line: Vec<String>,
    observer: &dyn RunObserver,
) -> Result<HardsuiteOutcome, HardsuiteError> {
    run_suite_until(config, target, command_line, observer, vernier_run::never()).await
}

/// [`run_suite`], interrupted when `interrupt` completes (e.g. [`vernier_run::signals`]): no
/// further request is sent, the files are written from the journal, and the outcome says
/// [`HardsuiteOutcome::interrupted`]; a [`RunTarget::Resume`] of the journal continues it.
pub async fn run_suite_until(
    config: &RunConfig,
    target: &RunTarget,
    command_line: Vec<String>,
    observer: &dyn RunObserver,
    interrupt: Interrupt,
) -> Result<HardsuiteOutcome, HardsuiteError> {
    // Everything that can be checked without Docker or the network is checked first, so a typo
    // fails at once rather than after the self-check.
    validate(config)?;
    let (previous, out_dir, journal_path) = destination(config, target)?;
    let mut settings = settings(config, previous.as_ref())?;
    let mut suite = settings_suite(&settings)?;
    let Target {
        simulator,
        base_url,
        client,
        model,
        fingerprint,
        shared_capacity,
        gpu,
        weights,
    } = connect(
        config,
        &settings,
        previous.as_ref(),
        &journal_path,
        &suite,
        observer,
    )
    .await?;
    let result = async {
        if fit_context(&mut settings, &client, &model, observer).await {
            suite = settings_suite(&settings)?;
        }
        let context = server_context(&mut settings, &client, &model).await;
        check_budgets_fit(&suite, settings.rerun_budget, context.as_ref())?;
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
        // Boxed: the run's state is large, and the caller's future stays small.
        Box::pin(run_on_server(RunPlan {
            config,
            command_line,
            suite: &suite,
            grader,
            client,
            model,
            base_url,
            fingerprint,
            shared_capacity,
            gpu,
            weights,
            previous: previous.as_ref(),
            out_dir,
            journal_path,
            settings,
            self_checked,
            observer,
            interrupt,
        }))
        .await
    }
    .await;
    if let Some(simulator) = simulator {
        simulator.shutdown().await;
    }
    result
}

struct RunPlan<'a> {
    config: &'a RunConfig,
    command_line: Vec<String>,
    suite: &'a Suite,
    grader: Option<Grader>,
    client: vernier_openai::Client,
    model: String,
    base_url: String,
    fingerprint: ServerFingerprint,
    shared_capacity: Option<vernier_openai::SharedCapacity>,
    gpu: vernier_run::OpenedGpu,
    weights: vernier_run::LoadedWeights,
    previous: Option<&'a LoadedHardsuiteJournal>,
    out_dir: PathBuf,
    journal_path: PathBuf,
    settings: Settings,
    self_checked: bool,
    observer: &'a dyn RunObserver,
    interrupt: Interrupt,
}

async fn run_on_server(mut plan: RunPlan<'_>) -> Result<HardsuiteOutcome, HardsuiteError> {
    let config = plan.config;
    std::fs::create_dir_all(&plan.out_dir)
        .map_err(|source| HardsuiteError::io("create", &plan.out_dir, source))?;
    let journal_path = plan.journal_path.clone();
    let capacity = shared_capacity(&plan);
    let (journal, finished, kept_attempts) = open_journal(&plan, &journal_path, capacity)?;
    let replies = open_replies(&journal_path, plan.previous.is_some())?;
    let context_sizer = context_sizer(&plan).await;
    let room = crate::room::Room::new(capacity.map(|capacity| capacity.tokens));
    let runner = runner(&plan, journal, replies, context_sizer, room);
    // The GPUs are sampled on their own thread over this session's work.
    let sampler = plan.gpu.start_sampling();
    let end = run_phases(&mut plan, &runner, &finished, &journal_path).await;
    crate::gpu_run::finish(sampler, &runner.journal).await?;
    let end = end?;
    if end == PhaseEnd::Finished {
        check_identity_at_end(&plan, &runner.journal).await?;
    }
    let (results, files) = write_results_or_say(&plan, &journal_path)?;
    // A run that scored nothing, or less than half of what the server could take, measured
    // the infrastructure, not the model: it ends as a stopped server, with the resume command
    // (before, "total 0/0" exited 0).
    let total = &results.main.total;
    let end = match end {
        PhaseEnd::Finished if total.n_unscored > total.n_scored => PhaseEnd::ServerDown(format!(
            "{} of {} samples failed on infrastructure (server or grader) on every try, \
                 and a run must score at least half of the samples the server can take; see report.md",
            total.n_unscored,
            total.n_unscored + total.n_scored
        )),
        end => end,
    };
    if let PhaseEnd::ServerDown(detail) = end {
        let resume_command = resume_command(
            config,
            plan.settings.simulated,
            &plan.command_line,
            &journal_path,
        );
        return Err(RunError::ServerStopped {
            reason: StopReason::ServerUnreachable,
            detail,
            journal: journal_path,
            resume_command,
        }
        .into());
    }
    let table = render_table(&results);
    Ok(HardsuiteOutcome {
        results,
        table,
        files,
        kept_attempts,
        interrupted: end == PhaseEnd::Interrupted,
        resume_command: (end == PhaseEnd::Interrupted).then(|| {
            resume_command(
                config,
                plan.settings.simulated,
                &plan.command_line,
                &journal_path,
            )
        }),
    })
}

/// Runs the main phase and, when asked and it finished, the re-run of the cut-off tasks.
async fn run_phases(
    plan: &mut RunPlan<'_>,
    runner: &Runner<'_>,
    finished: &HashSet<(String, u32, AttemptPhase)>,
    journal_path: &Path,
) -> Result<PhaseEnd, HardsuiteError> {
    let config = plan.config;
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
    let mut end = run_phase(
        runner,
        plan.suite,
        &main_jobs,
        (AttemptPhase::Main, None),
        config.concurrency,
        &mut plan.interrupt,
    )
    .await?;
    if end == PhaseEnd::Finished
        && let Some(budget) = plan.settings.rerun_budget
    {
        let loaded = read_hardsuite_journal(journal_path)?;
        let so_far = ResultsFile::from_loaded(&loaded);
        let rerun_jobs = cut_off_jobs(plan.suite, &so_far, finished);
        end = run_phase(
            runner,
            plan.suite,
            &rerun_jobs,
            (AttemptPhase::Rerun, Some(budget)),
            config.concurrency,
            &mut plan.interrupt,
        )
        .await?;
    }
    Ok(end)
}

/// The runner of the plan's attempts, writing to `journal` and `replies`.
fn runner<'a>(
    plan: &RunPlan<'a>,
    journal: Arc<HardsuiteJournalWriter>,
    replies: Arc<vernier_journal::JournalWriter>,
    context_sizer: Option<crate::context_run::ContextSizer>,
    room: crate::room::Room,
) -> Runner<'a> {
    Runner {
        client: plan.client.clone(),
        model: plan.model.clone(),
        sampling: plan.settings.sampling,
        extra_body: plan.settings.extra_body.clone(),
        grader: plan.grader.clone(),
        journal,
        max_tries: plan.config.max_tries,
        retry_backoff: Duration::from_millis(250),
        observer: plan.observer,
        stop: AtomicBool::new(false),
        n_done: AtomicUsize::new(0),
        in_flight: Arc::new(AtomicUsize::new(0)),
        n_planned: AtomicUsize::new(0),
        replies,
        pacer: vernier_run::RequestPacer::new(plan.config.max_rps),
        slots: vernier_run::AdaptiveConcurrency::new(plan.config.concurrency),
        adaptive: plan.config.adaptive_concurrency,
        wait_budget: vernier_run::WaitBudget::new(wait_budget(plan.config), unix_ms()),
        completion_cap: AtomicBool::new(false),
        context_sizer,
        refused_cache_fields: RefusedFields::default(),
        media_nonce: std::sync::atomic::AtomicU64::new(unix_ms()),
        video_as: plan.settings.video_as,
        room,
        tries_before: tries_before(plan.previous),
    }
}

/// The tries each attempt of a resumed run already made (the highest try number on file).
fn tries_before(
    previous: Option<&LoadedHardsuiteJournal>,
) -> std::collections::HashMap<(String, u32, AttemptPhase), u32> {
    let mut tries = std::collections::HashMap::new();
    for attempt in previous.map_or(&[][..], |journal| journal.attempts.as_slice()) {
        let key = (attempt.task_id.clone(), attempt.sample, attempt.phase);
        let highest = tries.entry(key).or_insert(0);
        *highest = attempt.try_number.max(*highest);
    }
    tries
}

/// The KV cache the run's requests in flight share, when more than one request is in flight
/// at once and the server's identity (read when the target was resolved) says it.
fn shared_capacity(plan: &RunPlan<'_>) -> Option<RecordedCapacity> {
    if plan.config.concurrency <= 1 {
        return None;
    }
    let capacity = plan.shared_capacity?;
    plan.observer.note(&format!(
        "in flight together: prompts and answer budgets kept within {} tokens, the context each of the server's {} slots reports (llama-server's slots share one cache of that size by default; with a cache per slot, as with -np and no --kv-unified, this only runs fewer at once)",
        capacity.tokens, capacity.slots
    ));
    Some(RecordedCapacity {
        tokens: capacity.tokens,
        slots: capacity.slots,
    })
}

/// Who answered at the end: the server asked again, each change journaled (a server swapped or
/// upgraded during the run makes it invalid; the verdict reads this line).
async fn check_identity_at_end(
    plan: &RunPlan<'_>,
    journal: &HardsuiteJournalWriter,
) -> Result<(), HardsuiteError> {
    let changes = vernier_run::identity_changes(&plan.client, &plan.fingerprint).await;
    journal.append(&HardsuiteJournalLine::IdentityChecked {
        changes,
        at_unix_ms: unix_ms(),
    })?;
    Ok(())
}

/// [`write_results`]; when it fails (a full disk), says that the journal and the replies hold
/// every answer and how to continue once there is room.
fn write_results_or_say(
    plan: &RunPlan<'_>,
    journal_path: &Path,
) -> Result<(ResultsFile, RunFiles), HardsuiteError> {
    write_results(journal_path, &plan.out_dir).inspect_err(|error| {
        plan.observer.warn(&format!(
            "failed to {}; everything measured is safe in {}; once there is room, continue with: {}",
            vernier_cli::one_line(error),
            journal_path.display(),
            resume_command(
                plan.config,
                plan.settings.simulated,
                &plan.command_line,
                journal_path
            )
        ));
    })
}

/// Derives the results from the journal and the replies, and writes `results.json`,
/// `report.md` and, for context tasks, `context-heatmap.svg`.
fn write_results(
    journal_path: &Path,
    out_dir: &Path,
) -> Result<(ResultsFile, RunFiles), HardsuiteError> {
    let loaded = read_hardsuite_journal(journal_path)?;
    let mut results = ResultsFile::from_loaded(&loaded);
    let replies = crate::replies::read_replies(&crate::replies::replies_path(journal_path))?;
    results.audit = Some(crate::replies::audit(&results, &replies));
    results.validity = crate::results::validity(&results);
    let files = RunFiles {
        journal: journal_path.to_owned(),
        results: out_dir.join("results.json"),
        report: out_dir.join("report.md"),
    };
    results.write(&files.results)?;
    vernier_run::write_atomically(&files.report, render_markdown(&results).as_bytes())
        .map_err(|source| HardsuiteError::io("write", &files.report, source))?;
    if let Some(context) = &results.context {
        let heat_map = out_dir.join("context-heatmap.svg");
        vernier_run::write_atomically(
            &heat_map,
            crate::context_report::render_context_svg(context, &results.chart_subtitle())
                .as_bytes(),
        )
        .map_err(|source| HardsuiteError::io("write", &heat_map, source))?;
    }
    Ok((results, files))
}

/// The prompt sizer of a suite with context tasks: the server's own count when it has one.
async fn context_sizer(plan: &RunPlan<'_>) -> Option<crate::context_run::ContextSizer> {
    if plan.suite.count(Category::CONTEXT) == 0 {
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

/// How a phase ended.
#[derive(Debug, PartialEq, Eq)]
enum PhaseEnd {
    /// Every job ran.
    Finished,
    /// The server was given up on, for this reason.
    ServerDown(String),
    /// The run was interrupted; attempts in flight were dropped unrecorded.
    Interrupted,
}

/// Runs the jobs with `concurrency` in flight until they end, the server is given up on or
/// `interrupt` completes.
async fn run_phase(
    runner: &Runner<'_>,
    suite: &Suite,
    jobs: &[(usize, u32)],
    (phase, budget): (AttemptPhase, Option<u32>),
    concurrency: usize,
    interrupt: &mut Interrupt,
) -> Result<PhaseEnd, HardsuiteError> {
    runner.n_done.store(0, Ordering::SeqCst);
    runner.n_planned.store(jobs.len(), Ordering::SeqCst);
    let mut attempts = futures::stream::iter(jobs.iter().map(|&(index, sample)| {
        let task = &suite.tasks[index];
        runner.attempt(task, sample, phase, budget.unwrap_or(task.budget_tokens))
    }))
    .buffer_unordered(concurrency.max(1));
    let mut server_down = None;
    loop {
        let end = tokio::select! {
            end = attempts.next() => end,
            () = &mut *interrupt => {
                runner.stop.store(true, Ordering::SeqCst);
                runner.observer.note("interrupted: no further request is sent");
                return Ok(PhaseEnd::Interrupted);
            }
        };
        match end {
            None => break,
            Some(Ok(AttemptEnd::ServerDown(detail))) => {
                server_down.get_or_insert(detail);
            }
            Some(Ok(AttemptEnd::Done | AttemptEnd::NotStarted)) => {}
            Some(Err(error)) => {
                runner.stop.store(true, Ordering::SeqCst);
                return Err(error);
            }
        }
    }
    Ok(server_down.map_or(PhaseEnd::Finished, PhaseEnd::ServerDown))
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

/// A client for `base_url` with the run's timeouts, key and CA certificate.
pub(crate) fn client_for(
    config: &RunConfig,
    base_url: &str,
) -> Result<vernier_openai::Client, HardsuiteError> {
    let timeouts = Timeouts::new()
        .first_byte(Some(Duration::from_secs(
            config.idle_timeout_secs.max(1).saturating_mul(2),
        )))
        .idle(Some(Duration::from_secs(config.idle_timeout_secs.max(1))))
        .total(Some(Duration::from_secs(
            config.request_timeout_secs.max(1),
        )));
    Ok(vernier_run::build_client(
        &ClientOptions::new(base_url)
            .api_key_env(config.api_key_env.as_deref())
            .ca_cert(config.ca_cert.as_deref())
            .timeouts(timeouts),
    )?)
}

/// The command that continues a stopped or interrupted run: the program as it was run, `run`,
/// the server and key flags again, then `--resume JOURNAL`.
pub(crate) fn resume_command(
    config: &RunConfig,
    simulated: bool,
    command_line: &[String],
    journal: &Path,
) -> String {
    if let Some(command) = &config.resume_command {
        return command.clone();
    }
    let program = vernier_cli::program_name(command_line, "hardsuite");
    let mut words = vec![program.to_owned(), "run".to_owned()];
    if let (false, Some(url)) = (simulated, &config.base_url) {
        words.extend(["--base-url".to_owned(), url.clone()]);
    }
    if let Some(var) = &config.api_key_env {
        words.extend(["--api-key-env".to_owned(), var.clone()]);
    }
    vernier_cli::resume_command(program, &words, "--resume", &journal.display().to_string())
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
    shared_capacity: Option<RecordedCapacity>,
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
            server: Some(plan.fingerprint.clone()),
            gpu: Some(Box::new(plan.gpu.record.clone())),
            weights: Some(Box::new(plan.weights.clone())),
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
            instructions_seed: plan.settings.generated.instructions,
            structured_seed: plan.settings.generated.structured,
            calls_seed: plan.settings.generated.calls,
            video_seed: plan.settings.generated.video,
            probe_seed: plan.settings.generated.probe,
            video_as: plan.settings.video_as,
            context_limit: plan.settings.context_fit.limit.clone(),
            context_dropped: plan.settings.context_fit.dropped.clone(),
            shared_capacity,
            dataset: crate::dataset_run::record_of(
                plan.settings.dataset.as_ref(),
                plan.settings.flags.dataset,
                plan.suite,
            )?
            .map(Box::new),
        }))?;
    }
    Ok((journal, finished, kept_attempts))
}
