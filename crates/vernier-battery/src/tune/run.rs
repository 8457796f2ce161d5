//! Running a tune: each configuration's server launched in its turn (a port already answering
//! refused), timed to ready, the study run against it, the server stopped and its port seen
//! closed; rounds alternate their order; every step is in the journal and the record before
//! the next, so an interrupted tune resumes in the turn it was in without relaunching a
//! finished one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vernier_journal::JournalWriter;
use vernier_run::RunError;

use super::file::{TUNE_FILE, TUNE_JOURNAL, TuneEvent, TuneFile, TurnStatus};
use super::results::Death;
use crate::error::BatteryError;
use crate::file::{BatteryFile, PartStatus};
use crate::parts::{check_port_free, launch};
use crate::plumbing::{BatteryObserver, BatteryTarget, SharedInterrupt};
use crate::study_run::{StudyRunner, StudyStart, check_study, run_study};

/// Where a tune's record comes from.
#[derive(Debug)]
#[non_exhaustive]
pub enum TuneStart {
    /// A new tune into `out` (which must not hold one yet).
    New {
        /// The tune as it will run.
        file: Box<TuneFile>,
        /// Its folder.
        out: PathBuf,
    },
    /// Continue the tune in this folder.
    Resume {
        /// Its folder (or its `tune.json`).
        folder: PathBuf,
    },
}

/// Hears a tune's progress (the binary prints it).
pub trait TuneObserver: Send + Sync {
    /// One line of progress.
    fn note(&self, line: &str);
}

/// A tune's end.
#[derive(Debug)]
#[non_exhaustive]
pub struct TuneOutcome {
    /// The record as written.
    pub file: TuneFile,
    /// Its folder.
    pub out: PathBuf,
    /// Stopped by an interrupt before every turn was over.
    pub interrupted: bool,
}

/// How long a stopped server's port may keep answering.
const PORT_CLOSE_WAIT: Duration = Duration::from_secs(15);

fn unix_ms() -> u64 {
    vernier_run::unix_ms()
}

fn journal_error(path: &Path, error: &vernier_journal::JournalError) -> BatteryError {
    BatteryError::Parse {
        path: path.to_path_buf(),
        detail: error.to_string(),
    }
}

fn append(journal: &JournalWriter, event: &TuneEvent) -> Result<(), BatteryError> {
    journal
        .append(event)
        .and_then(|()| journal.sync())
        .map_err(|error| journal_error(journal.path(), &error))
}

/// Runs (or continues) a tune.
pub async fn run_tune(
    start: TuneStart,
    runner: &StudyRunner<'_>,
    observer: &dyn BatteryObserver,
    notes: &dyn TuneObserver,
    interrupt: vernier_run::Interrupt,
) -> Result<TuneOutcome, BatteryError> {
    let session = Instant::now();
    let (mut file, out, journal) = open(start, runner)?;
    let problems = check_study(&file.study, &runner.kinds).await;
    if let Some(problem) = problems.first() {
        return Err(RunError::invalid(
            "--study",
            format!(
                "part {}: {}",
                file.study
                    .parts
                    .get(problem.part)
                    .map_or("?", |p| p.name.as_str()),
                problem.message
            ),
        )
        .into());
    }
    let interrupt = SharedInterrupt::new(interrupt);
    let wall_before = file.wall_seconds;
    let mut interrupted = false;
    for index in 0..file.turns.len() {
        if file.turns[index].status.finished() {
            continue;
        }
        if interrupt.fired() {
            interrupted = true;
            break;
        }
        let status = turn(
            &mut file, index, &out, &journal, runner, observer, notes, &interrupt,
        )
        .await?;
        file.wall_seconds = wall_before + session.elapsed().as_secs_f64();
        file.write(&out)?;
        if status == TurnStatus::Interrupted || interrupt.fired() {
            interrupted = true;
            break;
        }
    }
    if !interrupted {
        file.analysis = Some(super::analysis::analyse(&file, &out));
    }
    file.wall_seconds = wall_before + session.elapsed().as_secs_f64();
    file.write(&out)?;
    if !interrupted {
        super::report::write_reports(&file, &out)?;
    }
    Ok(TuneOutcome {
        file,
        out,
        interrupted,
    })
}

