//! `OUT/battery.json`: what a battery ran, where, with what, each part's own files (in their
//! own unchanged formats) and one verdict. Written again after every part, so a battery cut
//! short still says what it holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vernier_run::{Headline, Score, Verdict};

use crate::config::{BatteryConfig, Part};
use crate::error::BatteryError;
use crate::study::Study;

/// Version of `battery.json`'s schema (`docs/battery.md`).
pub const BATTERY_SCHEMA_VERSION: u32 = 2;

/// The oldest schema version this crate still reads (version 1 lacks the study, the
/// parts' kinds, headlines and scores, and the totals, all read as absent).
pub const BATTERY_SCHEMA_OLDEST: u32 = 1;

/// The file name of a battery's index in its folder.
pub const BATTERY_FILE: &str = "battery.json";

/// `OUT/battery.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BatteryFile {
    /// [`BATTERY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What a battery of flags runs: preset, parts and sizes (a resume runs the same);
    /// absent for a study.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BatteryConfig>,
    /// The study it runs, as run (scaled where it was): a resume runs the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<Study>,
    /// The study file it was read from, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study_file: Option<String>,
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
    /// Passed over scored per dimension across every part that scores, and in total, each
    /// with its Wilson interval (rewritten with the parts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<TotalRow>,
    /// Wall seconds of the whole battery, every session together (each part's own are in its
    /// entry; the rest is the battery's own work between parts).
    #[serde(default)]
    pub wall_seconds: f64,
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

/// One row of the totals: a dimension (or `total`), passed over scored, with its 95% Wilson
/// interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TotalRow {
    /// The dimension (`math`, `code`, …), or `total` for every scored sample.
    pub dimension: String,
    /// Samples passed.
    pub passed: u64,
    /// Samples scored.
    pub scored: u64,
    /// The 95% Wilson interval of the pass rate (absent when nothing was scored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// The parts it sums (by name).
    pub parts: Vec<String>,
}

impl TotalRow {
    /// `passed/scored (rate%, 95% CI low–high%)`.
    pub fn line(&self) -> String {
        if self.scored == 0 {
            return format!("{}/0 (nothing scored)", self.passed);
        }
        let rate = self.passed as f64 / self.scored as f64 * 100.0;
        let interval = self.interval.map_or_else(String::new, |(low, high)| {
            format!(", 95% CI {:.1}–{:.1}%", low * 100.0, high * 100.0)
        });
        format!("{}/{} ({rate:.1}%{interval})", self.passed, self.scored)
    }
}

/// The totals of `parts`: each dimension's passed and scored summed over the parts that score
/// it, then every dimension together, each with its Wilson interval.
pub fn totals(parts: &[PartEntry]) -> Vec<TotalRow> {
    let mut rows: Vec<TotalRow> = Vec::new();
    for entry in parts {
        for score in &entry.scores {
            let at = rows
                .iter()
                .position(|row| row.dimension == score.dimension)
                .unwrap_or_else(|| {
                    rows.push(TotalRow {
                        dimension: score.dimension.clone(),
                        passed: 0,
                        scored: 0,
                        interval: None,
                        parts: Vec::new(),
                    });
                    rows.len() - 1
                });
            let row = &mut rows[at];
            row.passed += score.passed;
            row.scored += score.scored;
            if !row.parts.contains(&entry.part) {
                row.parts.push(entry.part.clone());
            }
        }
    }
    if rows.is_empty() {
        return rows;
    }
    let mut parts: Vec<String> = Vec::new();
    for row in &rows {
        for part in &row.parts {
            if !parts.contains(part) {
                parts.push(part.clone());
            }
        }
    }
    rows.push(TotalRow {
        dimension: "total".to_owned(),
        passed: rows.iter().map(|row| row.passed).sum(),
        scored: rows.iter().map(|row| row.scored).sum(),
        interval: None,
        parts,
    });
    for row in &mut rows {
        row.interval = vernier_stats::wilson(row.passed, row.scored, 0.95)
            .ok()
            .map(|interval| (interval.low, interval.high));
    }
    rows
}

/// One part of a battery.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PartEntry {
    /// The part's name (its folder's, unless `folder` says otherwise): a battery's fixed
    /// part (`sweep`, `suite_batched`) or a study's part.
    pub part: String,
    /// Its kind (`sweep`, `suite`, `ready`, …); a version-1 file's is read from its name.
    #[serde(default)]
    pub kind: String,
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
    /// Its headline figures, as its engine reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headlines: Vec<Headline>,
    /// Its scores per dimension (for a part that scores answers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<Score>,
}

