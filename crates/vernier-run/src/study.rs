//! A part of a study: one engine's command with exactly its command line's options, run into a
//! folder of its own, and what it gives back to the study (its files, verdict, headline
//! figures and scores).
//!
//! Each engine implements [`PartKind`] where its command lives (the `sweep`, `hardsuite` and
//! `lifecycle` binaries' libraries); a study runner is generic over it, so a new kind is its
//! engine's implementation and one line where the kinds are listed. The options of a part are
//! the words its command line takes (`--prompt-tokens 64,400`): the kind's
//! [`command`](PartKind::command) is the one definition both the command line and a study file
//! are checked against, so the two cannot drift.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::Verdict;

/// A future a part kind returns (not `Send`: a study runs its parts one after another).
pub type PartFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// One kind of part a study can hold.
pub trait PartKind: Sync {
    /// Its name in a study file and in `battery.json` (`sweep`, `agent`, `suite`, …).
    fn name(&self) -> &'static str;

    /// What it measures, in a few words (for listings and plans).
    fn about(&self) -> &'static str;

    /// The command whose flags are this kind's options, as its command line defines them (the
    /// study's target flags, `--base-url` and the like, among them). A part's options are
    /// checked by parsing them with this command.
    fn command(&self) -> clap::Command;

    /// The words the kind puts before a part's options (a fixed suite, a subcommand): they
    /// are part of every run of this kind and not the study's to set.
    fn fixed(&self) -> &'static [&'static str] {
        &[]
    }

    /// What the part will do, from its options, before it runs: requests, tokens, an
    /// estimate of its time (a kind may send a probe request or two to the server for its
    /// rates, and says so in [`PartPlan::assumptions`]), and what cannot run here. Nothing is
    /// written.
    fn plan<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<PartPlan, String>>;

    /// Runs the part with `options` (its command line's words, without the program name)
    /// into `context.folder`, continuing the run there when `context.resume` says so.
    fn run<'a>(
        &'a self,
        options: Vec<String>,
        context: &'a PartContext,
    ) -> PartFuture<'a, Result<PartOutcome, PartFailure>>;
}

/// What a part runs with besides its options.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PartContext {
    /// The part's folder (new, or holding the run to continue).
    pub folder: PathBuf,
    /// Whether `folder` holds a run of this part to continue.
    pub resume: bool,
    /// The study's command line (the part records it as its own).
    pub command_line: Vec<String>,
    /// No progress on stderr.
    pub quiet: bool,
}

impl PartContext {
    /// A part writing into `folder`, continuing the run there when `resume`.
    pub fn new(folder: PathBuf, resume: bool, command_line: Vec<String>) -> Self {
        Self {
            folder,
            resume,
            command_line,
            quiet: false,
        }
    }

    /// With progress on stderr or without.
    #[must_use]
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }
}

/// What a part will do, said before it runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PartPlan {
    /// What it runs, in one line (cells, tasks, sessions, launches).
    pub summary: String,
    /// Requests it sends (an estimate where the count depends on the server).
    pub requests: u64,
    /// Prompt plus completion tokens it asks for, at most.
    pub tokens: u64,
    /// Seconds it should take, at the rates assumed in `assumptions`.
    pub seconds: f64,
    /// What the estimate assumes (the rates, the stop rules).
    pub assumptions: String,
    /// What cannot run here, each with its fix (a missing Docker engine for code tasks, a
    /// launch onto a port already answering).
    pub cannot_run: Vec<String>,
}

/// One headline figure of a part, as its report gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Headline {
    /// What it is (`decode tokens/s at 1 stream`).
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Its unit (`tokens/s`, `ms`, `%`, `s`).
    pub unit: String,
    /// Its 95% interval, where the part states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// Whether more is better.
    pub higher_is_better: bool,
}

impl Headline {
    /// A figure `name` of `value` `unit`.
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value,
            unit: unit.into(),
            interval: None,
            higher_is_better: true,
        }
    }

    /// With its 95% interval.
    #[must_use]
    pub fn interval(mut self, low: f64, high: f64) -> Self {
        self.interval = Some((low, high));
        self
    }

    /// Less is better (a latency, a cost).
    #[must_use]
    pub fn lower_is_better(mut self) -> Self {
        self.higher_is_better = false;
        self
    }

    /// `name: value unit [low–high]`.
    pub fn line(&self) -> String {
        let value = vernier_cli::figure(self.value);
        let interval = self.interval.map_or_else(String::new, |(low, high)| {
            format!(
                " [{}–{}]",
                vernier_cli::figure(low),
                vernier_cli::figure(high)
            )
        });
        format!("{}: {value} {}{interval}", self.name, self.unit)
    }
}

/// A part's score in one dimension (a suite's category): tasks passed over tasks scored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Score {
    /// The dimension (`math`, `code`, `tools`, `mmlu`, `context`, …).
    pub dimension: String,
    /// Samples that passed.
    pub passed: u64,
    /// Samples scored (cut off and wrong count; `infra`, `context_exceeded` and `unsupported`
    /// do not).
    pub scored: u64,
}

impl Score {
    /// `passed` of `scored` in `dimension`.
    pub fn new(dimension: impl Into<String>, passed: u64, scored: u64) -> Self {
        Self {
            dimension: dimension.into(),
            passed,
            scored,
        }
    }
}

/// What a finished (or interrupted) part gives back.
#[derive(Debug, Clone, Default)]
pub struct PartOutcome {
    /// Its files by role (`journal`, `run`, `results`, `report`).
    pub files: Vec<(String, PathBuf)>,
    /// Its verdict, as its files state it.
    pub verdict: Verdict,
    /// The model it measured.
    pub model: String,
    /// A signal stopped it; its journal continues.
    pub interrupted: bool,
    /// Its headline figures.
    pub headlines: Vec<Headline>,
    /// Its scores, per dimension.
    pub scores: Vec<Score>,
}

/// Why a part did not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartFailure {
    /// What went wrong, in the engine's words (without its own resume command: the study
    /// prints its own).
    pub detail: String,
    /// The exit kind its error maps to.
    pub kind: vernier_cli::ExitKind,
    /// The server stopped answering (or never started): the parts after it cannot run.
    pub server_stopped: bool,
}

impl PartFailure {
    /// A failure of `kind` saying `detail`.
    pub fn new(kind: vernier_cli::ExitKind, detail: impl Into<String>) -> Self {
        Self {
            detail: detail.into(),
            kind,
            server_stopped: false,
        }
    }

    /// The engine's error: its kind, its words (cause chain, one line), and whether it means
    /// the server stopped (exit 4).
    pub fn of<E: vernier_cli::Failure + std::error::Error>(error: &E) -> Self {
        let kind = error.exit_kind();
        Self {
            detail: vernier_cli::one_line(error),
            kind,
            server_stopped: kind == vernier_cli::ExitKind::ServerStopped,
        }
    }

    /// A usage error in the part's options (exit 2).
    pub fn usage(detail: impl Into<String>) -> Self {
        Self::new(vernier_cli::ExitKind::Usage, detail)
    }
}

impl std::fmt::Display for PartFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for PartFailure {}

/// Parses `options` (without the program name) with `kind`'s command, after its fixed words:
/// `Err` holds clap's message, rendered without colour.
pub fn check_options(kind: &dyn PartKind, options: &[String]) -> Result<(), String> {
    let command = kind.command().no_binary_name(true);
    let words = kind
        .fixed()
        .iter()
        .map(|word| (*word).to_owned())
        .chain(options.iter().cloned());
    command
        .try_get_matches_from(words)
        .map(|_| ())
        .map_err(|error| error.render().to_string())
}
