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

use crate::Verdict;
use crate::part_figures::{Headline, PartPlan, Score};

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

    /// What stops a part with `options` from running here, found without a model request
    /// (the options checked as its engine checks them; a grader without Docker; a port
    /// already answering), each with its fix; `Err` for options its engine refuses. The
    /// default parses them with [`command`](PartKind::command).
    fn check<'a>(&'a self, options: &'a [String]) -> PartFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move { check_options(self, options).map(|()| Vec::new()) })
    }

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
    /// The command that continues the study, for a part to say where it would say its own
    /// (which would continue the part alone).
    pub resume_command: Option<String>,
}

impl PartContext {
    /// A part writing into `folder`, continuing the run there when `resume`.
    pub fn new(folder: PathBuf, resume: bool, command_line: Vec<String>) -> Self {
        Self {
            folder,
            resume,
            command_line,
            quiet: false,
            resume_command: None,
        }
    }

    /// Saying `command` wherever the part would say how to continue it.
    #[must_use]
    pub fn continued_by(mut self, command: impl Into<String>) -> Self {
        self.resume_command = Some(command.into());
        self
    }

    /// With progress on stderr or without.
    #[must_use]
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
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
        let mut detail = vernier_cli::one_line(error);
        // The engine's own command would continue the part alone, from the part's folder:
        // the study prints the one that continues the study.
        if let Some(at) = detail.find("; continue with: ") {
            detail.truncate(at);
        }
        Self {
            detail,
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
pub fn check_options<K: PartKind + ?Sized>(kind: &K, options: &[String]) -> Result<(), String> {
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
