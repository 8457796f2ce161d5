//! What a command ends with, printed the same way by every binary: its text on stdout (where a
//! closed pipe is success), its notes on stderr, its exit code from the one table. A binary's
//! `main` is `vernier_cli::finish(the_command(args))`.

use std::process::ExitCode;

use crate::exit_table::{ExitKind, Failure};

/// A command's end: what it prints and what kind of end it came to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Finished {
    /// For stdout (a table, a report, JSON).
    pub stdout: String,
    /// For stderr, one line each, after the stdout text (where the files are, a resume command).
    pub notes: Vec<String>,
    /// The kind of end: success, or interrupted with the measurements written, or a failure
    /// the notes explain.
    pub kind: ExitKind,
    /// The folder of the run it finished, where it ran one (the run store registers it).
    pub run_folder: Option<std::path::PathBuf>,
}

impl Finished {
    /// A successful end that prints `stdout`.
    pub fn printing(stdout: impl Into<String>) -> Self {
        Self {
            stdout: stdout.into(),
            notes: Vec::new(),
            kind: ExitKind::Success,
            run_folder: None,
        }
    }

    /// An end with nothing for stdout and `note` on stderr, of `kind`.
    pub fn saying(kind: ExitKind, note: impl Into<String>) -> Self {
        Self {
            stdout: String::new(),
            notes: vec![note.into()],
            kind,
            run_folder: None,
        }
    }

    /// The same end with `line` added to the notes.
    pub fn note(mut self, line: impl Into<String>) -> Self {
        self.notes.push(line.into());
        self
    }

    /// The same end, naming the folder of the run it finished.
    pub fn ran_in(mut self, folder: impl Into<std::path::PathBuf>) -> Self {
        self.run_folder = Some(folder.into());
        self
    }

    /// The same end, of `kind`.
    pub fn of_kind(mut self, kind: ExitKind) -> Self {
        self.kind = kind;
        self
    }
}

/// Prints what a command finished with, or its error's cause chain, and gives the exit code:
/// the error's kind, or the end's. A stdout that cannot be written (other than a closed pipe)
/// is a failure, said on stderr.
pub fn finish<E: Failure + std::error::Error>(result: Result<Finished, E>) -> ExitCode {
    match result {
        Ok(finished) => {
            if !finished.stdout.is_empty()
                && let Err(error) = crate::output::write_stdout(&finished.stdout)
            {
                crate::output::note(&format!("error: failed to write the output: {error}"));
                return ExitCode::from(ExitKind::Failure.code());
            }
            for line in &finished.notes {
                crate::output::note(line);
            }
            ExitCode::from(finished.kind.code())
        }
        Err(error) => {
            crate::output::report_error(&error);
            ExitCode::from(error.exit_code())
        }
    }
}
