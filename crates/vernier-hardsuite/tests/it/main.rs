//! Integration tests of `vernier-hardsuite`: one binary, one module per concern.

#[cfg(feature = "engine")]
mod config;
#[cfg(feature = "engine")]
mod draws;
mod instances;
#[cfg(feature = "engine")]
mod interrupt;
mod journal_lines;
mod report;
#[cfg(feature = "engine")]
mod resume;
#[cfg(feature = "engine")]
mod simulated_runs;
