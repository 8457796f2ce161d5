//! `lifecycle`'s command line: flags into `vernier_lifecycle`'s `ReadyConfig` and
//! `WatchConfig` (beside `--resume`, the flags typed into `ResumeFlags`, which the engine
//! checks against the journal's run), Ctrl-C (and SIGTERM) as the interrupt, progress on
//! stderr, the watch's JSON Lines on stdout. The engines live in the `vernier-lifecycle` crate.
//!
//! ```no_run
//! # async fn demo() -> Result<(), vernier_lifecycle::LifecycleError> {
//! let cli = lifecycle::Cli::parse_from(["lifecycle", "watch", "--base-url", "http://127.0.0.1:8000",
//!     "--max-probes", "3", "--out", "/tmp/watch-demo"]);
//! let done = lifecycle::run(cli, vec!["lifecycle".to_owned()]).await?;
//! assert!(!done.summary.is_empty());
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod part;
mod progress;

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use vernier_lifecycle::{
    LifecycleError, ReadyConfig, ReadyStart, ResumeFlags, SoakConfig, SoakServer, SoakStart,
    WatchConfig,
};

use crate::progress::Progress;

/// Examples under `lifecycle --help`.
const EXAMPLES: &str = "\
Examples:
  lifecycle ready --launch 'llama-server -m model.gguf --port 8080' --base-url http://127.0.0.1:8080 --reps 3
  lifecycle ready --swap qwen,gemma --base-url http://127.0.0.1:9292 --reps 4
  lifecycle ready --resume lifecycle-out/ready
  lifecycle watch --base-url http://127.0.0.1:8000 --on-hung 'docker restart vllm'
  lifecycle soak --launch 'vllm serve m --max-num-seqs 4 --port 8000' --base-url http://127.0.0.1:8000 \
      --concurrency 4 --max-tokens 4096 --duration 1h
  lifecycle soak --config penalty='vllm serve m --port 8000' --config plain='vllm serve m --port 8000 --x' \
      --base-url http://127.0.0.1:8000 --concurrency 2,4 --duration 2h --round 20m
  lifecycle soak --resume lifecycle-out/soak

A soak's deaths are findings, in its report, not failures; a repetition that missed a milestone
and a soak whose server did not come back within --ready-timeout are (exit 1).";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "lifecycle",
    version,
    about = "Time to ready, model-swap cost, and a watchdog that tells busy from hung",
    after_help = vernier_cli::exit_code::with_help_lines(EXAMPLES)
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
    /// The subcommand's flags typed on the command line (not defaulted), as typed:
    /// `--reps`, `--base-url`.
    #[arg(skip)]
    pub typed: BTreeSet<String>,
}

impl Cli {
    /// Parses `words` (the first is the program), exiting with usage (2) on bad flags, and
    /// notes which flags were typed.
    pub fn parse_from<I, T>(words: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Self::try_parse_from(words).unwrap_or_else(|error| error.exit())
    }

    /// Parses `words` (the first is the program); `Err` is clap's usage error (a study reports
    /// it against its file).
    pub fn try_parse_from<I, T>(words: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = Self::command().try_get_matches_from(words)?;
        let mut cli = Self::from_arg_matches(&matches)?;
        if let Some((_, flags)) = matches.subcommand() {
            cli.typed = flags
                .ids()
                .filter(|id| flags.value_source(id.as_str()) == Some(ValueSource::CommandLine))
                .map(|id| format!("--{}", id.as_str().replace('_', "-")))
                .collect();
        }
        Ok(cli)
    }
}

