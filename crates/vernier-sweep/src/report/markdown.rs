//! The Markdown report: tables ready to paste, and the notes a reader needs to trust them.

use std::fmt::Write as _;

use super::text::number;
use crate::run_file::{CellSummary, RunFile};

/// Tokens per event above this make event counting under-report (design rule).
const UNDER_REPORT_THRESHOLD: f64 = 1.05;

fn interval(cell: &CellSummary) -> String {
    cell.median_interval_95
        .decode_tokens_per_s
        .map_or_else(String::new, |i| format!(" [{:.2}, {:.2}]", i.low, i.high))
}

fn sources(cell: &CellSummary) -> String {
    if cell.token_sources.is_empty() {
        return "—".to_owned();
    }
    let names: Vec<&str> = cell.token_sources.iter().map(|s| s.as_str()).collect();
    let mut text = format!("`{}`", names.join("`, `"));
    if cell.token_count_is_lower_bound {
        text.push_str(" (lower bound)");
    }
    text
}

/// Which clock timed the events, and how many reads held more than one token event.
fn write_event_clock(out: &mut String, lag: &crate::run_file::ClientLag) {
    let total = lag.n_kernel_rx_requests + lag.n_userspace_requests;
    if total == 0 {
        return;
    }
    let shared = match lag.n_first_token_shared_reads {
        0 => String::new(),
        n => format!(
            "; in {n} request{} the first token came in a read that also held a later event, so {} TTFT is only an upper bound",
            if n == 1 { "" } else { "s" },
            if n == 1 { "its" } else { "their" }
        ),
    };
    let _ = writeln!(
        out,
        "- Event clock: the kernel's receive time for {} of {total} requests (`kernel_rx`), our read instant for the rest (`userspace`); {} socket reads held more than one token event (the earlier events of such a read have only an upper bound, and the gaps between them are not real){shared}.",
        lag.n_kernel_rx_requests, lag.n_coalesced_reads
    );
}

