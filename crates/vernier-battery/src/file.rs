//! `OUT/battery.json`: what a battery ran, where, with what, each part's own files (in their
//! own unchanged formats) and one verdict. Written again after every part, so a battery cut
//! short still says what it holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vernier_run::Verdict;

use crate::config::{BatteryConfig, Part};
use crate::error::BatteryError;

/// Version of `battery.json`'s schema (`docs/battery.md`).
pub const BATTERY_SCHEMA_VERSION: u32 = 1;

/// The file name of a battery's index in its folder.
pub const BATTERY_FILE: &str = "battery.json";

/// `OUT/battery.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BatteryFile {
    /// [`BATTERY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What the battery runs: preset, parts and sizes (a resume runs the same).
    pub config: BatteryConfig,
    /// The command line as typed (the last session's).
    pub command_line: Vec<String>,
    /// The server measured (`simulator` when each part ran the bundled simulator).
    pub target: String,
    /// The model each part measured (the first part's; empty before any part ran).
    pub model: String,
    /// True when the parts measured the bundled simulator.
    pub simulated: bool,
    /// When the battery started, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// When `battery.json` was last written.
    pub updated_unix_ms: u64,
    /// One entry per part, in run order.
    pub parts: Vec<PartEntry>,
    /// The battery's verdict: the worst of its parts', each reason prefixed with its part,
    /// plus parts that failed or did not run.
    pub validity: Verdict,
}

/// How far a part got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartStatus {
    /// Not started yet.
    Pending,
    /// Finished; its files are complete.
    Done,
    /// Stopped by an interrupt; its journal continues with `battery run --resume`.
    Interrupted,
    /// Stopped by an error (named in `detail`); `--resume` tries it again.
    Failed,
}

/// One part of a battery.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PartEntry {
    /// Which part.
    pub part: Part,
    /// Its folder, relative to the battery's.
    pub folder: String,
    /// How far it got.
    pub status: PartStatus,
    /// Why it failed, or what it left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its files by role (`journal`, `run`, `results`, `report`), relative to the battery's
    /// folder.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Its own verdict, as its files state it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<Verdict>,
    /// Seconds it ran in this battery (all sessions together).
    #[serde(default)]
    pub seconds: f64,
    /// The exit code its error maps to, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
}

impl PartEntry {
    /// A part not run yet.
    pub fn pending(part: Part) -> Self {
        Self {
            part,
            folder: part.folder().to_owned(),
            status: PartStatus::Pending,
            detail: None,
            files: BTreeMap::new(),
            validity: None,
            seconds: 0.0,
            exit_code: None,
        }
    }
}

impl BatteryFile {
    /// A new battery of `config`, every part pending.
    pub fn new(config: BatteryConfig, command_line: Vec<String>, target: String) -> Self {
        let now = vernier_run::unix_ms();
        let parts = config
            .parts
            .iter()
            .copied()
            .map(PartEntry::pending)
            .collect();
        let simulated = target == "simulator";
        let mut file = Self {
            schema_version: BATTERY_SCHEMA_VERSION,
            config,
            command_line,
            target,
            model: String::new(),
            simulated,
            started_unix_ms: now,
            updated_unix_ms: now,
            parts,
            validity: Verdict::default(),
        };
        file.validity = file.verdict();
        file
    }

    /// The battery's verdict from its parts: each part's reasons prefixed with its name, a
    /// part that failed (`invalid`: the battery lacks it), and one interrupted or not run yet
    /// (`questionable`).
    pub fn verdict(&self) -> Verdict {
        use vernier_run::{Reason, VerdictLevel};
        let mut extra = Vec::new();
        for entry in &self.parts {
            let name = entry.part.name();
            match entry.status {
                PartStatus::Done => {}
                PartStatus::Failed => extra.push(Reason::new(
                    "part_failed",
                    VerdictLevel::Invalid,
                    format!(
                        "{name}: failed: {}",
                        entry.detail.as_deref().unwrap_or("no detail")
                    ),
                )),
                PartStatus::Interrupted | PartStatus::Pending => extra.push(Reason::new(
                    "part_missing",
                    VerdictLevel::Questionable,
                    format!("{name}: not finished (battery run --resume continues)"),
                )),
            }
        }
        let parts = self
            .parts
            .iter()
            .filter_map(|entry| entry.validity.as_ref().map(|v| (entry.part.name(), v)));
        let mut verdict = Verdict::combine(parts);
        extra.append(&mut verdict.reasons);
        Verdict::from_reasons(extra)
    }

    /// The entry of `part`.
    pub fn entry(&self, part: Part) -> Option<&PartEntry> {
        self.parts.iter().find(|entry| entry.part == part)
    }

    /// A battery's index read from its folder or its `battery.json`.
    pub fn load(path: &Path) -> Result<Self, BatteryError> {
        let path = battery_path(path);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| BatteryError::io("read", &path, source))?;
        let file: Self = serde_json::from_str(&text).map_err(|error| BatteryError::Parse {
            path: path.clone(),
            detail: error.to_string(),
        })?;
        if file.schema_version != BATTERY_SCHEMA_VERSION {
            return Err(BatteryError::Parse {
                path,
                detail: format!(
                    "schema version {} (this battery reads version {BATTERY_SCHEMA_VERSION})",
                    file.schema_version
                ),
            });
        }
        Ok(file)
    }

    /// Writes `battery.json` into `folder`, whole or not at all.
    pub fn write(&mut self, folder: &Path) -> Result<PathBuf, BatteryError> {
        self.updated_unix_ms = vernier_run::unix_ms();
        self.validity = self.verdict();
        let path = folder.join(BATTERY_FILE);
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|error| BatteryError::io("encode", &path, error.into()))?;
        text.push('\n');
        vernier_run::write_atomically(&path, text.as_bytes())
            .map_err(|source| BatteryError::io("write", &path, source))?;
        Ok(path)
    }
}

/// `battery.json` of a battery named by its folder or the file itself.
pub fn battery_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(BATTERY_FILE)
    } else {
        path.to_path_buf()
    }
}
