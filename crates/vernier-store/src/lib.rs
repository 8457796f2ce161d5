//! The run store: every finished run registered by its run file, in SQLite (the default, a
//! file under the user's data folder) or a team's PostgreSQL, and what is read back from it.
//!
//! - [`read_run`]: a run's record from its folder, the one way a run becomes rows (an engine
//!   registering the run it finished and `runs reindex` both use it, so both give the same
//!   rows).
//! - [`Store`]: open (migrations run), [`Store::register`], [`Store::runs`].
//! - [`register_finished`]: what an engine calls when a run ends; it never fails the run.
//! - [`board()`]: candidates ranked per shared dimension, pairwise differences with Holm's
//!   correction, the Pareto front of quality against speed.
//! - [`history()`]: one target's runs over time, the newest flagged by a stated test.
//!
//! The folders stay the truth: the store is rebuilt from them, never the other way.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod board;
mod error;
pub mod history;
mod read;
mod record;
mod register;
pub mod render;
mod store;

pub use board::{Board, BoardAxes, board};
pub use error::StoreError;
pub use history::{History, history};
pub use read::{lifecycle_headlines, read_run, read_runs};
pub use record::RunRecord;
pub use register::{Registered, register_finished, registering};
pub use store::{Location, STORE_VARIABLE, Store, default_file};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
