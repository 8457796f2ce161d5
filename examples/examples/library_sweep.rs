//! A sweep through the library crates alone: one workload, two prompt lengths, one output
//! length, against `--base-url URL [--model M]`, or the in-process simulator without it.
//! Prints the run file as JSON on stdout.
//!
//! ```text
//! cargo run --release --example library_sweep -- --base-url http://127.0.0.1:8000 --model M
//! ```
#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example prints its result"
)]

use std::sync::Arc;

use vernier_sweep::{
    InProcessSimulator, QuietObserver, RunContext, SweepConfig, SweepStart, Workload,
    demo_simulator_config, run_sweep, sweep_client,
};

fn flag(name: &str) -> Option<String> {
    let words: Vec<String> = std::env::args().collect();
    words
        .iter()
        .position(|w| w == name)
        .and_then(|i| words.get(i + 1).cloned())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mut simulator = None;
    let base_url = match flag("--base-url") {
        Some(url) => url,
        None => match InProcessSimulator::start(demo_simulator_config()).await {
            Ok(sim) => {
                eprintln!("no --base-url: measuring the in-process simulator");
                simulator.insert(sim).base_url().to_owned()
            }
            Err(error) => return fail(&error),
        },
    };
    let mut config = SweepConfig::default();
    config.model = flag("--model").unwrap_or_default();
    config.workloads = vec![Workload::Prose];
    config.prompt_tokens = vec![128, 512];
    config.output_tokens = vec![64];
    config.reps = 3;
    let out = std::env::temp_dir().join(format!("vernier-library-sweep-{}", std::process::id()));
    let start = SweepStart::New {
        config: Box::new(config),
        out,
    };
    let context = RunContext::default().simulator(simulator.is_some());
    let result = match sweep_client(&base_url, None, None) {
        Ok(client) => run_sweep(client, start, context, Arc::new(QuietObserver), None).await,
        Err(error) => Err(error),
    };
    if let Some(sim) = simulator {
        sim.shutdown().await;
    }
    match result.map(|outcome| serde_json::to_string_pretty(&outcome.run)) {
        Ok(Ok(json)) => {
            println!("{json}");
            std::process::ExitCode::SUCCESS
        }
        Ok(Err(error)) => fail(&error),
        Err(error) => fail(&error),
    }
}

fn fail(error: &dyn std::error::Error) -> std::process::ExitCode {
    eprintln!("error: failed to {}", vernier_cli::cause_chain(error));
    std::process::ExitCode::FAILURE
}
