//! `battery tune`: one study run against several launch configurations of one server, taking
//! turns in rounds (A B C, then C B A) so drift falls on all alike; the winner for a target,
//! the pairwise comparisons, the Pareto fronts and what each server states it was launched
//! with.

pub mod analysis;
pub mod config;
pub mod file;
pub mod report;
pub mod results;
#[cfg(feature = "engine")]
pub mod run;
pub mod stated;
