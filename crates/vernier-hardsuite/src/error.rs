//! The one error type of `hardsuite`.

use std::path::PathBuf;

/// Everything that can stop a `hardsuite` command. Messages read after "failed to ...".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HardsuiteError {
    /// The Docker engine or the grader image is not usable, and the suite has code tasks.
    #[cfg(feature = "engine")]
    #[error(
        "connect the grader for the {n_code_tasks} code tasks: they need a Docker engine and the \
         grader image; from the repository run `docker/setup-engine.sh && \
         docker/build-grader-image.sh`, or {leave_out}"
    )]
    Grader {
        /// How many code tasks need it.
        n_code_tasks: usize,
        /// How to run without them: `--tasks` and the suite's other task ids.
        leave_out: String,
        /// The grader's error.
        #[source]
        source: vernier_grader::GraderError,
    },
    /// A failure every engine's run shares: a refused flag or resume, a changed or stopped
    /// server, a client or simulator that did not start ([`vernier_run::RunError`]).
    #[error(transparent)]
    Run(#[from] vernier_run::RunError),
    /// A dataset file could not be read, or its draw cannot be made.
    #[error(transparent)]
    Dataset(#[from] vernier_tasks::DatasetError),
    /// A user-defined suite file could not be loaded.
    #[error(transparent)]
    Suite(#[from] vernier_tasks::SuiteError),
    /// The self-check did not prove the suite; no model saw it.
    #[cfg(feature = "engine")]
    #[error(transparent)]
    SelfCheck(#[from] vernier_tasks::SelfCheckError),
    /// A file or directory could not be read or written.
    #[error("{what} {path}", path = path.display())]
    Io {
        /// What was being done, e.g. `write`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// `compare` was given two runs drawn from different instances.
    #[error(
        "compare the two runs task by task: they were drawn from different instances ({differences}); \
         same ids do not mean same questions, so pass --unpaired to compare them as independent \
         samples"
    )]
    DifferentInstances {
        /// What differs: the draws, and the tasks whose parameters differ.
        differences: String,
    },
    /// A journal or results file is not what `hardsuite` writes.
    #[error("read {path} line {line}: {message}; pass a results.json or journal.jsonl written by hardsuite", path = path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line (1 for a whole-file JSON document).
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// A statistic could not be computed from the data.
    #[error("compute {what}")]
    Stats {
        /// Which statistic.
        what: &'static str,
        /// The statistics crate's error.
        #[source]
        source: vernier_stats::StatsError,
    },
    /// A task's answer budget is not below the context the server states: no prompt fits
    /// beside it, and a server such as vLLM refuses every such request.
    #[error(
        "fit the {category} tasks' answer budget of {budget} tokens into the server's context of {limit} tokens ({stated_by}): no prompt fits beside it, so the server would refuse or cut every request; give {flag} {suggested} (or less), or serve a longer context"
    )]
    BudgetOverContext {
        /// The tasks' category (`math`, `code`, …), or `re-run` for the cut-off re-run.
        category: String,
        /// Their budget in tokens.
        budget: u32,
        /// The server's context in tokens.
        limit: u64,
        /// Where the server states it (`max_model_len`, `n_ctx`, `context_length`).
        stated_by: String,
        /// The flag that sets the budget (`--budget-math`; a battery's `--suite-budget`).
        flag: String,
        /// A budget that leaves half the context to the prompt.
        suggested: u64,
    },
    /// The server refused a request in a way retrying will not fix.
    #[error(
        "send task {task_id}: the server answered {status}: {body}; {}",
        rejected_hint(body)
    )]
    Rejected {
        /// The task whose request was refused.
        task_id: String,
        /// HTTP status.
        status: u16,
        /// The server's body.
        body: String,
    },
}

/// What to change for a refusal: the budget when the server names `max_tokens`, a field of
/// the extra body when it names one, else the key, model and extra body.
fn rejected_hint(body: &str) -> &'static str {
    if body.contains("max_tokens") || body.contains("max_completion_tokens") {
        "the answer budget is more than the server takes: lower the --budget-* flag of these tasks"
    } else {
        "check --model, --extra-body and --api-key-env"
    }
}

impl HardsuiteError {
    /// A failed read or write of `path`; `what` is e.g. `read`, `write`, `create`.
    pub fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            what,
            path: path.into(),
            source,
        }
    }

    /// A refused argument or setting: `what` names the flag (e.g. `--samples`).
    pub fn invalid(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Run(vernier_run::RunError::invalid(what, detail))
    }
}

impl vernier_cli::Failure for HardsuiteError {
    /// A shared run failure's own kind, a failed self-check its own, runs of different
    /// instances and a request the server refuses (a key, a model, a field) a usage error,
    /// anything else a failure.
    fn exit_kind(&self) -> vernier_cli::ExitKind {
        use vernier_cli::ExitKind;
        match self {
            Self::Run(error) => error.exit_kind(),
            #[cfg(feature = "engine")]
            Self::SelfCheck(_) => ExitKind::SelfCheckFailed,
            // A request every sample sends the same way: a flag to change.
            Self::DifferentInstances { .. }
            | Self::Dataset(_)
            | Self::Rejected { .. }
            | Self::BudgetOverContext { .. } => ExitKind::Usage,
            _ => ExitKind::Failure,
        }
    }
}

impl From<vernier_journal::JournalError> for HardsuiteError {
    fn from(error: vernier_journal::JournalError) -> Self {
        match error {
            vernier_journal::JournalError::Io { what, path, source } => {
                Self::Io { what, path, source }
            }
            vernier_journal::JournalError::Parse { path, line, detail } => Self::Parse {
                path,
                line,
                message: detail,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_is_named_once_in_the_cause_chain() {
        let error = HardsuiteError::io("write", "/x/report.md", std::io::Error::other("disk full"));
        assert_eq!(error.to_string(), "write /x/report.md");
        let source = std::error::Error::source(&error).expect("the I/O error is the source");
        assert_eq!(source.to_string(), "disk full");
    }
}
