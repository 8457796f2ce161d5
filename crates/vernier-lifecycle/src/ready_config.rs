//! What `ready` can be told, and the checks on it.

use serde::{Deserialize, Serialize};
use vernier_run::RunError;

use crate::error::LifecycleError;

/// Everything `ready` can be told. `Default` is the command line's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ReadyConfig {
    /// Where the server answers (with or without `/v1`).
    pub base_url: String,
    /// Shell command that starts the server (run with `sh -c` in its own process group).
    pub launch: Option<String>,
    /// Shell command that stops it; default SIGTERM to the group.
    pub stop: Option<String>,
    /// Models to switch between on a proxy that loads on demand (no `launch`).
    pub swap: Vec<String>,
    /// The model to wait for in `/v1/models` and to ask; default the first one listed.
    pub model: Option<String>,
    /// Repetitions.
    pub reps: u32,
    /// Warm requests after the first one, whose median is compared with it.
    pub warm_requests: u32,
    /// `max_tokens` of each measured request.
    pub max_tokens: u32,
    /// The measured requests' prompt.
    pub prompt: String,
    /// Seconds from launch (or from a swap request) before a repetition is given up.
    pub ready_timeout_s: f64,
    /// Seconds between two polls of the port, `/health` and `/v1/models`.
    pub poll_interval_s: f64,
    /// Seconds between SIGTERM (or the stop command) and SIGKILL.
    pub stop_grace_s: f64,
    /// The environment variable holding the API key (`OPENAI_API_KEY` when set and none is
    /// named); its value is never written anywhere.
    pub api_key_env: Option<String>,
    /// A PEM file of CA certificates trusted beside the built-in roots.
    pub ca_cert: Option<std::path::PathBuf>,
    /// Fields merged into every measured request's body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

impl Default for ReadyConfig {
    fn default() -> Self {
        Self {
            base_url: vernier_run::DEFAULT_BASE_URL.to_owned(),
            launch: None,
            stop: None,
            swap: Vec::new(),
            model: None,
            reps: 3,
            warm_requests: 3,
            max_tokens: 32,
            prompt: "Write one sentence about the sea.".to_owned(),
            ready_timeout_s: 900.0,
            poll_interval_s: 0.05,
            stop_grace_s: 15.0,
            api_key_env: None,
            ca_cert: None,
            extra_body: serde_json::Map::new(),
        }
    }
}

impl ReadyConfig {
    /// Checks ranges and combinations; the first problem is the error.
    pub fn check(&self) -> Result<(), LifecycleError> {
        let invalid = |flag: &str, detail: &str| Err(RunError::invalid(flag, detail).into());
        match (&self.launch, self.swap.len()) {
            (None, 0) => return invalid("--launch or --swap", "give one of them"),
            (Some(_), n) if n > 0 => {
                return invalid(
                    "--launch with --swap",
                    "--swap measures a running proxy; drop --launch",
                );
            }
            (None, 1) => return invalid("--swap", "name two models or more, comma-separated"),
            _ => {}
        }
        if self
            .launch
            .as_deref()
            .is_some_and(|command| command.trim().is_empty())
        {
            return invalid(
                "--launch",
                "the command is empty; give the command that starts the server, e.g. 'llama-server -m model.gguf --port 8080'",
            );
        }
        if self.stop.is_some() && self.launch.is_none() {
            return invalid(
                "--stop",
                "it stops what --launch started; give --launch too",
            );
        }
        if self.reps == 0 {
            return invalid("--reps", "use 1 or more");
        }
        if self.max_tokens < 2 {
            return invalid("--max-tokens", "a decode rate needs 2 tokens or more");
        }
        for (value, field) in [
            (self.ready_timeout_s, "--ready-timeout"),
            (self.poll_interval_s, "--poll-interval"),
            (self.stop_grace_s, "--stop-grace"),
        ] {
            vernier_run::seconds(field, value, true)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_must_say_what_to_measure() {
        assert!(ReadyConfig::default().check().is_err());
        let launch = ReadyConfig {
            launch: Some("true".to_owned()),
            ..ReadyConfig::default()
        };
        assert!(launch.check().is_ok());
        let both = ReadyConfig {
            swap: vec!["a".to_owned(), "b".to_owned()],
            ..launch.clone()
        };
        assert!(both.check().is_err());
        let one_model = ReadyConfig {
            swap: vec!["a".to_owned()],
            ..ReadyConfig::default()
        };
        assert!(one_model.check().is_err());
        let empty = ReadyConfig {
            launch: Some("  ".to_owned()),
            ..launch.clone()
        };
        assert!(
            empty
                .check()
                .is_err_and(|e| e.to_string().contains("--launch")),
            "an empty --launch is refused"
        );
        let no_reps = ReadyConfig { reps: 0, ..launch };
        assert!(no_reps.check().is_err());
    }
}