impl PartEntry {
    /// A battery's fixed part, not run yet.
    pub fn pending(part: Part) -> Self {
        Self::named(part.name(), part.kind())
    }

    /// A part `name` of `kind`, not run yet, in the folder of its name.
    pub fn named(name: &str, kind: &str) -> Self {
        Self {
            part: name.to_owned(),
            kind: kind.to_owned(),
            folder: name.to_owned(),
            status: PartStatus::Pending,
            detail: None,
            files: BTreeMap::new(),
            validity: None,
            seconds: 0.0,
            exit_code: None,
            headlines: Vec::new(),
            scores: Vec::new(),
        }
    }

    /// The same part, not run yet (its files gone).
    #[must_use]
    pub fn reset(&self) -> Self {
        let mut entry = Self::named(&self.part, self.kind());
        entry.folder.clone_from(&self.folder);
        entry
    }

    /// Its kind (a version-1 file's from its name).
    pub fn kind(&self) -> &str {
        if !self.kind.is_empty() {
            return &self.kind;
        }
        match Part::parse(&self.part) {
            Ok(part) => part.kind(),
            Err(_) => &self.part,
        }
    }

    /// The battery's fixed part it is, when it is one.
    pub fn fixed_part(&self) -> Option<Part> {
        Part::parse(&self.part).ok()
    }
}

impl BatteryFile {
    /// A new battery of `config`, every part pending.
    pub fn new(config: BatteryConfig, command_line: Vec<String>, target: String) -> Self {
        let parts = config
            .parts
            .iter()
            .copied()
            .map(PartEntry::pending)
            .collect();
        Self::with_parts(Some(config), None, parts, command_line, target)
    }

    /// A new battery running `study` (as run), every part pending.
    pub fn of_study(study: Study, command_line: Vec<String>, target: String) -> Self {
        let parts = study
            .parts
            .iter()
            .map(|part| PartEntry::named(&part.name, &part.kind))
            .collect();
        Self::with_parts(None, Some(study), parts, command_line, target)
    }

    fn with_parts(
        config: Option<BatteryConfig>,
        study: Option<Study>,
        parts: Vec<PartEntry>,
        command_line: Vec<String>,
        target: String,
    ) -> Self {
        let now = vernier_run::unix_ms();
        let simulated = target == "simulator";
        let mut file = Self {
            schema_version: BATTERY_SCHEMA_VERSION,
            config,
            study,
            study_file: None,
            command_line,
            target,
            model: String::new(),
            simulated,
            started_unix_ms: now,
            updated_unix_ms: now,
            parts,
            totals: Vec::new(),
            wall_seconds: 0.0,
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
            let name = &entry.part;
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
            .filter_map(|entry| entry.validity.as_ref().map(|v| (entry.part.as_str(), v)));
        let mut verdict = Verdict::combine(parts);
        extra.append(&mut verdict.reasons);
        Verdict::from_reasons(extra)
    }

    /// The entry of `part`.
    pub fn entry(&self, part: Part) -> Option<&PartEntry> {
        self.entry_named(part.name())
    }

    /// The entry of the part named `name`.
    pub fn entry_named(&self, name: &str) -> Option<&PartEntry> {
        self.parts.iter().find(|entry| entry.part == name)
    }

    /// The battery's configuration, for a battery of flags (`Err` names a study's).
    pub fn flags_config(&self) -> Result<&BatteryConfig, BatteryError> {
        self.config.as_ref().ok_or_else(|| BatteryError::Parse {
            path: PathBuf::from(BATTERY_FILE),
            detail: "this battery runs a study, not a preset of flags".to_owned(),
        })
    }

    /// A battery's index read from its folder or its `battery.json`.
    pub fn load(path: &Path) -> Result<Self, BatteryError> {
        let path = battery_path(path);
        let file: Self = read_json(&path)?;
        if !(BATTERY_SCHEMA_OLDEST..=BATTERY_SCHEMA_VERSION).contains(&file.schema_version) {
            return Err(BatteryError::Parse {
                path,
                detail: format!(
                    "schema version {} (this battery reads versions {BATTERY_SCHEMA_OLDEST} to {BATTERY_SCHEMA_VERSION})",
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
        self.totals = totals(&self.parts);
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

/// A JSON file read into `T`: a file that cannot be read or parsed is refused by its path.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, BatteryError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| BatteryError::io("read", path, source))?;
    serde_json::from_str(&text).map_err(|error| BatteryError::Parse {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })
}
