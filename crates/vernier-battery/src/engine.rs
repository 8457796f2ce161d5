//! Running a battery: each part in turn through its own engine into its own folder, with
//! `battery.json` written again after every part. A part that fails is recorded with its error
//! and exit code, and the battery goes on; an interrupt stops the part in flight (its engine
//! writes what it measured) and the battery, and `--resume` continues both.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vernier_cli::Failure as _;

use vernier_hardsuite::{
    ContextSelection, HardsuiteOutcome, RunConfig, RunObserver, RunTarget, SilentObserver,
    SuiteSelection,
};
use vernier_run::{Interrupt, RunError};
use vernier_sweep::{
    InProcessSimulator, RunContext, SweepConfig, SweepObserver, SweepOutcome, SweepStart,
};

use crate::config::{BatteryConfig, Part};
use crate::error::BatteryError;
use crate::file::{BATTERY_FILE, BatteryFile, PartEntry, PartStatus};

/// Where a battery's record comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum BatteryStart {
    /// A new battery of `config` into `out` (which must not hold a battery yet).
    New {
        /// What it runs.
        config: Box<BatteryConfig>,
        /// Its folder.
        out: PathBuf,
    },
    /// Continue the battery in this folder (or its `battery.json`) with the configuration
    /// it records: finished parts are kept, a part cut short resumes from its journal.
    Resume {
        /// The battery's folder.
        folder: PathBuf,
    },
}

/// The server a battery measures.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BatteryTarget {
    /// The server (`None`: each part runs the bundled simulator in-process).
    pub base_url: Option<String>,
    /// The variable holding the API key.
    pub api_key_env: Option<String>,
    /// A CA certificate to trust.
    pub ca_cert: Option<PathBuf>,
    /// A DCGM exporter to read the server's GPUs from (without it: NVML for a server here).
    pub gpu_metrics_url: Option<String>,
    /// Milliseconds between GPU samples (`None`: 500; 0 reads no GPU).
    pub gpu_sample_ms: Option<u64>,
    /// Only these GPUs (by index) serve the server; `None`: every GPU read.
    pub gpus: Option<Vec<u32>>,
}

impl BatteryTarget {
    /// The interval between GPU samples.
    fn gpu_sample_ms(&self) -> u64 {
        self.gpu_sample_ms.unwrap_or(500)
    }
}

impl BatteryTarget {
    /// The server at `base_url`, or the simulator when `None`.
    pub fn new(base_url: Option<String>) -> Self {
        Self {
            base_url,
            ..Self::default()
        }
    }
}

/// Receives a battery's progress; every method has a default that does nothing.
pub trait BatteryObserver: Send + Sync {
    /// A part starts (`index` from 0 of `total`).
    fn part_started(&self, part: Part, index: usize, total: usize) {
        let _ = (part, index, total);
    }
    /// A part ended, as recorded.
    fn part_finished(&self, entry: &PartEntry) {
        let _ = entry;
    }
    /// What the sweep part reports to.
    fn sweep(&self) -> Arc<dyn SweepObserver> {
        Arc::new(vernier_sweep::QuietObserver)
    }
    /// What the suite parts report to.
    fn suite(&self) -> &dyn RunObserver {
        &SilentObserver
    }
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuietBattery;

impl BatteryObserver for QuietBattery {}

/// A battery's end.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BatteryOutcome {
    /// The index as written.
    pub file: BatteryFile,
    /// Where it was written.
    pub path: PathBuf,
    /// The interrupt stopped it; `battery run --resume FOLDER` continues.
    pub interrupted: bool,
}

impl BatteryOutcome {
    /// The exit code the battery ends with: the first failed part's, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.interrupted {
            return vernier_cli::exit_code::INTERRUPTED;
        }
        self.file
            .parts
            .iter()
            .find(|entry| entry.status == PartStatus::Failed)
            .map_or(vernier_cli::exit_code::SUCCESS, |entry| {
                entry.exit_code.unwrap_or(vernier_cli::exit_code::FAILURE)
            })
    }
}

/// One interrupt shared by every part: the first signal stops the part in flight and the
/// battery.
struct SharedInterrupt(tokio::sync::watch::Receiver<bool>);

