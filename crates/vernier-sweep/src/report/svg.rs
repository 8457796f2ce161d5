//! SVG charts written as plain SVG text.

use std::fmt::Write as _;

use crate::config::Workload;
use crate::run_file::{CellSummary, Figures, RunFile};

/// One chart file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Chart {
    /// File name inside the output folder.
    pub file_name: &'static str,
    /// The SVG document.
    pub svg: String,
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 400.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn frame(title: &str, x_label: &str, y_label: &str) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        HEIGHT - 12.0,
        escape(x_label)
    );
    let _ = writeln!(
        svg,
        r#"<text x="16" y="{y}" text-anchor="middle" transform="rotate(-90 16 {y})">{}</text>"#,
        escape(y_label),
        y = TOP + (HEIGHT - TOP - BOTTOM) / 2.0
    );
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{b}" x2="{r}" y2="{b}" stroke="#333"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{b}" stroke="#333"/>"##,
        b = HEIGHT - BOTTOM,
        r = WIDTH - RIGHT
    );
    svg
}

fn y_axis(svg: &mut String, y_max: f64) -> impl Fn(f64) -> f64 + use<> {
    let plot_height = HEIGHT - TOP - BOTTOM;
    for step in 0..=4 {
        let value = y_max * f64::from(step) / 4.0;
        let y = HEIGHT - BOTTOM - plot_height * f64::from(step) / 4.0;
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{r}" y2="{y:.1}" stroke="#ddd"/><text x="{x}" y="{ty:.1}" text-anchor="end">{}</text>"##,
            tick(value),
            r = WIDTH - RIGHT,
            x = LEFT - 6.0,
            ty = y + 4.0
        );
    }
    move |value: f64| HEIGHT - BOTTOM - plot_height * (value / y_max)
}

fn tick(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

fn nice_max(value: f64) -> f64 {
    if value <= 0.0 || !value.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    let scaled = value / magnitude;
    let nice = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|n| *n >= scaled * 1.05)
        .unwrap_or(10.0);
    nice * magnitude
}

fn legend(svg: &mut String, names: &[String]) {
    for (index, name) in names.iter().enumerate() {
        let x = LEFT + 10.0 + 110.0 * index as f64;
        let _ = writeln!(
            svg,
            r#"<rect x="{x}" y="{y}" width="10" height="10" fill="{c}"/><text x="{tx}" y="{ty}">{}</text>"#,
            escape(name),
            y = TOP - 8.0,
            c = COLOURS[index % COLOURS.len()],
            tx = x + 14.0,
            ty = TOP + 1.0
        );
    }
}

pub(crate) struct Series {
    pub(crate) name: String,
    pub(crate) points: Vec<(f64, f64)>,
}

/// A mark drawn over a line chart.
pub(crate) enum Mark {
    /// A dashed horizontal line at this y value, labelled.
    Level(f64, String),
    /// A dashed vertical line at this x value, labelled.
    At(f64, String),
}

/// Line chart with a log-scaled x axis (prompt tokens).
fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    line_chart_marked(title, x_label, y_label, series, &[])
}

/// [`line_chart`] with marks: target levels and a marked load.
pub(crate) fn line_chart_marked(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    marks: &[Mark],
) -> String {
    let mut svg = frame(title, x_label, y_label);
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max, mut y_top) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in points {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_top = y_top.max(y);
    }
    for mark in marks {
        if let Mark::Level(level, _) = mark {
            y_top = y_top.max(*level);
        }
    }
    if !x_min.is_finite() {
        svg.push_str("<text x=\"320\" y=\"200\" text-anchor=\"middle\">no data</text>\n</svg>\n");
        return svg;
    }
    let y_of = y_axis(&mut svg, nice_max(y_top));
    let (log_min, log_max) = (x_min.max(1.0).log10(), x_max.max(1.0).log10());
    let span = if log_max > log_min {
        log_max - log_min
    } else {
        1.0
    };
    let plot_width = WIDTH - LEFT - RIGHT - 40.0;
    let x_of = |x: f64| LEFT + 20.0 + plot_width * ((x.max(1.0).log10() - log_min) / span);
    let mut ticks: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    for x in ticks {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{x:.0}</text>"#,
            x_of(x),
            HEIGHT - BOTTOM + 16.0
        );
    }
    for (index, s) in series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", x_of(x), y_of(y)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for &(x, y) in &s.points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}"/>"#,
                x_of(x),
                y_of(y)
            );
        }
    }
    for mark in marks {
        match mark {
            Mark::Level(level, label) => {
                let y = y_of(*level);
                let _ = writeln!(
                    svg,
                    r##"<line x1="{LEFT}" y1="{y:.1}" x2="{r}" y2="{y:.1}" stroke="#d62728" stroke-dasharray="6 4"/><text x="{r}" y="{ty:.1}" text-anchor="end" fill="#d62728">{}</text>"##,
                    escape(label),
                    r = WIDTH - RIGHT,
                    ty = y - 4.0
                );
            }
            Mark::At(at, label) => {
                let x = x_of(*at);
                let _ = writeln!(
                    svg,
                    r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{b}" stroke="#2ca02c" stroke-dasharray="6 4"/><text x="{tx:.1}" y="{ty}" fill="#2ca02c">{}</text>"##,
                    escape(label),
                    b = HEIGHT - BOTTOM,
                    tx = x + 4.0,
                    ty = TOP + 14.0
                );
            }
        }
    }
    legend(
        &mut svg,
        &series.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
    );
    svg.push_str("</svg>\n");
    svg
}