/// `ready` or `watch`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure how long a server takes to become useful (or what a model switch costs).
    Ready(ReadyArgs),
    /// Watch a serving engine; tell busy from hung by its generation counter.
    Watch(WatchArgs),
    /// Hold a load for a duration; record every death with what was in flight; compare configurations.
    Soak(SoakArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Flags of `lifecycle ready`.
#[derive(Debug, Args)]
#[command(mut_arg("base_url", |arg| arg.default_value(vernier_run::DEFAULT_BASE_URL)))]
pub struct ReadyArgs {
    /// The server: `--base-url` (default `http://127.0.0.1:8000`), `--model`, `--api-key-env`,
    /// `--ca-cert`, `--extra-body`.
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// Shell command that starts the server (its process group is stopped after each repetition).
    #[arg(long, help_heading = "Server")]
    pub launch: Option<String>,
    /// Shell command that stops it (default: SIGTERM to its process group, SIGKILL after the grace).
    #[arg(long, help_heading = "Server")]
    pub stop: Option<String>,
    /// Against a running proxy that loads models on demand: the models to switch between.
    #[arg(long, value_delimiter = ',', help_heading = "Server")]
    pub swap: Vec<String>,
    /// Repetitions.
    #[arg(long, default_value_t = 3, help_heading = "Measurement")]
    pub reps: u32,
    /// Warm requests after the first one.
    #[arg(long, default_value_t = 3, help_heading = "Measurement")]
    pub warm_requests: u32,
    /// `max_tokens` per measured request.
    #[arg(long, default_value_t = 32, help_heading = "Measurement")]
    pub max_tokens: u32,
    /// Seconds before a repetition is given up.
    #[arg(long, default_value_t = 900.0, help_heading = "Measurement")]
    pub ready_timeout: f64,
    /// Seconds between SIGTERM and SIGKILL.
    #[arg(long, default_value_t = 15.0, help_heading = "Measurement")]
    pub stop_grace: f64,
    /// Output folder (journal, logs, run.json, report.md) [default: lifecycle-out/ready/DATE-TIME,
    /// a new folder each run, named by the UTC start time].
    #[arg(
        long,
        default_value = "lifecycle-out/ready",
        hide_default_value = true,
        help_heading = "Output"
    )]
    pub out: PathBuf,
    /// Continue the run of this journal (or of this run folder's) with its settings. Flags typed beside it must agree
    /// with them, but `--base-url`, which is used from here on and recorded in the journal.
    #[arg(long, help_heading = "Output")]
    pub resume: Option<PathBuf>,
    /// No progress on stderr: no notes, and no heartbeat line where stderr is no terminal.
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
}

/// Flags of `lifecycle watch`.
#[derive(Debug, Args)]
#[command(mut_arg("base_url", |arg| arg.default_value(vernier_run::DEFAULT_BASE_URL)))]
pub struct WatchArgs {
    /// The server: `--base-url` (default `http://127.0.0.1:8000`), `--model`, `--api-key-env`,
    /// `--ca-cert`, `--extra-body`.
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// Seconds between probes.
    #[arg(long, default_value_t = 30.0, help_heading = "Probes")]
    pub interval: f64,
    /// Seconds a probe may take.
    #[arg(long, default_value_t = 30.0, help_heading = "Probes")]
    pub timeout: f64,
    /// Seconds between the two counter reads after a failed probe.
    #[arg(long, default_value_t = 20.0, help_heading = "Probes")]
    pub settle: f64,
    /// Failed probes with a still counter before the engine counts as hung.
    #[arg(long, default_value_t = 2, help_heading = "Probes")]
    pub failures: u32,
    /// Shell command run when hung (for example `docker restart vllm`).
    #[arg(long, help_heading = "Actions")]
    pub on_hung: Option<String>,
    /// Shell command run when the server is unreachable `--failures` probes in a row.
    #[arg(long, help_heading = "Actions")]
    pub on_down: Option<String>,
    /// Seconds after an action during which no other action runs.
    #[arg(long, default_value_t = 300.0, help_heading = "Actions")]
    pub grace: f64,
    /// Seconds to wait for a successful probe after an action.
    #[arg(long, default_value_t = 900.0, help_heading = "Actions")]
    pub ready_timeout: f64,
    /// Judge by failed probes alone when `/metrics` has no known generation counter.
    #[arg(long, help_heading = "Probes")]
    pub allow_no_counter: bool,
    /// Stop after this many probes.
    #[arg(long, help_heading = "Probes")]
    pub max_probes: Option<u64>,
    /// Output folder (watch.jsonl, watch.json, watch.md) [default:
    /// lifecycle-out/watch/DATE-TIME, a new folder each run].
    #[arg(
        long,
        default_value = "lifecycle-out/watch",
        hide_default_value = true,
        help_heading = "Output"
    )]
    pub out: PathBuf,
    /// Do not echo the journal lines on stdout, nor the heartbeat line on stderr.
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
}

