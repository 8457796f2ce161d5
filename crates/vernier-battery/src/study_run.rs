//! Running a study: every part through its kind (`vernier_run::PartKind`) into a folder of its
//! own, `battery.json` written again after every part with its headlines, scores, seconds and
//! the totals. Checked whole before any request: every part's kind known, its options its
//! command's, what cannot run here named. The battery is generic over the kinds it is given;
//! a new kind is its engine's implementation and one line where the kinds are listed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use vernier_run::{
    Interrupt, PartContext, PartFailure, PartOutcome, PartPlan, RunError, check_options,
};

use crate::engine::{BatteryOutcome, relative, run_again_what_is_gone};
use crate::error::BatteryError;
use crate::file::{BATTERY_FILE, BatteryFile, PartStatus};
use crate::parts::{check_port_free, launch};
use crate::plumbing::{BatteryObserver, BatteryTarget, SharedInterrupt};
use crate::study::{Study, StudyPart};
use crate::study_args::{Kinds, names_key, part_words};

/// One thing wrong with a part of a study, found before any request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StudyProblem {
    /// The part's index in the study.
    pub part: usize,
    /// The key it is about, when one is.
    pub key: Option<String>,
    /// What is wrong, and the fix.
    pub message: String,
}

/// The study's parts, each with its words: the problems found, or every part's command line.
fn words_of(study: &Study, kinds: &Kinds<'_>) -> (Vec<Vec<String>>, Vec<StudyProblem>) {
    let mut words = Vec::new();
    let mut problems = Vec::new();
    for (index, part) in study.parts.iter().enumerate() {
        let problem = |key: Option<String>, message: String| StudyProblem {
            part: index,
            key,
            message,
        };
        let kind = match kinds.of(part) {
            Ok(kind) => kind,
            Err(error) => {
                problems.push(problem(error.key, error.message));
                words.push(Vec::new());
                continue;
            }
        };
        match part_words(kind, study, part) {
            Ok(part_words) => {
                if let Err(message) = check_options(kind, &part_words) {
                    let key = key_named(part, &message);
                    problems.push(problem(key, clap_message(&message)));
                }
                words.push(part_words);
            }
            Err(error) => {
                problems.push(problem(error.key, error.message));
                words.push(Vec::new());
            }
        }
    }
    (words, problems)
}

/// The part's key a message names (`--reps` → `reps`), for its line and column.
fn key_named(part: &StudyPart, message: &str) -> Option<String> {
    part.options
        .iter()
        .map(|(key, _)| key)
        .chain(part.scaled.iter().map(|(key, _)| key))
        .find(|key| names_key(message, key))
        .cloned()
}

/// Clap's message without its usage lines and help hint: its lines up to `Usage:` on one,
/// `error: ` dropped.
fn clap_message(message: &str) -> String {
    message
        .lines()
        .take_while(|line| !line.starts_with("Usage:"))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_owned()
}

/// Checks a study before any request: every part's kind and options, then what each kind says
/// cannot run here (a grader without Docker, a launch onto a busy port, a budget over the
/// server's context). Empty when it can run.
pub async fn check_study(study: &Study, kinds: &Kinds<'_>) -> Vec<StudyProblem> {
    let (words, mut problems) = words_of(study, kinds);
    if !problems.is_empty() {
        return problems;
    }
    for (index, (part, part_words)) in study.parts.iter().zip(&words).enumerate() {
        let Ok(kind) = kinds.of(part) else {
            continue;
        };
        match kind.check(part_words).await {
            Ok(cannot) => problems.extend(cannot.into_iter().map(|message| StudyProblem {
                part: index,
                key: None,
                message,
            })),
            Err(message) => problems.push(StudyProblem {
                part: index,
                key: key_named(part, &message),
                message,
            }),
        }
    }
    problems
}

/// What each part will do (a kind may send a probe request or two for its rates).
pub async fn plan_study(
    study: &Study,
    kinds: &Kinds<'_>,
) -> Result<Vec<(String, PartPlan)>, Vec<StudyProblem>> {
    let (words, problems) = words_of(study, kinds);
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut plans = Vec::new();
    let mut problems = Vec::new();
    for (index, (part, part_words)) in study.parts.iter().zip(&words).enumerate() {
        let Ok(kind) = kinds.of(part) else {
            continue;
        };
        match kind.plan(part_words).await {
            Ok(plan) => plans.push((part.name.clone(), plan)),
            Err(message) => problems.push(StudyProblem {
                part: index,
                key: key_named(part, &message),
                message,
            }),
        }
    }
    if problems.is_empty() {
        Ok(plans)
    } else {
        Err(problems)
    }
}

/// Where a study's record comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StudyStart {
    /// A new study into `out` (which must not hold a battery yet).
    New {
        /// The study as it runs (scaled where asked).
        study: Box<Study>,
        /// The file it was read from, as given (recorded).
        file: Option<String>,
        /// Its folder.
        out: PathBuf,
    },
    /// Continue the study in this folder with the study it records.
    Resume {
        /// Its folder (or its `battery.json`).
        folder: PathBuf,
    },
}

