//! What the terminal shows at the end of a run, within 100 columns: one row per cell with
//! the speed figures, one row per cell with the latency quantiles and the throughput of all
//! streams together, a one-line summary and the run's validity verdict. Everything else is
//! in the files.

use std::fmt::Write as _;

use super::number;
use crate::run_file::{CellSummary, RunFile};

/// Whether a run's figures can be taken as they are, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Validity {
    /// True when nothing below holds.
    pub valid: bool,
    /// What a reader must know before using the figures, most serious first.
    pub reasons: Vec<String>,
}

impl Validity {
    /// `valid` or `read with care: …`, one line.
    pub fn line(&self) -> String {
        if self.valid {
            "verdict: valid (every cell measured at the requested lengths, no request failed, no prefix-cache hit)"
                .to_owned()
        } else {
            format!("verdict: read with care: {}", self.reasons.join("; "))
        }
    }
}

fn total(run: &RunFile, count: fn(&CellSummary) -> u32) -> u64 {
    run.cells.iter().map(|c| u64::from(count(c))).sum()
}

/// The run's validity: every cell measured, nothing failed, no prefix-cache hit, every output
/// at the requested length, tokens from the server's count, and not the simulator.
pub fn validity(run: &RunFile) -> Validity {
    let mut reasons = Vec::new();
    let unmeasured = run.cells.iter().filter(|c| c.n_ok == 0).count();
    if unmeasured > 0 {
        reasons.push(format!(
            "{} of {} cells not measured (see the report)",
            unmeasured,
            run.cells.len()
        ));
    }
    if !run.complete {
        reasons.push("incomplete: some cells lack repetitions (--resume continues)".to_owned());
    }
    let failed = total(run, |c| c.n_failed);
    if failed > 0 {
        reasons.push(format!(
            "{} failed after retries (in no figure)",
            vernier_cli::counted(failed, "request", "requests")
        ));
    }
    let hits = total(run, |c| c.n_cache_hits);
    if hits > 0 {
        reasons.push(format!(
            "{} hit the prefix cache (prefill figures include cached tokens)",
            vernier_cli::counted(hits, "request", "requests")
        ));
    }
    let short = total(run, |c| c.n_length_mismatch);
    if short > 0 {
        reasons.push(format!(
            "{} did not produce the requested length",
            vernier_cli::counted(short, "request", "requests")
        ));
    }
    if run.cells.iter().any(|c| c.token_count_is_lower_bound) {
        reasons.push("some token counts come from counting events and are lower bounds".to_owned());
    }
    if run.environment.server.simulator {
        reasons.push("simulated: the figures describe the bundled simulator".to_owned());
    }
    Validity {
        valid: reasons.is_empty(),
        reasons,
    }
}

/// The cell as one short name: `prose 111/512 c4` (workload, prompt/output, load).
fn cell_name(cell: &CellSummary) -> String {
    format!(
        "{} {}/{} {}",
        cell.workload,
        cell.prompt_tokens_target,
        cell.output_tokens,
        load(cell)
    )
}

fn load(cell: &CellSummary) -> String {
    cell.rate_per_s.map_or_else(
        || format!("c{}", cell.concurrency),
        |rate| format!("{rate}/s"),
    )
}

/// A rate with decimals only where they matter: `1143`, `85.2`, `3.41`.
fn rate(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() && v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.is_finite() && v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) if v.is_finite() => format!("{v:.2}"),
        _ => "—".to_owned(),
    }
}

/// Rows with their first column left-aligned and the rest right-aligned, a rule under the
/// header.
fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            rows.iter()
                .map(|row| row.get(column).map_or(0, |t| t.chars().count()))
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
                if column == 0 {
                    format!("{text:<width$}")
                } else {
                    format!("{text:>width$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
        if index == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
            let _ = writeln!(out, "{}", "-".repeat(total));
        }
    }
    out
}

fn quantiles(p50: Option<f64>, p90: Option<f64>, p99: Option<f64>, decimals: usize) -> String {
    format!(
        "{}/{}/{}",
        number(p50, decimals),
        number(p90, decimals),
        number(p99, decimals)
    )
}

/// The end-of-run text: the speed table, the latency and throughput table, the client's own
/// lag, a one-line summary and the verdict.
pub fn terminal_table(run: &RunFile) -> String {
    let mut speed = vec![
        [
            "cell",
            "n",
            "fail",
            "TTFT ms",
            "prefill/s",
            "decode/s",
            "[95% CI]",
            "ITL ms",
            "tok/ev",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    let mut latency = vec![
        [
            "cell",
            "TTFT ms p50/p90/p99",
            "ITL ms p50/p90/p99",
            "out tok/s all",
            "req/s",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for cell in &run.cells {
        let m = &cell.median;
        let name = cell_name(cell);
        let status = cell.context_exceeded.as_ref().map(|_| "context exceeded");
        speed.push(vec![
            name.clone(),
            cell.n_ok.to_string(),
            cell.n_failed.to_string(),
            status.map_or_else(|| number(m.ttft_ms, 1), str::to_owned),
            rate(m.prefill_tokens_per_s),
            rate(m.decode_tokens_per_s),
            cell.median_interval_95
                .decode_tokens_per_s
                .map_or_else(String::new, |i| {
                    format!("[{}–{}]", rate(Some(i.low)), rate(Some(i.high)))
                }),
            number(m.inter_token_latency_ms, 2),
            number(m.tokens_per_event, 2),
        ]);
        let aggregate = cell.aggregate.as_ref();
        latency.push(vec![
            name,
            quantiles(m.ttft_ms, cell.p90.ttft_ms, cell.p99.ttft_ms, 1),
            quantiles(
                m.inter_token_latency_ms,
                cell.p90.inter_token_latency_ms,
                cell.p99.inter_token_latency_ms,
                2,
            ),
            rate(aggregate.and_then(|a| a.median.output_tokens_per_s)),
            rate(aggregate.and_then(|a| a.median.requests_per_s)),
        ]);
    }
    let mut out = aligned(&speed);
    out.push('\n');
    out.push_str(&aligned(&latency));
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
            "TTFT is an upper bound for {}: the first token came in a socket read that also held a later event (the client was reading late)",
            vernier_cli::counted(u64::from(shared), "request", "requests")
        );
    }
    let _ = writeln!(out, "{}", summary_line(run));
    let _ = writeln!(out, "{}", validity(run).line());
    out
}

/// One line: cells measured, requests, token source, the best aggregate output rate.
fn summary_line(run: &RunFile) -> String {
    let measured = run.cells.iter().filter(|c| c.n_ok > 0).count();
    let requests = total(run, |c| c.n_ok);
    let mut sources: Vec<&str> = run
        .cells
        .iter()
        .flat_map(|c| c.token_sources.iter().map(|s| s.as_str()))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    let best = run
        .cells
        .iter()
        .filter_map(|c| {
            let rate = c.aggregate.as_ref()?.median.output_tokens_per_s?;
            Some((rate, c))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let mut line = format!(
        "{} of {} cells measured, {} (tokens: {})",
        measured,
        run.cells.len(),
        vernier_cli::counted(requests, "request", "requests"),
        if sources.is_empty() {
            "none".to_owned()
        } else {
            sources.join("+")
        }
    );
    if let Some((rate, cell)) = best {
        let _ = write!(line, "; most output: {rate:.0} tok/s ({})", cell_name(cell));
    }
    line
}
