//! One CSV row per cell with medians, p10 and p90, written with the `csv` crate (RFC 4180
//! quoting, should a field ever hold a comma, a quote or a line break).

use crate::error::SweepError;
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

/// The header row.
fn header() -> Vec<String> {
    let mut header: Vec<String> = [
        "workload",
        "prompt_tokens_target",
        "output_tokens",
        "concurrency",
        "n_reps",
        "n_ok",
        "n_failed",
        "cached_prompt_tokens_max",
        "n_length_mismatch",
        "token_sources",
    ]
    .iter()
    .map(|name| (*name).to_owned())
    .collect();
    for (name, _) in FIGURES {
        for statistic in ["median", "p10", "p90"] {
            header.push(format!("{name}_{statistic}"));
        }
    }
    header.extend(
        [
            "decode_tokens_per_s_ci95_low",
            "decode_tokens_per_s_ci95_high",
            "spec_decode_acceptance_rate",
            "client_lag_p99_us",
            "gpu_mean_power_w",
            "gpu_peak_memory_mib",
            "gpu_energy_j",
            "gpu_joules_per_output_token",
        ]
        .map(str::to_owned),
    );
    header
}

/// The CSV text.
pub fn csv_report(run: &RunFile) -> Result<String, SweepError> {
    let failed = |error: csv::Error| SweepError::WriteReport {
        path: "report.csv".into(),
        source: std::io::Error::other(error),
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header()).map_err(failed)?;
    for cell in &run.cells {
        let sources: Vec<&str> = cell.token_sources.iter().map(|s| s.as_str()).collect();
        let mut row = vec![
            cell.workload.to_string(),
            cell.prompt_tokens_target.to_string(),
            cell.output_tokens.to_string(),
            cell.concurrency.to_string(),
            cell.n_reps.to_string(),
            cell.n_ok.to_string(),
            cell.n_failed.to_string(),
            cell.cached_prompt_tokens_max.to_string(),
            cell.n_length_mismatch.to_string(),
            sources.join("+"),
        ];
        for (_, get) in FIGURES {
            row.push(field(get(&cell.median)));
            row.push(field(get(&cell.p10)));
            row.push(field(get(&cell.p90)));
        }
        let interval = cell.median_interval_95.decode_tokens_per_s;
        row.push(field(interval.map(|i| i.low)));
        row.push(field(interval.map(|i| i.high)));
        row.push(field(cell.spec_decode.and_then(|s| s.acceptance_rate)));
        row.push(field(cell.client_lag.event_processing.map(|l| l.p99_us)));
        let gpu = cell.gpu.as_ref();
        row.push(field(gpu.and_then(|g| g.window.mean_power_w)));
        row.push(field(gpu.and_then(|g| g.window.peak_memory_mib)));
        row.push(field(gpu.and_then(|g| g.window.energy_j)));
        row.push(field(
            gpu.and_then(|g| g.per_token.map(|p| p.joules_per_output_token)),
        ));
        writer.write_record(&row).map_err(failed)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|error| failed(error.into_error().into()))?;
    String::from_utf8(bytes).map_err(|error| SweepError::WriteReport {
        path: "report.csv".into(),
        source: std::io::Error::other(error),
    })
}
