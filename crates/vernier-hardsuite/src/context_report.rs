//! The long-context view of a run: accuracy by length × depth, per-length Wilson intervals,
//! prefill speed against length, what the server refused, as a Markdown section and an SVG
//! heat map.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use vernier_plot::{Format, HeatCell, HeatMap};
use vernier_stats::{Interval, median, wilson};
use vernier_tasks::{OutcomeKind, length_label};

use crate::journal::{DroppedLength, RecordedLimit, RunHeader};
use crate::task_results::{CONFIDENCE, SampleResult, TaskResult};

/// One (length, depth) cell, or a length's multi-needle task (`depth_pct` absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextCell {
    /// Target prompt tokens.
    pub target_tokens: u32,
    /// Needle depth, percent; absent for the multi-needle task.
    pub depth_pct: Option<u8>,
    /// Scored samples.
    pub n_scored: u64,
    /// Passed.
    pub n_pass: u64,
    /// Refused by the server for their length (never scored).
    pub n_context_exceeded: u64,
}

/// One length's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextLength {
    /// Target prompt tokens.
    pub target_tokens: u32,
    /// Scored samples (single- and multi-needle).
    pub n_scored: u64,
    /// Passed.
    pub n_pass: u64,
    /// Wilson interval of the pass rate over the scored samples.
    pub wilson: Option<Interval>,
    /// Refused by the server for their length.
    pub n_context_exceeded: u64,
    /// The server's words for the first refusal.
    pub server_message: Option<String>,
    /// Median `usage.prompt_tokens` of the accepted requests.
    pub median_prompt_tokens: Option<f64>,
    /// The largest distance of an accepted request's `usage.prompt_tokens` from the target,
    /// percent of the target.
    pub max_deviation_pct: Option<f64>,
    /// Median time to the first token, ms.
    pub median_ttft_ms: Option<f64>,
    /// Median prompt tokens per second of time to first token.
    pub median_prefill_tokens_per_s: Option<f64>,
    /// Prompt tokens the server reported as served from its cache, summed (0 when the cache
    /// was defeated; absent when the server never said).
    pub cached_prompt_tokens: Option<u64>,
}

/// The long-context view of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextReport {
    /// The server's context, where it said.
    pub limit: Option<RecordedLimit>,
    /// Lengths left out before anything was sent, and why.
    pub dropped: Vec<DroppedLength>,
    /// The depths of the plan, percent.
    pub depths: Vec<u8>,
    /// Per length, shortest first.
    pub lengths: Vec<ContextLength>,
    /// Per cell.
    pub cells: Vec<ContextCell>,
    /// The longest prompt the server accepted, in its tokens.
    pub largest_accepted_tokens: Option<u64>,
    /// How prompts were sized (`tokenize_chat` or `usage_ratio`).
    pub count_method: Option<String>,
    /// The seed the needles and haystacks were drawn from.
    #[serde(default)]
    pub seed: Option<u64>,
}

impl ContextReport {
    /// The view of these tasks' main-run samples, `None` when none is a context task.
    pub fn of(header: &RunHeader, tasks: &[TaskResult]) -> Option<Self> {
        let samples: Vec<&SampleResult> = tasks
            .iter()
            .flat_map(|task| task.samples.iter())
            .filter(|sample| sample.context.is_some())
            .collect();
        if samples.is_empty() && header.context.is_none() {
            return None;
        }
        let context_of = |sample: &SampleResult| sample.context.clone();
        let mut targets: Vec<u32> = samples
            .iter()
            .filter_map(|s| context_of(s).map(|c| c.target_tokens))
            .collect();
        targets.sort_unstable();
        targets.dedup();
        // The plan's depths, and every depth a sample was placed at: a suite run without a
        // context plan (the probe suite) still has its columns.
        let mut depths: Vec<u8> = header
            .context
            .as_ref()
            .map(|plan| plan.depths.clone())
            .unwrap_or_default();
        depths.extend(
            samples
                .iter()
                .filter_map(|s| s.context.as_ref().and_then(|c| c.depth_pct)),
        );
        depths.sort_unstable();
        depths.dedup();
        let mut cells = Vec::new();
        let mut lengths = Vec::new();
        for &target in &targets {
            let at_length: Vec<&SampleResult> = samples
                .iter()
                .copied()
                .filter(|s| {
                    s.context
                        .as_ref()
                        .is_some_and(|c| c.target_tokens == target)
                })
                .collect();
            let mut cell_depths: Vec<Option<u8>> = at_length
                .iter()
                .filter_map(|s| s.context.as_ref().map(|c| c.depth_pct))
                .collect();
            cell_depths.sort_unstable_by_key(|d| d.map_or(u16::MAX, u16::from));
            cell_depths.dedup();
            for depth in cell_depths {
                let in_cell: Vec<&&SampleResult> = at_length
                    .iter()
                    .filter(|s| s.context.as_ref().is_some_and(|c| c.depth_pct == depth))
                    .collect();
                cells.push(ContextCell {
                    target_tokens: target,
                    depth_pct: depth,
                    n_scored: in_cell.iter().filter(|s| s.outcome.is_scored()).count() as u64,
                    n_pass: in_cell
                        .iter()
                        .filter(|s| s.outcome == OutcomeKind::Pass)
                        .count() as u64,
                    n_context_exceeded: in_cell
                        .iter()
                        .filter(|s| s.outcome == OutcomeKind::ContextExceeded)
                        .count() as u64,
                });
            }
            lengths.push(length_row(target, &at_length));
        }
        let largest_accepted_tokens = samples
            .iter()
            .filter(|s| s.outcome != OutcomeKind::ContextExceeded)
            .filter_map(|s| s.prompt_tokens)
            .max();
        let count_method = samples
            .iter()
            .find_map(|s| s.context.as_ref().map(|c| c.count_method.clone()));
        Some(Self {
            limit: header.context_limit.clone(),
            dropped: header.context_dropped.clone(),
            depths,
            lengths,
            cells,
            largest_accepted_tokens,
            count_method,
            seed: header.context.as_ref().map(|plan| plan.seed),
        })
    }

