//! Report sections and charts for load: aggregate throughput, open-loop lateness, the server's
//! queue and the capacity search. Each section appears only when the run has its data.

use std::fmt::Write as _;

use vernier_plot::{Mark, Point, Series};

use super::svg::{Chart, line_chart, subtitle};
use super::text::number;
use crate::offered_load::{Capacity, TargetCheck};
use crate::run_file::{CellSummary, RunFile};

fn load_label(cell: &CellSummary) -> String {
    match cell.rate_per_s {
        Some(rate) => format!("{rate}/s"),
        None => format!("c{}", cell.concurrency),
    }
}

fn with_interval(median: Option<f64>, interval: Option<vernier_stats::Interval>) -> String {
    match (median, interval) {
        (Some(m), Some(i)) => format!("{m:.1} [{:.1}, {:.1}]", i.low, i.high),
        (m, _) => number(m, 1),
    }
}

/// The Markdown sections for load, in reading order (empty when the run has none).
pub(crate) fn markdown_sections(run: &RunFile) -> String {
    let mut out = String::new();
    context_section(&mut out, run);
    throttle_section(&mut out, run);
    server_clock_section(&mut out, run);
    aggregate_section(&mut out, run);
    lateness_section(&mut out, run);
    if let Some(capacity) = &run.capacity {
        capacity_section(&mut out, capacity);
    }
    out
}

fn context_section(out: &mut String, run: &RunFile) {
    let left_out: Vec<&CellSummary> = run
        .cells
        .iter()
        .filter(|c| c.context_exceeded.is_some())
        .collect();
    if left_out.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Cells left out: context exceeded\n");
    let accepted = run
        .cells
        .iter()
        .filter(|c| c.context_exceeded.is_none() && c.n_ok > 0)
        .map(|c| c.prompt_tokens_target + c.output_tokens)
        .max();
    let _ = writeln!(
        out,
        "The server cannot take these prompts with their outputs; they are `context_exceeded`, not failures, \
         and no figure includes them. {}\n",
        accepted.map_or_else(
            || "No cell was measured.".to_owned(),
            |tokens| format!(
                "The longest cell measured asked for {tokens} tokens (prompt + output)."
            )
        )
    );
    for cell in left_out {
        let _ = writeln!(
            out,
            "- {} prompt {} out {} {}: {}",
            cell.workload,
            cell.prompt_tokens_target,
            cell.output_tokens,
            load_label(cell),
            cell.context_exceeded.as_deref().unwrap_or_default()
        );
    }
}

fn server_clock_section(out: &mut String, run: &RunFile) {
    let cells: Vec<&CellSummary> = run
        .cells
        .iter()
        .filter(|c| c.server_clock.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## The server's own clock\n");
    let _ = writeln!(
        out,
        "The server timed each request itself (llama.cpp's `timings`): its decode rate \
         (`predicted_per_second`) and prompt rate (`prompt_per_second`) beside ours, with the median of the \
         per-request ratios ours / the server's. Our prefill rate runs from the request's first byte sent to \
         the first token, so it also holds the network and any queueing; the server's holds its prompt \
         evaluation alone.\n"
    );
    let _ = writeln!(
        out,
        "| workload | prompt | out | load | requests | decode ours | decode server | ratio | prefill ours | prefill server | ratio |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for cell in cells {
        if let Some(clock) = cell.server_clock {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell.workload,
                cell.prompt_tokens_target,
                cell.output_tokens,
                load_label(cell),
                clock.n_requests,
                number(clock.decode_tokens_per_s, 1),
                number(clock.server_decode_tokens_per_s, 1),
                number(clock.decode_ratio, 3),
                number(clock.prefill_tokens_per_s, 1),
                number(clock.server_prefill_tokens_per_s, 1),
                number(clock.prefill_ratio, 3),
            );
        }
    }
}

