//! Who the server is, and the one check that a resumed run still talks to the same one.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::RunError;

/// What identifies the server a run measured: the model it served, the software and the
/// version it reported. A new address alone does not change it (a server that came back on
/// another port is the same server).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerFingerprint {
    /// The model measured, as the server names it.
    pub model: String,
    /// `vllm`, `llama_cpp`, `sglang` or `unknown`.
    pub kind: String,
    /// What `/version` answered, as text (`None` when it did not answer).
    pub version: Option<String>,
}

impl ServerFingerprint {
    /// A fingerprint of `model` served by a `kind` server at `version`.
    pub fn new(model: impl Into<String>, kind: impl Into<String>, version: Option<String>) -> Self {
        Self {
            model: model.into(),
            kind: kind.into(),
            version,
        }
    }

    /// What differs from `now`, `name: journal X, now Y`; the version only when both said one.
    pub fn differences(&self, now: &Self) -> Vec<String> {
        self.differences_as(now, "journal", "now")
    }

    /// The differences, naming the two readings `before` and `after` (`at the start`, `at
    /// the end`).
    pub fn differences_as(&self, now: &Self, before: &str, after: &str) -> Vec<String> {
        let mut differences = Vec::new();
        if self.model != now.model {
            differences.push(format!(
                "model: {before} {:?}, {after} {:?}",
                self.model, now.model
            ));
        }
        if self.kind != now.kind {
            differences.push(format!(
                "server kind: {before} {}, {after} {}",
                self.kind, now.kind
            ));
        }
        if let (Some(old), Some(new)) = (&self.version, &now.version)
            && old != new
        {
            differences.push(format!("server /version: {before} {old}, {after} {new}"));
        }
        differences
    }
}

/// Refuses a resumed run whose server is not the one `journal` measured
/// ([`RunError::ServerChanged`], naming every difference).
pub fn check_same_server(
    journal: &Path,
    recorded: &ServerFingerprint,
    now: &ServerFingerprint,
) -> Result<(), RunError> {
    let differences = recorded.differences(now);
    if differences.is_empty() {
        Ok(())
    } else {
        Err(RunError::ServerChanged {
            journal: journal.to_path_buf(),
            differences: differences.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_cli::Failure as _;

    #[test]
    fn another_model_kind_or_version_is_refused_and_a_missing_version_is_not() {
        let recorded = ServerFingerprint::new("m", "vllm", Some("0.19.0".to_owned()));
        let journal = Path::new("out/journal.jsonl");
        assert!(check_same_server(journal, &recorded, &recorded).is_ok());
        let unversioned = ServerFingerprint::new("m", "vllm", None);
        assert!(check_same_server(journal, &recorded, &unversioned).is_ok());
        let other = ServerFingerprint::new("n", "llama_cpp", Some("0.20.0".to_owned()));
        let error = check_same_server(journal, &recorded, &other).expect_err("changed");
        let text = error.to_string();
        for part in [
            "model: journal \"m\", now \"n\"",
            "server kind: journal vllm, now llama_cpp",
            "server /version: journal 0.19.0, now 0.20.0",
        ] {
            assert!(text.contains(part), "{text}");
        }
        assert_eq!(error.exit_code(), 1);
    }
}
