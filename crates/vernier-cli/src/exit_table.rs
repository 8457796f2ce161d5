//! The one exit-code table of the workspace: every engine's error names the [`ExitKind`] of
//! its failure ([`Failure::exit_kind`]), and [`ExitKind::code`] alone turns a kind into the
//! number scripts see. The codes are documented in the README and `docs/architecture.md`; they
//! are never renumbered.

/// What kind of end a command came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExitKind {
    /// The command finished.
    Success,
    /// It failed while running: the server refused a request, a file could not be written, a
    /// journal was unreadable, the grader's engine was missing, ...
    Failure,
    /// A flag, argument or file was refused before any work started (clap's own usage errors
    /// exit with this code too).
    Usage,
    /// The server had requests in flight before a sweep began (see `--allow-busy`).
    ServerBusy,
    /// The server stopped answering; everything measured is on disk and the run resumes with
    /// the printed command.
    ServerStopped,
    /// The suite's self-check failed: no model saw it.
    SelfCheckFailed,
    /// Interrupted (Ctrl-C or SIGTERM); what was measured was written.
    Interrupted,
}

impl ExitKind {
    /// Every kind, in the order of the table.
    pub const ALL: [Self; 7] = [
        Self::Success,
        Self::Failure,
        Self::Usage,
        Self::ServerBusy,
        Self::ServerStopped,
        Self::SelfCheckFailed,
        Self::Interrupted,
    ];

    /// The table: a kind's exit code.
    pub const fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::Failure => 1,
            Self::Usage => 2,
            Self::ServerBusy => 3,
            Self::ServerStopped => 4,
            Self::SelfCheckFailed => 5,
            Self::Interrupted => 130,
        }
    }

    /// The kind's name in tables and help texts.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failure => "failure",
            Self::Usage => "usage",
            Self::ServerBusy => "server busy",
            Self::ServerStopped => "server stopped",
            Self::SelfCheckFailed => "self-check failed",
            Self::Interrupted => "interrupted",
        }
    }

    /// What the code means, in the words of the help texts' exit-code lines.
    pub const fn meaning(self) -> &'static str {
        match self {
            Self::Success => "finished",
            Self::Failure => "failed while running",
            Self::Usage => "a flag, argument or file refused before any work",
            Self::ServerBusy => "the server was busy before a sweep",
            Self::ServerStopped => "the server stopped; the printed command resumes",
            Self::SelfCheckFailed => "the suite's self-check failed",
            Self::Interrupted => "interrupted; what was measured was written",
        }
    }

    /// The kind whose code is `code`, if any.
    pub fn of_code(code: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.code() == code)
    }
}

/// An error that knows what kind of failure it is; its exit code comes from the one table.
pub trait Failure {
    /// The kind of failure.
    fn exit_kind(&self) -> ExitKind;

    /// Its exit code ([`ExitKind::code`]).
    fn exit_code(&self) -> u8 {
        self.exit_kind().code()
    }
}

/// The exit codes by name, each read from the table ([`ExitKind::code`]).
pub mod exit_code {
    use super::ExitKind;

    /// The command finished.
    pub const SUCCESS: u8 = ExitKind::Success.code();
    /// It failed while running.
    pub const FAILURE: u8 = ExitKind::Failure.code();
    /// A flag or argument was refused before any work started.
    pub const USAGE: u8 = ExitKind::Usage.code();
    /// The server had requests in flight before a sweep began.
    pub const SERVER_BUSY: u8 = ExitKind::ServerBusy.code();
    /// The server stopped answering; the run resumes with the printed command.
    pub const SERVER_STOPPED: u8 = ExitKind::ServerStopped.code();
    /// The suite's self-check failed: no model saw it.
    pub const SELF_CHECK_FAILED: u8 = ExitKind::SelfCheckFailed.code();
    /// Interrupted; what was measured was written.
    pub const INTERRUPTED: u8 = ExitKind::Interrupted.code();

    /// Every code with its name, in the table's order.
    pub const ALL: [(u8, &str); 7] = [
        (SUCCESS, ExitKind::Success.name()),
        (FAILURE, ExitKind::Failure.name()),
        (USAGE, ExitKind::Usage.name()),
        (SERVER_BUSY, ExitKind::ServerBusy.name()),
        (SERVER_STOPPED, ExitKind::ServerStopped.name()),
        (SELF_CHECK_FAILED, ExitKind::SelfCheckFailed.name()),
        (INTERRUPTED, ExitKind::Interrupted.name()),
    ];

    /// `examples` followed by the exit-code paragraph: every binary's `after_help`.
    pub fn with_help_lines(examples: &str) -> String {
        format!("{examples}\n\n{}", help_lines())
    }

    /// The help texts' exit-code paragraph, one line per code, for every binary alike.
    pub fn help_lines() -> String {
        ExitKind::ALL
            .iter()
            .fold(String::from("Exit codes:"), |text, kind| {
                text + &format!("\n  {:>3}  {}", kind.code(), kind.meaning())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_the_documented_one() {
        // The README's and docs/architecture.md's table, typed from the docs.
        let documented = [
            (ExitKind::Success, 0),
            (ExitKind::Failure, 1),
            (ExitKind::Usage, 2),
            (ExitKind::ServerBusy, 3),
            (ExitKind::ServerStopped, 4),
            (ExitKind::SelfCheckFailed, 5),
            (ExitKind::Interrupted, 130),
        ];
        for (kind, code) in documented {
            assert_eq!(kind.code(), code, "{kind:?}");
            assert_eq!(ExitKind::of_code(code), Some(kind));
        }
        assert_eq!(ExitKind::of_code(6), None);
        let lines = exit_code::help_lines();
        assert!(
            lines.contains("  5  the suite's self-check failed"),
            "{lines}"
        );
        assert!(lines.contains("130  interrupted"), "{lines}");
    }
}
