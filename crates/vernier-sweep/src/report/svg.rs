//! SVG charts, written as SVG text: every cell's series drawn (one line per workload, load and
//! output length), 95% intervals as error bars, the x axis at the lengths or loads asked for
//! (evenly spaced, so no two labels meet), round ticks, the legend beside the plot rather than
//! on it, and a subtitle naming the model, the server and the date.

use std::fmt::Write as _;

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

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 460.0;
/// The plot area: left and right edges, top and bottom.
const LEFT: f64 = 76.0;
const PLOT_RIGHT: f64 = 630.0;
const TOP: f64 = 64.0;
const BOTTOM: f64 = 396.0;
/// The legend's column, right of the plot.
const LEGEND_X: f64 = 648.0;
/// Room kept between the plot's edges and the first and last x position.
const X_PAD: f64 = 34.0;
/// Characters that fit: the title (15 px), the subtitle and axis labels (12 px), a legend
/// entry (12 px, in the legend's column), at the widest average of `DejaVu Sans`.
const TITLE_CHARS: usize = 88;
const SUBTITLE_CHARS: usize = 110;
const LEGEND_CHARS: usize = 24;
/// Ten colours that stay apart for the common kinds of colour blindness (Tableau 10).
const COLOURS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn fit(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// What a chart says about itself.
pub(crate) struct Labels<'a> {
    pub(crate) title: &'a str,
    /// The run: model, server and date.
    pub(crate) subtitle: &'a str,
    pub(crate) x: &'a str,
    pub(crate) y: &'a str,
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

/// One point, with its 95% interval when there is one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Point {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) interval: Option<(f64, f64)>,
}

impl Point {
    pub(crate) const fn at(x: f64, y: f64) -> Self {
        Self {
            x,
            y,
            interval: None,
        }
    }
}

pub(crate) struct Series {
    pub(crate) name: String,
    pub(crate) points: Vec<Point>,
}

/// A mark drawn over a line chart.
pub(crate) enum Mark {
    /// A dashed horizontal line at this y value, labelled.
    Level(f64, String),
    /// A dashed vertical line at this x value, labelled.
    At(f64, String),
}

/// Round y ticks: a step of 1, 2, 2.5 or 5 times a power of ten, the top a multiple of it, and
/// every label with the same decimals.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ticks {
    step: f64,
    top: f64,
    decimals: usize,
}

fn ticks(y_max: f64) -> Ticks {
    if y_max <= 0.0 || !y_max.is_finite() {
        return Ticks {
            step: 0.2,
            top: 1.0,
            decimals: 1,
        };
    }
    let raw = y_max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|n| n * magnitude)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    let top = (y_max / step - 1e-9).ceil().max(1.0) * step;
    let decimals = (0..=8)
        .find(|d| {
            let scaled = step * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(8);
    Ticks {
        step,
        top,
        decimals: usize::try_from(decimals).unwrap_or(8),
    }
}

/// An x value as its label: whole numbers plainly, others with up to two decimals.
fn x_label(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        let text = format!("{x:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn frame(svg: &mut String, labels: &Labels<'_>) {
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{x}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        escape(&fit(labels.title, TITLE_CHARS)),
        x = WIDTH / 2.0
    );
    let _ = writeln!(
        svg,
        r##"<text x="{x}" y="44" text-anchor="middle" fill="#444">{}</text>"##,
        escape(&fit(labels.subtitle, SUBTITLE_CHARS)),
        x = WIDTH / 2.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="{x}" y="{y}" text-anchor="middle">{}</text>"#,
        escape(&fit(labels.x, 80)),
        x = f64::midpoint(LEFT, PLOT_RIGHT),
        y = BOTTOM + 44.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="18" y="{y}" text-anchor="middle" transform="rotate(-90 18 {y})">{}</text>"#,
        escape(&fit(labels.y, 40)),
        y = f64::midpoint(TOP, BOTTOM)
    );
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{BOTTOM}" x2="{PLOT_RIGHT}" y2="{BOTTOM}" stroke="#333"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{BOTTOM}" stroke="#333"/>"##
    );
}

fn no_data(svg: &mut String) {
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">no measured cell</text>"#,
        f64::midpoint(LEFT, PLOT_RIGHT),
        f64::midpoint(TOP, BOTTOM)
    );
    svg.push_str("</svg>\n");
}