    /// The cell of this length and depth.
    pub fn cell(&self, target_tokens: u32, depth_pct: Option<u8>) -> Option<&ContextCell> {
        self.cells
            .iter()
            .find(|c| c.target_tokens == target_tokens && c.depth_pct == depth_pct)
    }
}

fn length_row(target: u32, samples: &[&SampleResult]) -> ContextLength {
    let n_scored = samples.iter().filter(|s| s.outcome.is_scored()).count() as u64;
    let n_pass = samples
        .iter()
        .filter(|s| s.outcome == OutcomeKind::Pass)
        .count() as u64;
    let exceeded: Vec<&&SampleResult> = samples
        .iter()
        .filter(|s| s.outcome == OutcomeKind::ContextExceeded)
        .collect();
    let accepted: Vec<&&SampleResult> = samples.iter().filter(|s| s.outcome.is_scored()).collect();
    let prompt_tokens: Vec<f64> = accepted
        .iter()
        .filter_map(|s| s.prompt_tokens)
        .map(|t| t as f64)
        .collect();
    let deviation = prompt_tokens
        .iter()
        .map(|t| (t - f64::from(target)).abs() * 100.0 / f64::from(target))
        .fold(None, |worst: Option<f64>, d| {
            Some(worst.map_or(d, |w| w.max(d)))
        });
    let ttft: Vec<f64> = accepted.iter().filter_map(|s| s.ttft_ms).collect();
    let prefill: Vec<f64> = accepted
        .iter()
        .filter_map(|s| s.context.as_ref().and_then(|c| c.prefill_tokens_per_s))
        .collect();
    let cached: Vec<u64> = accepted.iter().filter_map(|s| s.cached_tokens).collect();
    ContextLength {
        target_tokens: target,
        n_scored,
        n_pass,
        wilson: wilson(n_pass, n_scored, CONFIDENCE).ok(),
        n_context_exceeded: exceeded.len() as u64,
        server_message: exceeded.iter().find_map(|s| s.server_message.clone()),
        median_prompt_tokens: median(&prompt_tokens).ok(),
        max_deviation_pct: deviation,
        median_ttft_ms: median(&ttft).ok(),
        median_prefill_tokens_per_s: median(&prefill).ok(),
        cached_prompt_tokens: (!cached.is_empty()).then(|| cached.iter().sum()),
    }
}

fn cell_text(cell: Option<&ContextCell>) -> String {
    match cell {
        None => "–".to_owned(),
        Some(cell) if cell.n_scored == 0 && cell.n_context_exceeded > 0 => "exceeded".to_owned(),
        Some(cell) if cell.n_scored == 0 => "unscored".to_owned(),
        Some(cell) => format!("{}/{}", cell.n_pass, cell.n_scored),
    }
}

fn or_dash(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.digits$}"))
}

/// The Markdown section: where the lengths come from, accuracy by length × depth, and speed
/// and interval per length.
pub fn render_context_markdown(report: &ContextReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Long context");
    let _ = writeln!(out);
    match &report.limit {
        Some(limit) => {
            let _ = writeln!(
                out,
                "The server's context: {} tokens ({}).",
                limit.tokens, limit.source
            );
        }
        None => {
            let _ = writeln!(out, "The server did not say its context length.");
        }
    }
    for dropped in &report.dropped {
        let _ = writeln!(
            out,
            "- {} left out before anything was sent: {}.",
            length_label(dropped.tokens),
            dropped.reason
        );
    }
    if let Some(largest) = report.largest_accepted_tokens {
        let _ = writeln!(
            out,
            "\nThe longest prompt the server accepted: {largest} tokens (its own count)."
        );
    }
    let refused: Vec<&ContextLength> = report
        .lengths
        .iter()
        .filter(|l| l.n_context_exceeded > 0)
        .collect();
    if !refused.is_empty() {
        let _ = writeln!(
            out,
            "\nRefused for their length (`context_exceeded`, never scored as the model's failure):"
        );
        for length in refused {
            let _ = writeln!(
                out,
                "- {}: {} request(s); the server said: {}",
                length_label(length.target_tokens),
                length.n_context_exceeded,
                length.server_message.as_deref().unwrap_or("(no message)")
            );
        }
    }
    if let Some(method) = &report.count_method {
        let how = if method == "tokenize_chat" {
            "counted by the server before each request (`/tokenize` with the chat template)"
        } else {
            "sized from the units per token of earlier requests' `usage.prompt_tokens` (the server has no chat `/tokenize`)"
        };
        let _ = writeln!(out, "\nPrompt lengths were {how}.");
    }
    write_cells(&mut out, report);
    write_lengths(&mut out, report);
    out
}

