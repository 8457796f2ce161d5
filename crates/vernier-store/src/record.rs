//! One run as the store keeps it: who it measured, when, its verdict, and its headline figures,
//! scores and launch settings as rows a query can use.

use serde::{Deserialize, Serialize};
use vernier_run::{Headline, Score};

/// One registered run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunRecord {
    /// `KIND-STARTED-HASH`: the kind, the start in ms since the Unix epoch, and 8 hex digits of
    /// the folder's path (the same run read twice has the same id).
    pub id: String,
    /// `sweep`, `agent`, `replay`, `suite`, `dataset`, `ladder`, `ready`, `swap`, `soak`,
    /// `watch`, `battery` or `study`.
    pub kind: String,
    /// The run's folder, absolute.
    pub folder: String,
    /// When it started, ms since the Unix epoch (its run file's, else the folder's creation).
    pub started_unix_ms: i64,
    /// When its run file was last written, ms since the Unix epoch.
    pub ended_unix_ms: i64,
    /// The server's address, or `simulator` for the bundled one.
    pub target: String,
    /// `vllm`, `llama_cpp`, `sglang`, … as the server identified itself (empty when the run
    /// file does not say).
    pub server_kind: String,
    /// What `/version` answered (empty when it did not).
    pub server_version: String,
    /// The model measured, as the server names it.
    pub model: String,
    /// The weights the server says it loaded (path and file type, where stated).
    pub weights: String,
    /// The GPUs read (names), empty when none was.
    pub gpu: String,
    /// Their driver version.
    pub driver: String,
    /// The client machine (CPU model and cores, OS), where the run file records it.
    pub machine: String,
    /// `valid`, `questionable` or `invalid`.
    pub verdict: String,
    /// The verdict's reasons, one line.
    pub verdict_reasons: String,
    /// Whether the folder was there when the store last looked (`runs reindex` marks a run
    /// whose folder is gone, and never invents one).
    pub folder_present: bool,
    /// Its headline figures, as its report gives them.
    pub figures: Vec<Headline>,
    /// Its scores, per dimension.
    pub scores: Vec<Score>,
    /// Its launch settings as the server states them, and the run's own settings, flattened
    /// to `name = value` (what `runs history` compares between runs).
    pub settings: Vec<(String, String)>,
}

impl RunRecord {
    /// The figure named `name`.
    pub fn figure(&self, name: &str) -> Option<&Headline> {
        self.figures.iter().find(|figure| figure.name == name)
    }

    /// The setting named `name`.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The run's start as `YYYY-MM-DD HH:MM UTC`.
    pub fn started(&self) -> String {
        vernier_run::utc_minute(u64::try_from(self.started_unix_ms).unwrap_or(0))
    }

    /// Who it measured, for what history groups by: the model and the server's kind.
    pub fn identity(&self) -> (String, String) {
        (self.model.clone(), self.server_kind.clone())
    }
}
