//! What Vernier's tests share, and nothing a library may depend on (a dev-dependency only;
//! `.ci/run` checks that no crate depends on it otherwise):
//!
//! - [`free_port`]: a loopback port for a server a test starts in another process;
//! - [`serve_simulator_when_asked`] and [`launch_command`]: the simulator as a process of its
//!   own, for `--launch` and for faults;
//! - [`fault_matrix`]: the faults every tool is run through, cell by cell;
//! - [`llama_server`]: a real `llama-server` and its model, located in the cache and started;
//! - [`vllm`]: a real vLLM (its CPU build) and two model folders, located in the cache and
//!   started, alone or shared by the tests of nextest's `vllm` group;
//! - [`dcgm_exporter`]: a DCGM exporter on loopback serving a recorded H100 pair;
//! - [`check_script`] and [`value_of`]: what a set-up script in `scripts/` has cached;
//! - [`journal_values`] and [`assert_close`]: reading journals back and comparing figures;
//! - [`quick_sim`] and [`rate_limited_sim`]: the simulator settings tests share.
//!
//! ```
//! vernier_test_support::assert_close(0.1 + 0.2, 0.3, 1e-12);
//! assert!(vernier_test_support::free_port() > 0);
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![expect(
    clippy::missing_panics_doc,
    reason = "test support fails the test that called it, by design"
)]

pub mod browser;
mod cached;
pub mod dcgm_exporter;
pub mod fault_matrix;
mod free_port;
mod journal;
pub mod llama_server;
mod numbers;
mod postgres;
mod sim;
mod simulator;
pub mod vllm;

pub use cached::{check_script, repository, value_of};
pub use free_port::free_port;
pub use journal::{journal_lines_of, journal_values, wait_for_rep_done};
pub use numbers::assert_close;
pub use postgres::Postgres;
pub use sim::{quick_sim, quick_sim_at, rate_limited_sim};
pub use simulator::{
    DELAY_VARIABLE, LOADING_VARIABLE, SIM_VARIABLE, launch_command, serve_simulator_when_asked,
};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
