//! One client's open loop: how late it sends against its schedule, and how many first tokens
//! share a socket read with a later event, as the request rate rises. Each rate runs one
//! open-loop repetition (Poisson arrivals, a fixed seed, 16-token answers, a 64-token prompt)
//! against the bundled simulator on its own runtime thread in this process, the sweep's own
//! figures read back from its run file. The last line names the highest rate that met both
//! goals (p99 lateness at most 1 ms, shared first-token reads under 1%).
//!
//! `cargo bench -p vernier-sweep --bench open_loop` (about a minute); `-- --test` runs one
//! tiny rate once (CI does), whose figures mean nothing.

#![expect(clippy::print_stdout, reason = "a benchmark prints its table")]

use std::sync::Arc;
use std::time::Duration;

use vernier_sweep::{
    Arrival, LoadMode, QuietObserver, RunContext, SweepConfig, SweepStart, Workload, run_sweep,
};

/// What one rate gave.
struct Row {
    rate: f64,
    sent_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    n_ok: u32,
    n_shared: u32,
}

fn run_rate(rate: f64, duration_s: f64, out: &std::path::Path) -> Option<Row> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        let sim = vernier_run::InProcessSimulator::start(
            vernier_sim::SimConfig::builder()
                .decode_step(Duration::from_millis(2))
                .tokens_per_event(vernier_sim::TokensPerEvent::Fixed(1))
                .prefill_tokens_per_s(200_000.0)
                .fixed_overhead(Duration::from_millis(1))
                .build(),
        )
        .await
        .ok()?;
        let mut config = SweepConfig::default();
        "vernier-sim".clone_into(&mut config.model);
        config.workloads = vec![Workload::Prose];
        config.prompt_tokens = vec![64];
        config.output_tokens = vec![16];
        config.load = LoadMode::Rate;
        config.rates_per_s = vec![rate];
        config.duration_s = Some(duration_s);
        config.arrival = Some(Arrival::Poisson);
        config.seed = Some(7);
        config.reps = 1;
        config.warmup = 1;
        let _ = std::fs::remove_dir_all(out);
        let client = vernier_sweep::sweep_client(sim.base_url(), None, None).ok()?;
        let outcome = run_sweep(
            client,
            SweepStart::New {
                config: Box::new(config),
                out: out.to_owned(),
            },
            RunContext::default().gpu_sample_interval(Duration::ZERO),
            Arc::new(QuietObserver),
            None,
        )
        .await;
        sim.shutdown().await;
        let run = outcome.ok()?.run;
        let cell = run.cells.first()?;
        let late = cell.schedule_lateness.as_ref()?;
        Some(Row {
            rate,
            sent_per_s: f64::from(late.n_requests) / duration_s,
            p50_ms: late.p50_ms,
            p99_ms: late.p99_ms,
            max_ms: late.max_ms,
            n_ok: cell.n_ok,
            n_shared: cell.client_lag.n_first_token_shared_reads,
        })
    })
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let (rates, duration_s): (&[f64], f64) = if quick {
        (&[50.0], 0.4)
    } else {
        (&[100.0, 250.0, 500.0, 1000.0, 1500.0, 2000.0], 6.0)
    };
    let out = std::env::temp_dir().join(format!("vernier-open-loop-bench-{}", std::process::id()));
    println!(
        "One client's open loop against the in-process simulator (Poisson arrivals, 16-token answers){}",
        if quick {
            ": --test, a tiny run whose figures mean nothing"
        } else {
            ""
        }
    );
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>22}",
        "rate/s", "sent/s", "late p50", "late p99", "late max", "ok", "first token shared"
    );
    let mut best = None;
    for &rate in rates {
        let Some(row) = run_rate(rate, duration_s, &out) else {
            println!("{rate:>8.0} the sweep failed");
            continue;
        };
        let shared_share = f64::from(row.n_shared) / f64::from(row.n_ok.max(1));
        println!(
            "{:>8.0} {:>10.1} {:>8.3}ms {:>8.3}ms {:>8.3}ms {:>8} {:>14} ({:.1}%)",
            row.rate,
            row.sent_per_s,
            row.p50_ms,
            row.p99_ms,
            row.max_ms,
            row.n_ok,
            row.n_shared,
            shared_share * 100.0
        );
        if row.p99_ms <= 1.0 && shared_share < 0.01 {
            best = Some(row.rate);
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    match best {
        Some(rate) => println!(
            "highest rate within both goals (p99 lateness ≤ 1 ms, shared first-token reads < 1%): {rate:.0}/s"
        ),
        None => {
            println!("no rate met both goals (p99 lateness ≤ 1 ms, shared first-token reads < 1%)");
        }
    }
}
