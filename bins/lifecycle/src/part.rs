//! `lifecycle`'s commands as parts of a study: time to ready (`ready --launch`), swap cost
//! (`ready --swap`), a bounded soak and a bounded watch, each with exactly its command line's
//! options.

use clap::CommandFactory as _;
use vernier_run::{PartContext, PartFailure, PartFuture, PartKind, PartOutcome, PartPlan};

use crate::{Cli, Command, Done};

/// One of `lifecycle`'s subcommands as a part kind.
#[derive(Debug, Clone, Copy)]
pub struct LifecyclePart {
    name: &'static str,
    about: &'static str,
    subcommand: &'static str,
}

/// `ready --launch`: the server launched and timed to its first token.
pub static READY: LifecyclePart = LifecyclePart {
    name: "ready",
    about: "time to ready: the server launched and timed to health and to its first token, its engine's start read from its log",
    subcommand: "ready",
};
/// `ready --swap A,B`: what a model switch costs on a proxy that loads on demand.
pub static SWAP: LifecyclePart = LifecyclePart {
    name: "swap",
    about: "swap cost: each model in turn on a proxy that loads on demand, both directions",
    subcommand: "ready",
};
/// `soak --duration D`: a load held, every death recorded.
pub static SOAK: LifecyclePart = LifecyclePart {
    name: "soak",
    about: "a bounded soak: a load held for a duration, every death recorded with what was in flight",
    subcommand: "soak",
};
/// `watch --max-probes N`: the watchdog for a bounded number of probes.
pub static WATCH: LifecyclePart = LifecyclePart {
    name: "watch",
    about: "a bounded watch: probes that tell a busy engine from a hung one",
    subcommand: "watch",
};

impl LifecyclePart {
    fn parse(&self, options: impl IntoIterator<Item = String>) -> Result<Cli, String> {
        let words = ["lifecycle", self.subcommand]
            .map(str::to_owned)
            .into_iter()
            .chain(options);
        Cli::try_parse_from(words).map_err(|error| error.render().to_string())
    }

    /// What cannot run, from the parsed options.
    fn cannot_run(&self, cli: &Cli) -> Vec<String> {
        let mut cannot = Vec::new();
        let server_named = match &cli.command {
            Command::Ready(args) => args.server.base_url.is_some(),
            Command::Watch(args) => args.server.base_url.is_some(),
            Command::Soak(args) => args.server.base_url.is_some(),
            Command::Completions { .. } => true,
        };
        if !server_named {
            cannot.push(format!(
                "a {} part needs a server: give the study's target a base-url (or battery's --base-url); the bundled simulator runs in-process only for the sweep and the suites",
                self.name
            ));
        }
        match (&cli.command, self.name) {
            (Command::Ready(args), "ready") => {
                if args.launch.is_none() {
                    cannot.push("a ready part needs launch (the command that starts the server), or use a swap part".to_owned());
                }
                if args.launch.is_some()
                    && let Ok(server) = args.server.checked()
                    && let Some(taken) =
                        vernier_lifecycle::port_answering(&server.base_url_or_default())
                {
                    cannot.push(format!(
                        "{taken} already answers: stop the server there before launching another onto it"
                    ));
                }
            }
            (Command::Ready(args), "swap") if args.swap.len() < 2 => {
                cannot.push(
                    "a swap part needs swap = [\"MODEL_A\", \"MODEL_B\"] (two models or more)"
                        .to_owned(),
                );
            }
            (Command::Watch(args), _) if args.max_probes.is_none() => {
                cannot.push("a watch in a study must end: give max-probes".to_owned());
            }
            _ => {}
        }
        cannot
    }
}

