//! `runs` command line: parse, run, print, exit with the code of how it ended.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    vernier_cli::finish(runs::execute(runs::Cli::parse()))
}
