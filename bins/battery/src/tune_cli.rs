//! `battery tune`: one study run against several launch configurations, taking turns in
//! rounds, and the configuration that wins for a target (`vernier_battery::tune`).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use vernier_battery::BatteryError;
use vernier_battery::tune::config::{RankBy, TuneConfig, TuneTarget, check_distinct, expand_grid};
use vernier_battery::tune::file::TuneFile;
use vernier_battery::tune::run::{TuneObserver, TuneStart, run_tune};
use vernier_cli::Finished;
use vernier_run::RunError;

use crate::study_cli;

/// Flags of `battery tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The study each configuration runs (its `[target] base-url` is where every launched
    /// server answers; a `[target] launch` is refused: the configurations launch).
    #[arg(long, value_name = "FILE", required_unless_present = "resume")]
    pub study: Option<PathBuf>,
    /// With each part's `[part.scaled]` options over its own.
    #[arg(long, requires = "study")]
    pub scaled: bool,
    /// Where every configuration's server answers, over the study's.
    #[arg(long, requires = "study")]
    pub base_url: Option<String>,
    /// A configuration: `NAME='COMMAND'` (repeat for each).
    #[arg(
        long = "config",
        value_name = "NAME=COMMAND",
        conflicts_with = "grid_base"
    )]
    pub configs: Vec<String>,
    /// A grid's base command: each --grid flag's values are added to it, every combination a
    /// configuration.
    #[arg(long, value_name = "COMMAND", requires = "grid")]
    pub grid_base: Option<String>,
    /// A grid flag and its values: `--max-num-seqs=1,4,16` (repeat for each flag).
    #[arg(
        long,
        value_name = "FLAG=V1,V2",
        requires = "grid_base",
        allow_hyphen_values = true
    )]
    pub grid: Vec<String>,
    /// The most configurations a grid may expand to.
    #[arg(long, default_value_t = 12)]
    pub max_configs: usize,
    /// List the configurations and the rounds' order, and stop.
    #[arg(long, conflicts_with = "resume")]
    pub dry_run: bool,
    /// What the winner must meet: the sweep's grammar (`ttft_p90<=500ms,itl_p99<=50ms`) and a
    /// least pass rate over the study's suites (`pass_rate>=0.6`).
    #[arg(long)]
    pub target: Option<String>,
    /// What ranks the configurations meeting the target: goodput (output tokens/s at the
    /// largest load meeting it) or capacity (that load).
    #[arg(long, default_value = "goodput", value_parser = rank_by)]
    pub rank_by: RankBy,
    /// Rounds: each configuration runs the whole study once per round, the order reversed
    /// every other round.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: u32,
    /// Output folder (default: `tune-out/` and the UTC date and time).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the tune in this folder: finished turns are kept, the turn it was in resumed.
    #[arg(long, conflicts_with_all = ["study", "configs", "grid_base", "target"])]
    pub resume: Option<PathBuf>,
    /// No progress on stderr from the parts.
    #[arg(long)]
    pub quiet: bool,
}

fn rank_by(text: &str) -> Result<RankBy, String> {
    match text {
        "goodput" => Ok(RankBy::Goodput),
        "capacity" => Ok(RankBy::Capacity),
        other => Err(format!("{other:?}: give goodput or capacity")),
    }
}

struct Notes;

impl TuneObserver for Notes {
    fn note(&self, line: &str) {
        vernier_cli::note(line);
    }
}

fn invalid(flag: &str, message: String) -> BatteryError {
    RunError::invalid(flag, message).into()
}

/// The configurations the flags name.
fn configs_of(args: &TuneArgs) -> Result<Vec<TuneConfig>, BatteryError> {
    let configs = match &args.grid_base {
        Some(base) => expand_grid(base, &args.grid, args.max_configs)
            .map_err(|message| invalid("--grid", message))?,
        None => args
            .configs
            .iter()
            .map(|text| TuneConfig::parse(text))
            .collect::<Result<_, _>>()
            .map_err(|message| invalid("--config", message))?,
    };
    check_distinct(&configs).map_err(|message| invalid("--config", message))?;
    Ok(configs)
}

/// Part kinds that launch a server of their own: in a tune the configuration's server holds
/// the port.
const LAUNCHING: [&str; 3] = ["ready", "swap", "soak"];

