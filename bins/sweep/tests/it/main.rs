//! Integration tests of the sweep against the in-process simulator over loopback.

mod calibration;
mod report;
mod resume;
mod safety;
mod truth;
mod until_ci;
mod watchdog;

use std::path::Path;

use clap::Parser as _;

/// Arguments for a quiet sweep against `base_url` writing into `out`, plus `extra`.
pub(crate) fn args(base_url: &str, out: &Path, extra: &[&str]) -> sweep::Args {
    let out = out.display().to_string();
    let mut words = vec!["sweep", "--base-url", base_url, "--out", &out, "--quiet"];
    words.extend_from_slice(extra);
    sweep::Args::parse_from(words)
}

/// Every journal line as JSON.
pub(crate) fn journal_values(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("read the journal")
        .lines()
        .map(|line| serde_json::from_str(line).expect("every journal line is JSON"))
        .collect()
}