/// Accuracy by length × depth.
fn write_cells(out: &mut String, report: &ContextReport) {
    let _ = writeln!(out);
    let _ = writeln!(out, "### Needles found, by length and depth (pass/scored)");
    let _ = writeln!(out);
    let mut header = String::from("| length |");
    let mut rule = String::from("| --- |");
    for depth in &report.depths {
        let _ = write!(header, " {depth}% |");
        rule.push_str(" ---: |");
    }
    let has_multi = report.cells.iter().any(|c| c.depth_pct.is_none());
    if has_multi {
        header.push_str(" all needles |");
        rule.push_str(" ---: |");
    }
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{rule}");
    for length in &report.lengths {
        let mut row = format!("| {} |", length_label(length.target_tokens));
        for depth in &report.depths {
            let _ = write!(
                row,
                " {} |",
                cell_text(report.cell(length.target_tokens, Some(*depth)))
            );
        }
        if has_multi {
            let _ = write!(
                row,
                " {} |",
                cell_text(report.cell(length.target_tokens, None))
            );
        }
        let _ = writeln!(out, "{row}");
    }
}

/// Interval, sizes, speed and cache per length.
fn write_lengths(out: &mut String, report: &ContextReport) {
    let _ = writeln!(out);
    let _ = writeln!(out, "### Per length");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| length | pass/scored | 95% Wilson | prompt tokens (median) | worst off target | TTFT ms (median) | prefill tok/s (median) | cached tokens |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
    );
    for length in &report.lengths {
        let interval = length.wilson.map_or_else(
            || "–".to_owned(),
            |w| format!("[{:.1}, {:.1}]", w.low * 100.0, w.high * 100.0),
        );
        let _ = writeln!(
            out,
            "| {} | {}/{} | {interval} | {} | {} | {} | {} | {} |",
            length_label(length.target_tokens),
            length.n_pass,
            length.n_scored,
            or_dash(length.median_prompt_tokens, 0),
            length
                .max_deviation_pct
                .map_or_else(|| "–".to_owned(), |d| format!("{d:.2}%")),
            or_dash(length.median_ttft_ms, 1),
            or_dash(length.median_prefill_tokens_per_s, 0),
            length
                .cached_prompt_tokens
                .map_or_else(|| "not reported".to_owned(), |c| c.to_string()),
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "The heat map is `context-heatmap.svg`; every request's counts are in the journal (`context` of each attempt)."
    );
}

/// An SVG heat map of the pass rate by length (rows) and depth (columns), with the
/// multi-needle task last; refused cells are grey. `subtitle` names the run (model, server,
/// date; [`ResultsFile::chart_subtitle`](crate::ResultsFile::chart_subtitle)).
pub fn render_context_svg(report: &ContextReport, subtitle: &str) -> String {
    let mut columns: Vec<Option<u8>> = report.depths.iter().map(|d| Some(*d)).collect();
    if report.cells.iter().any(|c| c.depth_pct.is_none()) {
        columns.push(None);
    }
    let mut map = HeatMap::new("Needles found by prompt length and depth", subtitle)
        .x_title(if columns.contains(&None) {
            "needle depth (all: the multi-needle task)"
        } else {
            "needle depth"
        })
        .y_title("prompt length, server's tokens")
        .columns(
            columns
                .iter()
                .map(|depth| depth.map_or_else(|| "all".to_owned(), |d| format!("{d}%"))),
        )
        .scale("found", 0.0, 1.0, Format::Percent)
        .meanings("refused: longer than the context", "not run");
    for length in &report.lengths {
        let cells = columns
            .iter()
            .map(|depth| match report.cell(length.target_tokens, *depth) {
                Some(found) if found.n_scored > 0 => HeatCell::value(
                    found.n_pass as f64 / found.n_scored as f64,
                    format!("{}/{}", found.n_pass, found.n_scored),
                ),
                Some(found) if found.n_context_exceeded > 0 => HeatCell::grey("exceeded"),
                _ => HeatCell::blank("–"),
            })
            .collect();
        map = map.row(length_label(length.target_tokens), cells);
    }
    map.to_svg()
}