/// One configuration's turn: launch, ready, study, stop.
#[expect(
    clippy::too_many_arguments,
    reason = "one turn reads the whole tune's state; a struct of borrows would only rename them"
)]
async fn turn(
    file: &mut TuneFile,
    index: usize,
    out: &Path,
    journal: &JournalWriter,
    runner: &StudyRunner<'_>,
    observer: &dyn BatteryObserver,
    notes: &dyn TuneObserver,
    interrupt: &SharedInterrupt,
) -> Result<TurnStatus, BatteryError> {
    let began = Instant::now();
    let (round, name) = (file.turns[index].round, file.turns[index].config.clone());
    let command = file
        .config(&name)
        .map(|c| c.command.clone())
        .ok_or_else(|| {
            RunError::invalid(
                "--resume",
                format!("{TUNE_FILE} names no configuration {name}"),
            )
        })?;
    let folder = out.join(&file.turns[index].folder);
    std::fs::create_dir_all(&folder)
        .map_err(|source| BatteryError::io("create", &folder, source))?;
    let target = target_of(file);
    // Something answering already would be measured instead of this configuration; a server
    // just stopped (the turn before, or a session cut short) gets a moment to let go first.
    if !port_closes(&target).await {
        check_port_free(&target)?;
    }
    let Some((server, ready_at)) = start_server(
        file, index, out, journal, notes, interrupt, &target, &command,
    )
    .await?
    else {
        file.turns[index].seconds += began.elapsed().as_secs_f64();
        return Ok(file.turns[index].status);
    };
    let log = folder.join("server.log");
    let relative_log = crate::engine::relative(out, &log);
    let study_folder = file.turns[index].study_folder(out);
    let ran = run_study(
        study_start(file, &study_folder),
        runner,
        observer,
        interrupt.future(),
    )
    .await;
    let since_ready_s = ready_at.elapsed().as_secs_f64();
    let mut died = server.exit();
    let study_failed = ran.as_ref().err().filter(|_| !interrupt.fired());
    let mut status = match (&ran, &died) {
        (_, Some(_)) => TurnStatus::Crashed,
        (Ok(outcome), None) if !outcome.interrupted => TurnStatus::Done,
        _ => TurnStatus::Interrupted,
    };
    // Recorded before the stop: a tune killed while it waits for the port must not run a
    // finished turn again.
    file.turns[index].status = status;
    file.write(out)?;
    let report = server
        .stop(file.study.target.stop.as_deref(), Duration::from_secs(15))
        .await;
    // A server that died as the study ended is seen by the stop.
    if died.is_none()
        && let Some(exit) = report.exited_before_stop
    {
        died = Some((exit, None));
        status = TurnStatus::Crashed;
    }
    let port_closed = port_closed_after_stop(&target, journal, round, &name).await?;
    let entry = &mut file.turns[index];
    entry.port_closed = Some(port_closed);
    entry.seconds += began.elapsed().as_secs_f64();
    if let Some((exit, signal)) = died {
        entry.death = Some(Death {
            exit: Some(exit.clone()),
            signal,
            since_ready_s: Some(since_ready_s),
            detail: format!(
                "the server exited ({exit}) {since_ready_s:.1} s after it was ready, during the study"
            ),
            part: failed_part(&study_folder),
            log: relative_log,
            log_tail: log_tail(&log),
        });
        notes.note(&format!("  {name} crashed: {exit}"));
    } else if let Some(error) = study_failed {
        // The study itself could not run (its folder, its file): the tune stops here.
        entry.status = TurnStatus::Interrupted;
        append(journal, &ended(round, &name, TurnStatus::Interrupted))?;
        return Err(BatteryError::Parse {
            path: study_folder,
            detail: format!(
                "the study of {name} in round {round} stopped: {}",
                vernier_cli::one_line(error)
            ),
        });
    }
    entry.status = status;
    if !port_closed {
        notes.note(&format!(
            "  {name}'s port still answered {} s after the stop",
            PORT_CLOSE_WAIT.as_secs()
        ));
    }
    append(journal, &ended(round, &name, status))?;
    Ok(status)
}

