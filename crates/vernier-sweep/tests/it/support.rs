//! Setup shared by the engine's tests: a simulator, a quiet sweep against it through
//! [`vernier_sweep::run_sweep`], and the files the sweep writes read back.

use std::path::Path;
use std::sync::Arc;

use vernier_sim::{Sim, SimConfig, SimHandle};
use vernier_sweep::{
    QuietObserver, RunContext, SweepConfig, SweepError, SweepObserver, SweepOutcome, SweepStart,
    Workload, run_sweep, sweep_client,
};

/// Starts the in-process simulator.
pub(crate) async fn start_sim(config: SimConfig) -> SimHandle {
    Sim::start(config).await.expect("start the simulator")
}

/// The command line's defaults with the workloads, prompt and output lengths and measured
/// repetitions given (what `--workload`, `--prompt-tokens`, `--output-tokens` and `--reps` set).
pub(crate) fn config(
    workloads: &[Workload],
    prompt_tokens: &[u32],
    output_tokens: &[u32],
    reps: u32,
) -> SweepConfig {
    let mut config = SweepConfig::default();
    config.workloads = workloads.to_vec();
    config.prompt_tokens = prompt_tokens.to_vec();
    config.output_tokens = output_tokens.to_vec();
    config.reps = reps;
    config
}

/// Runs a new quiet sweep of `config` against `base_url`, writing into `out`.
pub(crate) async fn run(
    base_url: &str,
    out: &Path,
    config: SweepConfig,
) -> Result<SweepOutcome, SweepError> {
    let start = SweepStart::New {
        config: Box::new(config),
        out: out.to_owned(),
    };
    start_run(base_url, start, Arc::new(QuietObserver)).await
}

/// Resumes, quietly and against `base_url`, the run recorded in `journal`.
pub(crate) async fn resume(base_url: &str, journal: &Path) -> Result<SweepOutcome, SweepError> {
    start_run(
        base_url,
        SweepStart::resume(journal),
        Arc::new(QuietObserver),
    )
    .await
}

/// Runs `start` against `base_url` with the client the sweep builds (no API key, the built-in
/// roots), reporting to `observer`, with no interrupt.
pub(crate) async fn start_run(
    base_url: &str,
    start: SweepStart,
    observer: Arc<dyn SweepObserver>,
) -> Result<SweepOutcome, SweepError> {
    let client = sweep_client(base_url, None, None)?;
    let context = RunContext::new(vec!["sweep".to_owned()]);
    run_sweep(client, start, context, observer, None).await
}

/// A JSON object (for `extra_body`).
pub(crate) fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not a JSON object: {other}"),
    }
}

pub(crate) use vernier_test_support::journal_values;

/// The Markdown report the run wrote.
pub(crate) fn read_markdown(outcome: &SweepOutcome) -> String {
    std::fs::read_to_string(&outcome.files.markdown).expect("report.md")
}

/// The run file the run wrote, as JSON.
pub(crate) fn read_run_file(outcome: &SweepOutcome) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(&outcome.files.run_file).expect("run.json"))
        .expect("run.json is JSON")
}