/// The report text.
#[expect(
    clippy::too_many_lines,
    reason = "one section after another, in reading order"
)]
pub fn markdown_report(run: &RunFile) -> String {
    let mut out = String::new();
    let env = &run.environment;
    let title = run.label.clone().unwrap_or_else(|| env.model.id.clone());
    let _ = writeln!(out, "# Prefill/decode sweep: {title}\n");
    if env.server.simulator {
        let _ = writeln!(
            out,
            "> **Simulated.** These figures come from the bundled simulator running in-process, not from a real \
             inference server. They show what the tool reports, not how fast any model is.\n"
        );
    }
    if !run.complete {
        let _ = writeln!(
            out,
            "> **Incomplete run.** Some cells have fewer repetitions than configured (see `n`).\n"
        );
    }
    let _ = writeln!(out, "**{}**\n", super::table::validity(run).line());
    let max_context = env
        .model
        .max_model_len
        .map_or_else(String::new, |len| format!(" (max context {len} tokens)"));
    let version = super::text::server_version(env);
    if run.started_unix_ms > 0 {
        let _ = writeln!(
            out,
            "- Started: {}",
            vernier_run::utc_minute(run.started_unix_ms)
        );
    }
    let _ = writeln!(out, "- Model: `{}`{max_context}", env.model.id);
    if let Some(weights) = &env.model.weights {
        let _ = writeln!(out, "- Weights: {}", weights.describe());
        if let Some(mismatch) = &weights.mismatch {
            let _ = writeln!(out, "- **Served name and weights disagree:** {mismatch}");
        }
    }
    let _ = writeln!(out, "- Server: {}{version}", env.server.kind);
    if let Some(kv) = &env.server.kv_cache {
        let mut parts = Vec::new();
        if let Some(tokens) = kv.tokens {
            parts.push(format!("{} tokens", vernier_cli::thousands(tokens)));
        }
        if let Some(dtype) = &kv.dtype {
            parts.push(format!("data type {dtype}"));
        }
        if let Some(block) = kv.block_size {
            parts.push(format!("blocks of {block} tokens"));
        }
        if let Some(on) = kv.prefix_caching {
            parts.push(format!("prefix caching {}", if on { "on" } else { "off" }));
        }
        let _ = writeln!(out, "- KV cache: {} (`{}`)", parts.join(", "), kv.source);
    }
    let _ = writeln!(
        out,
        "- Client: {}, kernel {}, {} ({} logical cores)",
        env.client.os, env.client.kernel, env.client.cpu_model, env.client.logical_cores
    );
    if let Some(line) = super::gpu::identity_line(run) {
        let _ = writeln!(out, "- {line}");
    }
    let _ = writeln!(
        out,
        "- Tool: {} {} (git {})",
        env.tool.name, env.tool.version, env.tool.git_revision
    );
    let config = &run.config;
    let _ = writeln!(
        out,
        "- Method: {} warm-up and {} measured repetitions per cell{}, temperature {}, output length {}, prompt set sha256 `{}`",
        config.warmup,
        config.reps,
        config.until_ci_percent.map_or_else(String::new, |pct| format!(
            " (more, up to {}, until the 95% interval on the median decode rate is narrower than {pct}%)",
            config.max_reps
        )),
        config.temperature,
        if config.force_length { "forced (`ignore_eos`, `min_tokens`)" } else { "not forced" },
        &config.prompt_set_sha256[..config.prompt_set_sha256.len().min(12)],
    );
    let _ = writeln!(
        out,
        "- Prefix cache defeated by: {}",
        if config.defeat_prefix_cache {
            let mut parts = vec![if config.nonce_as_suffix {
                "a unique nonce closing every prompt (testing mode: it leaves the prefix shared, so the cache may hit)"
            } else {
                "a unique nonce opening every prompt"
            }];
            if config.cache_salt {
                parts.push("`cache_salt`");
            }
            if config.cache_prompt_field {
                parts.push("`cache_prompt: false`");
            }
            parts.push("separate warm-up prompts");
            parts.join(", ")
        } else {
            "nothing (testing mode: the cache may hit)".to_owned()
        }
    );
    let mut methods: Vec<&str> = run
        .calibrations
        .iter()
        .map(|c| match c.method.as_str() {
            "tokenize_chat" => "the server's `/tokenize` with the chat messages",
            "probe_requests" => {
                "probe requests with `max_tokens: 1` reading `usage.prompt_tokens` (the server has no `/tokenize`)"
            }
            other => other,
        })
        .collect();
    methods.sort_unstable();
    methods.dedup();
    if !methods.is_empty() {
        let _ = writeln!(
            out,
            "- Prompt length counted in the server's tokens by: {}",
            methods.join("; ")
        );
    }

    let _ = writeln!(out, "\n## Results\n");
    let _ = writeln!(
        out,
        "| workload | prompt tokens (target → actual) | output | streams | n | TTFT ms | prefill tok/s | decode tok/s [95% CI] | events/s | tokens/event | ITL ms | cached | token source |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for cell in &run.cells {
        let m = &cell.median;
        let _ = writeln!(
            out,
            "| {} | {} → {} | {} | {} | {} | {} | {} | {}{} | {} | {} | {} | {} | {} |",
            cell.workload,
            cell.prompt_tokens_target,
            number(cell.prompt_tokens_actual.map(|s| s.median), 0),
            cell.output_tokens,
            cell.rate_per_s
                .map_or_else(|| cell.concurrency.to_string(), |rate| format!("{rate}/s")),
            cell.n_ok,
            number(m.ttft_ms, 1),
            number(m.prefill_tokens_per_s, 0),
            number(m.decode_tokens_per_s, 2),
            interval(cell),
            number(m.event_rate_per_s, 2),
            number(m.tokens_per_event, 2),
            number(m.inter_token_latency_ms, 2),
            cell.cached_prompt_tokens_max,
            sources(cell),
        );
    }
    let _ = writeln!(
        out,
        "\nMedians over measured requests; p10 and p90 are in `report.csv` and `run.json`. TTFT runs from the request's \
         first byte on the wire to the first event carrying a token (a role-only chunk does not count). Decode tok/s \
         counts tokens by the named token source over the time between the first and last token-bearing events; \
         events/s is what a tool counting SSE events as tokens would report."
    );

    out.push_str(&super::gpu::markdown(run));
    out.push_str(&super::shards::markdown(run));
    let _ = writeln!(out, "\n## Event counting\n");
    let factors: Vec<(&CellSummary, f64)> = run
        .cells
        .iter()
        .filter_map(|cell| {
            cell.event_count_under_report_factor
                .map(|factor| (cell, factor))
        })
        .collect();
    let over: Vec<&(&CellSummary, f64)> = factors
        .iter()
        .filter(|(_, factor)| *factor > UNDER_REPORT_THRESHOLD)
        .collect();
    if over.is_empty() {
        let _ = writeln!(
            out,
            "Every event carried about one token: event counting would give the right decode rate here."
        );
    } else {
        let low = over.iter().map(|(_, f)| *f).fold(f64::INFINITY, f64::min);
        let high = over
            .iter()
            .map(|(_, f)| *f)
            .fold(f64::NEG_INFINITY, f64::max);
        let range = if (high - low) < 0.05 {
            format!("about {low:.1}×")
        } else {
            format!("{low:.1}× to {high:.1}×")
        };
        let _ = writeln!(
            out,
            "Events carried more than one token ({} of {} cells above {UNDER_REPORT_THRESHOLD}): tools that count SSE \
             events as tokens would under-report the decode rate by {range} here.\n",
            over.len(),
            factors.len()
        );
        for (cell, factor) in over {
            let _ = writeln!(
                out,
                "- {} prompt {} c{}: {:.2} tokens per event, so event counting under-reports by {factor:.2}×",
                cell.workload, cell.prompt_tokens_target, cell.concurrency, factor
            );
        }
    }

    let _ = writeln!(out, "\n## Checks\n");
    let hits: u32 = run.cells.iter().map(|c| c.n_cache_hits).sum();
    if hits == 0 {
        let _ = writeln!(
            out,
            "- Prefix cache: no measured request reported cached prompt tokens."
        );
    } else {
        let max = run
            .cells
            .iter()
            .map(|c| c.cached_prompt_tokens_max)
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "- **Prefix cache hit:** {hits} measured requests reported cached prompt tokens (up to {max}); their TTFT and \
             prefill figures are not cold-prompt figures."
        );
    }
    let mismatches: u32 = run.cells.iter().map(|c| c.n_length_mismatch).sum();
    let measured: u32 = run.cells.iter().map(|c| c.n_ok).sum();
    if measured == 0 {
        let _ = writeln!(
            out,
            "- **Nothing was measured:** no request of any cell finished; see why each cell was left out above."
        );
    } else if mismatches == 0 {
        let _ = writeln!(
            out,
            "- Output length: every measured request produced the requested number of tokens."
        );
    } else {
        let _ = writeln!(
            out,
            "- **Output length differs:** {mismatches} measured requests produced a different number of completion \
             tokens than requested; their decode figures cover a different length."
        );
    }
    if let Some(percent) = config.until_ci_percent {
        let missed: Vec<&CellSummary> = run
            .cells
            .iter()
            .filter(|c| c.until_ci_met == Some(false))
            .collect();
        if missed.is_empty() {
            let _ = writeln!(
                out,
                "- Interval target (`--until-ci {percent}`): met in every cell: the 95% interval on the median decode rate is narrower than {percent}% of the median."
            );
        } else {
            let names: Vec<String> = missed
                .iter()
                .map(|c| {
                    format!(
                        "{} prompt {} c{} ({})",
                        c.workload,
                        c.prompt_tokens_target,
                        c.concurrency,
                        vernier_cli::counted(u64::from(c.n_reps), "repetition", "repetitions")
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "- **Interval target not met** (`--until-ci {percent}`, at most {} repetitions): in {} of {} cells the 95% \
                 interval on the median decode rate is still {percent}% of the median or wider: {}.",
                config.max_reps.max(config.reps),
                missed.len(),
                run.cells.len(),
                names.join(", ")
            );
        }
    }
    let _ = writeln!(out, "{}", queue_check(run));
    let failed: u32 = run.cells.iter().map(|c| c.n_failed).sum();
    let infra: u32 = run.cells.iter().map(|c| c.n_infra_attempts).sum();
    let _ = writeln!(
        out,
        "- Failures: {infra} failed attempts (retries included), {failed} requests failed after every retry; none of them \
         enters a figure."
    );
    match (
        run.client_lag.event_processing,
        run.client_lag.scheduler_delay,
    ) {
        (Some(events), scheduler) => {
            let _ = write!(
                out,
                "- Client lag (the ruler itself): event arrival (the kernel's receive time where the kernel stamps reads) to processed p50 {:.1} µs, p99 {:.1} µs over {} events",
                events.p50_us, events.p99_us, events.n
            );
            if let Some(delay) = scheduler {
                let _ = write!(
                    out,
                    "; scheduler delay (yield → polled again) p50 {:.1} µs, p99 {:.1} µs",
                    delay.p50_us, delay.p99_us
                );
            }
            if let Some(overshoot) = run.client_lag.timer_overshoot {
                let _ = write!(
                    out,
                    "; timer overshoot (probe timer deadline → woken; tokio's timer granularity, not client lag) p50 {:.1} µs, p99 {:.1} µs",
                    overshoot.p50_us, overshoot.p99_us
                );
            }
            let _ = writeln!(out, " (bucket upper edges).");
            write_event_clock(&mut out, &run.client_lag);
        }
        (None, _) => {
            let _ = writeln!(out, "- Client lag: no events measured.");
        }
    }

    let spec: Vec<&CellSummary> = run
        .cells
        .iter()
        .filter(|c| c.spec_decode.is_some())
        .collect();
    let reported: Vec<bool> = run
        .cells
        .iter()
        .filter_map(|c| c.spec_decode_reported)
        .collect();
    if spec.is_empty() && !reported.is_empty() {
        let _ = writeln!(out, "\n## Speculative decoding (server counters)\n");
        if reported.contains(&true) {
            let _ = writeln!(
                out,
                "The server's counters show no drafted tokens: speculative decoding was off."
            );
        } else {
            let _ = writeln!(
                out,
                "Not reported by this server: its `/metrics` has no speculative-decoding counters (vLLM's \
                 `vllm:spec_decode_*` or llama.cpp's `llamacpp:spec_decode_*`)."
            );
        }
    }
    if !spec.is_empty() {
        let _ = writeln!(out, "\n## Speculative decoding (server counters)\n");
        let _ = writeln!(
            out,
            "| workload | prompt tokens | streams | drafts | draft tokens | accepted | acceptance | tokens per step |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
        for cell in spec {
            if let Some(s) = cell.spec_decode {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {:.0} | {:.0} | {:.0} | {} | {} |",
                    cell.workload,
                    cell.prompt_tokens_target,
                    cell.concurrency,
                    s.drafts,
                    s.draft_tokens,
                    s.accepted_tokens,
                    s.acceptance_rate
                        .map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0)),
                    number(s.mean_acceptance_length, 2),
                );
            }
        }
    }
    let per_request: Vec<&CellSummary> = run
        .cells
        .iter()
        .filter(|c| c.spec_decode_per_request.is_some())
        .collect();
    if !per_request.is_empty() {
        let _ = writeln!(out, "\n## Speculative decoding (reported per request)\n");
        let _ = writeln!(
            out,
            "| workload | prompt tokens | streams | requests | draft tokens | accepted | acceptance | per request p10 / median / p90 |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---|");
        let percent = |rate: Option<f64>| {
            rate.map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))
        };
        for cell in per_request {
            if let Some(s) = cell.spec_decode_per_request {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} / {} / {} |",
                    cell.workload,
                    cell.prompt_tokens_target,
                    cell.concurrency,
                    s.n_requests,
                    s.draft_tokens,
                    s.accepted_tokens,
                    percent(s.acceptance_rate),
                    percent(s.acceptance_rate_p10),
                    percent(s.acceptance_rate_median),
                    percent(s.acceptance_rate_p90),
                );
            }
        }
    }
    out.push_str(&super::offered_load::markdown_sections(run));
    if !run.warnings.is_empty() {
        let _ = writeln!(out, "\n## Notes\n");
        for warning in &run.warnings {
            let _ = writeln!(out, "- {warning}");
        }
    }
    out
}

