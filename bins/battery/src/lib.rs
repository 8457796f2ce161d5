//! `battery`'s command line: `battery run` measures one server with the sweep and the suites
//! into one folder (`vernier_battery::run_battery`), `battery versus A B` writes the
//! head-to-head of two batteries, or of two sweep or suite runs (`vernier_battery::versus`).
//! Progress goes to stderr, the summary to stdout. The engines live in `vernier-battery`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), vernier_battery::BatteryError> {
//! use clap::Parser as _;
//! let cli = battery::Cli::parse_from(["battery", "run", "--preset", "quick", "--out", "/tmp/battery-demo"]);
//! let done = battery::run(cli, vec!["battery".to_owned()]).await?;
//! assert!(done.stdout.contains("verdict"));
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod study_cli;
pub mod tune_cli;
mod versus_table;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, CommandFactory as _, Parser, Subcommand};
use vernier_battery::{
    BatteryConfig, BatteryError, BatteryObserver, BatteryStart, BatteryTarget, Part, PartEntry,
    PartStatus, Preset, Side,
};
use vernier_cli::Finished;
use vernier_hardsuite::RunObserver;
use vernier_sweep::SweepObserver;

/// Examples under `battery --help`.
const EXAMPLES: &str = "\
Examples:
  battery run                                        # the bundled simulator, preset seed
  battery run --base-url http://127.0.0.1:8080 --out runs/qwen
  battery run --base-url http://127.0.0.1:8080 --preset quick --parts sweep,suite
  battery run --launch 'llama-server -m model.gguf --port 8080' --base-url http://127.0.0.1:8080
  battery run --resume runs/qwen --base-url http://127.0.0.1:8080
  battery run --study studies/seed-003.toml --scaled   # a whole study from one file
  battery plan studies/seed-000.toml                 # what it will run, before it runs
  battery tune --study my.toml --grid-base 'vllm serve m --port 8000' --grid '--max-num-seqs=8,32,128' --target 'ttft_p90<=500ms'
  battery versus runs/qwen runs/gemma --out runs/qwen-vs-gemma
  battery versus sweep-out/2026-12-04T06-00-00 sweep-out/2026-12-04T07-00-00

A part that fails leaves the battery going on (unless its server stopped); the battery ends
with the first failed part's own code.";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "battery",
    version,
    about = "Measure one server with every part into one folder, and compare two",
    after_help = vernier_cli::exit_code::with_help_lines(EXAMPLES)
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
    /// The subcommand's flags typed on the command line (not defaulted), as clap ids:
    /// `prompt_tokens`, `base_url`.
    #[arg(skip)]
    pub typed: std::collections::BTreeSet<String>,
}

impl Cli {
    /// Parses `words` (the first is the program), exiting with usage (2) on bad flags, and
    /// notes which of the subcommand's flags were typed.
    pub fn parse_from<I, T>(words: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::FromArgMatches as _;
        let matches = Self::command().get_matches_from(words);
        let mut cli = match Self::from_arg_matches(&matches) {
            Ok(cli) => cli,
            Err(error) => error.exit(),
        };
        if let Some((_, flags)) = matches.subcommand() {
            cli.typed = flags
                .ids()
                .filter(|id| {
                    flags.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
                })
                .map(|id| id.as_str().to_owned())
                .collect();
        }
        cli
    }
}

/// Flags of `battery run` that set a field of the battery's configuration: (clap id, field).
const CONFIG_FIELDS: [(&str, &str); 16] = [
    ("preset", "preset"),
    ("parts", "parts"),
    ("prompt_tokens", "prompt_tokens"),
    ("output_tokens", "output_tokens"),
    ("concurrency", "batched_concurrency"),
    ("reps", "reps"),
    ("suite_categories", "suite_categories"),
    ("suite_tasks", "suite_tasks"),
    ("suite_budget", "suite_budget"),
    ("samples", "suite_samples"),
    ("context_lengths", "context_lengths"),
    ("launch", "launch"),
    ("stop", "stop"),
    ("ready_reps", "ready_reps"),
    ("model", "model"),
    ("extra_body", "extra_body"),
];