impl SharedInterrupt {
    fn new(interrupt: Interrupt) -> Self {
        let (sender, receiver) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            interrupt.await;
            let _ = sender.send(true);
        });
        Self(receiver)
    }

    fn fired(&self) -> bool {
        *self.0.borrow()
    }

    fn future(&self) -> Interrupt {
        let mut receiver = self.0.clone();
        Box::pin(async move {
            if receiver.wait_for(|fired| *fired).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

/// Runs (or continues) a battery.
pub async fn run_battery(
    start: BatteryStart,
    target: &BatteryTarget,
    command_line: Vec<String>,
    observer: &dyn BatteryObserver,
    interrupt: Interrupt,
) -> Result<BatteryOutcome, BatteryError> {
    let (mut file, out) = open(start, target, &command_line)?;
    let interrupt = SharedInterrupt::new(interrupt);
    let total = file.parts.len();
    let mut interrupted = false;
    // With `--launch`, the server the parts after `ready` measure, started once and stopped
    // at the end.
    let mut launched: Option<vernier_lifecycle::LaunchedServer> = None;
    let mut no_server = false;
    let plumbing = Plumbing {
        target,
        command_line: &command_line,
        observer,
        interrupt: &interrupt,
    };
    for index in 0..total {
        if file.parts[index].status == PartStatus::Done {
            continue;
        }
        if interrupt.fired() {
            interrupted = true;
            break;
        }
        let part = file.parts[index].part;
        observer.part_started(part, index, total);
        let began = Instant::now();
        let folder = out.join(part.folder());
        let model = (!file.model.is_empty()).then(|| file.model.clone());
        let ran = async {
            // Every part after `ready` measures the launched server: started before the first.
            if part != Part::Ready
                && let Some(command) = &file.config.launch
                && launched.is_none()
            {
                launched = Some(launch(command, target, &out, &interrupt).await?);
            }
            run_part(part, &file.config, &folder, model, &plumbing).await
        }
        .await;
        let entry = &mut file.parts[index];
        entry.seconds += began.elapsed().as_secs_f64();
        match ran {
            Ok(run) => {
                entry.status = if run.interrupted {
                    PartStatus::Interrupted
                } else {
                    PartStatus::Done
                };
                entry.detail = None;
                entry.exit_code = None;
                entry.files = run
                    .files
                    .into_iter()
                    .map(|(role, path)| (role.to_owned(), relative(&out, &path)))
                    .collect();
                entry.validity = Some(run.validity);
                if file.model.is_empty() {
                    file.model = run.model;
                }
                interrupted = run.interrupted;
            }
            Err(error) => {
                entry.status = PartStatus::Failed;
                entry.detail = Some(vernier_cli::one_line(&error));
                entry.exit_code = Some(error.exit_code());
                interrupted = interrupt.fired();
                // Without the server the rest cannot run: they stay pending for --resume.
                no_server = matches!(error, BatteryError::Launch { .. });
            }
        }
        observer.part_finished(&file.parts[index]);
        file.write(&out)?;
        if interrupted || no_server {
            break;
        }
    }
    if let Some(server) = launched {
        server
            .stop(
                file.config.stop.as_deref(),
                std::time::Duration::from_secs(15),
            )
            .await;
    }
    let path = file.write(&out)?;
    Ok(BatteryOutcome {
        file,
        path,
        interrupted,
    })
}

/// What every part runs with besides its sizes.
struct Plumbing<'a> {
    target: &'a BatteryTarget,
    command_line: &'a [String],
    observer: &'a dyn BatteryObserver,
    interrupt: &'a SharedInterrupt,
}

/// Runs one part through its engine.
async fn run_part(
    part: Part,
    config: &BatteryConfig,
    folder: &Path,
    model: Option<String>,
    plumbing: &Plumbing<'_>,
) -> Result<PartRun, BatteryError> {
    match part {
        Part::Ready => run_ready_part(config, folder, plumbing)
            .await
            .map(PartRun::from),
        Part::Sweep => run_sweep_part(config, folder, model, plumbing)
            .await
            .map(PartRun::from),
        _ => run_suite_part(part, config, folder, model, plumbing)
            .await
            .map(PartRun::from),
    }
}

/// The battery's record: a new one written before any part runs, or the one to continue.
fn open(
    start: BatteryStart,
    target: &BatteryTarget,
    command_line: &[String],
) -> Result<(BatteryFile, PathBuf), BatteryError> {
    match start {
        BatteryStart::New { config, out } => {
            if out.join(BATTERY_FILE).exists() {
                return Err(RunError::invalid(
                    "--out",
                    format!(
                        "{} already holds a battery: continue it with --resume {}, or pick another --out",
                        out.display(),
                        out.display()
                    ),
                )
                .into());
            }
            if config.launch.is_some() && target.base_url.is_none() {
                return Err(RunError::invalid(
                    "--launch",
                    "it needs --base-url: where the launched server answers",
                )
                .into());
            }
            if config.parts.is_empty() {
                return Err(RunError::invalid(
                    "--parts",
                    "no part chosen: name at least one of sweep, suite, probe, context",
                )
                .into());
            }
            if config.launch.is_some() {
                check_port_free(target)?;
            }
            std::fs::create_dir_all(&out)
                .map_err(|source| BatteryError::io("create", &out, source))?;
            let server = target
                .base_url
                .clone()
                .unwrap_or_else(|| "simulator".to_owned());
            let mut file = BatteryFile::new(*config, command_line.to_vec(), server);
            file.write(&out)?;
            Ok((file, out))
        }
        BatteryStart::Resume { folder } => {
            let folder = if folder.is_file() {
                folder.parent().unwrap_or(Path::new(".")).to_path_buf()
            } else {
                folder
            };
            let mut file = BatteryFile::load(&folder)?;
            match (&target.base_url, file.simulated) {
                (Some(url), true) => {
                    return Err(RunError::invalid(
                        "--base-url",
                        format!("the battery in {} measured the bundled simulator; resume it without --base-url (given {url})", folder.display()),
                    )
                    .into());
                }
                (None, false) => {
                    return Err(RunError::invalid(
                        "--resume",
                        format!(
                            "the battery in {} measured {}; pass --base-url URL to continue it",
                            folder.display(),
                            file.target
                        ),
                    )
                    .into());
                }
                _ => {}
            }
            if let Some(url) = &target.base_url {
                file.target.clone_from(url);
            }
            if file.config.launch.is_some()
                && file
                    .parts
                    .iter()
                    .any(|entry| entry.status != PartStatus::Done)
            {
                check_port_free(target)?;
            }
            command_line.clone_into(&mut file.command_line);
            Ok((file, folder))
        }
    }
}

fn relative(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What a part left, whichever engine ran it.
struct PartRun {
    files: Vec<(&'static str, PathBuf)>,
    validity: vernier_run::Verdict,
    model: String,
    interrupted: bool,
}

impl From<SweepOutcome> for PartRun {
    fn from(outcome: SweepOutcome) -> Self {
        Self {
            files: vec![
                ("journal", outcome.journal),
                ("run", outcome.files.run_file),
                ("report", outcome.files.markdown),
            ],
            validity: outcome.run.validity.clone(),
            model: outcome.run.environment.model.id.clone(),
            interrupted: outcome.interrupted,
        }
    }
}

impl From<HardsuiteOutcome> for PartRun {
    fn from(outcome: HardsuiteOutcome) -> Self {
        Self {
            validity: outcome.results.validity.clone(),
            model: outcome.results.model.clone(),
            files: vec![
                ("journal", outcome.files.journal),
                ("results", outcome.files.results),
                ("report", outcome.files.report),
            ],
            interrupted: outcome.interrupted,
        }
    }
}

impl From<vernier_lifecycle::ReadyOutcome> for PartRun {
    fn from(outcome: vernier_lifecycle::ReadyOutcome) -> Self {
        use vernier_run::{Reason, Verdict, VerdictLevel};
        let mut reasons = Vec::new();
        if outcome.run.failed_reps > 0 {
            reasons.push(Reason::new(
                "ready_failed",
                VerdictLevel::Questionable,
                format!(
                    "{} of {} launches did not reach every milestone (see logs/)",
                    outcome.run.failed_reps,
                    outcome.run.failed_reps + outcome.run.complete_reps
                ),
            ));
        }
        Self {
            files: vec![
                ("journal", outcome.journal),
                ("run", outcome.run_file),
                ("report", outcome.markdown),
            ],
            validity: Verdict::from_reasons(reasons),
            model: String::new(),
            interrupted: outcome.interrupted,
        }
    }
}

/// Time to ready: `lifecycle ready`'s engine launches the server `ready_reps` times, each
/// stopped after its first token and warm requests.
async fn run_ready_part(
    config: &BatteryConfig,
    folder: &Path,
    plumbing: &Plumbing<'_>,
) -> Result<vernier_lifecycle::ReadyOutcome, BatteryError> {
    let Plumbing {
        target,
        command_line,
        interrupt,
        ..
    } = *plumbing;
    let mut ready = vernier_lifecycle::ReadyConfig::default();
    ready.base_url = target.base_url.clone().unwrap_or_default();
    ready.launch.clone_from(&config.launch);
    ready.stop.clone_from(&config.stop);
    ready.model.clone_from(&config.model);
    ready.reps = config.ready_reps.max(1);
    let journal = folder.join("journal.jsonl");
    let start = if journal.exists() {
        vernier_lifecycle::ReadyStart::Resume {
            journal,
            flags: vernier_lifecycle::ResumeFlags::new(ready, Vec::<String>::new()),
        }
    } else {
        vernier_lifecycle::ReadyStart::New {
            config: ready,
            out: folder.to_path_buf(),
        }
    };
    Ok(vernier_lifecycle::run_ready(
        start,
        command_line,
        &vernier_lifecycle::QuietObserver,
        Some(interrupt.future()),
    )
    .await?)
}

/// Refuses a launch onto a port something already answers on: the battery would time and
/// measure that server instead of the one it launches.
fn check_port_free(target: &BatteryTarget) -> Result<(), BatteryError> {
    match &target.base_url {
        Some(base_url) => Ok(vernier_lifecycle::check_port_free(base_url)?),
        None => Ok(()),
    }
}

/// How long a launched server may take to answer its health check.
const LAUNCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(900);

/// Starts the server for the parts after `ready` and waits until `/health` (or `/v1/models`
/// where there is no `/health`) answers 200; its output goes to `server.log`.
async fn launch(
    command: &str,
    target: &BatteryTarget,
    out: &Path,
    interrupt: &SharedInterrupt,
) -> Result<vernier_lifecycle::LaunchedServer, BatteryError> {
    let log = out.join("server.log");
    let failed = |detail: String| BatteryError::Launch {
        command: command.to_owned(),
        detail,
        log: log.clone(),
    };
    let base_url = target.base_url.clone().ok_or_else(|| {
        RunError::invalid(
            "--launch",
            "it needs --base-url: where the launched server answers",
        )
    })?;
    let server = vernier_lifecycle::LaunchedServer::launch(command, &log)?;
    let client = vernier_sweep::sweep_client(
        &base_url,
        target.api_key_env.as_deref(),
        target.ca_cert.as_deref(),
    )?;
    let began = Instant::now();
    let mut path = "/health";
    loop {
        if let Some(status) = server.exit_status() {
            return Err(failed(format!("it exited ({status}) before answering")));
        }
        if interrupt.fired() {
            server.stop(None, std::time::Duration::from_secs(15)).await;
            return Err(failed("interrupted while it started".to_owned()));
        }
        // One probe may hang on a server still starting (accepted, never answered): each is
        // bounded, and the next one asks again.
        let probe = tokio::time::timeout(std::time::Duration::from_secs(5), client.get_raw(path));
        match probe.await {
            Ok(Ok((status, ..))) if status.as_u16() == 200 => return Ok(server),
            Ok(Ok((status, ..))) if status.as_u16() == 404 => path = "/v1/models",
            _ => {}
        }
        if began.elapsed() > LAUNCH_TIMEOUT {
            server.stop(None, std::time::Duration::from_secs(15)).await;
            return Err(failed(format!(
                "no 200 from {path} within {} s",
                LAUNCH_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

/// The sweep of a battery: the preset's cells, or the journal's on a resume.
async fn run_sweep_part(
    config: &BatteryConfig,
    folder: &Path,
    model: Option<String>,
    plumbing: &Plumbing<'_>,
) -> Result<SweepOutcome, BatteryError> {
    let journal = folder.join("journal.jsonl");
    let start = if journal.exists() {
        SweepStart::Resume {
            journal,
            typed: None,
        }
    } else {
        let mut sweep = SweepConfig::default();
        sweep.workloads.clone_from(&config.workloads);
        sweep.prompt_tokens.clone_from(&config.prompt_tokens);
        sweep.output_tokens = vec![config.output_tokens];
        sweep.concurrency = config.concurrencies();
        sweep.reps = config.reps;
        sweep.model = model.or_else(|| config.model.clone()).unwrap_or_default();
        sweep.label = Some("battery".to_owned());
        sweep.extra_body.clone_from(&config.extra_body);
        SweepStart::New {
            config: Box::new(sweep),
            out: folder.to_path_buf(),
        }
    };
    let simulator = match &plumbing.target.base_url {
        Some(_) => None,
        None => Some(InProcessSimulator::start(vernier_sweep::demo_simulator_config()).await?),
    };
    let base_url = simulator.as_ref().map_or_else(
        || plumbing.target.base_url.clone().unwrap_or_default(),
        |sim| sim.base_url().to_owned(),
    );
    let result = async {
        let client = vernier_sweep::sweep_client(
            &base_url,
            plumbing.target.api_key_env.as_deref(),
            plumbing.target.ca_cert.as_deref(),
        )?;
        let context = RunContext::new(plumbing.command_line.to_vec())
            .simulator(simulator.is_some())
            .gpu_metrics_url(plumbing.target.gpu_metrics_url.clone())
            .gpu_sample_interval(Duration::from_millis(plumbing.target.gpu_sample_ms()))
            .gpus(plumbing.target.gpus.clone());
        vernier_sweep::run_sweep(
            client,
            start,
            context,
            plumbing.observer.sweep(),
            Some(plumbing.interrupt.future()),
        )
        .await
    }
    .await;
    if let Some(simulator) = simulator {
        simulator.shutdown().await;
    }
    Ok(result?)
}

/// A suite of a battery: the bundled suite (its chosen categories), the probe or the long
/// context suite; its own journal on a resume.
async fn run_suite_part(
    part: Part,
    config: &BatteryConfig,
    folder: &Path,
    model: Option<String>,
    plumbing: &Plumbing<'_>,
) -> Result<HardsuiteOutcome, BatteryError> {
    let mut run = RunConfig::default();
    run.base_url.clone_from(&plumbing.target.base_url);
    run.api_key_env.clone_from(&plumbing.target.api_key_env);
    run.ca_cert.clone_from(&plumbing.target.ca_cert);
    run.gpu_metrics_url
        .clone_from(&plumbing.target.gpu_metrics_url);
    run.gpu_sample_ms = plumbing.target.gpu_sample_ms();
    run.gpus.clone_from(&plumbing.target.gpus);
    run.model = model.or_else(|| config.model.clone());
    run.extra_body = (!config.extra_body.is_empty())
        .then(|| serde_json::Value::Object(config.extra_body.clone()));
    run.samples = Some(config.suite_samples);
    run.concurrency = if part == Part::SuiteBatched {
        usize::try_from(config.batched_concurrency.max(1)).unwrap_or(1)
    } else {
        config.suite_concurrency.max(1)
    };
    let journal = folder.join("journal.jsonl");
    let run_target = if journal.exists() {
        RunTarget::resume(journal)
    } else {
        run.suite = selection(part, config)?;
        RunTarget::new_run(folder)
    };
    Ok(vernier_hardsuite::run_suite_until(
        &run,
        &run_target,
        plumbing.command_line.to_vec(),
        plumbing.observer.suite(),
        plumbing.interrupt.future(),
    )
    .await?)
}

/// The suite a part runs.
fn selection(part: Part, config: &BatteryConfig) -> Result<SuiteSelection, BatteryError> {
    let mut selection = SuiteSelection::default();
    match part {
        Part::Suite | Part::SuiteBatched => {
            if let Some(tasks) = &config.suite_tasks {
                selection.tasks = Some(tasks.clone());
            } else if let Some(categories) = &config.suite_categories {
                let suite = vernier_hardsuite::load_suite(&SuiteSelection::default())?;
                let ids: Vec<String> = suite
                    .tasks
                    .iter()
                    .filter(|task| categories.iter().any(|c| c == task.category.as_str()))
                    .map(|task| task.id.clone())
                    .collect();
                if ids.is_empty() {
                    return Err(RunError::invalid(
                        "--suite-categories",
                        format!(
                            "no bundled task is in {}: name math, code or tools",
                            categories.join(", ")
                        ),
                    )
                    .into());
                }
                selection.tasks = Some(ids);
            }
        }
        Part::Probe => selection.probe = Some(config.seed),
        Part::Context => {
            let mut context = ContextSelection::with_seed(config.seed);
            if let Some(lengths) = &config.context_lengths {
                context.plan.lengths.clone_from(lengths);
                context.lengths_given = true;
            }
            selection.context = Some(context);
        }
        Part::Sweep | Part::Ready => {}
    }
    if let Some(budget) = config.suite_budget {
        let budgets = &mut selection.budgets;
        for slot in [
            &mut budgets.math,
            &mut budgets.code,
            &mut budgets.tools,
            &mut budgets.context,
            &mut budgets.vision,
            &mut budgets.video,
        ] {
            *slot = Some(budget);
        }
    }
    Ok(selection)
}