/// What a study runs with besides its parts.
#[derive(Debug)]
#[non_exhaustive]
pub struct StudyRunner<'a> {
    /// The part kinds it knows.
    pub kinds: Kinds<'a>,
    /// The command line as typed (recorded, and the base of the resume command).
    pub command_line: Vec<String>,
    /// No progress on stderr from the parts.
    pub quiet: bool,
    /// The command a part names to continue it, where not `battery run --resume OUT` (a
    /// tune's study is continued by the tune).
    pub continued_by: Option<String>,
}

impl<'a> StudyRunner<'a> {
    /// A runner knowing `kinds`.
    pub fn new(kinds: Kinds<'a>, command_line: Vec<String>) -> Self {
        Self {
            kinds,
            command_line,
            quiet: false,
            continued_by: None,
        }
    }

    /// Parts name `command` to continue them.
    #[must_use]
    pub fn continued_by(mut self, command: String) -> Self {
        self.continued_by = Some(command);
        self
    }

    /// With the parts' progress or without.
    #[must_use]
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }
}

/// Runs (or continues) a study.
pub async fn run_study(
    start: StudyStart,
    runner: &StudyRunner<'_>,
    observer: &dyn BatteryObserver,
    interrupt: Interrupt,
) -> Result<BatteryOutcome, BatteryError> {
    let session = Instant::now();
    let (mut file, out) = open(start, runner)?;
    run_again_what_is_gone(&mut file, &out, observer);
    let Some(study) = file.study.clone() else {
        return Err(BatteryError::Parse {
            path: out.join(BATTERY_FILE),
            detail: "this battery runs a preset of flags, not a study: continue it with `battery run --resume` and its flags".to_owned(),
        });
    };
    let problems = check_study(&study, &runner.kinds).await;
    if !problems.is_empty() {
        return Err(refused(&study, &problems));
    }
    let interrupt = SharedInterrupt::new(interrupt);
    let wall_before = file.wall_seconds;
    let mut target = BatteryTarget::new(study.target.base_url.clone());
    target.api_key_env.clone_from(&study.target.api_key_env);
    target.ca_cert.clone_from(&study.target.ca_cert);
    let mut launched: Option<vernier_lifecycle::LaunchedServer> = None;
    let total = file.parts.len();
    let mut interrupted = false;
    for index in 0..total {
        if file.parts[index].status == PartStatus::Done {
            continue;
        }
        if interrupt.fired() {
            interrupted = true;
            break;
        }
        let part = study.parts[index].clone();
        let kind = runner
            .kinds
            .of(&part)
            .map_err(|error| RunError::invalid("--study", error.message))?;
        let words = part_words(kind, &study, &part)
            .map_err(|error| RunError::invalid("--study", error.message))?;
        observer.part_started(&part.name, index, total);
        let began = Instant::now();
        // A launched server serves every part but the ones that launch their own.
        if let Err(error) =
            serve(&study, &part.kind, &mut launched, &target, &out, &interrupt).await
        {
            let entry = &mut file.parts[index];
            entry.status = PartStatus::Failed;
            entry.detail = Some(vernier_cli::one_line(&error));
            entry.exit_code = Some(vernier_cli::ExitKind::ServerStopped.code());
            observer.part_finished(entry);
            break;
        }
        let folder = out.join(&file.parts[index].folder);
        let resume = folder.join("journal.jsonl").is_file();
        let context =
            PartContext::new(folder, resume, runner.command_line.clone())
                .quiet(runner.quiet)
                .continued_by(runner.continued_by.clone().unwrap_or_else(|| {
                    study_resume_command(&runner.command_line, &out, runner.quiet)
                }));
        // The part's engine hears a signal itself, writes what it measured and says it was
        // interrupted; the study then stops.
        let ran = kind.run(words, &context).await;
        let entry = &mut file.parts[index];
        entry.seconds += began.elapsed().as_secs_f64();
        let stop = record(entry, ran, &out, &mut file.model);
        interrupted = stop == Stop::Interrupted || interrupt.fired();
        observer.part_finished(&file.parts[index]);
        file.wall_seconds = wall_before + session.elapsed().as_secs_f64();
        file.write(&out)?;
        if interrupted || stop == Stop::NoServer {
            break;
        }
    }
    if let Some(server) = launched {
        server
            .stop(
                study.target.stop.as_deref(),
                std::time::Duration::from_secs(15),
            )
            .await;
    }
    file.wall_seconds = wall_before + session.elapsed().as_secs_f64();
    let path = file.write(&out)?;
    crate::study_report::write_study_report(&file, &out)?;
    Ok(BatteryOutcome {
        file,
        path,
        interrupted,
    })
}

/// Before a part of `kind`: the study's launch command started for it (once), or stopped
/// before a part that launches its own.
async fn serve(
    study: &Study,
    kind: &str,
    launched: &mut Option<vernier_lifecycle::LaunchedServer>,
    target: &BatteryTarget,
    out: &Path,
    interrupt: &SharedInterrupt,
) -> Result<(), BatteryError> {
    if launches_own(kind) {
        if let Some(server) = launched.take() {
            server
                .stop(
                    study.target.stop.as_deref(),
                    std::time::Duration::from_secs(15),
                )
                .await;
        }
    } else if let Some(command) = &study.target.launch
        && launched.is_none()
    {
        *launched = Some(launch(command, target, out, interrupt).await?);
    }
    Ok(())
}

