//! `hardsuite under-load`: one suite against one server, one request at a time into
//! `OUT/alone/`, then `--in-flight N` at once into `OUT/loaded/`, compared item by item
//! (`OUT/load-quality.md` and `.json`); and the same as a study's part (`under-load`), whose
//! row gives both pass rates and the drop with its interval.

use std::path::{Path, PathBuf};

use clap::{CommandFactory as _, Parser as _};
use vernier_hardsuite::{
    HardsuiteError, HardsuiteOutcome, LoadQuality, load_quality, render_load_quality_markdown,
};
use vernier_run::{PartContext, PartFailure, PartFuture, PartKind, PartOutcome, PartPlan, Verdict};

use crate::cli::{Args, Command, RunArgs, UnderLoadArgs};
use crate::{CommandOutput, run_command};

/// The default output folder.
const DEFAULT_OUT: &str = "hardsuite-under-load";

/// What `under-load` did: both passes, the comparison and where it is written.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct UnderLoadOutcome {
    /// The pass one request at a time.
    pub alone: Box<HardsuiteOutcome>,
    /// The pass at N in flight (absent when the run stopped before it).
    pub loaded: Option<Box<HardsuiteOutcome>>,
    /// The comparison (absent when a pass was interrupted).
    pub quality: Option<LoadQuality>,
    /// `load-quality.md`.
    pub markdown: PathBuf,
    /// `load-quality.json`.
    pub json: PathBuf,
    /// The text for standard output.
    pub text: String,
    /// The command that continues an interrupted run: the one given, `--out DIR` made
    /// `--resume DIR`.
    pub resume_command: Option<String>,
}

fn pass_args(
    args: &UnderLoadArgs,
    folder: &Path,
    name: &str,
    concurrency: usize,
    samples: Option<u32>,
) -> RunArgs {
    let mut pass = args.run.clone();
    pass.concurrency = concurrency;
    pass.levels = None;
    let dir = folder.join(name);
    if args.run.resume.is_some() && dir.join("journal.jsonl").exists() {
        pass.resume = Some(dir);
        pass.out = None;
    } else {
        pass.resume = None;
        pass.out = Some(dir);
        pass.samples = samples;
    }
    pass
}

/// The samples per task that give the loaded pass at least `in_flight` requests, unless
/// `--samples` says.
async fn samples_for(args: &UnderLoadArgs) -> Result<u32, HardsuiteError> {
    if let Some(samples) = args.run.samples {
        return Ok(samples);
    }
    let mut planning = args.run.clone();
    planning.resume = None;
    planning.out = None;
    let (config, _) = planning.to_config()?;
    let plan = vernier_hardsuite::plan_suite(&config).await?;
    let tasks = u32::try_from(plan.tasks.max(1)).unwrap_or(u32::MAX);
    Ok(args.in_flight.div_ceil(tasks).max(1))
}

/// The command that continues: the one given, every option kept (the suite, the server, the
/// samples: a pass not yet begun is a new run of them), `--out DIR` made `--resume DIR`.
fn resume_command(command_line: &[String], folder: &Path) -> String {
    let mut kept = Vec::with_capacity(command_line.len());
    let mut skip_next = false;
    for word in command_line {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if word == "--out" {
            skip_next = true;
            continue;
        }
        if !word.starts_with("--out=") {
            kept.push(word.clone());
        }
    }
    let program = vernier_cli::program_name(command_line, "hardsuite");
    vernier_cli::resume_command(program, &kept, "--resume", &folder.display().to_string())
}

fn run_outcome(output: CommandOutput) -> Result<Box<HardsuiteOutcome>, HardsuiteError> {
    match output {
        CommandOutput::Run(outcome) => Ok(outcome),
        _ => Err(HardsuiteError::invalid(
            "--levels",
            "a ladder is not run under load: give one --level",
        )),
    }
}

/// Runs both passes (resuming what `--resume DIR` holds) and compares them.
pub(crate) async fn run_under_load(
    args: &UnderLoadArgs,
    command_line: Vec<String>,
) -> Result<CommandOutput, HardsuiteError> {
    if args.run.levels.is_some() {
        return Err(HardsuiteError::invalid(
            "--levels",
            "a ladder is not run under load: give one --level",
        ));
    }
    let folder = args
        .run
        .resume
        .clone()
        .or_else(|| args.run.out.clone())
        .unwrap_or_else(|| PathBuf::from(DEFAULT_OUT));
    let samples = if args.run.resume.is_some() {
        args.run.samples
    } else {
        Some(samples_for(args).await?)
    };
    let in_flight = usize::try_from(args.in_flight).unwrap_or(usize::MAX);
    let resume_command = resume_command(&command_line, &folder);
    let (markdown, json) = (
        folder.join("load-quality.md"),
        folder.join("load-quality.json"),
    );
    let alone = run_outcome(
        run_command(
            &pass_args(args, &folder, "alone", 1, samples),
            command_line.clone(),
        )
        .await?,
    )?;
    if alone.interrupted {
        return Ok(CommandOutput::UnderLoad(Box::new(UnderLoadOutcome {
            text: alone.table.clone(),
            alone,
            loaded: None,
            quality: None,
            markdown,
            json,
            resume_command: Some(resume_command),
        })));
    }
    // The loaded pass takes the samples the alone pass ran with (its journal's, on a resume).
    let samples = Some(alone.results.samples);
    let loaded = run_outcome(
        run_command(
            &pass_args(args, &folder, "loaded", in_flight, samples),
            command_line,
        )
        .await?,
    )?;
    if loaded.interrupted {
        return Ok(CommandOutput::UnderLoad(Box::new(UnderLoadOutcome {
            text: loaded.table.clone(),
            alone,
            loaded: Some(loaded),
            quality: None,
            markdown,
            json,
            resume_command: Some(resume_command),
        })));
    }
    let quality = load_quality(&alone.results, &loaded.results, in_flight)?
        .with_in_flight(&loaded.files.journal)?;
    let text = render_load_quality_markdown(&quality);
    std::fs::write(&markdown, &text)
        .map_err(|source| HardsuiteError::io("write", &markdown, source))?;
    let mut encoded = serde_json::to_string_pretty(&quality)
        .map_err(|error| HardsuiteError::io("encode", &json, error.into()))?;
    encoded.push('\n');
    std::fs::write(&json, encoded).map_err(|source| HardsuiteError::io("write", &json, source))?;
    Ok(CommandOutput::UnderLoad(Box::new(UnderLoadOutcome {
        alone,
        loaded: Some(loaded),
        quality: Some(quality),
        markdown,
        json,
        text,
        resume_command: None,
    })))
}