/// Flags of `lifecycle soak`.
#[derive(Debug, Args)]
#[command(mut_arg("base_url", |arg| arg.default_value(vernier_run::DEFAULT_BASE_URL)))]
pub struct SoakArgs {
    /// The server: `--base-url` (default `http://127.0.0.1:8000`), `--model`, `--api-key-env`,
    /// `--ca-cert`, `--extra-body`.
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// Shell command that starts the server (relaunched after each death). Without it (and
    /// without --config) the server at --base-url is soaked, and waited for after a death.
    #[arg(long, conflicts_with = "config", help_heading = "Server")]
    pub launch: Option<String>,
    /// NAME='launch command', repeated: configurations soaked in turn for the same time under
    /// the same load, and compared.
    #[arg(long, value_parser = parse_config, help_heading = "Server")]
    pub config: Vec<(String, String)>,
    /// Shell command that stops a launched server (default: SIGTERM to its process group).
    #[arg(long, help_heading = "Server")]
    pub stop: Option<String>,
    /// Requests in flight at once; comma-separated values are arms of their own (2,4).
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_count,
        default_value = "4",
        help_heading = "Load"
    )]
    pub concurrency: Vec<u32>,
    /// Load held per arm: 3600, 90s, 30m, 1h, 1h30m (time to ready after a relaunch not counted).
    #[arg(long, value_parser = parse_duration, default_value = "1h", help_heading = "Load")]
    pub duration: f64,
    /// Length of a slice when arms take turns (default: 15m, or the duration for one arm).
    #[arg(long, value_parser = parse_duration, help_heading = "Load")]
    pub round: Option<f64>,
    /// `max_tokens` of every request: thousands, so every slot is deep.
    #[arg(long, default_value_t = 4096, help_heading = "Load")]
    pub max_tokens: u32,
    /// Ask for `max_tokens` whatever the model says (`ignore_eos`); false to let it stop.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, help_heading = "Load")]
    pub ignore_eos: bool,
    /// The prompt (each request opens with a unique line).
    #[arg(long, help_heading = "Load")]
    pub prompt: Option<String>,
    /// Seconds to wait for a (re)launched or returning server.
    #[arg(long, default_value_t = 900.0, help_heading = "Watch")]
    pub ready_timeout: f64,
    /// Seconds between looks at /health, /metrics and the launched process.
    #[arg(long, default_value_t = 2.0, help_heading = "Watch")]
    pub probe_interval: f64,
    /// Seconds without a token on any request before the generation counter is read.
    #[arg(long, default_value_t = 60.0, help_heading = "Watch")]
    pub hang_after: f64,
    /// Seconds between the counter's two reads.
    #[arg(long, default_value_t = 5.0, help_heading = "Watch")]
    pub settle: f64,
    /// Seconds between SIGTERM and SIGKILL.
    #[arg(long, default_value_t = 15.0, help_heading = "Watch")]
    pub stop_grace: f64,
    /// Log lines kept with each death.
    #[arg(long, default_value_t = 200, help_heading = "Watch")]
    pub log_tail: usize,
    /// Output folder (journal, logs, deaths, run.json, report.md) [default:
    /// lifecycle-out/soak/DATE-TIME, a new folder each run].
    #[arg(
        long,
        default_value = "lifecycle-out/soak",
        hide_default_value = true,
        help_heading = "Output"
    )]
    pub out: PathBuf,
    /// Continue the soak of this journal (or run folder) with the time already spent.
    #[arg(long, help_heading = "Output")]
    pub resume: Option<PathBuf>,
    /// No progress on stderr: no notes, and no heartbeat line where stderr is no terminal.
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
}

/// `NAME=COMMAND` of `--config`.
fn parse_config(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, command)) if !name.trim().is_empty() && !command.trim().is_empty() => {
            Ok((name.trim().to_owned(), command.to_owned()))
        }
        _ => Err(format!(
            "{text:?} is not NAME='launch command' (for example plain='vllm serve m --port 8000')"
        )),
    }
}

/// A count in a comma-separated list (`2,4` or `2, 4`).
fn parse_count(text: &str) -> Result<u32, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number of requests"))
}