/// Grouped bar chart: one group per category, one bar per series.
fn bar_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<Option<f64>>)],
) -> String {
    let mut svg = frame(title, x_label, y_label);
    let y_top = series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten())
        .copied()
        .fold(0.0f64, f64::max);
    if categories.is_empty() || y_top <= 0.0 {
        svg.push_str("<text x=\"320\" y=\"200\" text-anchor=\"middle\">no data</text>\n</svg>\n");
        return svg;
    }
    let y_of = y_axis(&mut svg, nice_max(y_top));
    let group_width = (WIDTH - LEFT - RIGHT) / categories.len() as f64;
    let bar_width = (group_width * 0.8) / series.len().max(1) as f64;
    for (group, category) in categories.iter().enumerate() {
        let group_x = LEFT + group_width * group as f64;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            group_x + group_width / 2.0,
            HEIGHT - BOTTOM + 16.0,
            escape(category)
        );
        for (index, (_, values)) in series.iter().enumerate() {
            if let Some(Some(value)) = values.get(group) {
                let x = group_x + group_width * 0.1 + bar_width * index as f64;
                let y = y_of(*value);
                let _ = writeln!(
                    svg,
                    r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{value:.2}</title></rect>"#,
                    bar_width * 0.9,
                    HEIGHT - BOTTOM - y,
                    COLOURS[index % COLOURS.len()]
                );
            }
        }
    }
    legend(
        &mut svg,
        &series
            .iter()
            .map(|(name, _)| name.clone())
            .collect::<Vec<_>>(),
    );
    svg.push_str("</svg>\n");
    svg
}

fn workloads(run: &RunFile) -> Vec<Workload> {
    let mut out: Vec<Workload> = run.cells.iter().map(|c| c.workload).collect();
    out.dedup();
    out.sort();
    out.dedup();
    out
}

/// Cells at the lowest concurrency and first output length: the single-stream view.
fn single_stream(run: &RunFile) -> Vec<&CellSummary> {
    let concurrency = run.cells.iter().map(|c| c.concurrency).min().unwrap_or(1);
    let output = run.cells.first().map_or(0, |c| c.output_tokens);
    run.cells
        .iter()
        .filter(|c| c.concurrency == concurrency && c.output_tokens == output)
        .collect()
}

fn by_prompt(run: &RunFile, figure: fn(&Figures) -> Option<f64>) -> Vec<Series> {
    let cells = single_stream(run);
    workloads(run)
        .into_iter()
        .map(|workload| Series {
            name: workload.to_string(),
            points: cells
                .iter()
                .filter(|c| c.workload == workload)
                .filter_map(|c| {
                    let x = c
                        .prompt_tokens_actual
                        .map_or(f64::from(c.prompt_tokens_target), |s| s.median);
                    figure(&c.median).map(|y| (x, y))
                })
                .collect(),
        })
        .collect()
}

type BarSeries = Vec<(String, Vec<Option<f64>>)>;

fn grouped(run: &RunFile, figure: fn(&Figures) -> Option<f64>) -> (Vec<String>, BarSeries) {
    let cells = single_stream(run);
    let mut prompts: Vec<u32> = cells.iter().map(|c| c.prompt_tokens_target).collect();
    prompts.sort_unstable();
    prompts.dedup();
    let categories = prompts.iter().map(u32::to_string).collect();
    let series = workloads(run)
        .into_iter()
        .map(|workload| {
            let values = prompts
                .iter()
                .map(|p| {
                    cells
                        .iter()
                        .find(|c| c.workload == workload && c.prompt_tokens_target == *p)
                        .and_then(|c| figure(&c.median))
                })
                .collect();
            (workload.to_string(), values)
        })
        .collect();
    (categories, series)
}

/// The cells' four charts: prefill rate and TTFT against prompt length, decode rate per
/// workload, tokens per event.
pub(crate) fn cell_charts(run: &RunFile) -> Vec<Chart> {
    let source = |cells: &[CellSummary]| {
        let mut names: Vec<&str> = cells
            .iter()
            .flat_map(|c| c.token_sources.iter().map(|s| s.as_str()))
            .collect();
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            "no token source".to_owned()
        } else {
            format!("tokens: {}", names.join("+"))
        }
    };
    let tokens = source(&run.cells);
    let (categories, decode) = grouped(run, |f| f.decode_tokens_per_s);
    let (_, per_event) = grouped(run, |f| f.tokens_per_event);
    vec![
        Chart {
            file_name: "prefill.svg",
            svg: line_chart(
                &format!("Prefill tok/s against prompt length ({tokens})"),
                "prompt tokens (log scale)",
                "prefill tokens/s",
                &by_prompt(run, |f| f.prefill_tokens_per_s),
            ),
        },
        Chart {
            file_name: "ttft.svg",
            svg: line_chart(
                "Time to first token against prompt length",
                "prompt tokens (log scale)",
                "TTFT ms",
                &by_prompt(run, |f| f.ttft_ms),
            ),
        },
        Chart {
            file_name: "decode.svg",
            svg: bar_chart(
                &format!("Decode tok/s per workload ({tokens})"),
                "prompt tokens",
                "decode tokens/s",
                &categories,
                &decode,
            ),
        },
        Chart {
            file_name: "tokens_per_event.svg",
            svg: bar_chart(
                "Tokens per SSE event (event counting under-reports by this factor)",
                "prompt tokens",
                "tokens per event",
                &categories,
                &per_event,
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_max_rounds_up_to_a_round_number() {
        assert!((nice_max(93.0) - 100.0).abs() < 1e-9);
        assert!((nice_max(2.3) - 2.5).abs() < 1e-9);
        assert!((nice_max(0.0) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn escaping_keeps_svg_well_formed() {
        assert_eq!(escape("a<b & c>"), "a&lt;b &amp; c&gt;");
    }
}
