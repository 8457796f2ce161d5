//! `versus.html`: one self-contained page (inline style and SVG; no script, no font, no
//! image or style fetched from anywhere), readable offline: the at-a-glance table first, each
//! dimension's chart below.

use std::fmt::Write as _;

use vernier_plot::escape;

use crate::chart::{curve_chart, ratio_chart};
use crate::speed::Metric;
use crate::versus::Versus;

const STYLE: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}\
th{background:#f2f2f2}td.num{text-align:right}.warn{color:#a33}.verdict{font-weight:bold}\
figure{margin:1.5em 0}";

/// A self-contained page's opening up to `<body>`: no fetch allowed but inline style and
/// `data:` images.
pub(crate) fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
<link rel=\"icon\" href=\"data:,\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(title)
    )
}

/// The head-to-head as one HTML page.
pub fn versus_html(versus: &Versus) -> String {
    let mut out = String::new();
    let title = format!("{} (A) against {} (B)", versus.a.model, versus.b.model);
    out.push_str(&page_start(&title));
    let _ = writeln!(out, "<h1>{}</h1>", escape(&title));
    let _ = writeln!(out, "<ul>");
    for (name, side) in [("A", &versus.a), ("B", &versus.b)] {
        let _ = writeln!(
            out,
            "<li><b>{name}</b>: <code>{}</code> — {} at {} — <span class=\"verdict\">{}</span></li>",
            escape(&side.label),
            escape(&side.model),
            escape(&side.target),
            escape(&side.validity.line())
        );
    }
    let _ = writeln!(out, "</ul>");
    let _ = writeln!(out, "<h2 id=\"glance\">At a glance</h2>");
    let _ = writeln!(
        out,
        "<table id=\"glance-table\"><thead><tr><th>dimension</th><th>A</th><th>B</th><th>A vs B</th><th>95% interval</th><th>ahead</th></tr></thead><tbody>"
    );
    for row in &versus.glance {
        let confound = row.confounded_by.as_ref().map_or_else(String::new, |what| {
            format!(
                " <span class=\"warn\">⚠ confounded: {}</span>",
                escape(what)
            )
        });
        let _ = writeln!(
            out,
            "<tr><td>{}{confound}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&row.dimension),
            escape(&row.a),
            escape(&row.b),
            escape(&row.comparison),
            escape(&row.interval),
            escape(&row.ahead)
        );
    }
    let _ = writeln!(out, "</tbody></table>");
    if !versus.settings.is_empty() {
        let _ = writeln!(out, "<h2>Settings that differ</h2><ul>");
        for setting in &versus.settings {
            let confounds = if setting.confounds.is_empty() {
                String::new()
            } else {
                format!(
                    " — <span class=\"warn\">confounds {}</span>",
                    escape(&setting.confounds.join(", "))
                )
            };
            let _ = writeln!(out, "<li>{}{confounds}</li>", escape(&setting.what));
        }
        let _ = writeln!(out, "</ul>");
    }
    for missing in &versus.not_compared {
        let _ = writeln!(out, "<p>Not compared: {}</p>", escape(missing));
    }
    charts(&mut out, versus);
    let _ = writeln!(out, "</body></html>");
    out
}

/// Each dimension's chart: speed ratios by cell, then each suite's pass-rate curves.
fn charts(out: &mut String, versus: &Versus) {
    let subtitle = format!(
        "A: {} on {}; B: {} on {}",
        versus.a.model, versus.a.target, versus.b.model, versus.b.target
    );
    if !versus.speed.is_empty() {
        let _ = writeln!(out, "<h2>Speed</h2>");
        for metric in [Metric::Decode, Metric::Prefill, Metric::Ttft] {
            let _ = writeln!(
                out,
                "<figure>{}</figure>",
                ratio_chart(metric, &versus.speed, &subtitle)
            );
        }
    }
    for suite in &versus.suites {
        let name = suite.part.as_str();
        let _ = writeln!(out, "<h2>Quality and cost: {name}</h2>");
        let names = (
            format!("A {}", versus.a.model),
            format!("B {}", versus.b.model),
        );
        let _ = writeln!(
            out,
            "<figure>{}</figure>",
            curve_chart(
                &format!("{name}: pass rate against token budget"),
                &subtitle,
                "token budget",
                (&names.0, &names.1),
                (&suite.tokens.0, &suite.tokens.1),
                &suite.token_crossovers,
            )
        );
        let _ = writeln!(
            out,
            "<figure>{}</figure>",
            curve_chart(
                &format!("{name}: pass rate against seconds per task"),
                &subtitle,
                "seconds per task (each try's own, one stream)",
                (&names.0, &names.1),
                (&suite.seconds.0, &suite.seconds.1),
                &suite.seconds_crossovers,
            )
        );
    }
}