/// The command that continues the study in `out`: `battery run --resume OUT` (and `--quiet`
/// where it was), the folder recording the study as it ran.
pub fn study_resume_command(command_line: &[String], out: &Path, quiet: bool) -> String {
    let program = vernier_cli::program_name(command_line, "battery");
    let mut words = vec![program.to_owned(), "run".to_owned()];
    if quiet {
        words.push("--quiet".to_owned());
    }
    vernier_cli::resume_command(program, &words, "--resume", &out.display().to_string())
}

/// A study refused by its problems (a resumed one, read from `battery.json`: no file to place
/// them in), naming the first part's and counting the rest.
fn refused(study: &Study, problems: &[StudyProblem]) -> BatteryError {
    let Some(problem) = problems.first() else {
        return RunError::invalid("--study", "the study cannot run").into();
    };
    let name = study
        .parts
        .get(problem.part)
        .map_or("?", |part| part.name.as_str());
    let more = if problems.len() > 1 {
        format!(" (and {} more problems)", problems.len() - 1)
    } else {
        String::new()
    };
    RunError::invalid("--study", format!("part {name}: {}{more}", problem.message)).into()
}

/// Kinds that launch (and stop) the server themselves: the study's launched server is not
/// running while they do.
fn launches_own(kind: &str) -> bool {
    matches!(kind, "ready" | "swap" | "soak")
}

/// What a part's end means for the parts after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Go on.
    No,
    /// The interrupt stopped it.
    Interrupted,
    /// Its server stopped: the parts after it wait for `--resume`.
    NoServer,
}

/// Writes a part's end into its entry.
fn record(
    entry: &mut crate::file::PartEntry,
    ran: Result<PartOutcome, PartFailure>,
    out: &Path,
    model: &mut String,
) -> Stop {
    match ran {
        Ok(outcome) => {
            entry.status = if outcome.interrupted {
                PartStatus::Interrupted
            } else {
                PartStatus::Done
            };
            entry.detail = None;
            entry.exit_code = None;
            entry.files = outcome
                .files
                .iter()
                .map(|(role, path)| (role.clone(), relative(out, path)))
                .collect();
            entry.validity = Some(outcome.verdict.clone());
            entry.headlines.clone_from(&outcome.headlines);
            entry.scores.clone_from(&outcome.scores);
            if model.is_empty() {
                model.clone_from(&outcome.model);
            }
            if outcome.interrupted {
                Stop::Interrupted
            } else {
                Stop::No
            }
        }
        Err(failure) => {
            let interrupted = failure.kind == vernier_cli::ExitKind::Interrupted;
            entry.status = if interrupted {
                PartStatus::Interrupted
            } else {
                PartStatus::Failed
            };
            entry.detail = (!interrupted).then(|| failure.detail.clone());
            entry.exit_code = (!interrupted).then(|| failure.kind.code());
            if interrupted {
                Stop::Interrupted
            } else if failure.server_stopped {
                Stop::NoServer
            } else {
                Stop::No
            }
        }
    }
}

/// The study's record: a new one written before any part runs, or the one to continue.
fn open(
    start: StudyStart,
    runner: &StudyRunner<'_>,
) -> Result<(BatteryFile, PathBuf), BatteryError> {
    match start {
        StudyStart::New { study, file, out } => {
            crate::engine::refuse_a_battery_in(&out)?;
            if study.target.launch.is_some() {
                if study.target.base_url.is_none() {
                    return Err(RunError::invalid(
                        "--study",
                        "[target] launch needs base-url: where the launched server answers",
                    )
                    .into());
                }
                check_port_free(&BatteryTarget::new(study.target.base_url.clone()))?;
            }
            std::fs::create_dir_all(&out)
                .map_err(|source| BatteryError::io("create", &out, source))?;
            let server = study
                .target
                .base_url
                .clone()
                .unwrap_or_else(|| "simulator".to_owned());
            let mut battery = BatteryFile::of_study(*study, runner.command_line.clone(), server);
            battery.study_file = file;
            battery.write(&out)?;
            Ok((battery, out))
        }
        StudyStart::Resume { folder } => {
            let folder = vernier_run::run_folder(&folder);
            if !folder.join(BATTERY_FILE).is_file() {
                return Err(RunError::invalid(
                    "--resume",
                    format!(
                        "{} holds no {BATTERY_FILE}: give the folder `battery run --study` wrote",
                        folder.display()
                    ),
                )
                .into());
            }
            let mut battery = BatteryFile::load(&folder)?;
            if battery.study.is_none() {
                return Err(RunError::invalid(
                    "--resume",
                    format!(
                        "{} holds a battery of flags, not a study: continue it with `battery run --resume {}` and its flags",
                        folder.display(),
                        folder.display()
                    ),
                )
                .into());
            }
            runner.command_line.clone_into(&mut battery.command_line);
            Ok((battery, folder))
        }
    }
}
