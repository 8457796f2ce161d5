//! The checks a generated task's self-check is made of: each one counted, each failure kept in
//! words, and the checker probes every generated family shares.

use crate::task::{OutcomeKind, Reply, Task};

/// Checks run on one task, and the ones that failed.
#[derive(Debug, Default)]
pub(crate) struct Proof {
    n_checks: usize,
    failures: Vec<String>,
}

impl Proof {
    /// One check: `ok`, else `why` is a failure.
    pub(crate) fn require(&mut self, ok: bool, why: impl Into<String>) {
        self.n_checks += 1;
        if !ok {
            self.failures.push(why.into());
        }
    }

    /// One check made of several findings: every one of `failures` is kept.
    pub(crate) fn require_none(&mut self, failures: impl IntoIterator<Item = String>) {
        self.n_checks += 1;
        self.failures.extend(failures);
    }

    /// The task's checker grades `reply` (named `what`) as `kind`.
    pub(crate) fn grades(&mut self, task: &Task, what: &str, reply: &Reply, kind: OutcomeKind) {
        let got = task.check_answer(reply).map(|outcome| outcome.kind);
        self.require(
            got == Some(kind),
            format!(
                "checker gave {} for {what}; expected {kind}",
                got.map_or("nothing".to_owned(), |k| k.to_string())
            ),
        );
    }

    /// The gold answer line `ANSWER: {gold}` is `cut_off` when the budget stopped the reply,
    /// and `no_answer` when it stands only in the reasoning.
    pub(crate) fn refuses_cut_off_and_reasoning(&mut self, task: &Task, gold: &str) {
        let mut cut = Reply::stopped(format!("ANSWER: {gold}"));
        cut.finish_reason = Some("length".to_owned());
        self.grades(
            task,
            "the gold with finish_reason length",
            &cut,
            OutcomeKind::CutOff,
        );
        let mut reasoning_only = Reply::stopped("I cannot tell.");
        reasoning_only.reasoning = Some(format!("ANSWER: {gold}"));
        self.grades(
            task,
            "the gold only in the reasoning",
            &reasoning_only,
            OutcomeKind::NoAnswer,
        );
    }

    /// The number of checks and every failure.
    pub(crate) fn finish(self) -> (usize, Vec<String>) {
        (self.n_checks, self.failures)
    }
}
