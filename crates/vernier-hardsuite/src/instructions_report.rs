//! The instruction suite's breakdown, as IFEval reports its own: prompt-level and
//! instruction-level pass rates, each strict (the reply as written) and loose (its first or
//! last line dropped, emphasis removed), per kind of instruction and per level, with Wilson
//! intervals. Read from each scored sample's grade, which lists every instruction's verdict.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use vernier_tasks::{Category, OutcomeKind};

use crate::results::ResultsFile;

/// Passed of scored, strictly and loosely.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StrictLoose {
    /// Scored.
    pub n: u64,
    /// Passed as written.
    pub strict: u64,
    /// Passed loosely.
    pub loose: u64,
}

impl StrictLoose {
    fn add(&mut self, strict: bool, loose: bool) {
        self.n += 1;
        self.strict += u64::from(strict);
        self.loose += u64::from(loose);
    }
}

/// The breakdown of a run's instruction tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InstructionsBreakdown {
    /// Prompts (samples) with every instruction met.
    pub prompts: StrictLoose,
    /// Instructions over every prompt.
    pub instructions: StrictLoose,
    /// Per kind of instruction.
    pub by_kind: BTreeMap<String, StrictLoose>,
    /// Prompts per level (the number of instructions).
    pub by_level: BTreeMap<usize, StrictLoose>,
}

/// The breakdown, when the run scored instruction tasks.
pub fn instructions_breakdown(results: &ResultsFile) -> Option<InstructionsBreakdown> {
    let mut breakdown = InstructionsBreakdown::default();
    for task in results
        .tasks
        .iter()
        .filter(|task| task.category == Category::INSTRUCTIONS)
    {
        for sample in task
            .samples
            .iter()
            .filter(|s| matches!(s.outcome, OutcomeKind::Pass | OutcomeKind::Wrong))
        {
            let Some(verdicts) = vernier_tasks::read_instruction_detail(&sample.detail) else {
                continue;
            };
            let all_strict = verdicts.iter().all(|(_, strict, _)| *strict);
            let all_loose = verdicts.iter().all(|(_, _, loose)| *loose);
            breakdown.prompts.add(all_strict, all_loose);
            breakdown
                .by_level
                .entry(verdicts.len())
                .or_default()
                .add(all_strict, all_loose);
            for (name, strict, loose) in &verdicts {
                breakdown.instructions.add(*strict, *loose);
                breakdown
                    .by_kind
                    .entry(name.clone())
                    .or_default()
                    .add(*strict, *loose);
            }
        }
    }
    (breakdown.prompts.n > 0).then_some(breakdown)
}

/// `passed/n [low, high]`, the Wilson interval in percent (the count alone without one).
pub(crate) fn cell(passed: u64, n: u64) -> String {
    match vernier_stats::wilson(passed, n, 0.95) {
        Ok(interval) => format!(
            "{passed}/{n} [{:.1}, {:.1}]",
            interval.low * 100.0,
            interval.high * 100.0
        ),
        Err(_) => format!("{passed}/{n}"),
    }
}

/// The breakdown as a Markdown section.
pub fn render_instructions_markdown(breakdown: &InstructionsBreakdown) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Instructions\n");
    let _ = writeln!(
        out,
        "Replies graded (cut-off and empty replies count in the scores above, not here). Strict: the reply as written; loose: the reply with its first line, its last line or both dropped and `*` removed, any of them meeting the instruction (IFEval's two readings). 95% Wilson intervals.\n"
    );
    let _ = writeln!(out, "| | strict | loose |\n| --- | --- | --- |");
    let row = |out: &mut String, label: &str, counts: &StrictLoose| {
        let _ = writeln!(
            out,
            "| {label} | {} | {} |",
            cell(counts.strict, counts.n),
            cell(counts.loose, counts.n)
        );
    };
    row(
        &mut out,
        "prompts, every instruction met",
        &breakdown.prompts,
    );
    row(&mut out, "instructions", &breakdown.instructions);
    for (level, counts) in &breakdown.by_level {
        row(&mut out, &format!("prompts of level {level}"), counts);
    }
    for (kind, counts) in &breakdown.by_kind {
        row(&mut out, &format!("`{kind}`"), counts);
    }
    out
}