/// Quality under load as a study's part.
pub static UNDER_LOAD: UnderLoadPart = UnderLoadPart;

/// The `under-load` part kind.
#[derive(Debug, Clone, Copy)]
pub struct UnderLoadPart;

impl UnderLoadPart {
    fn args(options: impl IntoIterator<Item = String>) -> Result<UnderLoadArgs, String> {
        let words = ["hardsuite".to_owned(), "under-load".to_owned()]
            .into_iter()
            .chain(options);
        let args = Args::try_parse_from(words).map_err(|error| error.render().to_string())?;
        match args.command {
            Some(Command::UnderLoad(args)) => Ok(args),
            _ => Err("not an under-load run".to_owned()),
        }
    }
}

impl PartKind for UnderLoadPart {
    fn name(&self) -> &'static str {
        "under-load"
    }

    fn about(&self) -> &'static str {
        "any suite one request at a time and N in flight, paired item by item: the drop in quality under load with its interval"
    }

    fn command(&self) -> clap::Command {
        Args::command()
            .find_subcommand("under-load")
            .cloned()
            .unwrap_or_else(|| clap::Command::new("under-load"))
            .name("hardsuite under-load")
    }

    fn plan<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>> {
        Box::pin(async move {
            let args = Self::args(options.iter().cloned())?;
            let samples = samples_for(&args)
                .await
                .map_err(|error| vernier_cli::one_line(&error))?;
            let mut run = args.run.clone();
            run.samples = Some(samples);
            let mut plan = crate::part::suite_plan(&run).await?;
            plan.summary = format!(
                "{}, one at a time and then {} in flight",
                plan.summary, args.in_flight
            );
            plan.requests *= 2;
            plan.tokens *= 2;
            Ok(plan)
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
            words.extend([
                if context.resume { "--resume" } else { "--out" }.to_owned(),
                folder,
            ]);
            if context.quiet {
                words.push("--quiet".to_owned());
            }
            let args = Self::args(words).map_err(PartFailure::usage)?;
            let output = run_under_load(&args, context.command_line.clone())
                .await
                .map_err(|error| PartFailure::of(&error))?;
            let CommandOutput::UnderLoad(outcome) = output else {
                return Err(PartFailure::usage("not an under-load run"));
            };
            let mut files = vec![("alone".to_owned(), outcome.alone.files.results.clone())];
            let mut verdicts = vec![("alone", outcome.alone.results.validity.clone())];
            if let Some(loaded) = &outcome.loaded {
                files.push(("loaded".to_owned(), loaded.files.results.clone()));
                verdicts.push(("loaded", loaded.results.validity.clone()));
            }
            if outcome.quality.is_some() {
                files.push(("report".to_owned(), outcome.markdown.clone()));
            }
            Ok(PartOutcome {
                files,
                verdict: Verdict::combine(verdicts.iter().map(|(name, verdict)| (*name, verdict))),
                model: outcome.alone.results.model.clone(),
                interrupted: outcome.resume_command.is_some(),
                headlines: outcome
                    .quality
                    .as_ref()
                    .map(LoadQuality::headlines)
                    .unwrap_or_default(),
                scores: Vec::new(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_command_keeps_every_option_and_resumes_the_folder() {
        let given: Vec<String> = [
            "hardsuite",
            "under-load",
            "--in-flight",
            "8",
            "--suite",
            "calls",
            "--base-url",
            "http://127.0.0.1:8000",
            "--out",
            "runs/load",
        ]
        .iter()
        .map(|word| (*word).to_owned())
        .collect();
        assert_eq!(
            resume_command(&given, Path::new("runs/load")),
            "hardsuite under-load --in-flight 8 --suite calls --base-url http://127.0.0.1:8000 --resume runs/load"
        );
        let resumed: Vec<String> = [
            "hardsuite",
            "under-load",
            "--in-flight",
            "8",
            "--resume",
            "x",
        ]
        .iter()
        .map(|word| (*word).to_owned())
        .collect();
        assert_eq!(
            resume_command(&resumed, Path::new("x")),
            "hardsuite under-load --in-flight 8 --resume x"
        );
    }
}
