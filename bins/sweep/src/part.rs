//! The sweep's commands as parts of a study: `sweep` (every load mode), `sweep agent` and
//! `sweep replay`, each with exactly its command line's options.

use std::path::Path;

use clap::{Args as _, CommandFactory as _};
use vernier_run::{PartContext, PartFailure, PartFuture, PartKind, PartOutcome, PartPlan};
use vernier_sweep::ProbeRates;

use crate::{Args, Cli, SweepCommand};

/// `sweep`: prefill and decode rates over prompt and output lengths and loads.
pub static SWEEP: SweepPart = SweepPart;
/// `sweep agent`: multi-turn sessions with the prefix cache on purpose.
pub static AGENT: AgentPart = AgentPart;
/// `sweep replay`: a recorded trace's arrivals and lengths.
pub static REPLAY: ReplayPart = ReplayPart;

/// The `sweep` part kind.
#[derive(Debug, Clone, Copy)]
pub struct SweepPart;

/// The `sweep agent` part kind.
#[derive(Debug, Clone, Copy)]
pub struct AgentPart;

/// The `sweep replay` part kind.
#[derive(Debug, Clone, Copy)]
pub struct ReplayPart;

/// The words of a part's run: the program, the fixed words, the options and where it writes
/// (`--out FOLDER`, or `--resume FOLDER` to continue), quiet when the study is.
fn words(prefix: &[&str], options: Vec<String>, context: &PartContext) -> Vec<String> {
    let mut words: Vec<String> = prefix.iter().map(|word| (*word).to_owned()).collect();
    words.extend(options);
    let folder = context.folder.display().to_string();
    if context.resume {
        words.extend(["--resume".to_owned(), folder]);
    } else {
        words.extend(["--out".to_owned(), folder]);
    }
    if context.quiet {
        words.push("--quiet".to_owned());
    }
    words
}

/// The rates of two probe requests to the server the options name (`None` when no server is
/// named, it does not answer, or gives no usage: the plan then says so).
async fn probe(server: &vernier_run::TargetArgs) -> Option<ProbeRates> {
    let target = server.checked().ok()?;
    let base_url = target.base_url.clone()?;
    let client = vernier_sweep::sweep_client(
        &base_url,
        target.api_key_env.as_deref(),
        target.ca_cert.as_deref(),
    )
    .ok()?;
    vernier_sweep::probe_rates(&client, target.model.as_deref())
        .await
        .ok()
        .flatten()
}

/// The assumptions line of a plan at `rates`.
fn rates_said(rates: Option<&ProbeRates>) -> String {
    rates.map_or_else(
        || "no server answered the probe requests: time not estimated".to_owned(),
        |rates| {
            format!(
                "at the server's rates from two probe requests: prefill {} tokens/s, decode {} tokens/s per stream",
                vernier_cli::figure(rates.prefill_tokens_per_s),
                vernier_cli::figure(rates.decode_tokens_per_s)
            )
        },
    )
}

/// The run's files by role, relative to nothing (the study makes them relative to itself).
fn files(pairs: &[(&str, &Path)]) -> Vec<(String, std::path::PathBuf)> {
    pairs
        .iter()
        .map(|(role, path)| ((*role).to_owned(), path.to_path_buf()))
        .collect()
}

impl PartKind for SweepPart {
    fn name(&self) -> &'static str {
        "sweep"
    }

    fn about(&self) -> &'static str {
        "prefill and decode rates over prompt and output lengths and loads (burst, steady, open loop, capacity search)"
    }

    fn command(&self) -> clap::Command {
        Args::command().name("sweep")
    }

    fn check<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move {
            let cli = Cli::try_parse_from(
                std::iter::once("sweep".to_owned()).chain(options.iter().cloned()),
            )
            .map_err(|error| error.render().to_string())?;
            crate::command::config_from(&cli.args).map_err(|error| error.to_string())?;
            Ok(Vec::new())
        })
    }

    fn plan<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>> {
        Box::pin(async move {
            let cli = Cli::try_parse_from(
                std::iter::once("sweep".to_owned()).chain(options.iter().cloned()),
            )
            .map_err(|error| error.render().to_string())?;
            let config =
                crate::command::config_from(&cli.args).map_err(|error| error.to_string())?;
            let plan = vernier_sweep::plan(&config);
            let rates = probe(&cli.args.server).await;
            Ok(PartPlan {
                summary: vernier_sweep::render_plan(&config, rates.as_ref())
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("plan: ")
                    .to_owned(),
                requests: plan.requests.unwrap_or_default(),
                tokens: plan.output_tokens.unwrap_or_default()
                    + plan.prompt_tokens.unwrap_or_default(),
                seconds: rates
                    .as_ref()
                    .map_or(0.0, |rates| vernier_sweep::estimate_s(&config, rates)),
                assumptions: rates_said(rates.as_ref()),
                cannot_run: Vec::new(),
            })
        })
    }

    fn run<'a>(
        &'a self,
        options: Vec<String>,
        context: &'a PartContext,
    ) -> PartFuture<'a, Result<PartOutcome, PartFailure>> {
        Box::pin(async move {
            let cli = Cli::try_parse_from(words(&["sweep"], options, context))
                .map_err(|error| PartFailure::usage(error.render().to_string()))?;
            let outcome = crate::command::run_continued_by(
                cli,
                context.command_line.clone(),
                context.resume_command.clone(),
            )
            .await
            .map_err(|error| PartFailure::of(&error))?;
            Ok(PartOutcome {
                files: files(&[
                    ("journal", &outcome.journal),
                    ("run", &outcome.files.run_file),
                    ("report", &outcome.files.markdown),
                ]),
                verdict: outcome.run.validity.clone(),
                model: outcome.run.environment.model.id.clone(),
                interrupted: outcome.interrupted,
                headlines: vernier_sweep::sweep_headlines(&outcome.run),
                scores: Vec::new(),
            })
        })
    }
}

