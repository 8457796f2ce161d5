//! Text helpers the reports share: a figure or a dash, a rate, a cell's name, the server's
//! version, aligned columns.

use std::fmt::Write as _;

use crate::run_file::CellSummary;

/// The cell as one short name: `prose 111/512 c4` (workload, prompt/output, load).
pub(crate) fn cell_name(cell: &CellSummary) -> String {
    format!(
        "{} {}/{} {}",
        cell.workload,
        cell.prompt_tokens_target,
        cell.output_tokens,
        load(cell)
    )
}

fn load(cell: &CellSummary) -> String {
    cell.rate_per_s.map_or_else(
        || format!("c{}", cell.concurrency),
        |rate| format!("{rate}/s"),
    )
}

/// The server's version as it reported it, with a leading space (empty when it did not).
pub(crate) fn server_version(env: &crate::environment::Environment) -> String {
    env.server
        .version
        .as_ref()
        .and_then(|v| v.get("version"))
        .and_then(|v| v.as_str())
        .map_or_else(String::new, |v| format!(" {v}"))
}

/// Formats an optional figure with `decimals` places, or an em dash.
pub(crate) fn number(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(value) if value.is_finite() => format!("{value:.decimals$}"),
        _ => "—".to_owned(),
    }
}

/// A rate with decimals only where they matter: `1143`, `85.2`, `3.41`.
pub(crate) fn rate(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), vernier_cli::figure)
}

/// Rows with their first column left-aligned and the rest right-aligned, a rule under the
/// header.
pub(crate) fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            rows.iter()
                .map(|row| row.get(column).map_or(0, |t| t.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (index, row) in rows.iter().enumerate() {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(column, (text, width))| {
                if column == 0 {
                    format!("{text:<width$}")
                } else {
                    format!("{text:>width$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
        if index == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
            let _ = writeln!(out, "{}", "-".repeat(total));
        }
    }
    out
}