/// Whether streams waited for a slot of the server (its own queue gauge from `/metrics`,
/// sampled while each cell ran): more streams than slots put the wait inside their TTFT.
fn queue_check(run: &RunFile) -> String {
    let sampled: Vec<(&CellSummary, &crate::journal::QueueSamples)> = run
        .cells
        .iter()
        .filter_map(|cell| cell.server_queue.as_ref().map(|queue| (cell, queue)))
        .collect();
    if sampled.is_empty() {
        return "- Server queue: not reported (its `/metrics` has no queue gauge), so a stream waiting for a slot cannot be told from a slow one.".to_owned();
    }
    let queued: Vec<String> = sampled
        .iter()
        .filter(|(_, queue)| queue.waiting_max > 0.0)
        .map(|(cell, queue)| {
            format!(
                "{} prompt {} c{} (up to {:.0} waiting beside {:.0} running)",
                cell.workload,
                cell.prompt_tokens_target,
                cell.concurrency,
                queue.waiting_max,
                queue.running_max
            )
        })
        .collect();
    if queued.is_empty() {
        format!(
            "- Server queue: no request waited for a slot in the {} cells sampled (from `/metrics`).",
            sampled.len()
        )
    } else {
        format!(
            "- **Streams queued:** the server held requests waiting for a slot in {} of {} cells sampled: {}. More streams than its slots: their TTFT includes the wait, and per-stream rates are not what one stream gets.",
            queued.len(),
            sampled.len(),
            queued.join(", ")
        )
    }
}
