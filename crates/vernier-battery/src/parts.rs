//! Each part of a battery run through its own engine: `lifecycle ready`'s for time to ready,
//! the sweep's, and the hard suite's for the suites (the bundled suite, batched, the probe,
//! long context), with the server launched once for the parts after `ready` and every suite
//! checked against the server's context before the first part measures.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vernier_hardsuite::{ContextSelection, HardsuiteOutcome, RunConfig, RunTarget, SuiteSelection};
use vernier_run::RunError;
use vernier_sweep::{InProcessSimulator, RunContext, SweepConfig, SweepOutcome, SweepStart};

use crate::config::{BatteryConfig, Part};
use crate::error::BatteryError;
use crate::file::{BatteryFile, PartStatus};
use crate::plumbing::{BatteryTarget, Plumbing, SharedInterrupt};

/// Runs one part through its engine.
pub(crate) async fn run_part(
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

/// What a part left, whichever engine ran it.
pub(crate) struct PartRun {
    pub(crate) files: Vec<(&'static str, PathBuf)>,
    pub(crate) validity: vernier_run::Verdict,
    pub(crate) model: String,
    pub(crate) interrupted: bool,
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
pub(crate) fn check_port_free(target: &BatteryTarget) -> Result<(), BatteryError> {
    match &target.base_url {
        Some(base_url) => Ok(vernier_lifecycle::check_port_free(base_url)?),
        None => Ok(()),
    }
}

/// How long a launched server may take to answer its health check.
const LAUNCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(900);

/// Starts the server for the parts after `ready` and waits until `/health` (or `/v1/models`
/// where there is no `/health`) answers 200; its output goes to `server.log`.
pub(crate) async fn launch(
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
            .gpus(plumbing.target.gpus.clone())
            .resume_command(Some(plumbing.resume_command(folder)));
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
    let journal = folder.join("journal.jsonl");
    let run_target = if journal.exists() {
        RunTarget::resume(journal)
    } else {
        RunTarget::new_run(folder)
    };
    let mut run = suite_run_config(part, config, model, plumbing)?;
    run.resume_command = Some(plumbing.resume_command(folder));
    vernier_hardsuite::run_suite_until(
        &run,
        &run_target,
        plumbing.command_line.to_vec(),
        plumbing.observer.suite(),
        plumbing.interrupt.future(),
    )
    .await
    .map_err(with_battery_flag)
}

/// A suite's refusal of a budget names the battery's flag for it.
fn with_battery_flag(error: vernier_hardsuite::HardsuiteError) -> BatteryError {
    match error {
        vernier_hardsuite::HardsuiteError::BudgetOverContext {
            category,
            budget,
            limit,
            stated_by,
            suggested,
            ..
        } => BatteryError::Suite(vernier_hardsuite::HardsuiteError::BudgetOverContext {
            category,
            budget,
            limit,
            stated_by,
            flag: "--suite-budget".to_owned(),
            suggested,
        }),
        other => BatteryError::Suite(other),
    }
}

/// Before the first part that measures: every suite still to run fits the server's context
/// (its budgets below what the server states), so a budget the server would refuse stops
/// the battery before an hour of sweeping rather than after it.
pub(crate) async fn check_suites_fit(
    file: &BatteryFile,
    model: Option<&str>,
    plumbing: &Plumbing<'_>,
) -> Result<(), BatteryError> {
    for entry in &file.parts {
        let Some(part) = entry.fixed_part() else {
            continue;
        };
        if entry.status == PartStatus::Done || matches!(part, Part::Sweep | Part::Ready) {
            continue;
        }
        let run = suite_run_config(
            part,
            file.flags_config()?,
            model.map(str::to_owned),
            plumbing,
        )?;
        vernier_hardsuite::check_suite_fits_server(&run)
            .await
            .map_err(with_battery_flag)?;
    }
    Ok(())
}

/// The suite run a part makes: the server, model, sampling, samples and concurrency of the
/// battery, and the part's suite.
fn suite_run_config(
    part: Part,
    config: &BatteryConfig,
    model: Option<String>,
    plumbing: &Plumbing<'_>,
) -> Result<RunConfig, BatteryError> {
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
    run.suite = selection(part, config)?;
    Ok(run)
}

/// The suite a part runs.
pub(crate) fn selection(
    part: Part,
    config: &BatteryConfig,
) -> Result<SuiteSelection, BatteryError> {
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
            &mut budgets.dataset,
        ] {
            *slot = Some(budget);
        }
    }
    Ok(selection)
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
