//! The table printed at the end of a run.

use std::fmt::Write as _;

use super::number;
use crate::run_file::RunFile;

/// A plain-text table, one row per cell, medians.
pub fn terminal_table(run: &RunFile) -> String {
    let headers = [
        "workload",
        "prompt",
        "actual",
        "out",
        "conc",
        "n",
        "fail",
        "ttft_ms",
        "prefill/s",
        "decode/s",
        "95% CI",
        "events/s",
        "tok/event",
        "itl_ms",
        "cached",
        "source",
    ];
    let mut rows: Vec<Vec<String>> = vec![headers.iter().map(|h| (*h).to_owned()).collect()];
    for cell in &run.cells {
        let m = &cell.median;
        rows.push(vec![
            cell.workload.to_string(),
            cell.prompt_tokens_target.to_string(),
            number(cell.prompt_tokens_actual.map(|s| s.median), 0),
            cell.output_tokens.to_string(),
            cell.rate_per_s
                .map_or_else(|| cell.concurrency.to_string(), |rate| format!("{rate}/s")),
            cell.n_ok.to_string(),
            cell.n_failed.to_string(),
            number(m.ttft_ms, 1),
            number(m.prefill_tokens_per_s, 0),
            number(m.decode_tokens_per_s, 2),
            cell.median_interval_95
                .decode_tokens_per_s
                .map_or_else(|| "—".to_owned(), |i| format!("{:.2}–{:.2}", i.low, i.high)),
            number(m.event_rate_per_s, 2),
            number(m.tokens_per_event, 2),
            number(m.inter_token_latency_ms, 2),
            cell.cached_prompt_tokens_max.to_string(),
            cell.token_sources
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("+"),
        ]);
    }
    let widths: Vec<usize> = (0..headers.len())
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
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
                if column == 0 || column == headers.len() - 1 {
                    format!("{text:<width$}")
                } else {
                    format!("{text:>width$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
        if index == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            let _ = writeln!(out, "{}", "-".repeat(total));
        }
    }
    if let Some(lag) = run.client_lag.event_processing {
        let _ = writeln!(
            out,
            "client lag per event: p50 {:.1} µs, p99 {:.1} µs (n = {})",
            lag.p50_us, lag.p99_us, lag.n
        );
    }
    let shared = run.client_lag.n_first_token_shared_reads;
    if shared > 0 {
        let _ = writeln!(
            out,
            "TTFT is an upper bound for {shared} request{}: the first token came in a socket read that also held a later event (the client was reading late)",
            if shared == 1 { "" } else { "s" }
        );
    }
    out
}