/// Draws the y grid and tick labels; returns the value-to-pixel map.
fn y_axis(svg: &mut String, ticks: Ticks) -> impl Fn(f64) -> f64 + use<> {
    let height = BOTTOM - TOP;
    let y_of = move |value: f64| BOTTOM - height * (value / ticks.top);
    let mut index = 0.0_f64;
    loop {
        let value = ticks.step * index;
        if value > ticks.top + ticks.step * 1e-6 {
            break;
        }
        index += 1.0;
        let y = y_of(value);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{PLOT_RIGHT}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{x}" y="{ty:.1}" text-anchor="end">{value:.d$}</text>"##,
            d = ticks.decimals,
            x = LEFT - 6.0,
            ty = y + 4.0
        );
    }
    y_of
}

/// The x positions: every distinct x evenly spaced in order, labelled at its value, every
/// k-th label only when they would not fit.
struct XAxis {
    values: Vec<f64>,
}

impl XAxis {
    fn new(series: &[Series], marks: &[Mark]) -> Self {
        let mut values: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x))
            .chain(marks.iter().filter_map(|m| match m {
                Mark::At(x, _) => Some(*x),
                Mark::Level(..) => None,
            }))
            .filter(|x| x.is_finite())
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        Self { values }
    }

    fn spacing(&self) -> f64 {
        let width = PLOT_RIGHT - LEFT - 2.0 * X_PAD;
        if self.values.len() > 1 {
            width / (self.values.len() - 1) as f64
        } else {
            width
        }
    }

    /// Pixel position of `x`, one of the axis's values (every point's and mark's x is one).
    fn position(&self, x: f64) -> f64 {
        let slot = self
            .values
            .iter()
            .position(|v| (v - x).abs() < 1e-9)
            .unwrap_or(self.values.len().saturating_sub(1)) as f64;
        if self.values.len() > 1 {
            LEFT + X_PAD + self.spacing() * slot
        } else {
            f64::midpoint(LEFT, PLOT_RIGHT)
        }
    }

    fn draw(&self, svg: &mut String) {
        let labels: Vec<String> = self.values.iter().map(|x| x_label(*x)).collect();
        // 7.5 px per character at 12 px, and a gap of two characters.
        let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
        let needed = 7.5 * (widest + 2) as f64;
        let mut every = 1_usize;
        while (every as f64) * self.spacing() < needed {
            every += 1;
        }
        for (index, (x, label)) in self.values.iter().zip(&labels).enumerate() {
            let px = self.position(*x);
            let _ = writeln!(
                svg,
                r##"<line x1="{px:.1}" y1="{BOTTOM}" x2="{px:.1}" y2="{y2}" stroke="#333"/>"##,
                y2 = BOTTOM + 5.0
            );
            if index % every == 0 {
                let _ = writeln!(
                    svg,
                    r#"<text x="{px:.1}" y="{y}" text-anchor="middle">{}</text>"#,
                    escape(label),
                    y = BOTTOM + 20.0
                );
            }
        }
    }
}

fn legend(svg: &mut String, names: &[&str]) {
    for (index, name) in names.iter().enumerate() {
        let y = TOP + 8.0 + 20.0 * index as f64;
        if y > BOTTOM + 40.0 {
            let _ = writeln!(
                svg,
                r#"<text x="{LEGEND_X}" y="{y:.1}">and {} more (see report.csv)</text>"#,
                names.len() - index
            );
            break;
        }
        let colour = COLOURS[index % COLOURS.len()];
        let _ = writeln!(
            svg,
            r#"<line x1="{LEGEND_X}" y1="{y:.1}" x2="{x2}" y2="{y:.1}" stroke="{colour}" stroke-width="2"/><rect x="{rx}" y="{ry:.1}" width="6" height="6" fill="{colour}"/><text x="{tx}" y="{ty:.1}">{}</text>"#,
            escape(&fit(name, LEGEND_CHARS)),
            x2 = LEGEND_X + 22.0,
            rx = LEGEND_X + 8.0,
            ry = y - 3.0,
            tx = LEGEND_X + 28.0,
            ty = y + 4.0
        );
    }
}

/// A line chart of `series` against evenly spaced x values.
fn line_chart(labels: &Labels<'_>, series: &[Series]) -> String {
    line_chart_marked(labels, series, &[])
}

