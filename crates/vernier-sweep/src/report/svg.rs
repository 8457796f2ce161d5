//! The sweep's SVG charts: every cell's series (one line per workload, load and output
//! length) against the prompt length asked for, drawn by `vernier-plot`, which keeps the rules
//! (the x axis at the values asked for, round ticks, 95% intervals as error bars, the legend
//! beside the plot, the subtitle naming the model, the server and the date).

use std::fmt::Write as _;

use vernier_plot::{LineChart, Point, Series, value_label};

use crate::run_file::{CellSummary, MedianIntervals, RunFile};

/// One chart file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Chart {
    /// File name inside the output folder.
    pub file_name: &'static str,
    /// The SVG document.
    pub svg: String,
}

/// The run a chart comes from, in one line: label or model, server, start date.
pub(crate) fn subtitle(run: &RunFile) -> String {
    let env = &run.environment;
    let server = if env.server.simulator {
        "the bundled simulator (simulated figures)".to_owned()
    } else {
        let version = super::text::server_version(env);
        if env.server.kind == "unknown" {
            env.server.base_url.clone()
        } else {
            format!("{}{version}", env.server.kind)
        }
    };
    let mut line = match &run.label {
        Some(label) => format!("{label}: {} on {server}", env.model.id),
        None => format!("{} on {server}", env.model.id),
    };
    if run.started_unix_ms > 0 {
        let _ = write!(line, ", {}", vernier_run::utc_minute(run.started_unix_ms));
    }
    line
}

/// A line chart in the sweep's words: "no measured cell" when nothing was measured, and
/// `report.csv` named for the series the legend has no room for.
pub(crate) fn line_chart(title: &str, subtitle: &str, x: &str, y: &str) -> LineChart {
    LineChart::new(title, subtitle)
        .x_title(x)
        .y_title(y)
        .empty("no measured cell")
        .legend_hint("see report.csv")
}

/// How the cells' series are named: workload, load and, when the run has several, output
/// length.
fn series_name(cell: &CellSummary, several_outputs: bool) -> String {
    let load = match cell.rate_per_s {
        Some(rate) => format!("{}/s", value_label(rate)),
        None => format!("c{}", cell.concurrency),
    };
    if several_outputs {
        format!("{} {load} out {}", cell.workload, cell.output_tokens)
    } else {
        format!("{} {load}", cell.workload)
    }
}

type IntervalOf = fn(&MedianIntervals) -> Option<vernier_stats::Interval>;

/// One series per (workload, load, output length), each point a cell at its target prompt
/// length, in the order the run configured them.
pub(crate) fn by_prompt(
    run: &RunFile,
    figure: &dyn Fn(&CellSummary) -> Option<f64>,
    interval: Option<IntervalOf>,
) -> Vec<Series> {
    let mut outputs: Vec<u32> = run.cells.iter().map(|c| c.output_tokens).collect();
    outputs.sort_unstable();
    outputs.dedup();
    let several_outputs = outputs.len() > 1;
    let mut cells: Vec<&CellSummary> = run.cells.iter().collect();
    cells.sort_by(|a, b| {
        (
            a.workload,
            a.concurrency,
            a.output_tokens,
            a.prompt_tokens_target,
        )
            .cmp(&(
                b.workload,
                b.concurrency,
                b.output_tokens,
                b.prompt_tokens_target,
            ))
            .then(
                a.rate_per_s
                    .unwrap_or(0.0)
                    .total_cmp(&b.rate_per_s.unwrap_or(0.0)),
            )
    });
    let mut series: Vec<Series> = Vec::new();
    for cell in cells {
        let Some(y) = figure(cell).filter(|y| y.is_finite()) else {
            continue;
        };
        let mut point = Point::at(f64::from(cell.prompt_tokens_target), y);
        if let Some(i) = interval
            .and_then(|of| of(&cell.median_interval_95))
            .filter(|i| i.low.is_finite() && i.high.is_finite())
        {
            point = point.with_interval(i.low, i.high);
        }
        let name = series_name(cell, several_outputs);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series::new(name, vec![point])),
        }
    }
    series
}

/// A chart of `series` against the prompt length asked for.
pub(crate) fn prompt_chart(
    file_name: &'static str,
    title: &str,
    subtitle: &str,
    y: &str,
    series: Vec<Series>,
) -> Chart {
    Chart {
        file_name,
        svg: line_chart(title, subtitle, "prompt tokens asked for (even spacing)", y)
            .series(series)
            .to_svg(),
    }
}

/// The cells' four charts: prefill rate, TTFT, decode rate and tokens per event, each against
/// the prompt length asked for, one series per workload and load.
pub(crate) fn cell_charts(run: &RunFile) -> Vec<Chart> {
    let mut names: Vec<&str> = run
        .cells
        .iter()
        .flat_map(|c| c.token_sources.iter().map(|s| s.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let tokens = if names.is_empty() {
        "no token source".to_owned()
    } else {
        format!("tokens: {}", names.join("+"))
    };
    let subtitle = subtitle(run);
    let chart = |file_name: &'static str, title: &str, y: &str, series: Vec<Series>| {
        prompt_chart(file_name, title, &subtitle, y, series)
    };
    vec![
        chart(
            "prefill.svg",
            &format!("Prefill tok/s, median and 95% interval ({tokens})"),
            "prefill tokens/s",
            by_prompt(
                run,
                &|c| c.median.prefill_tokens_per_s,
                Some(|i| i.prefill_tokens_per_s),
            ),
        ),
        chart(
            "ttft.svg",
            "Time to first token, median and 95% interval",
            "TTFT ms",
            by_prompt(run, &|c| c.median.ttft_ms, Some(|i| i.ttft_ms)),
        ),
        chart(
            "decode.svg",
            &format!("Decode tok/s per stream, median and 95% interval ({tokens})"),
            "decode tokens/s",
            by_prompt(
                run,
                &|c| c.median.decode_tokens_per_s,
                Some(|i| i.decode_tokens_per_s),
            ),
        ),
        chart(
            "tokens_per_event.svg",
            "Tokens per SSE event (event counting under-reports by this factor)",
            "tokens per event",
            by_prompt(run, &|c| c.median.tokens_per_event, None),
        ),
    ]
}
