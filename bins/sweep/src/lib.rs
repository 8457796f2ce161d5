//! `sweep`'s command line: flags ([`Args`], parsed with [`Cli`]) into a
//! `vernier_sweep::SweepConfig`, the server or the in-process simulator, a progress bar, and
//! the run ([`run`]). The engine, the journal, the run file and the reports live in the
//! `vernier-sweep` crate.
//!
//! ```no_run
//! # async fn demo() -> Result<(), vernier_sweep::SweepError> {
//! // Against the in-process simulator (no --base-url), two short prompts, three reps.
//! let cli = sweep::Cli::parse_from(["sweep", "--prompt-tokens", "100,400", "--output-tokens", "64",
//!     "--reps", "3", "--out", "/tmp/sweep-demo", "--quiet"]);
//! let outcome = sweep::run(cli, vec!["sweep".to_owned()]).await?;
//! print!("{}", vernier_sweep::terminal_table(&outcome.run));
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod agent_cli;
mod cli;
mod command;
mod execute;
pub mod part;
mod progress;

pub use agent_cli::{AgentArgs, Common, ReplayArgs, run_agent, run_replay};
pub use cli::{Args, Cli, SweepCommand};
pub use command::{dry_run, run, shard_job};
pub use execute::execute;