/// The tune the flags describe, checked before anything is launched.
fn new_tune(args: &TuneArgs) -> Result<TuneFile, BatteryError> {
    let Some(path) = &args.study else {
        return Err(invalid(
            "--study",
            "give the study each configuration runs".to_owned(),
        ));
    };
    let over = study_cli::TargetOverride {
        base_url: args.base_url.clone(),
        ..study_cli::TargetOverride::default()
    };
    let (study, _) = study_cli::load(path, args.scaled, &over)?;
    if study.target.launch.is_some() {
        return Err(invalid(
            "--study",
            format!(
                "{} has [target] launch: a tune launches each configuration itself; remove it and give it as a --config",
                path.display()
            ),
        ));
    }
    if let Some(part) = study
        .parts
        .iter()
        .find(|part| LAUNCHING.contains(&part.kind.as_str()))
    {
        return Err(invalid(
            "--study",
            format!(
                "part {} ({}) launches a server of its own, and each configuration's server holds the port in a tune: drop it from the tune's study (time to ready is measured for every configuration)",
                part.name, part.kind
            ),
        ));
    }
    if study.target.base_url.is_none() {
        return Err(invalid(
            "--base-url",
            "a tune needs where each configuration's server answers: --base-url, or [target] base-url in the study".to_owned(),
        ));
    }
    let configs = configs_of(args)?;
    let target = args
        .target
        .as_deref()
        .map(TuneTarget::parse)
        .transpose()
        .map_err(|message| invalid("--target", message))?;
    if target.as_ref().is_some_and(|t| t.speed.is_some())
        && !study.parts.iter().any(|part| part.kind == "sweep")
    {
        return Err(invalid(
            "--target",
            "a speed target needs a sweep part in the study: add one (kind = \"sweep\") or drop the speed part".to_owned(),
        ));
    }
    if target
        .as_ref()
        .is_some_and(|t| t.pass_rate_at_least.is_some())
        && !study
            .parts
            .iter()
            .any(|part| vernier_battery::SUITE_KINDS.contains(&part.kind.as_str()))
    {
        return Err(invalid(
            "--target",
            format!(
                "a pass rate needs a scored part in the study ({}): add one or drop pass_rate",
                vernier_battery::SUITE_KINDS.join(", ")
            ),
        ));
    }
    let mut file = TuneFile::new(study, configs, args.rounds, target, args.rank_by);
    file.study_file = Some(path.display().to_string());
    Ok(file)
}

fn dry_run(file: &TuneFile) -> Finished {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} configurations, {} rounds, each running the study's {} parts against {}:",
        file.configs.len(),
        file.rounds,
        file.study.parts.len(),
        file.study.target.base_url.as_deref().unwrap_or("?")
    );
    for config in &file.configs {
        let _ = writeln!(out, "  {:<24} {}", config.name, config.command);
    }
    for round in 1..=file.rounds {
        let _ = writeln!(
            out,
            "round {round}: {}",
            vernier_battery::tune::config::round_order(&file.configs, round).join(" → ")
        );
    }
    if let Some(target) = &file.target {
        let _ = writeln!(out, "target: {}", target.text);
    }
    Finished::printing(out)
}

/// `battery tune`.
pub async fn tune(
    args: &TuneArgs,
    command_line: Vec<String>,
    observer: &dyn vernier_battery::BatteryObserver,
) -> Result<Finished, BatteryError> {
    let (start, out_hint) = if let Some(folder) = &args.resume {
        (
            TuneStart::Resume {
                folder: folder.clone(),
            },
            vernier_run::run_folder(folder),
        )
    } else {
        let file = new_tune(args)?;
        if args.dry_run {
            return Ok(dry_run(&file));
        }
        let out = args.out.clone().unwrap_or_else(|| {
            PathBuf::from("tune-out").join(vernier_run::utc_folder_name(vernier_run::unix_ms()))
        });
        (
            TuneStart::New {
                file: Box::new(file),
                out: out.clone(),
            },
            out,
        )
    };
    let program = vernier_cli::program_name(&command_line, "battery").to_owned();
    let resume = format!("{program} tune --resume {}", out_hint.display());
    let runner = vernier_battery::StudyRunner::new(study_cli::kinds(), command_line)
        .quiet(args.quiet)
        .continued_by(resume.clone());
    let outcome = run_tune(start, &runner, observer, &Notes, vernier_run::signals()).await?;
    let mut summary = String::new();
    let mut notes = vec![format!(
        "tune: {}",
        outcome
            .out
            .join(vernier_battery::tune::file::TUNE_FILE)
            .display()
    )];
    if outcome.interrupted {
        let done = outcome
            .file
            .turns
            .iter()
            .filter(|t| t.status.finished())
            .count();
        let _ = writeln!(
            summary,
            "tune interrupted: {done} of {} turns over",
            outcome.file.turns.len()
        );
        notes.push(format!("continue with: {resume}"));
        return Ok(Finished {
            stdout: summary,
            notes,
            kind: vernier_cli::ExitKind::Interrupted,
            run_folder: None,
        });
    }
    if let Some(analysis) = &outcome.file.analysis {
        summary.push_str(&vernier_battery::tune::report::tune_markdown(
            &outcome.file,
            analysis,
        ));
        notes.push(format!(
            "report: {}",
            outcome
                .out
                .join(vernier_battery::tune::report::TUNE_REPORT)
                .display()
        ));
        notes.push(format!(
            "page: {}",
            outcome
                .out
                .join(vernier_battery::tune::report::TUNE_PAGE)
                .display()
        ));
    }
    Ok(Finished {
        stdout: summary,
        notes,
        kind: vernier_cli::ExitKind::Success,
        run_folder: None,
    })
}