/// `sweep SUB` with `words` parsed, or its usage error.
fn subcommand(sub: &str, words: impl IntoIterator<Item = String>) -> Result<Cli, PartFailure> {
    let words = ["sweep", sub].map(str::to_owned).into_iter().chain(words);
    Cli::try_parse_from(words).map_err(|error| PartFailure::usage(error.render().to_string()))
}

impl PartKind for AgentPart {
    fn name(&self) -> &'static str {
        "agent"
    }

    fn about(&self) -> &'static str {
        "multi-turn tool-calling sessions with the prefix cache on purpose (and defeated)"
    }

    fn command(&self) -> clap::Command {
        crate::AgentArgs::augment_args(clap::Command::new("sweep agent"))
    }

    fn plan<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>> {
        Box::pin(async move {
            let cli =
                subcommand("agent", options.iter().cloned()).map_err(|failure| failure.detail)?;
            let Some(SweepCommand::Agent(args)) = cli.args.command else {
                return Err("not an agent run".to_owned());
            };
            let load = crate::agent_cli::agent_config(&args)
                .map_err(|error| error.to_string())?
                .planned();
            let passes = load.passes;
            let rates = probe(&args.common.server).await;
            let seconds = rates.as_ref().map_or(0.0, |rates| {
                let sessions = f64::from(args.sessions.max(1));
                (load.prompt_tokens as f64 / rates.prefill_tokens_per_s
                    + load.completion_tokens as f64 / rates.decode_tokens_per_s / sessions)
                    * f64::from(passes)
            });
            Ok(PartPlan {
                summary: format!(
                    "{} sessions of {} turns{}{}",
                    args.sessions,
                    args.turns,
                    if passes == 2 {
                        ", then again with the cache defeated"
                    } else {
                        ""
                    },
                    args.find_capacity
                        .map_or_else(String::new, |n| format!(
                            ", and a capacity search up to {n} sessions (its steps are chosen as it goes)"
                        ))
                ),
                requests: load.turns * u64::from(passes),
                tokens: (load.prompt_tokens + load.completion_tokens) * u64::from(passes),
                seconds,
                assumptions: rates_said(rates.as_ref()),
                cannot_run: Vec::new(),
            })
        })
    }

    fn run<'a>(
        &'a self,
        options: Vec<String>,
        context: &'a PartContext,
    ) -> PartFuture<'a, Result<PartOutcome, PartFailure>> {
        Box::pin(async move {
            let cli = subcommand("agent", words(&[], options, context))?;
            let Some(SweepCommand::Agent(args)) = cli.args.command else {
                return Err(PartFailure::usage("not an agent run"));
            };
            let outcome = crate::run_agent(*args, &cli.typed, context.command_line.clone())
                .await
                .map_err(|error| PartFailure::of(&error))?;
            Ok(PartOutcome {
                files: files(&[
                    ("journal", &outcome.journal),
                    ("run", &outcome.files.run_file),
                    ("report", &outcome.files.markdown),
                ]),
                verdict: outcome.run.verdict.clone(),
                model: outcome.run.environment.model.id.clone(),
                interrupted: outcome.interrupted,
                headlines: vernier_sweep::agent::agent_headlines(&outcome.run),
                scores: Vec::new(),
            })
        })
    }
}

impl PartKind for ReplayPart {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn about(&self) -> &'static str {
        "a recorded trace (Vernier JSONL, Mooncake or Azure) sent at its recorded times"
    }

    fn command(&self) -> clap::Command {
        crate::ReplayArgs::augment_args(clap::Command::new("sweep replay"))
    }

    fn plan<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>> {
        Box::pin(async move {
            let cli =
                subcommand("replay", options.iter().cloned()).map_err(|failure| failure.detail)?;
            let Some(SweepCommand::Replay(args)) = cli.args.command else {
                return Err("not a replay".to_owned());
            };
            let mut cannot_run = Vec::new();
            if !args.trace.starts_with("bundled:") && !Path::new(&args.trace).is_file() {
                cannot_run.push(format!(
                    "--trace {}: no such file; give the trace's path (or a bundled one, e.g. bundled:mini-mooncake)",
                    args.trace
                ));
            }
            Ok(PartPlan {
                summary: format!(
                    "the trace {} at {}× its recorded pace{}",
                    args.trace,
                    args.time_scale,
                    if args.limit == 0 {
                        String::new()
                    } else {
                        format!(", its first {} records", args.limit)
                    }
                ),
                assumptions: "the trace's own offsets set its duration (over --time-scale)"
                    .to_owned(),
                cannot_run,
                ..PartPlan::default()
            })
        })
    }

    fn run<'a>(
        &'a self,
        options: Vec<String>,
        context: &'a PartContext,
    ) -> PartFuture<'a, Result<PartOutcome, PartFailure>> {
        Box::pin(async move {
            let cli = subcommand("replay", words(&[], options, context))?;
            let Some(SweepCommand::Replay(args)) = cli.args.command else {
                return Err(PartFailure::usage("not a replay"));
            };
            let outcome = crate::run_replay(*args, &cli.typed, context.command_line.clone())
                .await
                .map_err(|error| PartFailure::of(&error))?;
            let run = &outcome.run;
            Ok(PartOutcome {
                files: files(&[
                    ("journal", &outcome.journal),
                    ("run", &outcome.run_file),
                    ("report", &outcome.markdown),
                ]),
                verdict: run.verdict.clone(),
                model: run.environment.model.id.clone(),
                interrupted: outcome.interrupted,
                headlines: vernier_sweep::agent::replay_headlines(run),
                scores: Vec::new(),
            })
        })
    }
}
