//! One CSV row per cell with medians, p10 and p90.

use std::fmt::Write as _;

use crate::run_file::{Figures, RunFile};

fn field(value: Option<f64>) -> String {
    value
        .filter(|v| v.is_finite())
        .map(|v| format!("{v:.4}"))
        .unwrap_or_default()
}

type Getter = fn(&Figures) -> Option<f64>;

const FIGURES: [(&str, Getter); 10] = [
    ("ttft_ms", |f| f.ttft_ms),
    ("time_to_first_byte_ms", |f| f.time_to_first_byte_ms),
    ("prefill_tokens_per_s", |f| f.prefill_tokens_per_s),
    ("decode_tokens_per_s", |f| f.decode_tokens_per_s),
    ("event_rate_per_s", |f| f.event_rate_per_s),
    ("tokens_per_event", |f| f.tokens_per_event),
    ("inter_token_latency_ms", |f| f.inter_token_latency_ms),
    ("end_to_end_ms", |f| f.end_to_end_ms),
    ("completion_tokens", |f| f.completion_tokens),
    ("prompt_tokens", |f| f.prompt_tokens),
];

/// The CSV text.
pub fn csv_report(run: &RunFile) -> String {
    let mut out = String::from(
        "workload,prompt_tokens_target,output_tokens,concurrency,n_reps,n_ok,n_failed,cached_prompt_tokens_max,n_length_mismatch,token_sources",
    );
    for (name, _) in FIGURES {
        let _ = write!(out, ",{name}_median,{name}_p10,{name}_p90");
    }
    out.push_str(",decode_tokens_per_s_ci95_low,decode_tokens_per_s_ci95_high,spec_decode_acceptance_rate,client_lag_p99_us\n");
    for cell in &run.cells {
        let sources: Vec<&str> = cell.token_sources.iter().map(|s| s.as_str()).collect();
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            cell.workload,
            cell.prompt_tokens_target,
            cell.output_tokens,
            cell.concurrency,
            cell.n_reps,
            cell.n_ok,
            cell.n_failed,
            cell.cached_prompt_tokens_max,
            cell.n_length_mismatch,
            sources.join("+"),
        );
        for (_, get) in FIGURES {
            let _ = write!(
                out,
                ",{},{},{}",
                field(get(&cell.median)),
                field(get(&cell.p10)),
                field(get(&cell.p90))
            );
        }
        let interval = cell.median_interval_95.decode_tokens_per_s;
        let _ = writeln!(
            out,
            ",{},{},{},{}",
            field(interval.map(|i| i.low)),
            field(interval.map(|i| i.high)),
            field(cell.spec_decode.and_then(|s| s.acceptance_rate)),
            field(cell.client_lag.event_processing.map(|l| l.p99_us)),
        );
    }
    out
}
