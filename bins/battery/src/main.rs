//! `battery` command line: parse, run, print, exit with the code of how it ended.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = <battery::Cli as clap::Parser>::parse();
    let command_line: Vec<String> = std::env::args().collect();
    vernier_cli::finish(battery::execute(cli, command_line))
}
