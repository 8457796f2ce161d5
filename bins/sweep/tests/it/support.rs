//! Setup shared by the integration tests: a simulator, a quiet sweep against it, and the
//! files the sweep writes read back.

use std::path::Path;
use std::process::{Command, Output};

use vernier_sim::{Sim, SimConfig, SimHandle};

/// Starts the in-process simulator.
pub(crate) async fn start_sim(config: SimConfig) -> SimHandle {
    Sim::start(config).await.expect("start the simulator")
}

/// Arguments for a quiet sweep against `base_url` writing into `out`, plus `extra`.
pub(crate) fn args(base_url: &str, out: &Path, extra: &[&str]) -> sweep::Cli {
    let out = out.display().to_string();
    let mut words = vec!["sweep", "--base-url", base_url, "--out", &out, "--quiet"];
    words.extend_from_slice(extra);
    sweep::Cli::parse_from(words)
}

/// Runs a quiet sweep against `base_url` writing into `out`, with the flags in `extra`.
pub(crate) async fn run_sweep(
    base_url: &str,
    out: &Path,
    extra: &[&str],
) -> Result<vernier_sweep::SweepOutcome, vernier_sweep::SweepError> {
    sweep::run(args(base_url, out, extra), vec!["sweep".to_owned()]).await
}

pub(crate) use vernier_test_support::journal_values;

/// The `sweep` binary run in `dir` with `args` (no API key in its environment), to its end.
pub(crate) fn sweep_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweep"))
        .current_dir(dir)
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run sweep")
}

/// What a run of the binary wrote on stderr.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
