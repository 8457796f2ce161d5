//! What the terminal shows at the end of a run, within 100 columns: one row per cell with
//! the speed figures, one row per cell with the latency quantiles and the throughput of all
//! streams together, a one-line summary and the run's validity verdict. Everything else is
//! in the files.

use std::fmt::Write as _;

use super::text::number;
use super::text::{aligned, cell_name, rate};
use vernier_run::{Reason, Verdict, VerdictLevel};

use crate::run_file::{CellSummary, RunFile};

fn total(run: &RunFile, count: fn(&CellSummary) -> u32) -> u64 {
    run.cells.iter().map(|c| u64::from(count(c))).sum()
}

/// The run's verdict, each reason named (`docs/run-file.md`, "validity"): a prefix-cache hit,
/// a server or model that changed during the run, or requests failing past
/// [`vernier_run::INFRA_INVALID_SHARE`] make it `invalid`; outputs shorter than asked, cells
/// not measured, failures below that share, client lag, coalesced first-token reads, rate
/// limits, refused fields, event-counted tokens and the simulator make it `questionable`.
pub fn validity(run: &RunFile) -> Verdict {
    let mut reasons = Vec::new();
    server_reasons(run, &mut reasons);
    coverage_reasons(run, &mut reasons);
    client_reasons(run, &mut reasons);
    if let Some(shards) = &run.shards {
        for detail in &shards.invalid {
            reasons.push(Reason::new("shards", VerdictLevel::Invalid, detail.clone()));
        }
        for detail in &shards.questionable {
            reasons.push(Reason::new(
                "shards",
                VerdictLevel::Questionable,
                detail.clone(),
            ));
        }
    }
    Verdict::from_reasons(reasons)
}

/// What the server did: changed, served from its cache, failed, throttled, refused a field,
/// or was the simulator.
fn server_reasons(run: &RunFile, reasons: &mut Vec<Reason>) {
    let mut push = |code: &str, level: VerdictLevel, detail: String| {
        reasons.push(Reason::new(code, level, detail));
    };
    for change in &run.identity_changes {
        push(
            "server_changed",
            VerdictLevel::Invalid,
            format!("the server changed during the run: {change}"),
        );
    }
    let hits = total(run, |c| c.n_cache_hits);
    if hits > 0 {
        push(
            "prefix_cache_hit",
            VerdictLevel::Invalid,
            format!(
                "{} hit the prefix cache (prefill and TTFT figures include cached tokens)",
                vernier_cli::counted(hits, "request", "requests")
            ),
        );
    }
    let failed = total(run, |c| c.n_failed);
    let ok = total(run, |c| c.n_ok);
    if failed > 0 {
        let level = if vernier_run::share(failed, failed + ok) > vernier_run::INFRA_INVALID_SHARE {
            VerdictLevel::Invalid
        } else {
            VerdictLevel::Questionable
        };
        push(
            "infra_failures",
            level,
            format!(
                "{} of {} failed after retries (in no figure)",
                failed,
                vernier_cli::counted(failed + ok, "request", "requests")
            ),
        );
    }
    if let Some(limited) = &run.rate_limited {
        push(
            "throttled",
            VerdictLevel::Questionable,
            format!(
                "rate-limited {} times, {:.1} s waited",
                limited.n_waits, limited.waited_s
            ),
        );
    }
    for dropped in &run.fields_dropped {
        push(
            "field_dropped",
            VerdictLevel::Questionable,
            format!(
                "the server refused `{}`: {}",
                dropped.field, dropped.guarantee_lost
            ),
        );
    }
    if run.environment.server.simulator {
        push(
            "simulated",
            VerdictLevel::Questionable,
            "the figures describe the bundled simulator".to_owned(),
        );
    }
}

/// What was measured against what was asked: cells left out, repetitions missing, outputs
/// short of their length, tokens counted from events.
fn coverage_reasons(run: &RunFile, reasons: &mut Vec<Reason>) {
    let mut push = |code: &str, detail: String| {
        reasons.push(Reason::new(code, VerdictLevel::Questionable, detail));
    };
    let unmeasured = run
        .cells
        .iter()
        .filter(|c| c.n_ok == 0 && c.context_exceeded.is_none())
        .count();
    if unmeasured > 0 {
        push(
            "not_measured",
            format!(
                "{unmeasured} of {} cells not measured (see the report)",
                run.cells.len()
            ),
        );
    }
    let too_long = run
        .cells
        .iter()
        .filter(|c| c.context_exceeded.is_some())
        .count();
    if too_long > 0 {
        push(
            "context_exceeded",
            format!(
                "{too_long} of {} cells left out: longer than the server's context",
                run.cells.len()
            ),
        );
    }
    if !run.complete {
        push(
            "incomplete",
            "some cells lack repetitions (--resume continues)".to_owned(),
        );
    }
    let short = total(run, |c| c.n_length_mismatch);
    if short > 0 {
        push(
            "short_output",
            format!(
                "{} of {} did not produce the requested length",
                short,
                vernier_cli::counted(
                    total(run, |c| c.n_ok),
                    "measured request",
                    "measured requests"
                )
            ),
        );
    }
    if run.cells.iter().any(|c| c.token_count_is_lower_bound) {
        push(
            "event_counted",
            "some token counts come from counting events and are lower bounds".to_owned(),
        );
    }
}

/// The client's own share: coalesced first-token reads and lag per event.
fn client_reasons(run: &RunFile, reasons: &mut Vec<Reason>) {
    let shared = u64::from(run.client_lag.n_first_token_shared_reads);
    let requests = u64::from(run.client_lag.n_kernel_rx_requests)
        + u64::from(run.client_lag.n_userspace_requests);
    if vernier_run::share(shared, requests) > vernier_run::COALESCED_FIRST_TOKEN_SHARE {
        reasons.push(Reason::new(
            "coalesced_first_token",
            VerdictLevel::Questionable,
            format!(
                "{shared} of {requests} requests read their first token together with a later one (TTFT an upper bound; above {:.0}%)",
                vernier_run::COALESCED_FIRST_TOKEN_SHARE * 100.0
            ),
        ));
    }
    if let Some(lag) = &run.client_lag.event_processing
        && lag.p99_us > vernier_run::CLIENT_LAG_P99_US
    {
        reasons.push(Reason::new(
            "client_lag",
            VerdictLevel::Questionable,
            format!(
                "the client's own lag per event reached {:.1} ms at the 99th percentile (above {:.0} ms): inter-token figures may be the client's",
                lag.p99_us / 1000.0,
                vernier_run::CLIENT_LAG_P99_US / 1000.0
            ),
        ));
    }
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
    if let Some(gpu) = super::gpu::terminal(run) {
        out.push('\n');
        out.push_str(&gpu);
    }
    if let Some(shards) = super::shards::terminal(run) {
        out.push('\n');
        out.push_str(&shards);
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
