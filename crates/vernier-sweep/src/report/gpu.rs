//! The GPUs in the reports: the identity line, energy per cell beside its throughput, and the
//! power, memory and energy-per-token charts.

use std::fmt::Write as _;

use super::svg::{Chart, by_prompt, prompt_chart, subtitle};
use super::text::number;
use crate::run_file::{CellSummary, RunFile};

/// `GPU: 2 × NVIDIA H100 …, read through nvml` or `GPU: none read (why)`; `None` for a run
/// file written before GPUs were read.
pub(crate) fn identity_line(run: &RunFile) -> Option<String> {
    run.environment
        .gpu
        .as_ref()
        .map(vernier_gpu::GpuRecord::summary_line)
}

fn mib_as_gib(mib: Option<f64>) -> Option<f64> {
    mib.map(|mib| mib / 1024.0)
}

/// The cells that have GPU figures.
fn measured(run: &RunFile) -> impl Iterator<Item = &CellSummary> {
    run.cells.iter().filter(|cell| cell.gpu.is_some())
}

/// One row per cell with GPU figures: its output rate, mean and peak power, peak memory,
/// energy, joules per output token and output tokens per joule, and where energy came from.
fn rows(run: &RunFile) -> Vec<Vec<String>> {
    measured(run)
        .filter_map(|cell| {
            let gpu = cell.gpu.as_ref()?;
            let window = &gpu.window;
            let per = gpu.per_token;
            Some(vec![
                super::text::cell_name(cell),
                super::text::rate(
                    cell.aggregate
                        .as_ref()
                        .and_then(|a| a.median.output_tokens_per_s),
                ),
                number(window.mean_power_w, 0),
                number(window.peak_power_w, 0),
                number(mib_as_gib(window.peak_memory_mib), 1),
                number(window.energy_j, 0),
                number(per.map(|p| p.joules_per_output_token), 3),
                number(per.map(|p| p.output_tokens_per_joule), 2),
                window
                    .energy_source
                    .map_or_else(|| "—".to_owned(), |s| s.label().to_owned()),
            ])
        })
        .collect()
}

const HEADER: [&str; 9] = [
    "cell",
    "out tok/s all",
    "mean W",
    "peak W",
    "peak GiB",
    "energy J",
    "J/out tok",
    "out tok/J",
    "energy from",
];

/// The terminal's GPU table, `None` when no cell has GPU figures.
pub(crate) fn terminal(run: &RunFile) -> Option<String> {
    let rows = rows(run);
    if rows.is_empty() {
        return None;
    }
    let mut all = vec![HEADER.map(str::to_owned).to_vec()];
    all.extend(rows);
    Some(super::text::aligned(&all))
}

/// The Markdown section, empty when no cell has GPU figures.
pub(crate) fn markdown(run: &RunFile) -> String {
    let rows = rows(run);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let interval = run
        .environment
        .gpu
        .as_ref()
        .and_then(|gpu| gpu.sample_interval_ms)
        .map_or_else(String::new, |ms| format!(" every {ms} ms"));
    let _ = writeln!(
        out,
        "\n## GPU energy\n\nThe server's GPUs sampled{interval} over each cell's measured repetitions (warm-ups left out, \
         the moments between repetitions kept), all GPUs together. Joules per output token divide the window's energy \
         by the completion tokens of its measured requests (the server's counts).\n"
    );
    let _ = writeln!(out, "| {} |", HEADER.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(HEADER.len()));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    let mut notes = Vec::new();
    for cell in measured(run) {
        let Some(gpu) = &cell.gpu else { continue };
        for warning in gpu.warnings() {
            notes.push(format!("{}: {warning}", super::text::cell_name(cell)));
        }
        let throttled: Vec<String> = gpu
            .window
            .throttle_reasons
            .iter()
            .filter(|(name, _)| name.as_str() != "gpu_idle")
            .map(|(name, n)| format!("{name} in {n} of {} samples", gpu.window.samples))
            .collect();
        if !throttled.is_empty() {
            notes.push(format!(
                "{}: clocks held back: {}",
                super::text::cell_name(cell),
                throttled.join(", ")
            ));
        }
    }
    if !notes.is_empty() {
        out.push('\n');
    }
    for note in notes {
        let _ = writeln!(out, "- {note}");
    }
    out
}

/// Mean power, peak memory and joules per output token against prompt length, one series per
/// workload and load; none when no cell has GPU figures.
pub(crate) fn charts(run: &RunFile) -> Vec<Chart> {
    if measured(run).next().is_none() {
        return Vec::new();
    }
    let subtitle = subtitle(run);
    let chart = |file_name: &'static str,
                 title: &str,
                 y: &str,
                 figure: &dyn Fn(&CellSummary) -> Option<f64>| {
        prompt_chart(file_name, title, &subtitle, y, by_prompt(run, figure, None))
    };
    vec![
        chart(
            "gpu_power.svg",
            "GPU mean power over each cell, all GPUs together",
            "watts",
            &|cell| cell.gpu.as_ref()?.window.mean_power_w,
        ),
        chart(
            "gpu_memory.svg",
            "GPU peak memory used over each cell, all GPUs together",
            "GiB",
            &|cell| mib_as_gib(cell.gpu.as_ref()?.window.peak_memory_mib),
        ),
        chart(
            "energy_per_token.svg",
            "GPU energy per output token over each cell",
            "joules per output token",
            &|cell| Some(cell.gpu.as_ref()?.per_token?.joules_per_output_token),
        ),
    ]
}
