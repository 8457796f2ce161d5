//! Integration tests of `vernier-hardsuite`: one binary, one module per concern.

#[cfg(feature = "engine")]
mod config;
mod instances;
mod report;
