//! Reports derived from the run file: terminal table, Markdown, CSV and SVG charts.

mod csv;
mod gpu;
mod markdown;
mod offered_load;
mod shards;
pub(crate) mod svg;
mod table;
pub(crate) mod text;

use std::path::{Path, PathBuf};

pub use csv::csv_report;
pub use markdown::markdown_report;
pub use svg::Chart;
pub use table::{terminal_table, validity};

use crate::error::SweepError;
use crate::run_file::RunFile;

/// Every chart of a run: the cells' four (prefill rate and TTFT against prompt length, decode
/// rate per workload, tokens per event), then the load charts, then the GPU charts (mean power,
/// peak memory, energy per output token) when GPUs were read.
pub fn svg_charts(run: &RunFile) -> Vec<Chart> {
    let mut charts = svg::cell_charts(run);
    charts.extend(offered_load::charts(run));
    charts.extend(gpu::charts(run));
    charts
}

/// The files written for a run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReportFiles {
    /// `run.json`.
    pub run_file: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// `report.csv`.
    pub csv: PathBuf,
    /// The SVG charts.
    pub charts: Vec<PathBuf>,
}

/// Writes `text` at `path` whole or not at all; returns the path.
pub(crate) fn write(path: PathBuf, text: &str) -> Result<PathBuf, SweepError> {
    vernier_run::write_atomically(&path, text.as_bytes()).map_err(|source| {
        SweepError::WriteReport {
            path: path.clone(),
            source,
        }
    })?;
    Ok(path)
}

/// Writes `value` as pretty JSON (with a final newline) at `path`, like [`write`].
pub(crate) fn write_json(
    path: PathBuf,
    value: &impl serde::Serialize,
) -> Result<PathBuf, SweepError> {
    let json = serde_json::to_string_pretty(value).map_err(|error| SweepError::WriteReport {
        path: path.clone(),
        source: std::io::Error::other(error),
    })?;
    write(path, &(json + "\n"))
}

/// Writes `run.json`, `report.md`, `report.csv` and the charts into `out`.
pub fn write_reports(run: &RunFile, out: &Path) -> Result<ReportFiles, SweepError> {
    let run_file = write_json(out.join("run.json"), run)?;
    let markdown = write(out.join("report.md"), &markdown_report(run))?;
    let csv = write(out.join("report.csv"), &csv_report(run)?)?;
    let mut charts = Vec::new();
    for chart in svg_charts(run) {
        charts.push(write(out.join(chart.file_name), &chart.svg)?);
    }
    Ok(ReportFiles {
        run_file,
        markdown,
        csv,
        charts,
    })
}