fn throttle_section(out: &mut String, run: &RunFile) {
    if run.rate_limited.is_none() && run.fields_dropped.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Rate limits and refused fields\n");
    if let Some(total) = run.rate_limited {
        let _ = writeln!(
            out,
            "The run waited **{:.1} s on rate limits** ({} waits on `429`/`503`, {} of them as long as the \
             server asked, the rest backing off). Each request is measured from its own send, so no wait is \
             inside a per-request figure; cells measured while throttled:",
            total.waited_s, total.n_waits, total.n_server_asked
        );
        for cell in run.cells.iter().filter(|c| c.rate_limited.is_some()) {
            if let Some(waits) = cell.rate_limited {
                let _ = writeln!(
                    out,
                    "- {} prompt {} out {} {}: {} waits, {:.1} s",
                    cell.workload,
                    cell.prompt_tokens_target,
                    cell.output_tokens,
                    load_label(cell),
                    waits.n_waits,
                    waits.waited_s
                );
            }
        }
        let _ = writeln!(out);
    }
    for dropped in &run.fields_dropped {
        let _ = writeln!(
            out,
            "- The server refused `{}`; the run went on without it: **{}**. The server said: {}",
            dropped.field, dropped.guarantee_lost, dropped.server_said
        );
    }
}

fn aggregate_section(out: &mut String, run: &RunFile) {
    let cells: Vec<&CellSummary> = run.cells.iter().filter(|c| c.aggregate.is_some()).collect();
    let Some(first) = cells.first().and_then(|c| c.aggregate.as_ref()) else {
        return;
    };
    let _ = writeln!(out, "\n## Aggregate throughput\n");
    let _ = writeln!(
        out,
        "All streams of a cell together, in the server's own tokens. Window: {}. Medians over windows with \
         a 95% bootstrap interval; p10–p90 beside them. The server's queue is `/metrics` sampled every \
         second during the cell (running / waiting, median and most).\n",
        first.window
    );
    let _ = writeln!(
        out,
        "| workload | prompt | out | load | windows | window s | output tok/s | p10–p90 | prompt tok/s | requests/s | server running | server waiting |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for cell in cells {
        let Some(aggregate) = &cell.aggregate else {
            continue;
        };
        let queue = |median: f64, max: f64| format!("{median:.0} / {max:.0}");
        let (running, waiting) = cell.server_queue.map_or_else(
            || ("—".to_owned(), "—".to_owned()),
            |q| {
                (
                    queue(q.running_median, q.running_max),
                    queue(q.waiting_median, q.waiting_max),
                )
            },
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {}–{} | {} | {} | {running} | {waiting} |",
            cell.workload,
            cell.prompt_tokens_target,
            cell.output_tokens,
            load_label(cell),
            aggregate.n_windows,
            number(aggregate.window_s_median, 2),
            with_interval(
                aggregate.median.output_tokens_per_s,
                aggregate.interval_95.output_tokens_per_s
            ),
            number(aggregate.p10.output_tokens_per_s, 1),
            number(aggregate.p90.output_tokens_per_s, 1),
            number(aggregate.median.prompt_tokens_per_s, 1),
            number(aggregate.median.requests_per_s, 2),
        );
    }
}

fn lateness_section(out: &mut String, run: &RunFile) {
    let cells: Vec<&CellSummary> = run
        .cells
        .iter()
        .filter(|c| c.schedule_lateness.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    let worst = cells
        .iter()
        .filter_map(|c| c.schedule_lateness.map(|l| l.p99_ms))
        .fold(0.0_f64, f64::max);
    let _ = writeln!(out, "\n## Open loop: requests against their schedule\n");
    let _ = writeln!(
        out,
        "Requests went out on a {} schedule whatever the server did. Lateness is the request's first byte \
         written minus its scheduled instant: **every cell sent its requests within {worst:.2} ms of schedule \
         (p99 of the worst cell)**. TTFT, inter-token latency and decode per rate are in the results above.\n",
        run.config.arrival.map_or("poisson", |a| match a {
            crate::config::Arrival::Constant => "constant",
            _ => "poisson",
        })
    );
    let _ = writeln!(
        out,
        "| workload | prompt | out | rate | requests | late p50 ms | late p99 ms | late max ms |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for cell in cells {
        if let Some(late) = cell.schedule_lateness {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.2} |",
                cell.workload,
                cell.prompt_tokens_target,
                cell.output_tokens,
                load_label(cell),
                late.n_requests,
                late.p50_ms,
                late.p99_ms,
                late.max_ms
            );
        }
    }
}

