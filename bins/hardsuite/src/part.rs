//! The hard suite's runs as parts of a study: the bundled suite (levels, a suite file),
//! datasets, long context, vision, video and the probe, each `hardsuite run` with exactly its
//! command line's options (the named suites with `--suite NAME` fixed).

use clap::{CommandFactory as _, Parser as _};
use vernier_run::{PartContext, PartFailure, PartFuture, PartKind, PartOutcome, PartPlan};

use crate::cli::{Args, Command};
use crate::{CommandOutput, run_command};

/// A kind of suite run: its name, what it is, and the words it fixes.
#[derive(Debug, Clone, Copy)]
pub struct SuitePart {
    name: &'static str,
    about: &'static str,
    fixed: &'static [&'static str],
}

/// The bundled hard suite (or a level's draw, or a suite file: `--suite FILE`).
pub static SUITE: SuitePart = SuitePart {
    name: "suite",
    about: "the hard suite: math, code in a sandbox and tool calls, proved before any model sees them (levels, seeds, a suite file)",
    fixed: &[],
};
/// A standard dataset (`--dataset KIND --dataset-file FILE` and a draw).
pub static DATASET: SuitePart = SuitePart {
    name: "dataset",
    about: "a standard dataset (HumanEval, MATH-500, AIME, MMLU, …) drawn and scored with its rules",
    fixed: &[],
};
/// Long-context retrieval at lengths up to the server's context.
pub static CONTEXT: SuitePart = SuitePart {
    name: "context",
    about: "long-context retrieval: needles at depths in haystacks of each length",
    fixed: &["--suite", "context"],
};
/// Generated images.
pub static VISION: SuitePart = SuitePart {
    name: "vision",
    about: "questions on generated images",
    fixed: &["--suite", "vision"],
};
/// Generated video clips.
pub static VIDEO: SuitePart = SuitePart {
    name: "video",
    about: "questions on generated video clips",
    fixed: &["--suite", "video"],
};
/// Verifiable instructions at four levels.
pub static INSTRUCTIONS: SuitePart = SuitePart {
    name: "instructions",
    about: "verifiable instructions (counts, words, characters, format) at four levels, strict and loose",
    fixed: &["--suite", "instructions"],
};
/// Structured output under `response_format`.
pub static STRUCTURED: SuitePart = SuitePart {
    name: "structured",
    about: "JSON under response_format, checked by a JSON Schema validator and against the generated truth",
    fixed: &["--suite", "structured"],
};
/// Tool calls graded by structure.
pub static CALLS: SuitePart = SuitePart {
    name: "calls",
    about: "tool calls graded by structure: typed arguments, parallel calls, tool_choice, no call, a result returned",
    fixed: &["--suite", "calls"],
};
/// The probe: two tasks of each kind the server might not take.
pub static PROBE: SuitePart = SuitePart {
    name: "probe",
    about: "a probe of what the server takes: vision, video, short context and tools, two tasks each",
    fixed: &["--suite", "probe"],
};

impl SuitePart {
    /// `hardsuite run`, the fixed words, then `options`.
    fn words(&self, options: impl IntoIterator<Item = String>) -> Vec<String> {
        ["hardsuite", "run"]
            .iter()
            .chain(self.fixed)
            .map(|word| (*word).to_owned())
            .chain(options)
            .collect()
    }

    /// The run arguments of `words`, or clap's message.
    fn run_args(words: Vec<String>) -> Result<crate::cli::RunArgs, String> {
        let args = Args::try_parse_from(words).map_err(|error| error.render().to_string())?;
        match args.command {
            Some(Command::Run(run)) => Ok(run),
            _ => Err("not a suite run".to_owned()),
        }
    }
}

impl PartKind for SuitePart {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn command(&self) -> clap::Command {
        let run = Args::command()
            .find_subcommand("run")
            .cloned()
            .unwrap_or_else(|| clap::Command::new("run"));
        run.name("hardsuite run")
    }

    fn fixed(&self) -> &'static [&'static str] {
        self.fixed
    }

    fn check<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move {
            let args = Self::run_args(self.words(options.iter().cloned()))?;
            let (config, _) = args.to_config().map_err(|error| error.to_string())?;
            let plan = vernier_hardsuite::plan_suite(&config)
                .await
                .map_err(|error| vernier_cli::one_line(&error))?;
            Ok(plan.cannot_run)
        })
    }

    fn plan<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>> {
        Box::pin(async move {
            let args = Self::run_args(self.words(options.iter().cloned()))?;
            suite_plan(&args).await
        })
    }

    fn run<'a>(
        &'a self,
        options: Vec<String>,
        context: &'a PartContext,
    ) -> PartFuture<'a, Result<PartOutcome, PartFailure>> {
        Box::pin(async move {
            let folder = context.folder.display().to_string();
            let mut words = self.words(options);
            if context.resume {
                words.extend(["--resume".to_owned(), folder]);
            } else {
                words.extend(["--out".to_owned(), folder]);
            }
            if context.quiet {
                words.push("--quiet".to_owned());
            }
            let args = Self::run_args(words).map_err(PartFailure::usage)?;
            let output = run_command(&args, context.command_line.clone())
                .await
                .map_err(|error| PartFailure::of(&error))?;
            let CommandOutput::Run(outcome) = output else {
                return Err(PartFailure::usage(
                    "a ladder (--levels) is not a part: give one --level per part",
                ));
            };
            let results = &outcome.results;
            Ok(PartOutcome {
                files: vec![
                    ("journal".to_owned(), outcome.files.journal.clone()),
                    ("results".to_owned(), outcome.files.results.clone()),
                    ("report".to_owned(), outcome.files.report.clone()),
                ],
                verdict: results.validity.clone(),
                model: results.model.clone(),
                interrupted: outcome.interrupted,
                headlines: vec![results.pass_rate_headline()],
                scores: results.scores(),
            })
        })
    }
}

/// What a suite run of `args` will send: its tasks, requests and tokens, and what it cannot
/// run.
pub(crate) async fn suite_plan(args: &crate::cli::RunArgs) -> Result<PartPlan, String> {
    let (config, _) = args.to_config().map_err(|error| error.to_string())?;
    let plan = vernier_hardsuite::plan_suite(&config)
        .await
        .map_err(|error| vernier_cli::one_line(&error))?;
    let categories: Vec<String> = plan
        .categories
        .iter()
        .map(|(name, n)| format!("{n} {name}"))
        .collect();
    Ok(PartPlan {
        summary: format!(
            "{} tasks ({}), {} sample(s) each",
            plan.tasks,
            categories.join(", "),
            plan.samples
        ),
        requests: plan.requests,
        tokens: plan.prompt_tokens + plan.budget_tokens,
        seconds: 0.0,
        assumptions: format!(
            "tokens at most: {} prompt (estimated) and {} of answer budgets; time follows the answers' lengths{}",
            vernier_cli::thousands(plan.prompt_tokens),
            vernier_cli::thousands(plan.budget_tokens),
            plan.notes
                .iter()
                .fold(String::new(), |said, note| said + "; " + note)
                + &plan.server_context.as_ref().map_or_else(
                    String::new,
                    |(tokens, source)| format!(
                        "; the server's context: {} tokens ({source})",
                        vernier_cli::thousands(*tokens)
                    )
                )
        ),
        cannot_run: plan.cannot_run,
    })
}
