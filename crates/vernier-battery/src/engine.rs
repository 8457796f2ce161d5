//! Running a battery: each part in turn through its own engine into its own folder, with
//! `battery.json` written again after every part. A part that fails is recorded with its error
//! and exit code, and the battery goes on (unless its server stopped: the rest wait for
//! `--resume`); an interrupt stops the part in flight (its engine
//! writes what it measured) and the battery, and `--resume` continues both.

use std::path::{Path, PathBuf};
use std::time::Instant;
use vernier_cli::Failure as _;

use vernier_run::{Interrupt, RunError};

use crate::config::{BatteryConfig, Part};
use crate::error::BatteryError;
use crate::file::{BATTERY_FILE, BatteryFile, PartEntry, PartStatus};
use crate::parts::{check_port_free, check_suites_fit, launch, run_part};
use crate::plumbing::{
    BatteryObserver, BatteryTarget, Plumbing, SharedInterrupt, battery_resume_command,
};

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
        /// What was typed beside `--resume`: a setting that differs from the battery's is
        /// refused by name.
        typed: Box<vernier_run::TypedBeside<BatteryConfig>>,
    },
}

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

/// Runs (or continues) a battery.
pub async fn run_battery(
    start: BatteryStart,
    target: &BatteryTarget,
    command_line: Vec<String>,
    observer: &dyn BatteryObserver,
    interrupt: Interrupt,
) -> Result<BatteryOutcome, BatteryError> {
    let session = Instant::now();
    let (mut file, out) = open(start, target, &command_line)?;
    let config = file.flags_config()?.clone();
    run_again_what_is_gone(&mut file, &out, observer);
    let interrupt = SharedInterrupt::new(interrupt);
    let total = file.parts.len();
    let mut interrupted = false;
    // With `--launch`, the server the parts after `ready` measure, started once and stopped
    // at the end.
    let mut launched: Option<vernier_lifecycle::LaunchedServer> = None;
    let mut checked_fit = false;
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
        let Some(part) = file.parts[index].fixed_part() else {
            return Err(BatteryError::Parse {
                path: out.join(BATTERY_FILE),
                detail: format!(
                    "part {:?} is no part of a battery of flags",
                    file.parts[index].part
                ),
            });
        };
        observer.part_started(part.name(), index, total);
        let began = Instant::now();
        let folder = out.join(part.folder());
        let model = (!file.model.is_empty()).then(|| file.model.clone());
        let prepared = async {
            // Every part after `ready` measures the launched server: started before the first.
            if part != Part::Ready
                && let Some(command) = &config.launch
                && launched.is_none()
            {
                launched = Some(launch(command, target, &out, &interrupt).await?);
            }
            if part != Part::Ready && !checked_fit {
                check_suites_fit(&file, model.as_deref(), &plumbing).await?;
                checked_fit = true;
            }
            Ok::<_, BatteryError>(())
        }
        .await;
        let ran = match prepared {
            Ok(()) => run_part(part, &config, &folder, model, &plumbing).await,
            Err(error @ BatteryError::Launch { .. }) => Err(error),
            Err(error) => {
                // A suite that cannot fit the server: nothing measured, every part left to
                // run once the setting is changed.
                if let Some(server) = launched.take() {
                    server
                        .stop(config.stop.as_deref(), std::time::Duration::from_secs(15))
                        .await;
                }
                file.wall_seconds += session.elapsed().as_secs_f64();
                file.write(&out)?;
                return Err(error);
            }
        };
        let entry = &mut file.parts[index];
        entry.seconds += began.elapsed().as_secs_f64();
        let recorded = record(entry, ran, &out, &command_line, &interrupt);
        interrupted = recorded.interrupted;
        let no_server = recorded.no_server;
        if let Some(model) = recorded.model
            && file.model.is_empty()
        {
            file.model = model;
        }
        observer.part_finished(&file.parts[index]);
        file.write(&out)?;
        if interrupted || no_server {
            break;
        }
    }
    if let Some(server) = launched {
        server
            .stop(config.stop.as_deref(), std::time::Duration::from_secs(15))
            .await;
    }
    file.wall_seconds += session.elapsed().as_secs_f64();
    let path = file.write(&out)?;
    Ok(BatteryOutcome {
        file,
        path,
        interrupted,
    })
}

/// What a part's end means for the battery.
struct Recorded {
    /// The interrupt stopped it.
    interrupted: bool,
    /// Its server stopped (or was never launched): the parts after it wait for `--resume`.
    no_server: bool,
    /// The model it measured.
    model: Option<String>,
}

/// Writes a part's end into its entry: its files, verdict and status, or its error and exit
/// code.
fn record(
    entry: &mut PartEntry,
    ran: Result<crate::parts::PartRun, BatteryError>,
    out: &Path,
    command_line: &[String],
    interrupt: &SharedInterrupt,
) -> Recorded {
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
                .map(|(role, path)| (role.to_owned(), relative(out, &path)))
                .collect();
            entry.validity = Some(run.validity);
            Recorded {
                interrupted: run.interrupted,
                no_server: false,
                model: Some(run.model),
            }
        }
        Err(error) => {
            let error = with_battery_resume(error, command_line, out);
            entry.status = PartStatus::Failed;
            entry.detail = Some(vernier_cli::one_line(&error));
            entry.exit_code = Some(error.exit_code());
            Recorded {
                interrupted: interrupt.fired(),
                // Without the server (not launched, or stopped) the rest wait for --resume.
                no_server: without_server(&error),
                model: None,
            }
        }
    }
}

