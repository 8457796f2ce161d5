//! Trace replay's schedule: the bundled Mooncake-format trace (120 records over a minute)
//! replayed at 10× against the bundled simulator on its own runtime thread in this process,
//! the replay's own lateness figures read back from its run file, with the records that
//! repeat an earlier record's prefix blocks and how many of them hit the cache. The goal: p99
//! lateness at most 5 ms.
//!
//! `cargo bench -p vernier-sweep --bench replay` (about 10 s); `-- --test` replays the first
//! ten records once (CI does), whose figures mean nothing.

#![expect(clippy::print_stdout, reason = "a benchmark prints its table")]

use std::sync::Arc;
use std::time::Duration;

use vernier_sweep::agent::{ReplayConfig, ReplayStart, run_replay};
use vernier_sweep::{QuietObserver, RunContext};

fn main() {
    let quick = std::env::args().any(|arg| arg == "--test");
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        println!("could not start a runtime");
        std::process::exit(1);
    };
    let out = std::env::temp_dir().join(format!("vernier-bench-replay-{}", std::process::id()));
    let outcome = runtime.block_on(async {
        let sim = vernier_run::InProcessSimulator::start(
            vernier_sim::SimConfig::builder()
                .decode_step(Duration::from_millis(1))
                .prefill_tokens_per_s(200_000.0)
                .fixed_overhead(Duration::from_millis(1))
                .prefix_cache(true)
                .build(),
        )
        .await
        .ok()?;
        let client = vernier_sweep::sweep_client(sim.base_url(), None, None).ok()?;
        let config = ReplayConfig {
            time_scale: 10.0,
            limit: if quick { 10 } else { 0 },
            ..ReplayConfig::default()
        };
        let outcome = run_replay(
            client,
            ReplayStart::New {
                config: Box::new(config),
                out: out.clone(),
            },
            RunContext::default().gpu_sample_interval(Duration::ZERO),
            Arc::new(QuietObserver),
            None,
        )
        .await;
        sim.shutdown().await;
        outcome.ok()
    });
    let _ = std::fs::remove_dir_all(&out);
    let Some(outcome) = outcome else {
        println!("the replay failed");
        std::process::exit(1);
    };
    let run = outcome.run;
    let Some(late) = run.late_ms else {
        println!("no request was answered");
        std::process::exit(1);
    };
    println!("records  sent  late p50 ms  p99 ms  max ms  repeat prefixes  hits  hit ratio");
    println!(
        "{:>7}  {:>4}  {:>11.3}  {:>6.3}  {:>6.3}  {:>15}  {:>4}  {}",
        run.records,
        late.n,
        late.median,
        late.p99,
        late.max,
        run.repeat_records,
        run.repeat_hits,
        run.hit_ratio
            .map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))
    );
    println!(
        "goal p99 ≤ 5 ms: {}",
        if late.p99 <= 5.0 { "met" } else { "missed" }
    );
}
