//! Studies on the command line: `battery run --study FILE`, `battery plan FILE`,
//! `battery check FILE` and `battery kinds`, over the part kinds the engines' binaries define
//! (one line each in [`KINDS`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use vernier_battery::{
    BatteryError, BatteryObserver, Kinds, Study, StudyFileError, StudyPlaces, StudyProblem,
    StudyRunner, StudyStart,
};
use vernier_cli::Finished;
use vernier_run::PartKind;

/// Every part kind a study can hold: each engine's command, defined where it lives.
pub static KINDS: [&dyn PartKind; 17] = [
    &sweep::part::SWEEP,
    &sweep::part::AGENT,
    &sweep::part::REPLAY,
    &hardsuite::part::SUITE,
    &hardsuite::part::DATASET,
    &hardsuite::part::CONTEXT,
    &hardsuite::part::VISION,
    &hardsuite::part::VIDEO,
    &hardsuite::part::INSTRUCTIONS,
    &hardsuite::part::STRUCTURED,
    &hardsuite::part::CALLS,
    &hardsuite::under_load::UNDER_LOAD,
    &hardsuite::part::PROBE,
    &lifecycle::part::READY,
    &lifecycle::part::SWAP,
    &lifecycle::part::SOAK,
    &lifecycle::part::WATCH,
];

/// The kinds as the engine takes them.
pub fn kinds() -> Kinds<'static> {
    Kinds(&KINDS)
}