/// A new battery's folder must not hold one already.
pub(crate) fn refuse_a_battery_in(out: &Path) -> Result<(), BatteryError> {
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
    Ok(())
}

/// The battery's record: a new one written before any part runs, or the one to continue.
fn open(
    start: BatteryStart,
    target: &BatteryTarget,
    command_line: &[String],
) -> Result<(BatteryFile, PathBuf), BatteryError> {
    match start {
        BatteryStart::New { config, out } => {
            refuse_a_battery_in(&out)?;
            if config.launch.is_some() && target.base_url.is_none() {
                return Err(RunError::invalid(
                    "--launch",
                    "it needs --base-url: where the launched server answers",
                )
                .into());
            }
            config.check()?;
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
        BatteryStart::Resume { folder, typed } => {
            let folder = if folder.is_file() {
                folder.parent().unwrap_or(Path::new(".")).to_path_buf()
            } else {
                folder
            };
            if !folder.join(BATTERY_FILE).is_file() {
                return Err(RunError::invalid(
                    "--resume",
                    format!(
                        "{} holds no {BATTERY_FILE}: give the folder `battery run` wrote",
                        folder.display()
                    ),
                )
                .into());
            }
            let mut file = BatteryFile::load(&folder)?;
            check_typed(&folder, &file, &typed)?;
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
            if file.flags_config()?.launch.is_some()
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

/// Flags typed beside `--resume` that would change what the battery measures are refused by
/// name (the battery's own configuration is what it continues with).
fn check_typed(
    folder: &Path,
    file: &BatteryFile,
    typed: &vernier_run::TypedBeside<BatteryConfig>,
) -> Result<(), BatteryError> {
    let json = |config: &BatteryConfig| serde_json::to_value(config).unwrap_or_default();
    let settings = vernier_run::typed_settings(
        &json(file.flags_config()?),
        &json(&typed.config),
        &typed.fields,
        &[],
    );
    let original = (!file.command_line.is_empty()).then(|| file.command_line.join(" "));
    vernier_run::check_resume(&folder.join(BATTERY_FILE), original.as_deref(), &settings)?;
    Ok(())
}

/// A part recorded done whose files are gone (a folder deleted by hand) is run again, said.
pub(crate) fn run_again_what_is_gone(
    file: &mut BatteryFile,
    out: &Path,
    observer: &dyn BatteryObserver,
) {
    for entry in &mut file.parts {
        if entry.status != PartStatus::Done {
            continue;
        }
        let gone: Vec<&String> = entry
            .files
            .values()
            .filter(|relative| !out.join(relative.as_str()).exists())
            .collect();
        if let Some(first) = gone.first() {
            observer.note(&format!(
                "{}: recorded done, but {} is gone; running it again",
                entry.part,
                out.join(first.as_str()).display()
            ));
            *entry = entry.reset();
        }
    }
}

/// A part's error, its resume command (made by the part's engine from the battery's command
/// line, naming the part's journal) replaced by the battery's own: `--resume` with the
/// battery's folder continues every part.
fn with_battery_resume(
    mut error: BatteryError,
    command_line: &[String],
    out: &Path,
) -> BatteryError {
    if let Some(RunError::ServerStopped { resume_command, .. }) = run_error_of(&mut error) {
        *resume_command = battery_resume_command(command_line, out);
    }
    error
}

/// The failure every engine shares inside a part's error, when it is one.
fn run_error_of(error: &mut BatteryError) -> Option<&mut RunError> {
    match error {
        BatteryError::Run(run)
        | BatteryError::Sweep(vernier_sweep::SweepError::Run(run))
        | BatteryError::Suite(vernier_hardsuite::HardsuiteError::Run(run))
        | BatteryError::Ready(vernier_lifecycle::LifecycleError::Run(run)) => Some(run),
        _ => None,
    }
}

/// Whether a part's error leaves the parts after it without a server: it was not launched,
/// or it stopped answering (or failed every request) mid-part.
fn without_server(error: &BatteryError) -> bool {
    matches!(
        error,
        BatteryError::Launch { .. }
            | BatteryError::Run(RunError::ServerStopped { .. })
            | BatteryError::Sweep(vernier_sweep::SweepError::Run(
                RunError::ServerStopped { .. }
            ))
            | BatteryError::Suite(vernier_hardsuite::HardsuiteError::Run(
                RunError::ServerStopped { .. }
            ))
            | BatteryError::Ready(vernier_lifecycle::LifecycleError::Run(
                RunError::ServerStopped { .. }
            ))
    )
}

/// `path` relative to `base` (as `battery.json` records a part's files), else whole.
pub(crate) fn relative(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}