/// Launches a turn's server and waits until it is ready, journalling both: the server and
/// when it became ready, or `None` with the turn's status set (it failed to start, or the
/// interrupt came first).
#[expect(
    clippy::too_many_arguments,
    reason = "the turn's state, its journal and its target, borrowed as the turn holds them"
)]
async fn start_server(
    file: &mut TuneFile,
    index: usize,
    out: &Path,
    journal: &JournalWriter,
    notes: &dyn TuneObserver,
    interrupt: &SharedInterrupt,
    target: &BatteryTarget,
    command: &str,
) -> Result<Option<(vernier_lifecycle::LaunchedServer, Instant)>, BatteryError> {
    let (round, name) = (file.turns[index].round, file.turns[index].config.clone());
    let folder = out.join(&file.turns[index].folder);
    let total = file.configs.len();
    notes.note(&format!(
        "round {round}/{}: {name} ({} of {total}) launching: {command}",
        file.rounds,
        file.turns
            .iter()
            .filter(|t| t.round == round && t.status.finished())
            .count()
            + 1
    ));
    let launched_ms = unix_ms();
    append(
        journal,
        &TuneEvent::Launching {
            unix_ms: launched_ms,
            round,
            config: name.clone(),
            command: command.to_owned(),
        },
    )?;
    {
        let entry = &mut file.turns[index];
        entry.launches += 1;
        entry.launched_unix_ms = Some(launched_ms);
        entry.ready_s = None;
    }
    file.write(out)?;
    let launch_began = Instant::now();
    let log = folder.join("server.log");
    let server = match launch(command, target, &folder, interrupt).await {
        Ok(server) => server,
        Err(error) => {
            let status = if interrupt.fired() {
                TurnStatus::Interrupted
            } else {
                TurnStatus::StartFailed
            };
            let entry = &mut file.turns[index];
            entry.status = status;
            if status == TurnStatus::StartFailed {
                entry.death = Some(Death {
                    exit: None,
                    signal: None,
                    since_ready_s: None,
                    part: None,
                    detail: vernier_cli::one_line(&error),
                    log: crate::engine::relative(out, &log),
                    log_tail: log_tail(&log),
                });
                notes.note(&format!(
                    "  {name} failed to start: {}",
                    vernier_cli::one_line(&error)
                ));
            }
            append(journal, &ended(round, &name, status))?;
            return Ok(None);
        }
    };
    let ready_s = launch_began.elapsed().as_secs_f64();
    file.turns[index].ready_s = Some(ready_s);
    append(
        journal,
        &TuneEvent::Ready {
            unix_ms: unix_ms(),
            round,
            config: name.clone(),
            ready_s,
        },
    )?;
    file.write(out)?;
    notes.note(&format!("  {name} ready in {ready_s:.1} s"));
    Ok(Some((server, Instant::now())))
}

/// Where every configuration's server answers, as the study names it.
fn target_of(file: &TuneFile) -> BatteryTarget {
    let mut target = BatteryTarget::new(file.study.target.base_url.clone());
    target
        .api_key_env
        .clone_from(&file.study.target.api_key_env);
    target.ca_cert.clone_from(&file.study.target.ca_cert);
    target
}

/// The turn's study: continued where a folder holds it, else new.
fn study_start(file: &TuneFile, study_folder: &Path) -> StudyStart {
    if study_folder.join(crate::file::BATTERY_FILE).is_file() {
        StudyStart::Resume {
            folder: study_folder.to_path_buf(),
        }
    } else {
        StudyStart::New {
            study: Box::new(file.study.clone()),
            file: file.study_file.clone(),
            out: study_folder.to_path_buf(),
        }
    }
}