fn check_text(check: &TargetCheck) -> String {
    check
        .parts
        .iter()
        .map(|p| {
            format!(
                "{} {} ({} {})",
                if p.met { "✓" } else { "✗" },
                p.part,
                number(p.value, 1),
                p.unit
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn capacity_section(out: &mut String, capacity: &Capacity) {
    let _ = writeln!(out, "\n## Capacity at the target\n");
    let unit = if capacity.load_kind == "rate" {
        " requests/s"
    } else {
        " concurrent streams"
    };
    let _ = writeln!(out, "Target: `{}`.\n", capacity.target);
    match capacity.capacity {
        Some(load) => {
            let _ = writeln!(
                out,
                "**Capacity: {load}{unit}** — the largest load tried that met every part."
            );
        }
        None => {
            let _ = writeln!(
                out,
                "**No load tried met the target**, not even the smallest."
            );
        }
    }
    match &capacity.first_miss {
        Some(miss) => {
            let _ = writeln!(
                out,
                "The first load that missed: {}{unit}: {}.\n",
                miss.load,
                check_text(&miss.check)
            );
        }
        None if capacity.ceiling_reached => {
            let _ = writeln!(
                out,
                "The search reached its ceiling (`--max-load`) still meeting the target.\n"
            );
        }
        None => {
            let _ = writeln!(out);
        }
    }
    let _ = writeln!(out, "| load | met | parts |");
    let _ = writeln!(out, "|---:|:---:|---|");
    for step in &capacity.steps {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            step.load,
            if step.check.met { "yes" } else { "no" },
            check_text(&step.check)
        );
    }
}

/// The load charts: aggregate output throughput against load, and the capacity curve.
pub(crate) fn charts(run: &RunFile) -> Vec<Chart> {
    let mut charts = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    for cell in run.cells.iter().filter(|c| c.aggregate.is_some()) {
        let name = format!(
            "{} p{} o{}",
            cell.workload, cell.prompt_tokens_target, cell.output_tokens
        );
        let load = cell.rate_per_s.unwrap_or(f64::from(cell.concurrency));
        let Some(y) = cell
            .aggregate
            .as_ref()
            .and_then(|a| a.median.output_tokens_per_s)
        else {
            continue;
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(Point::at(load, y)),
            None => series.push(Series::new(name, vec![Point::at(load, y)])),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    if series.iter().any(|s| s.points.len() > 1) {
        let rate = run.cells.iter().any(|c| c.rate_per_s.is_some());
        charts.push(Chart {
            file_name: "throughput.svg",
            svg: line_chart(
                "Aggregate output tok/s against load (all streams together)",
                &subtitle(run),
                if rate {
                    "requests per second (even spacing)"
                } else {
                    "concurrent streams (even spacing)"
                },
                "output tokens/s",
            )
            .series(series)
            .to_svg(),
        });
    }
    if let Some(capacity) = &run.capacity
        && let Some(first) = capacity.steps.first()
    {
        for (index, part) in first
            .check
            .parts
            .iter()
            .enumerate()
            .take(CAPACITY_FILES.len())
        {
            let mut points: Vec<Point> = capacity
                .steps
                .iter()
                .filter_map(|step| Some(Point::at(step.load, step.check.parts.get(index)?.value?)))
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            let bound = crate::capacity_target::Target::parse(&capacity.target)
                .ok()
                .and_then(|t| t.parts.get(index).map(|p| p.bound));
            let mut marks = Vec::new();
            if let Some(bound) = bound {
                marks.push(Mark::Level(bound, format!("target {}", part.part)));
            }
            if let Some(load) = capacity.capacity {
                marks.push(Mark::At(load, format!("capacity {load}")));
            }
            charts.push(Chart {
                file_name: CAPACITY_FILES[index],
                svg: line_chart(
                    &format!("Capacity search: {} against load", part.part),
                    &subtitle(run),
                    if capacity.load_kind == "rate" {
                        "requests per second (even spacing)"
                    } else {
                        "concurrent streams (even spacing)"
                    },
                    &part.unit,
                )
                .series([Series::new(part.part.clone(), points)])
                .marks(marks)
                .to_svg(),
            });
        }
    }
    charts
}

const CAPACITY_FILES: [&str; 4] = [
    "capacity.svg",
    "capacity_2.svg",
    "capacity_3.svg",
    "capacity_4.svg",
];