/// Seconds from `3600`, `90s`, `30m`, `1h`, `1h30m`, `1.5h`.
pub fn parse_duration(text: &str) -> Result<f64, String> {
    let fail = || format!("{text:?} is not a duration: write 3600, 90s, 30m, 1h or 1h30m");
    let trimmed = text.trim();
    if let Ok(seconds) = trimmed.parse::<f64>() {
        return (seconds.is_finite() && seconds > 0.0)
            .then_some(seconds)
            .ok_or_else(fail);
    }
    let mut total = 0.0;
    let mut number = String::new();
    for c in trimmed.chars() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600.0,
            'm' => 60.0,
            's' => 1.0,
            _ => return Err(fail()),
        };
        let value: f64 = number.parse().map_err(|_| fail())?;
        total += value * unit;
        number.clear();
    }
    if !(number.is_empty() && total.is_finite() && total > 0.0) {
        return Err(fail());
    }
    Ok(total)
}

/// Runs the command to its end on a runtime of its own: what `lifecycle` prints and exits with.
pub fn execute(
    cli: Cli,
    command_line: Vec<String>,
) -> Result<vernier_cli::Finished, LifecycleError> {
    Ok(vernier_run::block_on(run(cli, command_line))??.finished())
}

/// What a finished command leaves for `main` to print.
#[derive(Debug)]
pub struct Done {
    /// Text for stdout.
    pub summary: String,
    /// Files written, for stderr.
    pub files: Vec<(String, PathBuf)>,
    /// A signal stopped it (a `ready` or `soak` run exits 130; a watch stopping on a signal
    /// is success).
    pub interrupted_ready: bool,
    /// The command that continues an interrupted `ready` or `soak` run.
    pub resume_command: Option<String>,
    /// Whether the summary goes to stdout (`ready`) or stderr (`watch`, whose stdout carries
    /// the JSON Lines).
    pub summary_to_stdout: bool,
    /// Launch repetitions that did not reach every milestone (the exit code is then 1).
    pub failed_reps: usize,
    /// Why a soak could not go on (the exit code is then 1).
    pub gave_up: Option<String>,
}

impl Done {
    /// What `lifecycle` prints and exits with: the summary (on stdout, or stderr for `watch`),
    /// the files, why a soak gave up or how to continue; a failure when a soak could not go on
    /// or a repetition missed a milestone, interrupted when a signal stopped a run.
    pub fn finished(self) -> vernier_cli::Finished {
        use vernier_cli::{ExitKind, Finished};
        let mut finished = if self.summary_to_stdout {
            Finished::printing(self.summary)
        } else {
            Finished::saying(ExitKind::Success, self.summary.trim_end())
        };
        for (what, path) in &self.files {
            finished = finished.note(format!("{what}: {}", path.display()));
        }
        if let Some((_, run_file)) = self.files.iter().find(|(_, path)| {
            path.file_name()
                .is_some_and(|name| name == "run.json" || name == "watch.json")
        }) {
            finished = finished.ran_in(run_file);
        }
        if let Some(reason) = &self.gave_up {
            let then = self
                .resume_command
                .as_ref()
                .map_or_else(String::new, |command| {
                    format!("; once the server answers again, continue with: {command}")
                });
            return finished
                .note(format!("error: the soak could not go on: {reason}{then}"))
                .of_kind(ExitKind::Failure);
        }
        if let Some(command) = &self.resume_command {
            finished = finished.note(format!("interrupted; continue with: {command}"));
        }
        if self.interrupted_ready {
            finished.of_kind(ExitKind::Interrupted)
        } else if self.failed_reps > 0 {
            finished
                .note(format!(
                    "error: {} repetition(s) did not reach every milestone; see the report and the logs",
                    self.failed_reps
                ))
                .of_kind(ExitKind::Failure)
        } else {
            finished
        }
    }

    /// A `ready` or `soak` run's: its report for stdout and its three files (run file,
    /// report, journal).
    fn run(summary: String, [run_file, report, journal]: [PathBuf; 3], interrupted: bool) -> Self {
        Self {
            summary,
            files: vec![
                ("run file".to_owned(), run_file),
                ("report".to_owned(), report),
                ("journal".to_owned(), journal),
            ],
            interrupted_ready: interrupted,
            resume_command: None,
            summary_to_stdout: true,
            failed_reps: 0,
            gave_up: None,
        }
    }
}

/// The flags typed beside `--resume` (but `--resume`, `--quiet` and `--out`, which is
/// compared apart), for the engine to check against the journal's run.
/// The output folder of a new run: `--out` as typed, else a new folder under the default named
/// by the UTC start time (so a second run never meets the first's journal).
fn dated(out: PathBuf, typed: &BTreeSet<String>) -> PathBuf {
    if typed.contains("--out") {
        out
    } else {
        out.join(vernier_run::utc_folder_name(vernier_run::unix_ms()))
    }
}

