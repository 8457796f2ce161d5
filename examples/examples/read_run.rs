//! Reads a sweep's `run.json` and prints one line per cell. Uses `vernier-sweep` with its
//! default features off: the reading side, without an async runtime or an HTTP client.
//!
//! ```text
//! cargo run --release --example read_run -- sweep-out/run.json
//! ```
#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example prints its result"
)]

use std::process::ExitCode;

use vernier_sweep::RunFile;

fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| format!("{value:.1}"))
}

fn sources(cell: &vernier_sweep::CellSummary) -> String {
    let names: Vec<&str> = cell
        .token_sources
        .iter()
        .map(|source| source.as_str())
        .collect();
    if names.is_empty() {
        "no source".to_owned()
    } else {
        names.join(", ")
    }
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read_run RUN_JSON (the run.json a sweep wrote)");
        return ExitCode::from(2);
    };
    let run: RunFile = match std::fs::read_to_string(&path)
        .map_err(|error| error.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|error| error.to_string()))
    {
        Ok(run) => run,
        Err(error) => {
            eprintln!("error: failed to read the run file {path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    for cell in &run.cells {
        println!(
            "{} prompt {} out {} c{}: n {}, ttft {} ms, decode {} tok/s, prefill {} tok/s (tokens from {})",
            cell.workload,
            cell.prompt_tokens_target,
            cell.output_tokens,
            cell.concurrency,
            cell.n_ok,
            figure(cell.median.ttft_ms),
            figure(cell.median.decode_tokens_per_s),
            figure(cell.median.prefill_tokens_per_s),
            sources(cell),
        );
    }
    ExitCode::SUCCESS
}