/// The run file a finished command wrote, as JSON (`None` when it wrote none).
fn run_file(done: &Done) -> Option<serde_json::Value> {
    let (_, path) = done
        .files
        .iter()
        .find(|(what, _)| what == "run file" || what == "summary")?;
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

impl PartKind for LifecyclePart {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn command(&self) -> clap::Command {
        Cli::command()
            .find_subcommand(self.subcommand)
            .cloned()
            .unwrap_or_else(|| clap::Command::new(self.subcommand))
    }

    fn check<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move {
            let cli = self.parse(options.iter().cloned())?;
            Ok(self.cannot_run(&cli))
        })
    }

    fn plan<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>> {
        Box::pin(async move {
            let cli = self.parse(options.iter().cloned())?;
            let (summary, requests, seconds, assumptions) = match &cli.command {
                Command::Ready(args) if !args.swap.is_empty() => (
                    format!(
                        "{} rounds through the models {}",
                        args.reps,
                        args.swap.join(", ")
                    ),
                    u64::from(args.reps) * args.swap.len() as u64,
                    0.0,
                    "each switch takes what the proxy takes to load the model".to_owned(),
                ),
                Command::Ready(args) => (
                    format!(
                        "{} launches, each timed to its first token and {} warm requests",
                        args.reps, args.warm_requests
                    ),
                    u64::from(args.reps) * (1 + u64::from(args.warm_requests)),
                    0.0,
                    format!(
                        "each launch takes what the server takes to start (at most --ready-timeout {} s)",
                        args.ready_timeout
                    ),
                ),
                Command::Soak(args) => (
                    format!(
                        "a load of {} for {} s",
                        args.concurrency
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                        args.duration
                    ),
                    0,
                    args.duration,
                    "the load is held for its duration (time to ready and relaunches after a death come on top)".to_owned(),
                ),
                Command::Watch(args) => (
                    format!(
                        "{} probes, {} s apart",
                        args.max_probes.unwrap_or_default(),
                        args.interval
                    ),
                    args.max_probes.unwrap_or_default(),
                    args.max_probes.unwrap_or_default() as f64 * args.interval,
                    "one probe per interval".to_owned(),
                ),
                Command::Completions { .. } => (String::new(), 0, 0.0, String::new()),
            };
            Ok(PartPlan {
                summary,
                requests,
                tokens: 0,
                seconds,
                assumptions,
                cannot_run: self.cannot_run(&cli),
            })
        })
    }

    fn run<'a>(
        &'a self,
        options: Vec<String>,
        context: &'a PartContext,
    ) -> PartFuture<'a, Result<PartOutcome, PartFailure>> {
        Box::pin(async move {
            let mut words = options;
            let folder = context.folder.display().to_string();
            // A watch appends to its folder's journal; ready and soak continue theirs.
            if context.resume && self.subcommand != "watch" {
                words.extend(["--resume".to_owned(), folder]);
            } else {
                words.extend(["--out".to_owned(), folder]);
            }
            if context.quiet {
                words.push("--quiet".to_owned());
            }
            let cli = self.parse(words).map_err(PartFailure::usage)?;
            if let Some(why) = self.cannot_run(&cli).first() {
                return Err(PartFailure::usage(why.clone()));
            }
            let done = crate::run(cli, context.command_line.clone())
                .await
                .map_err(|error| PartFailure::of(&error))?;
            let file = run_file(&done).unwrap_or_default();
            let headlines = vernier_store::lifecycle_headlines(self.name, &file);
            let mut verdict = file
                .get("validity")
                .and_then(|v| serde_json::from_value::<vernier_run::Verdict>(v.clone()).ok())
                .unwrap_or_default();
            if done.failed_reps > 0 {
                verdict = vernier_run::Verdict::from_reasons(vec![vernier_run::Reason::new(
                    "failed_reps",
                    vernier_run::VerdictLevel::Questionable,
                    format!(
                        "{} launch(es) did not reach every milestone",
                        done.failed_reps
                    ),
                )]);
            }
            let files = done
                .files
                .iter()
                .map(|(what, path)| {
                    let role = match what.as_str() {
                        "run file" | "summary" => "run",
                        other => other,
                    };
                    (role.to_owned(), path.clone())
                })
                .collect();
            Ok(PartOutcome {
                files,
                verdict,
                model: file["model"].as_str().unwrap_or_default().to_owned(),
                interrupted: done.interrupted_ready,
                headlines,
                scores: Vec::new(),
            })
        })
    }
}
