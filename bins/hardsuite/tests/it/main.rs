//! Integration tests of `hardsuite`: one binary, one module per concern.

mod charts;
mod cli;
mod clustered;
mod compare;
mod context;
mod dataset;
mod dataset_files;
mod evidence;
mod exit_codes;
mod fault_matrix;
mod gpu;
mod hosted;
mod instructions;
mod levels;
mod llama;
mod progress;
mod simulator;
mod structured;
mod under_load;
mod video;
mod vision;
mod vllm;

use std::path::Path;

use clap::Parser as _;
use hardsuite::{Args, CommandOutput};
use vernier_hardsuite::HardsuiteError;

/// Docker tests run unless `VERNIER_SKIP_DOCKER_TESTS=1`; without an engine they fail loudly.
pub(crate) fn skip_docker_tests() -> bool {
    std::env::var("VERNIER_SKIP_DOCKER_TESTS").is_ok_and(|value| value == "1")
}

/// Runs the command line as `main` would, without printing.
pub(crate) async fn run_cli(args: &[&str]) -> Result<CommandOutput, HardsuiteError> {
    let command_line: Vec<String> = args.iter().map(ToString::to_string).collect();
    hardsuite::run(Args::parse_from(args), command_line).await
}

/// Every line of a JSON Lines file.
pub(crate) fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("journal readable")
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("journal line is JSON"))
        .collect()
}

/// The path as a `&str` for a command line.
pub(crate) fn arg(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}
