//! `sweep` command line: parse, run, print, exit with the code of how it ended.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = sweep::Cli::parse_from(std::env::args_os());
    let command_line: Vec<String> = std::env::args().collect();
    vernier_cli::finish(vernier_store::registering(sweep::execute(
        cli,
        command_line,
    )))
}
