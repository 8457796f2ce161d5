//! The structured-output and tool-call sections of `report.md`: where replies failed. For
//! structured output, per level: passed, not JSON, refused by the schema, a wrong value; for tool
//! calls, per kind of task: passed, wrong, extra calls. Read from each sample's graded detail
//! (`invalid_json: …`, `schema: …`, `value: …`), so a run's files alone give it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use vernier_tasks::{Category, OutcomeKind};

use crate::results::ResultsFile;

/// Counts of one row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailureCounts {
    /// Scored samples.
    pub n: u64,
    /// Passed.
    pub pass: u64,
    /// Not JSON (structured) or wrong (calls).
    pub first: u64,
    /// Refused by the schema (structured) or extra calls (calls).
    pub second: u64,
    /// A wrong value (structured).
    pub third: u64,
    /// Cut off or empty.
    pub unfinished: u64,
}

/// Rows by level (`l1`…) of the structured suite, and by kind (`single`, `parallel`, …) of the
/// tool-call suite; each empty when the run holds none of that category.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StructureBreakdown {
    /// Structured output by level.
    pub structured: BTreeMap<String, FailureCounts>,
    /// Tool calls by kind.
    pub calls: BTreeMap<String, FailureCounts>,
}

/// The part of a task id that names its row: `structured-l2-1` → `l2`, `calls-none-fits-2` →
/// `none-fits`.
fn row_of(id: &str, prefix: &str) -> String {
    let rest = id.strip_prefix(prefix).unwrap_or(id);
    rest.rsplit_once('-')
        .map_or(rest, |(name, _)| name)
        .to_owned()
}

/// The breakdown of `results`; `None` without a structured or tool-call task.
pub fn structure_breakdown(results: &ResultsFile) -> Option<StructureBreakdown> {
    let mut breakdown = StructureBreakdown::default();
    for task in &results.tasks {
        let (rows, prefix) = match task.category {
            Category::STRUCTURED => (&mut breakdown.structured, "structured-"),
            Category::CALLS => (&mut breakdown.calls, "calls-"),
            _ => continue,
        };
        let counts = rows.entry(row_of(&task.id, prefix)).or_default();
        for sample in task.samples.iter().filter(|s| s.outcome.is_scored()) {
            counts.n += 1;
            match sample.outcome {
                OutcomeKind::Pass => counts.pass += 1,
                OutcomeKind::CutOff | OutcomeKind::NoAnswer => counts.unfinished += 1,
                OutcomeKind::ExtraCalls => counts.second += 1,
                _ if task.category == Category::CALLS => counts.first += 1,
                _ if sample.detail.starts_with("invalid_json") => counts.first += 1,
                _ if sample.detail.starts_with("schema") => counts.second += 1,
                _ => counts.third += 1,
            }
        }
    }
    (!breakdown.structured.is_empty() || !breakdown.calls.is_empty()).then_some(breakdown)
}

/// The breakdown as Markdown sections.
pub fn render_structure_markdown(breakdown: &StructureBreakdown) -> String {
    let mut out = String::new();
    if !breakdown.structured.is_empty() {
        let _ = writeln!(
            out,
            "## Structured output\n\n| level | passed (95% CI) | not JSON | schema refused | wrong value | cut off or empty |\n|---|---|---:|---:|---:|---:|"
        );
        for (level, c) in &breakdown.structured {
            let _ = writeln!(
                out,
                "| {level} | {} | {} | {} | {} | {} |",
                crate::instructions_report::cell(c.pass, c.n),
                c.first,
                c.second,
                c.third,
                c.unfinished
            );
        }
    }
    if !breakdown.calls.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "## Tool calls\n\n| kind | passed (95% CI) | wrong | extra calls | cut off or empty |\n|---|---|---:|---:|---:|"
        );
        for (kind, c) in &breakdown.calls {
            let _ = writeln!(
                out,
                "| {kind} | {} | {} | {} | {} |",
                crate::instructions_report::cell(c.pass, c.n),
                c.first,
                c.second,
                c.unfinished
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_names_its_row() {
        assert_eq!(row_of("structured-l2-1", "structured-"), "l2");
        assert_eq!(row_of("calls-none-fits-2", "calls-"), "none-fits");
        assert_eq!(row_of("calls-single-1", "calls-"), "single");
    }
}
