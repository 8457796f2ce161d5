//! Writes a head-to-head's three files.

use std::path::{Path, PathBuf};

use crate::error::BatteryError;
use crate::versus::Versus;

/// Where a head-to-head's files went.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct VersusFiles {
    /// `versus.json`.
    pub json: PathBuf,
    /// `versus.md`.
    pub markdown: PathBuf,
    /// `versus.html`.
    pub html: PathBuf,
}

/// Writes `versus.json`, `versus.md` and `versus.html` into `out` (created if missing), each
/// whole or not at all.
pub fn write_versus(versus: &Versus, out: &Path) -> Result<VersusFiles, BatteryError> {
    std::fs::create_dir_all(out).map_err(|source| BatteryError::io("create", out, source))?;
    let files = VersusFiles {
        json: out.join("versus.json"),
        markdown: out.join("versus.md"),
        html: out.join("versus.html"),
    };
    let mut json = serde_json::to_string_pretty(versus)
        .map_err(|error| BatteryError::io("encode", &files.json, error.into()))?;
    json.push('\n');
    for (path, text) in [
        (&files.json, json),
        (&files.markdown, crate::markdown::versus_markdown(versus)),
        (&files.html, crate::html::versus_html(versus)),
    ] {
        vernier_run::write_atomically(path, text.as_bytes())
            .map_err(|source| BatteryError::io("write", path, source))?;
    }
    Ok(files)
}