fn ended(round: u32, config: &str, status: TurnStatus) -> TuneEvent {
    TuneEvent::Ended {
        unix_ms: unix_ms(),
        round,
        config: config.to_owned(),
        status,
    }
}

/// Whether the port closed after a turn's stop, journalled.
async fn port_closed_after_stop(
    target: &BatteryTarget,
    journal: &JournalWriter,
    round: u32,
    name: &str,
) -> Result<bool, BatteryError> {
    let port_closed = port_closes(target).await;
    append(
        journal,
        &TuneEvent::Stopped {
            unix_ms: unix_ms(),
            round,
            config: name.to_owned(),
            port_closed,
        },
    )?;
    Ok(port_closed)
}

/// Whether the port answers nothing, now or within [`PORT_CLOSE_WAIT`].
async fn port_closes(target: &BatteryTarget) -> bool {
    let began = Instant::now();
    loop {
        if check_port_free(target).is_ok() {
            return true;
        }
        if began.elapsed() > PORT_CLOSE_WAIT {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The study's first part that did not finish, and what it said.
fn failed_part(study_folder: &Path) -> Option<String> {
    let battery = BatteryFile::load(study_folder).ok()?;
    let part = battery
        .parts
        .iter()
        .find(|p| p.status != PartStatus::Done)?;
    Some(match &part.detail {
        Some(detail) => format!("{}: {detail}", part.part),
        None => format!(
            "{} ({})",
            part.part,
            crate::study_report::status_word(part.status)
        ),
    })
}

/// The last 20 lines of a server's output (nothing when it cannot be read).
fn log_tail(log: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(log) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..]
        .iter()
        .map(|line| (*line).to_owned())
        .collect()
}

/// The tune's record and journal: new ones, or the ones to continue.
fn open(
    start: TuneStart,
    runner: &StudyRunner<'_>,
) -> Result<(TuneFile, PathBuf, JournalWriter), BatteryError> {
    match start {
        TuneStart::New { file, out } => {
            if out.join(TUNE_FILE).exists() {
                return Err(RunError::invalid(
                    "--out",
                    format!(
                        "{} already holds a tune: continue it with `battery tune --resume {}`, or give another --out",
                        out.display(),
                        out.display()
                    ),
                )
                .into());
            }
            if file.study.target.base_url.is_none() {
                return Err(RunError::invalid(
                    "--study",
                    "a tune needs [target] base-url (or --base-url): where each configuration's server answers",
                )
                .into());
            }
            check_port_free(&BatteryTarget::new(file.study.target.base_url.clone()))?;
            std::fs::create_dir_all(&out)
                .map_err(|source| BatteryError::io("create", &out, source))?;
            let mut file = *file;
            runner.command_line.clone_into(&mut file.command_line);
            let path = out.join(TUNE_JOURNAL);
            let journal =
                JournalWriter::create_new(&path).map_err(|error| journal_error(&path, &error))?;
            append(
                &journal,
                &TuneEvent::Began {
                    unix_ms: unix_ms(),
                    configs: file.configs.clone(),
                    rounds: (1..=file.rounds)
                        .map(|round| super::config::round_order(&file.configs, round))
                        .collect(),
                },
            )?;
            file.write(&out)?;
            Ok((file, out, journal))
        }
        TuneStart::Resume { folder } => {
            let folder = vernier_run::run_folder(&folder);
            if !folder.join(TUNE_FILE).is_file() {
                return Err(RunError::invalid(
                    "--resume",
                    format!(
                        "{} holds no {TUNE_FILE}: give the folder `battery tune` wrote",
                        folder.display()
                    ),
                )
                .into());
            }
            let mut file = TuneFile::load(&folder)?;
            runner.command_line.clone_into(&mut file.command_line);
            let path = folder.join(TUNE_JOURNAL);
            let journal =
                JournalWriter::open_append(&path).map_err(|error| journal_error(&path, &error))?;
            append(&journal, &TuneEvent::Resumed { unix_ms: unix_ms() })?;
            Ok((file, folder, journal))
        }
    }
}