/// `run`, `versus` or `completions`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the sweep and the suites (a preset, or a whole study with --study FILE) against one
    /// server into one folder, with one verdict.
    Run(Box<RunArgs>),
    /// Compare two batteries (or two sweep runs, or two suite runs): every dimension side by
    /// side with its ratio or difference and 95% interval.
    Versus(VersusArgs),
    /// Say what a study will run, part by part (requests, tokens, time), and what cannot run
    /// here; exit 2 when something cannot.
    Plan(StudyArgs),
    /// Check a study file before any request: every part's kind and options (by its own
    /// command line) and what cannot run here, each at its file, line and column.
    Check(StudyArgs),
    /// Run one study against several launch configurations of a server, taking turns in
    /// rounds, and name the configuration that wins for a target.
    Tune(Box<tune_cli::TuneArgs>),
    /// List the part kinds a study can hold.
    Kinds,
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Flags of `battery run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The server: `--base-url` (without it each part runs the bundled simulator),
    /// `--model`, `--api-key-env`, `--ca-cert`, `--extra-body` (merged into every part's
    /// requests).
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// Shell command that starts the server: time to ready is measured first (`--ready-reps`
    /// launches), then the server is started once more for the other parts and stopped at the
    /// end. Needs --base-url.
    #[arg(long, help_heading = "Server")]
    pub launch: Option<String>,
    /// Shell command that stops it (default: SIGTERM to its process group).
    #[arg(long, requires = "launch", help_heading = "Server")]
    pub stop: Option<String>,
    /// Launches timed by the ready part.
    #[arg(long, requires = "launch", help_heading = "Sizes")]
    pub ready_reps: Option<u32>,
    /// The server's GPUs: `--gpu-metrics-url`, `--gpu-sample-ms`, `--gpus`.
    #[command(flatten)]
    pub gpu: vernier_gpu::GpuArgs,
    /// The battery's shape: `seed` (the seeds' four prompt lengths, prose and code, 1 and 8
    /// streams; the whole hard suite; probe; long context) or `quick` (two short prompt
    /// lengths, 1 and 4 streams; the suite's math and tool tasks).
    #[arg(long, default_value = "seed", value_parser = Preset::parse, help_heading = "Battery")]
    pub preset: Preset,
    /// The parts to run, in order (default: the preset's): sweep, suite, probe, context.
    #[arg(long, value_delimiter = ',', value_parser = Part::parse, help_heading = "Battery")]
    pub parts: Vec<Part>,
    /// Sweep prompt lengths in the server's tokens (default: the preset's).
    #[arg(long, value_delimiter = ',', value_parser = vernier_cli::parse_tokens, help_heading = "Sizes")]
    pub prompt_tokens: Vec<u32>,
    /// Sweep completion tokens per request (default: the preset's).
    #[arg(long, value_parser = vernier_cli::parse_tokens, help_heading = "Sizes")]
    pub output_tokens: Option<u32>,
    /// The batched concurrency measured beside one stream (default: the preset's).
    #[arg(long, help_heading = "Sizes")]
    pub concurrency: Option<u32>,
    /// Sweep repetitions per cell (default: the preset's).
    #[arg(long, help_heading = "Sizes")]
    pub reps: Option<u32>,
    /// Suite categories to run (math, code, tools; default: the preset's).
    #[arg(long, value_delimiter = ',', help_heading = "Sizes")]
    pub suite_categories: Vec<String>,
    /// Suite task ids to run (default: the categories').
    #[arg(long, value_delimiter = ',', help_heading = "Sizes")]
    pub suite_tasks: Vec<String>,
    /// One completion-token budget for every suite task (default: each task's own).
    #[arg(long, value_parser = vernier_cli::parse_tokens, help_heading = "Sizes")]
    pub suite_budget: Option<u32>,
    /// Samples per suite task.
    #[arg(long, help_heading = "Sizes")]
    pub samples: Option<u32>,
    /// Long-context lengths (default: the suite's, cut at the server's context).
    #[arg(long, value_delimiter = ',', value_parser = vernier_cli::parse_tokens, help_heading = "Sizes")]
    pub context_lengths: Vec<u32>,
    /// Output folder (default: `battery-out/` and the UTC date and time).
    #[arg(long, help_heading = "Output")]
    pub out: Option<PathBuf>,
    /// Continue the battery in this folder with the settings it records; settings typed
    /// beside it must agree with them (the command a stopped battery prints repeats them).
    #[arg(long, help_heading = "Output")]
    pub resume: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
    /// Run the study in this file (TOML: the target and every part with its command line's
    /// options) instead of a preset; `battery plan FILE` says what it will run.
    #[arg(long, value_name = "FILE", help_heading = "Study", conflicts_with_all = ["resume", "preset", "parts", "prompt_tokens", "output_tokens", "concurrency", "reps", "suite_categories", "suite_tasks", "suite_budget", "samples", "context_lengths"])]
    pub study: Option<PathBuf>,
    /// With each part's `[part.scaled]` options over its own (a study small enough for CI
    /// and a small server).
    #[arg(long, requires = "study", help_heading = "Study")]
    pub scaled: bool,
    /// Write the battery these flags make as a study file (each part with the options its
    /// engine runs with) before it runs: `battery run --study FILE` runs the same again.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["study", "resume"], help_heading = "Study")]
    pub save_study: Option<PathBuf>,
}

/// The study of `battery plan` and `battery check`.
#[derive(Debug, Args)]
pub struct StudyArgs {
    /// The study file (TOML; `studies/` holds the seeds' three).
    pub study: PathBuf,
    /// With each part's `[part.scaled]` options over its own.
    #[arg(long)]
    pub scaled: bool,
    /// The server, over the study's `[target]`: `--base-url`, `--model`, `--api-key-env`,
    /// `--ca-cert` (`--extra-body` belongs in the study).
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// The launch command, over the study's.
    #[arg(long)]
    pub launch: Option<String>,
}

impl StudyArgs {
    fn over(&self) -> Result<study_cli::TargetOverride, BatteryError> {
        target_override(&self.server, self.launch.clone(), None)
    }
}

/// The command line's target over a study's; `--extra-body` is refused (it belongs in the
/// study, where a part may override it).
fn target_override(
    server: &vernier_run::TargetArgs,
    launch: Option<String>,
    stop: Option<String>,
) -> Result<study_cli::TargetOverride, BatteryError> {
    let checked = server.checked()?;
    if !checked.extra_body.is_empty() {
        return Err(vernier_run::RunError::invalid(
            "--extra-body",
            "a study carries its extra body in the file ([target] extra-body, or a part's own): set it there",
        )
        .into());
    }
    Ok(study_cli::TargetOverride {
        base_url: checked.base_url,
        model: checked.model,
        api_key_env: checked.api_key_env,
        ca_cert: checked.ca_cert,
        launch,
        stop,
    })
}

/// Flags of `battery versus`.
#[derive(Debug, Args)]
pub struct VersusArgs {
    /// Side A: a battery folder, a sweep run folder or a suite run folder.
    pub a: PathBuf,
    /// Side B, of the same kind.
    pub b: PathBuf,
    /// Output folder for versus.json, versus.md and versus.html.
    #[arg(long, default_value = "versus-out")]
    pub out: PathBuf,
    /// Compare two studies of different recipes (parts only one side ran, or a part of one
    /// name but another kind): the parts both ran are compared, the rest listed.
    #[arg(long)]
    pub unpaired: bool,
}

/// Progress on stderr.
struct Progress {
    quiet: bool,
}

impl SweepObserver for Progress {
    fn note(&self, message: &str) {
        if !self.quiet {
            vernier_cli::note(&format!("  sweep: {message}"));
        }
    }
    fn warn(&self, message: &str) {
        vernier_cli::note(&format!("  sweep: warning: {message}"));
    }
}

impl RunObserver for Progress {
    fn simulator_started(&self, banner: &str) {
        vernier_cli::note(&format!("  {banner}"));
    }
    fn note(&self, line: &str) {
        if !self.quiet {
            vernier_cli::note(&format!("  suite: {line}"));
        }
    }
    fn warn(&self, line: &str) {
        vernier_cli::note(&format!("  suite: warning: {line}"));
    }
}

struct Observer(Arc<Progress>);

impl BatteryObserver for Observer {
    fn part_started(&self, part: &str, index: usize, total: usize) {
        if !self.0.quiet {
            vernier_cli::note(&format!("[{}/{total}] {part}", index + 1));
        }
    }
    fn part_finished(&self, entry: &PartEntry) {
        if !self.0.quiet {
            vernier_cli::note(&format!("  {}", part_line(entry)));
        }
    }
    fn sweep(&self) -> Arc<dyn SweepObserver> {
        Arc::clone(&self.0) as Arc<dyn SweepObserver>
    }
    fn suite(&self) -> &dyn RunObserver {
        self.0.as_ref()
    }
    /// Also when quiet: a part run again takes its time again, and the reason is the user's.
    fn note(&self, line: &str) {
        vernier_cli::note(line);
    }
}

fn part_line(entry: &PartEntry) -> String {
    let verdict = entry
        .validity
        .as_ref()
        .map_or_else(String::new, |v| format!(", {}", v.verdict));
    let detail = entry
        .detail
        .as_ref()
        .map_or_else(String::new, |d| format!(": {d}"));
    let headlines = vernier_battery::headlines_line(entry);
    let headlines = if headlines.is_empty() {
        String::new()
    } else {
        format!("\n      {headlines}")
    };
    let report = entry
        .files
        .get("report")
        .map_or_else(String::new, |report| format!("\n      report: {report}"));
    format!(
        "{}: {} in {}{verdict}{detail}{headlines}{report}",
        entry.part,
        vernier_battery::status_word(entry.status),
        vernier_battery::duration(entry.seconds)
    )
}

fn config_of(args: &RunArgs, server: &vernier_run::Target) -> BatteryConfig {
    let mut config = BatteryConfig::preset(args.preset);
    if !args.parts.is_empty() {
        config.parts.clone_from(&args.parts);
    }
    config.model.clone_from(&args.server.model);
    config.extra_body.clone_from(&server.extra_body);
    if let Some(command) = &args.launch {
        config.launch = Some(command.clone());
        config.stop.clone_from(&args.stop);
        if let Some(reps) = args.ready_reps {
            config.ready_reps = reps;
        }
        if !config.parts.contains(&Part::Ready) {
            config.parts.insert(0, Part::Ready);
        }
    }
    if !args.prompt_tokens.is_empty() {
        config.prompt_tokens.clone_from(&args.prompt_tokens);
    }
    if let Some(output) = args.output_tokens {
        config.output_tokens = output;
    }
    if let Some(concurrency) = args.concurrency {
        config.batched_concurrency = concurrency;
    }
    if let Some(reps) = args.reps {
        config.reps = reps;
    }
    if !args.suite_categories.is_empty() {
        config.suite_categories = Some(args.suite_categories.clone());
    }
    if !args.suite_tasks.is_empty() {
        config.suite_tasks = Some(args.suite_tasks.clone());
    }
    if args.suite_budget.is_some() {
        config.suite_budget = args.suite_budget;
    }
    if let Some(samples) = args.samples {
        config.suite_samples = samples;
    }
    if !args.context_lengths.is_empty() {
        config.context_lengths = Some(args.context_lengths.clone());
    }
    config
}

/// A new battery, or the resume of one: `--out` beside `--resume` must name its folder, and
/// the flags typed beside it are compared with its record.
fn battery_start(
    args: &RunArgs,
    typed: &std::collections::BTreeSet<String>,
    server: &vernier_run::Target,
) -> Result<BatteryStart, BatteryError> {
    Ok(match &args.resume {
        Some(folder) => {
            if let Some(out) = &args.out
                && vernier_run::run_folder(out) != vernier_run::run_folder(folder)
            {
                return Err(vernier_run::RunError::invalid(
                    "--out",
                    format!(
                        "{} is not the battery being resumed ({}): a resumed battery writes in its own folder; leave --out out",
                        out.display(),
                        folder.display()
                    ),
                )
                .into());
            }
            let fields = CONFIG_FIELDS
                .iter()
                .filter(|(id, _)| typed.contains(*id))
                .map(|(id, field)| ((*field).to_owned(), format!("--{}", id.replace('_', "-"))))
                .collect();
            BatteryStart::Resume {
                folder: folder.clone(),
                typed: Box::new(vernier_run::TypedBeside::new(
                    config_of(args, server),
                    fields,
                )),
            }
        }
        None => BatteryStart::New {
            config: Box::new(config_of(args, server)),
            out: args.out.clone().unwrap_or_else(|| {
                PathBuf::from("battery-out")
                    .join(vernier_run::utc_folder_name(vernier_run::unix_ms()))
            }),
        },
    })
}

async fn run_battery(
    args: &RunArgs,
    typed: &std::collections::BTreeSet<String>,
    command_line: Vec<String>,
) -> Result<Finished, BatteryError> {
    let server = args.server.checked()?;
    if !args.quiet {
        for note in &server.notes {
            vernier_cli::note(note);
        }
    }
    let observer = Observer(Arc::new(Progress { quiet: args.quiet }));
    let study_start = match (&args.study, &args.resume) {
        (Some(path), _) => Some(study_cli::Start::New {
            path: path.clone(),
            scaled: args.scaled,
            over: target_override(&args.server, args.launch.clone(), args.stop.clone())?,
            out: args.out.clone().unwrap_or_else(|| {
                PathBuf::from("battery-out")
                    .join(vernier_run::utc_folder_name(vernier_run::unix_ms()))
            }),
        }),
        (None, Some(folder))
            if vernier_battery::BatteryFile::load(folder)
                .is_ok_and(|file| file.study.is_some()) =>
        {
            Some(study_cli::Start::Resume(folder.clone()))
        }
        _ => None,
    };
    if let Some(start) = study_start {
        let outcome = study_cli::run(start, command_line.clone(), args.quiet, &observer).await?;
        return Ok(finished(&outcome, &command_line));
    }
    let start = battery_start(args, typed, &server)?;
    if let (Some(path), BatteryStart::New { config, .. }) = (&args.save_study, &start) {
        let study = vernier_battery::study_of_flags(config, server.base_url.clone())?;
        vernier_run::write_atomically(path, study.to_toml().as_bytes()).map_err(|source| {
            BatteryError::Parse {
                path: path.clone(),
                detail: format!("cannot write the study: {source}"),
            }
        })?;
        if !args.quiet {
            vernier_cli::note(&format!(
                "study written: {} (battery run --study {} runs the same)",
                path.display(),
                path.display()
            ));
        }
    }
    let mut target = BatteryTarget::new(server.base_url.clone());
    target.api_key_env.clone_from(&server.api_key_env);
    target.ca_cert.clone_from(&server.ca_cert);
    target.gpu_metrics_url.clone_from(&args.gpu.gpu_metrics_url);
    target.gpu_sample_ms = Some(args.gpu.gpu_sample_ms);
    target.gpus.clone_from(&args.gpu.gpus);
    if target.base_url.is_none() && !args.quiet {
        vernier_cli::note(
            "No --base-url given: every part runs the bundled simulator in-process; the figures describe the simulator, not a server.",
        );
    }
    let outcome = vernier_battery::run_battery(
        start,
        &target,
        command_line.clone(),
        &observer,
        vernier_run::signals(),
    )
    .await?;
    Ok(finished(&outcome, &command_line))
}

/// What a battery or study prints at its end: each part with its headline figures and
/// report, the score table, the time, the verdict; the command that continues it.
fn finished(outcome: &vernier_battery::BatteryOutcome, command_line: &[String]) -> Finished {
    let mut summary = String::new();
    let recipe = match (&outcome.file.study, &outcome.file.config) {
        (Some(study), _) => format!("study {}", study.name.as_deref().unwrap_or("(unnamed)")),
        (None, Some(config)) => format!("{} preset", config.preset.name()),
        (None, None) => "battery".to_owned(),
    };
    let _ = writeln!(
        summary,
        "battery of {} at {} ({recipe})",
        if outcome.file.model.is_empty() {
            "?"
        } else {
            &outcome.file.model
        },
        outcome.file.target,
    );
    for entry in &outcome.file.parts {
        let _ = writeln!(summary, "  {}", part_line(entry));
    }
    if !outcome.file.totals.is_empty() {
        let _ = writeln!(summary, "scores (passed/scored, 95% Wilson interval):");
        for row in &outcome.file.totals {
            let _ = writeln!(summary, "  {:<12} {}", row.dimension, row.line());
        }
    }
    let _ = writeln!(
        summary,
        "time: {} in all",
        vernier_battery::duration(outcome.file.wall_seconds)
    );
    let _ = writeln!(summary, "{}", outcome.file.validity.line());
    let folder = outcome
        .path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let kind = vernier_cli::ExitKind::of_code(outcome.exit_code())
        .unwrap_or(vernier_cli::ExitKind::Failure);
    let mut notes = vec![format!("battery: {}", outcome.path.display())];
    if outcome.file.study.is_some() {
        notes.push(format!(
            "report: {}",
            folder.join(vernier_battery::BATTERY_REPORT).display()
        ));
    }
    // Each failed part's error on stderr, as a tool's own error reads.
    for entry in &outcome.file.parts {
        if let (PartStatus::Failed, Some(detail)) = (entry.status, &entry.detail) {
            notes.push(format!("{} part: failed to {detail}", entry.part));
        }
    }
    // A refused flag or key is fixed by the user before anything continues: no command then.
    if kind != vernier_cli::ExitKind::Usage
        && (outcome.interrupted
            || outcome
                .file
                .parts
                .iter()
                .any(|e| e.status != PartStatus::Done))
    {
        // A battery of flags: the command line as typed (server, key variable, sizes), with
        // `--resume FOLDER`. A study: `run --resume FOLDER` alone, since the folder records the
        // study as it ran (its file, scaling and target included).
        let program = vernier_cli::program_name(command_line, "battery");
        let folder = folder.display().to_string();
        let command = if outcome.file.study.is_some() {
            vernier_battery::study_resume_command(
                command_line,
                std::path::Path::new(&folder),
                command_line.iter().any(|word| word == "--quiet"),
            )
        } else {
            vernier_cli::resume_command(program, command_line, "--resume", &folder)
        };
        notes.push(format!("continue with: {command}"));
    }
    let finished = Finished {
        stdout: summary,
        notes,
        kind,
        run_folder: None,
    };
    finished.ran_in(&outcome.path)
}

fn versus(args: &VersusArgs) -> Result<Finished, BatteryError> {
    let a = Side::load(&args.a)?;
    let b = Side::load(&args.b)?;
    if let (Some(study_a), Some(study_b)) = (
        a.battery.as_ref().and_then(|file| file.study.as_ref()),
        b.battery.as_ref().and_then(|file| file.study.as_ref()),
    ) {
        let differences = vernier_battery::recipe_differences(study_a, study_b);
        if !differences.is_empty() && !args.unpaired {
            return Err(vernier_run::RunError::invalid(
                "--unpaired",
                format!(
                    "the two studies differ in their parts ({}): they cannot be paired part by part; compare what both ran with --unpaired",
                    differences.join("; ")
                ),
            )
            .into());
        }
    }
    let result = vernier_battery::versus(&a, &b)?;
    let files = vernier_battery::write_versus(&result, &args.out)?;
    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "A: {} ({}), {}\nB: {} ({}), {}\n",
        a.label,
        a.model,
        a.validity.line(),
        b.label,
        b.model,
        b.validity.line()
    );
    summary.push_str(&versus_table::glance_table(&result.glance));
    Ok(Finished {
        stdout: summary,
        kind: vernier_cli::ExitKind::Success,
        notes: vec![
            format!("markdown: {}", files.markdown.display()),
            format!("json: {}", files.json.display()),
            format!("html: {}", files.html.display()),
        ],
        run_folder: None,
    })
}

/// Runs the command to its end on a runtime of its own: what `battery` prints and exits with.
pub fn execute(cli: Cli, command_line: Vec<String>) -> Result<Finished, BatteryError> {
    vernier_run::block_on(run(cli, command_line))?
}

/// Runs the command.
pub async fn run(cli: Cli, command_line: Vec<String>) -> Result<Finished, BatteryError> {
    match cli.command {
        Command::Run(args) => run_battery(&args, &cli.typed, command_line).await,
        Command::Versus(args) => versus(&args),
        Command::Plan(args) => study_cli::plan(&args.study, args.scaled, &args.over()?).await,
        Command::Check(args) => study_cli::check(&args.study, args.scaled, &args.over()?).await,
        Command::Tune(args) => {
            let observer = Observer(Arc::new(Progress { quiet: args.quiet }));
            tune_cli::tune(&args, command_line, &observer).await
        }
        Command::Kinds => Ok(study_cli::list_kinds()),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "battery", &mut script);
            Ok(Finished::printing(String::from_utf8_lossy(&script)))
        }
    }
}