fn resume_flags<C>(config: C, typed: &BTreeSet<String>, out: PathBuf) -> ResumeFlags<C> {
    let settings = typed
        .iter()
        .filter(|flag| !["--resume", "--quiet", "--out"].contains(&flag.as_str()));
    let flags = ResumeFlags::new(config, settings);
    if typed.contains("--out") {
        flags.out(out)
    } else {
        flags
    }
}

/// Runs the subcommand.
pub async fn run(cli: Cli, command_line: Vec<String>) -> Result<Done, LifecycleError> {
    match cli.command {
        Command::Ready(args) => ready(args, &cli.typed, &command_line).await,
        Command::Watch(args) => watch(args, &cli.typed).await,
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "lifecycle",
                &mut script,
            );
            Ok(Done {
                summary: String::from_utf8_lossy(&script).into_owned(),
                files: Vec::new(),
                interrupted_ready: false,
                resume_command: None,
                summary_to_stdout: true,
                failed_reps: 0,
                gave_up: None,
            })
        }
        Command::Soak(args) => soak(args, &cli.typed, &command_line).await,
    }
}

async fn soak(
    mut args: SoakArgs,
    typed: &BTreeSet<String>,
    command_line: &[String],
) -> Result<Done, LifecycleError> {
    if args.resume.is_none() {
        args.out = dated(args.out, typed);
    }
    let progress = Progress::new(args.quiet, "lifecycle soak");
    let server = checked_server(&args.server, args.quiet)?;
    let mut config = SoakConfig::default();
    config.base_url = server.base_url_or_default();
    config.servers = if args.config.is_empty() {
        vec![SoakServer::new("default", args.launch)]
    } else {
        args.config
            .into_iter()
            .map(|(name, command)| SoakServer::new(name, Some(command)))
            .collect()
    };
    config.stop = args.stop;
    config.model = server.model;
    config.api_key_env = server.api_key_env;
    config.ca_cert = server.ca_cert;
    config.concurrency = args.concurrency;
    config.duration_s = args.duration;
    config.round_s = args.round;
    config.max_tokens = args.max_tokens;
    config.ignore_eos = args.ignore_eos;
    config.extra_body = server.extra_body;
    if let Some(prompt) = args.prompt {
        config.prompt = prompt;
    }
    config.ready_timeout_s = args.ready_timeout;
    config.probe_interval_s = args.probe_interval;
    config.hang_after_s = args.hang_after;
    config.settle_s = args.settle;
    config.stop_grace_s = args.stop_grace;
    config.log_tail_lines = args.log_tail;
    let journal = args.resume.as_ref().map_or_else(
        || args.out.join("journal.jsonl"),
        |path| vernier_run::run_file_in(path, "journal.jsonl"),
    );
    let program = vernier_cli::program_name(command_line, "lifecycle");
    let resume_with = vernier_cli::resume_command(
        program,
        command_line,
        "--resume",
        &journal.display().to_string(),
    );
    let start = if args.resume.is_some() {
        SoakStart::Resume {
            journal: journal.clone(),
            flags: resume_flags(config, typed, args.out),
        }
    } else {
        SoakStart::New {
            config,
            out: args.out,
        }
    };
    let outcome = match vernier_lifecycle::run_soak(
        start,
        command_line,
        &progress,
        Some(vernier_run::signals()),
    )
    .await
    {
        Ok(outcome) => outcome,
        Err(error @ LifecycleError::Write { .. }) if journal.is_file() => {
            // A full disk: the journal holds every death and request; the reports can be
            // made again.
            vernier_cli::note(&format!(
                "everything measured is safe in {}; once there is room, continue with: {resume_with}",
                journal.display()
            ));
            return Err(error);
        }
        Err(error) => return Err(error),
    };
    let resume_command =
        (outcome.interrupted || outcome.run.gave_up.is_some()).then_some(resume_with);
    Ok(Done {
        resume_command,
        gave_up: outcome.run.gave_up.clone(),
        ..Done::run(
            vernier_lifecycle::soak_markdown(&outcome.run),
            [outcome.run_file, outcome.markdown, outcome.journal],
            outcome.interrupted,
        )
    })
}

