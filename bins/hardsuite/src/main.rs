//! `hardsuite` command line: parse, run, print, exit with the code of how it ended.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits with 2 (`exit_code::USAGE`).
    let args = hardsuite::Args::parse();
    let command_line: Vec<String> = std::env::args().collect();
    vernier_cli::finish(vernier_store::registering(hardsuite::execute(
        args,
        command_line,
    )))
}
