//! A tune's record (`tune.json`, written whole after every step) and its journal
//! (`tune.jsonl`, one line per launch, ready, crash and stop, appended as they happen).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::{RankBy, TuneConfig, TuneTarget, round_order};
use super::results::{Death, TuneAnalysis};
use crate::error::BatteryError;
use crate::study::Study;

/// The record's file name.
pub const TUNE_FILE: &str = "tune.json";
/// The journal's file name.
pub const TUNE_JOURNAL: &str = "tune.jsonl";
/// The record's schema version.
pub const TUNE_SCHEMA_VERSION: u32 = 1;

/// Where one configuration's turn in one round stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TurnStatus {
    /// Not begun.
    Pending,
    /// Begun and cut short (an interrupt): resumed where its study stopped.
    Interrupted,
    /// The study ran to its end and the server lived.
    Done,
    /// The server exited before it answered its health check.
    StartFailed,
    /// The server died while the study ran.
    Crashed,
}

impl TurnStatus {
    /// Whether the turn is over (resume passes it by).
    pub const fn finished(self) -> bool {
        matches!(self, Self::Done | Self::StartFailed | Self::Crashed)
    }

    /// The word reports use.
    pub const fn word(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Interrupted => "interrupted",
            Self::Done => "done",
            Self::StartFailed => "failed to start",
            Self::Crashed => "crashed",
        }
    }
}

/// One configuration's turn in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Turn {
    /// The round (1-based).
    pub round: u32,
    /// The configuration's name.
    pub config: String,
    /// Where it stands.
    pub status: TurnStatus,
    /// Its folder, relative to the tune's: the server's output and the study's folder.
    pub folder: String,
    /// Launches of this turn (more than one when an interrupted turn was resumed).
    pub launches: u32,
    /// When the last launch began, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched_unix_ms: Option<u64>,
    /// Seconds from that launch to the first 200 from the health check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_s: Option<f64>,
    /// Whether the port was closed after the server was stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_closed: Option<bool>,
    /// What the server left when it failed to start or died.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub death: Option<Death>,
    /// Seconds the turn took, over its sessions.
    pub seconds: f64,
}

impl Turn {
    /// The study's folder inside the turn's.
    pub fn study_folder(&self, out: &Path) -> PathBuf {
        out.join(&self.folder).join("study")
    }
}

/// A tune's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TuneFile {
    /// [`TUNE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The command line that began it (or last continued it).
    pub command_line: Vec<String>,
    /// The study each configuration runs, as it runs (without a launch of its own).
    pub study: Study,
    /// The file the study was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study_file: Option<String>,
    /// The configurations, in the order of the odd rounds.
    pub configs: Vec<TuneConfig>,
    /// What the winner must meet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TuneTarget>,
    /// What ranks the configurations.
    pub rank_by: RankBy,
    /// Rounds: each configuration once per round.
    pub rounds: u32,
    /// Every turn, in the order they run.
    pub turns: Vec<Turn>,
    /// Seconds of wall time over every session.
    pub wall_seconds: f64,
    /// What the turns show, once every turn is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<TuneAnalysis>,
}

impl TuneFile {
    /// A new tune: every turn pending, rounds in alternating order.
    pub fn new(
        study: Study,
        configs: Vec<TuneConfig>,
        rounds: u32,
        target: Option<TuneTarget>,
        rank_by: RankBy,
    ) -> Self {
        let turns = (1..=rounds)
            .flat_map(|round| {
                round_order(&configs, round)
                    .into_iter()
                    .map(move |config| Turn {
                        folder: format!("round-{round}/{config}"),
                        round,
                        config,
                        status: TurnStatus::Pending,
                        launches: 0,
                        launched_unix_ms: None,
                        ready_s: None,
                        port_closed: None,
                        death: None,
                        seconds: 0.0,
                    })
            })
            .collect();
        Self {
            schema_version: TUNE_SCHEMA_VERSION,
            command_line: Vec::new(),
            study,
            study_file: None,
            configs,
            target,
            rank_by,
            rounds,
            turns,
            wall_seconds: 0.0,
            analysis: None,
        }
    }

    /// The configuration named `name`.
    pub fn config(&self, name: &str) -> Option<&TuneConfig> {
        self.configs.iter().find(|c| c.name == name)
    }

    /// Reads `tune.json` from `folder`.
    pub fn load(folder: &Path) -> Result<Self, BatteryError> {
        let path = folder.join(TUNE_FILE);
        let file: Self = crate::file::read_json(&path)?;
        if file.schema_version > TUNE_SCHEMA_VERSION {
            return Err(BatteryError::Parse {
                path,
                detail: format!(
                    "schema {} is newer than this build reads ({TUNE_SCHEMA_VERSION}): use a newer battery",
                    file.schema_version
                ),
            });
        }
        Ok(file)
    }

    /// Writes `tune.json` into `folder`, whole or not at all.
    pub fn write(&self, folder: &Path) -> Result<PathBuf, BatteryError> {
        let path = folder.join(TUNE_FILE);
        let text = serde_json::to_string_pretty(self).map_err(|error| BatteryError::Parse {
            path: path.clone(),
            detail: error.to_string(),
        })?;
        vernier_run::write_atomically(&path, text.as_bytes())
            .map_err(|source| BatteryError::io("write", &path, source))?;
        Ok(path)
    }
}

/// One line of the tune's journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TuneEvent {
    /// The tune began: its configurations and every round's order.
    Began {
        /// ms since the epoch.
        unix_ms: u64,
        /// The configurations and their commands.
        configs: Vec<TuneConfig>,
        /// Each round's order.
        rounds: Vec<Vec<String>>,
    },
    /// A later session continued it.
    Resumed {
        /// ms since the epoch.
        unix_ms: u64,
    },
    /// A configuration's server is being started.
    Launching {
        /// ms since the epoch.
        unix_ms: u64,
        /// The round.
        round: u32,
        /// The configuration.
        config: String,
        /// The command.
        command: String,
    },
    /// It answered its health check.
    Ready {
        /// ms since the epoch.
        unix_ms: u64,
        /// The round.
        round: u32,
        /// The configuration.
        config: String,
        /// Seconds from launch.
        ready_s: f64,
    },
    /// Its turn ended (done, failed to start, crashed or interrupted).
    Ended {
        /// ms since the epoch.
        unix_ms: u64,
        /// The round.
        round: u32,
        /// The configuration.
        config: String,
        /// How.
        status: TurnStatus,
    },
    /// Its server was stopped.
    Stopped {
        /// ms since the epoch.
        unix_ms: u64,
        /// The round.
        round: u32,
        /// The configuration.
        config: String,
        /// Whether the port no longer answered afterwards.
        port_closed: bool,
    },
}