async fn ready(
    mut args: ReadyArgs,
    typed: &BTreeSet<String>,
    command_line: &[String],
) -> Result<Done, LifecycleError> {
    if args.resume.is_none() {
        args.out = dated(args.out, typed);
    }
    let progress = Progress::new(args.quiet, "lifecycle ready");
    let server = checked_server(&args.server, args.quiet)?;
    let mut config = ReadyConfig::default();
    config.base_url = server.base_url_or_default();
    config.launch = args.launch;
    config.stop = args.stop;
    config.swap = args.swap;
    config.model = server.model;
    config.api_key_env = server.api_key_env;
    config.ca_cert = server.ca_cert;
    config.extra_body = server.extra_body;
    config.reps = args.reps;
    config.warm_requests = args.warm_requests;
    config.max_tokens = args.max_tokens;
    config.ready_timeout_s = args.ready_timeout;
    config.stop_grace_s = args.stop_grace;
    let start = if let Some(journal) = args
        .resume
        .map(|path| vernier_run::run_file_in(&path, "journal.jsonl"))
    {
        // The engine compares the typed settings with the journal's; `--quiet` only silences
        // this binary.
        ReadyStart::Resume {
            journal,
            flags: resume_flags(config, typed, args.out),
        }
    } else {
        ReadyStart::New {
            config,
            out: args.out,
        }
    };
    let outcome =
        vernier_lifecycle::run_ready(start, command_line, &progress, Some(vernier_run::signals()))
            .await?;
    let program = vernier_cli::program_name(command_line, "lifecycle");
    let resume_command = outcome.interrupted.then(|| {
        vernier_cli::resume_command(
            program,
            command_line,
            "--resume",
            &outcome.journal.display().to_string(),
        )
    });
    Ok(Done {
        resume_command,
        failed_reps: outcome.run.failed_reps,
        ..Done::run(
            vernier_lifecycle::ready_markdown(&outcome.run),
            [outcome.run_file, outcome.markdown, outcome.journal],
            outcome.interrupted,
        )
    })
}

async fn watch(mut args: WatchArgs, typed: &BTreeSet<String>) -> Result<Done, LifecycleError> {
    args.out = dated(args.out, typed);
    let server = checked_server(&args.server, args.quiet)?;
    let mut config = WatchConfig::default();
    config.base_url = server.base_url_or_default();
    config.model = server.model;
    config.ca_cert = server.ca_cert;
    config.extra_body = server.extra_body;
    config.interval_s = args.interval;
    config.probe_timeout_s = args.timeout;
    config.settle_s = args.settle;
    config.failures = args.failures;
    config.on_hung = args.on_hung;
    config.on_down = args.on_down;
    config.grace_s = args.grace;
    config.ready_timeout_s = args.ready_timeout;
    config.allow_no_counter = args.allow_no_counter;
    config.max_probes = args.max_probes;
    config.api_key_env = server.api_key_env;
    let progress = Progress::new(args.quiet, "lifecycle watch");
    let outcome =
        vernier_lifecycle::run_watch(&config, &args.out, &progress, Some(vernier_run::signals()))
            .await?;
    let summary = &outcome.summary;
    Ok(Done {
        summary: format!(
            "probes {}, failed {}, --on-hung runs {}, --on-down runs {}, down {}, back {}\n",
            summary.probes,
            summary.failed_probes,
            summary.on_hung_runs,
            summary.on_down_runs,
            summary.downs,
            summary.backs
        ),
        files: vec![
            ("journal".to_owned(), outcome.journal),
            ("summary".to_owned(), outcome.run_file),
            ("report".to_owned(), outcome.markdown),
        ],
        interrupted_ready: false,
        resume_command: None,
        summary_to_stdout: false,
        failed_reps: 0,
        gave_up: None,
    })
}

/// The target flags checked once, as every binary checks them, with their notes (an endpoint
/// trimmed off the URL) on stderr unless `--quiet`.
fn checked_server(
    server: &vernier_run::TargetArgs,
    quiet: bool,
) -> Result<vernier_run::Target, LifecycleError> {
    let server = server.checked()?;
    if !quiet {
        for note in &server.notes {
            vernier_cli::note(note);
        }
    }
    Ok(server)
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