/// What the command line sets over a study's `[target]`: the same study against another
/// server, model or launch command.
#[derive(Debug, Clone, Default)]
pub struct TargetOverride {
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--api-key-env`.
    pub api_key_env: Option<String>,
    /// `--ca-cert`.
    pub ca_cert: Option<PathBuf>,
    /// `--launch`.
    pub launch: Option<String>,
    /// `--stop`.
    pub stop: Option<String>,
}

impl TargetOverride {
    fn apply(&self, study: &mut Study) {
        let target = &mut study.target;
        for (to, from) in [
            (&mut target.base_url, &self.base_url),
            (&mut target.model, &self.model),
            (&mut target.api_key_env, &self.api_key_env),
            (&mut target.launch, &self.launch),
            (&mut target.stop, &self.stop),
        ] {
            if from.is_some() {
                to.clone_from(from);
            }
        }
        if self.ca_cert.is_some() {
            target.ca_cert.clone_from(&self.ca_cert);
        }
    }
}

/// A study file read, scaled when asked, the command line's target over its own: the study
/// as it runs and where its keys are.
pub fn load(
    path: &Path,
    scaled: bool,
    over: &TargetOverride,
) -> Result<(Study, StudyPlaces), BatteryError> {
    let (mut study, places) = vernier_battery::read_study(path)?;
    if scaled {
        study.scaled = true;
    }
    over.apply(&mut study);
    Ok((study.as_run(), places))
}

/// Each problem at its file, line and column.
fn placed(
    path: &Path,
    study: &Study,
    places: &StudyPlaces,
    problems: Vec<StudyProblem>,
) -> BatteryError {
    let problems = problems
        .into_iter()
        .map(|problem| {
            let scaled_key = problem.key.as_ref().map(|key| format!("scaled.{key}"));
            let place = scaled_key
                .as_deref()
                .filter(|_| study.scaled)
                .and_then(|key| {
                    places
                        .parts
                        .get(problem.part)
                        .and_then(|(_, keys)| keys.get(key).copied())
                })
                .or_else(|| places.of(problem.part, problem.key.as_deref()))
                .unwrap_or(vernier_battery::Place { line: 1, column: 1 });
            let name = study
                .parts
                .get(problem.part)
                .map_or("?", |part| part.name.as_str());
            let mut error = StudyFileError {
                file: path.to_path_buf(),
                place,
                message: String::new(),
            };
            error.message = format!("part {name}: {}", problem.message);
            error
        })
        .collect();
    BatteryError::Study { problems }
}

/// `battery check STUDY`: every part's kind and options, and what cannot run here, before any
/// request.
pub async fn check(
    path: &Path,
    scaled: bool,
    over: &TargetOverride,
) -> Result<Finished, BatteryError> {
    let (study, places) = load(path, scaled, over)?;
    let problems = vernier_battery::check_study(&study, &kinds()).await;
    if !problems.is_empty() {
        return Err(placed(path, &study, &places, problems));
    }
    Ok(Finished::printing(format!(
        "{}: {} parts, each checked by its own command line; nothing found that cannot run here\n",
        path.display(),
        study.parts.len()
    )))
}

/// `battery plan STUDY`: what will run, part by part.
pub async fn plan(
    path: &Path,
    scaled: bool,
    over: &TargetOverride,
) -> Result<Finished, BatteryError> {
    let (study, places) = load(path, scaled, over)?;
    let problems = vernier_battery::check_study(&study, &kinds()).await;
    let plans = vernier_battery::plan_study(&study, &kinds())
        .await
        .map_err(|problems| placed(path, &study, &places, problems))?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "study {}{}: {} parts against {}",
        study.name.as_deref().unwrap_or("(unnamed)"),
        if study.scaled { ", scaled" } else { "" },
        study.parts.len(),
        study
            .target
            .base_url
            .as_deref()
            .unwrap_or("the bundled simulator")
    );
    if let Some(command) = &study.target.launch {
        let _ = writeln!(out, "launched with: {command}");
    }
    let (mut requests, mut tokens, mut seconds, mut unknown) = (0_u64, 0_u64, 0.0_f64, 0_usize);
    for (index, ((name, plan), part)) in plans.iter().zip(&study.parts).enumerate() {
        let _ = writeln!(
            out,
            "\n[{}/{}] {name} ({}): {}",
            index + 1,
            plans.len(),
            part.kind,
            plan.summary
        );
        let time = if plan.seconds > 0.0 {
            format!("about {}", vernier_battery::duration(plan.seconds))
        } else {
            unknown += 1;
            "not estimated".to_owned()
        };
        let _ = writeln!(
            out,
            "  {} requests, {} tokens at most, {time}",
            vernier_cli::thousands(plan.requests),
            vernier_cli::thousands(plan.tokens)
        );
        if !plan.assumptions.is_empty() {
            let _ = writeln!(out, "  assumes: {}", plan.assumptions);
        }
        for cannot in &plan.cannot_run {
            let _ = writeln!(out, "  cannot run here: {cannot}");
        }
        requests += plan.requests;
        tokens += plan.tokens;
        seconds += plan.seconds;
    }
    let time = match (seconds > 0.0, unknown) {
        (true, 0) => format!("about {}", vernier_battery::duration(seconds)),
        (true, _) => format!(
            "about {} plus {unknown} parts not estimated",
            vernier_battery::duration(seconds)
        ),
        (false, _) => "time not estimated (no server answered a probe)".to_owned(),
    };
    let _ = writeln!(
        out,
        "\nin all: {} requests, {} tokens at most, {time}",
        vernier_cli::thousands(requests),
        vernier_cli::thousands(tokens),
    );
    if problems.is_empty() {
        Ok(Finished::printing(out))
    } else {
        let _ = writeln!(out, "\nthe study cannot run here as written (see above)");
        Ok(Finished {
            stdout: out,
            notes: vec![placed(path, &study, &places, problems).to_string()],
            kind: vernier_cli::ExitKind::Usage,
            run_folder: None,
        })
    }
}

/// `battery kinds`: every part kind and what it measures.
pub fn list_kinds() -> Finished {
    let mut out = String::new();
    for kind in &KINDS {
        let _ = writeln!(out, "{:<8} {}", kind.name(), kind.about());
    }
    let _ = writeln!(
        out,
        "\nA part's options are its command's long flags (`sweep --help`, `hardsuite run --help`, `lifecycle ready --help`)."
    );
    Finished::printing(out)
}

/// Where a study starts: new from its file, or continued from its folder.
#[derive(Debug)]
pub enum Start {
    /// A new study.
    New {
        /// Its file.
        path: PathBuf,
        /// Its scaled options over its own.
        scaled: bool,
        /// The command line's target over its own.
        over: TargetOverride,
        /// Its folder.
        out: PathBuf,
    },
    /// The study in this folder.
    Resume(PathBuf),
}

/// Runs (or continues) a study: the engine's outcome.
pub async fn run(
    start: Start,
    command_line: Vec<String>,
    quiet: bool,
    observer: &dyn BatteryObserver,
) -> Result<vernier_battery::BatteryOutcome, BatteryError> {
    let runner = StudyRunner::new(kinds(), command_line).quiet(quiet);
    let start = match start {
        Start::New {
            path,
            scaled,
            over,
            out,
        } => {
            let (study, places) = load(&path, scaled, &over)?;
            let problems = vernier_battery::check_study(&study, &kinds()).await;
            if !problems.is_empty() {
                return Err(placed(&path, &study, &places, problems));
            }
            StudyStart::New {
                study: Box::new(study),
                file: Some(path.display().to_string()),
                out,
            }
        }
        Start::Resume(folder) => StudyStart::Resume { folder },
    };
    vernier_battery::run_study(start, &runner, observer, vernier_run::signals()).await
}