/// [`line_chart`] with marks: target levels and a marked load. Lines first, then error bars,
/// then the points, each series shifted a little sideways so that none hides another.
pub(crate) fn line_chart_marked(labels: &Labels<'_>, series: &[Series], marks: &[Mark]) -> String {
    let mut svg = String::new();
    frame(&mut svg, labels);
    let axis = XAxis::new(series, marks);
    if series.iter().all(|s| s.points.is_empty()) || axis.values.is_empty() {
        no_data(&mut svg);
        return svg;
    }
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.interval.map_or(p.y, |(_, high)| high.max(p.y)))
        .chain(marks.iter().filter_map(|m| match m {
            Mark::Level(level, _) => Some(*level),
            Mark::At(..) => None,
        }))
        .filter(|y| y.is_finite())
        .fold(0.0f64, f64::max);
    let y_of = y_axis(&mut svg, ticks(y_max));
    axis.draw(&mut svg);
    let n = series.len() as f64;
    let dodge = (axis.spacing() * 0.5 / n).min(9.0);
    let shifted =
        |index: usize, x: f64| axis.position(x) + (index as f64 - (n - 1.0) / 2.0) * dodge;
    for (index, s) in series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", shifted(index, p.x), y_of(p.y)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" stroke-opacity="0.8" points="{}"/>"#,
            path.join(" ")
        );
    }
    for (index, s) in series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        for p in &s.points {
            if let Some((low, high)) = p.interval {
                let x = shifted(index, p.x);
                let (y_low, y_high) = (y_of(low), y_of(high));
                let _ = writeln!(
                    svg,
                    r#"<path d="M{x:.1},{y_low:.1}V{y_high:.1}M{l:.1},{y_low:.1}H{r:.1}M{l:.1},{y_high:.1}H{r:.1}" stroke="{colour}" stroke-width="1.2" fill="none"/>"#,
                    l = x - 3.0,
                    r = x + 3.0
                );
            }
        }
    }
    for (index, s) in series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        for p in &s.points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}"><title>{} at {}: {:.2}</title></circle>"#,
                shifted(index, p.x),
                y_of(p.y),
                escape(&s.name),
                x_label(p.x),
                p.y
            );
        }
    }
    for mark in marks {
        match mark {
            Mark::Level(level, label) => {
                let y = y_of(*level);
                let _ = writeln!(
                    svg,
                    r##"<line x1="{LEFT}" y1="{y:.1}" x2="{PLOT_RIGHT}" y2="{y:.1}" stroke="#d62728" stroke-dasharray="6 4"/><text x="{x}" y="{ty:.1}" text-anchor="end" fill="#d62728">{}</text>"##,
                    escape(&fit(label, 40)),
                    x = PLOT_RIGHT - 4.0,
                    ty = y - 5.0
                );
            }
            Mark::At(at, label) => {
                let x = axis.position(*at);
                let _ = writeln!(
                    svg,
                    r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{BOTTOM}" stroke="#2ca02c" stroke-dasharray="6 4"/><text x="{tx:.1}" y="{ty}" fill="#2ca02c">{}</text>"##,
                    escape(&fit(label, 30)),
                    tx = x + 4.0,
                    ty = TOP + 14.0
                );
            }
        }
    }
    legend(
        &mut svg,
        &series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
    );
    svg.push_str("</svg>\n");
    svg
}

/// How the cells' series are named: workload, load and, when the run has several, output
/// length.
fn series_name(cell: &CellSummary, several_outputs: bool) -> String {
    let load = match cell.rate_per_s {
        Some(rate) => format!("{}/s", x_label(rate)),
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
        let point = Point {
            x: f64::from(cell.prompt_tokens_target),
            y,
            interval: interval
                .and_then(|of| of(&cell.median_interval_95))
                .filter(|i| i.low.is_finite() && i.high.is_finite())
                .map(|i| (i.low, i.high)),
        };
        let name = series_name(cell, several_outputs);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
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
    series: &[Series],
) -> Chart {
    Chart {
        file_name,
        svg: line_chart(
            &Labels {
                title,
                subtitle,
                x: "prompt tokens asked for (even spacing)",
                y,
            },
            series,
        ),
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
        prompt_chart(file_name, title, &subtitle, y, &series)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_share_their_decimals() {
        // The old axis split 25000 in quarters (6250, 18750) and printed 0.00 beside 5000.
        let t = ticks(23_000.0);
        assert_eq!((t.step, t.top, t.decimals), (5000.0, 25_000.0, 0));
        let t = ticks(2.3);
        assert_eq!((t.step, t.top, t.decimals), (0.5, 2.5, 1));
        let t = ticks(93.0);
        assert_eq!((t.step, t.top, t.decimals), (20.0, 100.0, 0));
        let t = ticks(1.1);
        assert_eq!((t.step, t.top, t.decimals), (0.25, 1.25, 2));
        let t = ticks(0.0);
        assert!((t.top - 1.0).abs() < 1e-12);
    }

    #[test]
    fn x_labels_are_the_values_asked_for() {
        assert_eq!(x_label(1024.0), "1024");
        assert_eq!(x_label(2.5), "2.5");
        assert_eq!(x_label(1.0 / 3.0), "0.33");
    }

    #[test]
    fn escaping_keeps_svg_well_formed() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }
}
