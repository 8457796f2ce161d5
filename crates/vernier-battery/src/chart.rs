//! The head-to-head's charts as standalone SVG (no script, no font fetched): pass rate against
//! budget for both sides as step curves with the crossovers marked, and the ratio of each
//! speed figure by cell with its interval around the line of parity.

use std::fmt::Write as _;

use vernier_cli::figure;

use crate::budget::{Crossover, Curve};
use crate::speed::{CellRatio, Metric};

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 56.0;
const COLOUR_A: &str = "#1f6fb4";
const COLOUR_B: &str = "#d9591b";

/// Escapes text for SVG and HTML.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn open(svg: &mut String, title: &str, label: &str) {
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{}" font-family="sans-serif" font-size="12">"#,
        escape(label)
    );
    let _ = writeln!(
        svg,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/><text x="{LEFT}" y="24" font-size="15" font-weight="bold">{}</text>"#,
        escape(title)
    );
}

fn legend(svg: &mut String, a: &str, b: &str) {
    let x = WIDTH - RIGHT - 220.0;
    for (index, (name, colour)) in [(a, COLOUR_A), (b, COLOUR_B)].into_iter().enumerate() {
        let y = TOP + 8.0 + 16.0 * index as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            x + 20.0,
            x + 26.0,
            y + 4.0,
            escape(name)
        );
    }
}

/// A nice step for an axis running to `max`.
fn step(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|candidate| *candidate >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Pass rate (0–100%) against the budget, both sides as step curves, crossovers marked.
pub fn curve_chart(
    title: &str,
    x_label: &str,
    names: (&str, &str),
    curves: (&Curve, &Curve),
    crossovers: &[Crossover],
) -> String {
    let mut svg = String::new();
    open(
        &mut svg,
        title,
        &format!("{title}: pass rate against {x_label}"),
    );
    let x_max = curves.0.limit.max(curves.1.limit).max(1.0);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_of = |x: f64| LEFT + plot_w * (x / x_max).clamp(0.0, 1.0);
    let y_of = |rate: f64| TOP + plot_h * (1.0 - rate.clamp(0.0, 1.0));
    for tick in 0..=4 {
        let rate = f64::from(tick) * 0.25;
        let y = y_of(rate);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{:.0}%</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            rate * 100.0
        );
    }
    let x_step = step(x_max);
    let mut tick = 0.0;
    while tick <= x_max + 1e-9 {
        let x = x_of(tick);
        let _ = writeln!(
            svg,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#999"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 5.0,
            TOP + plot_h + 18.0,
            figure(tick)
        );
        tick += x_step;
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">pass rate</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 14.0,
        escape(x_label),
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    for (curve, colour) in [(curves.0, COLOUR_A), (curves.1, COLOUR_B)] {
        let mut path = format!("M {} {}", x_of(0.0), y_of(0.0));
        let mut rate = 0.0;
        for point in &curve.points {
            let _ = write!(
                path,
                " L {:.1} {:.1} L {:.1} {:.1}",
                x_of(point.x),
                y_of(rate),
                x_of(point.x),
                y_of(point.pass_rate)
            );
            rate = point.pass_rate;
        }
        let _ = writeln!(
            svg,
            r#"<path d="{path}" fill="none" stroke="{colour}" stroke-width="2.5"/>"#
        );
    }
    for crossover in crossovers {
        let x = x_of(crossover.at);
        let _ = writeln!(
            svg,
            r##"<line x1="{x}" y1="{TOP}" x2="{x}" y2="{}" stroke="#444" stroke-dasharray="4 3"/><text x="{}" y="{}" font-size="11">crossover {}</text>"##,
            TOP + plot_h,
            x + 4.0,
            TOP + 12.0,
            figure(crossover.at)
        );
    }
    legend(&mut svg, names.0, names.1);
    svg.push_str("</svg>\n");
    svg
}

/// The ratio A/B of one figure in every cell, a dot with its interval, around the line of
/// parity (1×), on a log scale.
pub fn ratio_chart(metric: Metric, rows: &[CellRatio]) -> String {
    let rows: Vec<&CellRatio> = rows.iter().filter(|row| row.metric == metric).collect();
    let title = format!("{}: A / B by cell", metric.label());
    let mut svg = String::new();
    let height = TOP + BOTTOM + 22.0 * rows.len().max(1) as f64;
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{}" font-family="sans-serif" font-size="12">"#,
        escape(&title)
    );
    let _ = writeln!(
        svg,
        r#"<rect width="{WIDTH}" height="{height}" fill="white"/><text x="{LEFT}" y="24" font-size="15" font-weight="bold">{}</text>"#,
        escape(&title)
    );
    let bounds = rows.iter().fold((1.0_f64, 1.0_f64), |(low, high), row| {
        let (l, h) = row
            .interval
            .map_or((row.ratio, row.ratio), |i| (i.low, i.high));
        (low.min(l).min(row.ratio), high.max(h).max(row.ratio))
    });
    let (low, high) = ((bounds.0 / 1.2).ln(), (bounds.1 * 1.2).ln());
    let left = 220.0;
    let plot_w = WIDTH - left - RIGHT;
    let x_of = |ratio: f64| left + plot_w * ((ratio.max(1e-9).ln() - low) / (high - low));
    let x_one = x_of(1.0);
    let _ = writeln!(
        svg,
        r##"<line x1="{x_one}" y1="{TOP}" x2="{x_one}" y2="{}" stroke="#444" stroke-dasharray="4 3"/><text x="{x_one}" y="{}" text-anchor="middle">1× (parity)</text>"##,
        height - BOTTOM + 6.0,
        height - BOTTOM + 22.0
    );
    for (index, row) in rows.iter().enumerate() {
        let y = TOP + 14.0 + 22.0 * index as f64;
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="end">{} {} tok, {} stream{}</text>"#,
            left - 8.0,
            y + 4.0,
            row.workload,
            row.prompt_tokens,
            row.concurrency,
            if row.concurrency == 1 { "" } else { "s" }
        );
        if let Some(interval) = row.interval {
            let _ = writeln!(
                svg,
                r#"<line x1="{:.1}" y1="{y}" x2="{:.1}" y2="{y}" stroke="{COLOUR_A}" stroke-width="2"/>"#,
                x_of(interval.low),
                x_of(interval.high)
            );
        }
        let _ = writeln!(
            svg,
            r#"<circle cx="{:.1}" cy="{y}" r="4" fill="{COLOUR_A}"/><text x="{:.1}" y="{}" font-size="11">{:.2}×</text>"#,
            x_of(row.ratio),
            x_of(row.ratio) + 8.0,
            y - 6.0,
            row.ratio
        );
    }
    svg.push_str("</svg>\n");
    svg
}
