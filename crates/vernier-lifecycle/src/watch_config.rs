//! What `watch` can be told, and the checks on it.

use serde::{Deserialize, Serialize};
use vernier_run::RunError;

use crate::error::LifecycleError;

/// Everything `watch` can be told. `Default` is the command line's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct WatchConfig {
    /// The server root (with or without `/v1`).
    pub base_url: String,
    /// Model to probe; default: the first one `/v1/models` lists.
    pub model: Option<String>,
    /// Seconds from one probe's start to the next.
    pub interval_s: f64,
    /// A probe that has no token after this many seconds failed.
    pub probe_timeout_s: f64,
    /// Seconds between the two reads of the generation counter.
    pub settle_s: f64,
    /// Failed probes with a still counter (in a row) before the engine counts as hung.
    pub failures: u32,
    /// Shell command run when the engine is hung (for example a container restart).
    pub on_hung: Option<String>,
    /// Shell command run when the server has been unreachable `failures` probes in a row.
    pub on_down: Option<String>,
    /// Seconds after an action during which no other action runs.
    pub grace_s: f64,
    /// After an action, how long to wait for a successful probe before watching again.
    pub ready_timeout_s: f64,
    /// Judge by failed probes alone when `/metrics` has no known generation counter.
    pub allow_no_counter: bool,
    /// Stop after this many probes (default: run until interrupted).
    pub max_probes: Option<u64>,
    /// The probe's prompt.
    pub prompt: String,
    /// The environment variable holding the API key (`OPENAI_API_KEY` when set and none is
    /// named); its value is never written anywhere.
    pub api_key_env: Option<String>,
    /// A PEM file of CA certificates trusted beside the built-in roots.
    pub ca_cert: Option<std::path::PathBuf>,
    /// Fields merged into every probe's body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self {
            base_url: vernier_run::DEFAULT_BASE_URL.to_owned(),
            model: None,
            interval_s: 30.0,
            probe_timeout_s: 30.0,
            settle_s: 20.0,
            failures: 2,
            on_hung: None,
            on_down: None,
            grace_s: 300.0,
            ready_timeout_s: 900.0,
            allow_no_counter: false,
            max_probes: None,
            prompt: "Hi".to_owned(),
            api_key_env: None,
            ca_cert: None,
            extra_body: serde_json::Map::new(),
        }
    }
}

impl WatchConfig {
    /// Checks ranges; the first problem is the error.
    pub fn check(&self) -> Result<(), LifecycleError> {
        for (value, field) in [
            (self.interval_s, "--interval"),
            (self.probe_timeout_s, "--timeout"),
            (self.settle_s, "--settle"),
            (self.grace_s, "--grace"),
            (self.ready_timeout_s, "--ready-timeout"),
        ] {
            vernier_run::seconds(field, value, true)?;
        }
        if self.probe_timeout_s <= 0.0 || self.interval_s <= 0.0 {
            return Err(RunError::invalid(
                "--interval/--timeout",
                "both must be more than 0 seconds",
            )
            .into());
        }
        if self.failures == 0 {
            return Err(RunError::invalid(
                "--failures",
                "0 would act without a failed probe; use 1 or more",
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_refused() {
        let config = WatchConfig {
            failures: 0,
            ..WatchConfig::default()
        };
        assert!(config.check().is_err());
        let config = WatchConfig {
            interval_s: -1.0,
            ..WatchConfig::default()
        };
        assert!(config.check().is_err());
        assert!(WatchConfig::default().check().is_ok());
    }
}
