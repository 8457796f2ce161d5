//! What `soak` can be told, the arms it soaks (each configuration at each concurrency), and
//! the interleaved order of their slices.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use vernier_run::RunError;

use crate::error::LifecycleError;

/// One configuration: a name and the command that launches it (none: a running server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SoakServer {
    /// The name in reports (`default` for a single `--launch` or a running server).
    pub name: String,
    /// The launch command (`sh -c`, its own process group); `None` soaks a running server.
    pub launch: Option<String>,
}

impl SoakServer {
    /// A configuration named `name` launched by `launch`.
    pub fn new(name: impl Into<String>, launch: Option<String>) -> Self {
        Self {
            name: name.into(),
            launch,
        }
    }
}

/// One arm: a configuration held at one concurrency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SoakArm {
    /// `NAME` (one concurrency) or `NAME c=N`.
    pub name: String,
    /// Index into [`SoakConfig::servers`].
    pub server: usize,
    /// Requests in flight at once.
    pub concurrency: u32,
}

/// Everything `soak` can be told. `Default` is the command line's defaults (with no server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct SoakConfig {
    /// Where the server answers (with or without `/v1`).
    pub base_url: String,
    /// The configurations; one without a launch command soaks a running server.
    pub servers: Vec<SoakServer>,
    /// Shell command that stops a launched server; default SIGTERM to its group.
    pub stop: Option<String>,
    /// The model to ask; default the first one listed.
    pub model: Option<String>,
    /// Environment variable holding the API key (never written anywhere).
    pub api_key_env: Option<String>,
    /// A PEM file of CA certificates trusted beside the built-in roots.
    pub ca_cert: Option<std::path::PathBuf>,
    /// Requests in flight at once; each value is an arm of its own.
    pub concurrency: Vec<u32>,
    /// Seconds of load each arm is held for (the time to ready after a relaunch not counted).
    pub duration_s: f64,
    /// Seconds of one slice: arms take turns in slices of this length (default: the whole
    /// duration for one arm, else 15 minutes), in the order A B, then B A, and so on.
    pub round_s: Option<f64>,
    /// `max_tokens` of every request: long generations, so every slot is deep.
    pub max_tokens: u32,
    /// Ask the server to generate `max_tokens` whatever the model says (`ignore_eos`, which
    /// vLLM, `SGLang` and llama.cpp read), so each request reaches its depth.
    pub ignore_eos: bool,
    /// Fields merged into every request body (sampling settings such as
    /// `{"repetition_penalty": 1.1}`), recorded with each request in flight at a death.
    pub extra_body: Map<String, Value>,
    /// The prompt; each request opens with a unique line, so none is served from a cache.
    pub prompt: String,
    /// Seconds to wait for a (re)launched or returning server to answer a request.
    pub ready_timeout_s: f64,
    /// Seconds between two looks at `/health`, `/metrics` and a launched process.
    pub probe_interval_s: f64,
    /// Seconds with no token on any request in flight before the generation counter is read.
    pub hang_after_s: f64,
    /// Seconds between the two reads of the generation counter.
    pub settle_s: f64,
    /// Seconds between SIGTERM (or the stop command) and SIGKILL.
    pub stop_grace_s: f64,
    /// Lines of a launched server's log kept with each death.
    pub log_tail_lines: usize,
}

impl Default for SoakConfig {
    fn default() -> Self {
        Self {
            base_url: vernier_run::DEFAULT_BASE_URL.to_owned(),
            servers: Vec::new(),
            stop: None,
            model: None,
            api_key_env: None,
            ca_cert: None,
            concurrency: vec![4],
            duration_s: 3600.0,
            round_s: None,
            max_tokens: 4096,
            ignore_eos: true,
            extra_body: Map::new(),
            prompt: "Write a long, detailed story about a lighthouse keeper and the ships that pass, chapter after chapter.".to_owned(),
            ready_timeout_s: 900.0,
            probe_interval_s: 2.0,
            hang_after_s: 60.0,
            settle_s: 5.0,
            stop_grace_s: 15.0,
            log_tail_lines: 200,
        }
    }
}

impl SoakConfig {
    /// The arms, server by server, concurrency by concurrency.
    pub fn arms(&self) -> Vec<SoakArm> {
        let mut arms = Vec::new();
        for (index, server) in self.servers.iter().enumerate() {
            for concurrency in &self.concurrency {
                let name = if self.concurrency.len() == 1 {
                    server.name.clone()
                } else {
                    format!("{} c={concurrency}", server.name)
                };
                arms.push(SoakArm {
                    name,
                    server: index,
                    concurrency: *concurrency,
                });
            }
        }
        arms
    }

    /// Seconds of one slice.
    pub fn round_seconds(&self) -> f64 {
        match self.round_s {
            Some(round) => round.min(self.duration_s),
            None if self.arms().len() <= 1 => self.duration_s,
            None => self.duration_s.min(900.0),
        }
    }

    /// The arms' order in round `round` (0-based): forward in even rounds, reversed in odd
    /// ones, so no arm always runs first on a machine that warms up or drifts.
    pub fn round_order(&self, round: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.arms().len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        order
    }

    /// Checks ranges and combinations; the first problem is the error.
    pub fn check(&self) -> Result<(), LifecycleError> {
        let invalid = |flag: &str, detail: String| Err(RunError::invalid(flag, detail).into());
        if self.servers.is_empty() {
            return invalid(
                "--launch or --config",
                "give the server to soak: --launch 'CMD', --config NAME='CMD' (repeated), or neither with --base-url of a running server".to_owned(),
            );
        }
        let mut names = std::collections::BTreeSet::new();
        for server in &self.servers {
            if server.name.trim().is_empty() || !names.insert(server.name.as_str()) {
                return invalid(
                    "--config",
                    format!(
                        "the name {:?} is empty or given twice; name each configuration once, NAME='launch command'",
                        server.name
                    ),
                );
            }
            if server
                .launch
                .as_deref()
                .is_some_and(|command| command.trim().is_empty())
            {
                return invalid(
                    "--config",
                    format!(
                        "{} has an empty launch command; give the command that starts the server",
                        server.name
                    ),
                );
            }
        }
        if self.servers.len() > 1 && self.servers.iter().any(|s| s.launch.is_none()) {
            return invalid(
                "--config",
                "comparing configurations needs each one's launch command".to_owned(),
            );
        }
        if self.stop.is_some() && self.servers.iter().all(|s| s.launch.is_none()) {
            return invalid(
                "--stop",
                "it stops what --launch started; give --launch too".to_owned(),
            );
        }
        if self.concurrency.is_empty() || self.concurrency.contains(&0) {
            return invalid(
                "--concurrency",
                "use 1 or more requests in flight (comma-separated for several arms)".to_owned(),
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        if !self.concurrency.iter().all(|c| seen.insert(*c)) {
            return invalid("--concurrency", "a value is given twice".to_owned());
        }
        if self.max_tokens == 0 {
            return invalid(
                "--max-tokens",
                "use 1 or more (thousands, to hold every slot deep)".to_owned(),
            );
        }
        vernier_run::seconds("--duration", self.duration_s, false)?;
        if let Some(round) = self.round_s {
            vernier_run::seconds("--round", round, false)?;
            if round < 1.0 {
                return invalid(
                    "--round",
                    format!(
                        "{round} s would relaunch the server without end; use 1 s or more (minutes, in practice)"
                    ),
                );
            }
        }
        if self.probe_interval_s < 0.01 {
            return invalid(
                "--probe-interval",
                format!(
                    "{} s is too short to look at anything; use 0.01 s or more",
                    self.probe_interval_s
                ),
            );
        }
        for (value, flag) in [
            (self.ready_timeout_s, "--ready-timeout"),
            (self.probe_interval_s, "--probe-interval"),
            (self.hang_after_s, "--hang-after"),
            (self.settle_s, "--settle"),
            (self.stop_grace_s, "--stop-grace"),
        ] {
            vernier_run::seconds(flag, value, false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> SoakConfig {
        SoakConfig {
            servers: vec![
                SoakServer::new("a", Some("serve a".to_owned())),
                SoakServer::new("b", Some("serve b".to_owned())),
            ],
            ..SoakConfig::default()
        }
    }

    #[test]
    fn arms_cross_configurations_with_concurrencies_and_alternate_their_order() {
        let config = SoakConfig {
            concurrency: vec![2, 4],
            ..two()
        };
        let names: Vec<String> = config.arms().into_iter().map(|arm| arm.name).collect();
        assert_eq!(names, ["a c=2", "a c=4", "b c=2", "b c=4"]);
        assert_eq!(config.round_order(0), [0, 1, 2, 3]);
        assert_eq!(config.round_order(1), [3, 2, 1, 0]);
        assert!((config.round_seconds() - 900.0).abs() < 1e-9);
        let one = SoakConfig {
            servers: vec![SoakServer::new("default", None)],
            duration_s: 7200.0,
            ..SoakConfig::default()
        };
        assert!((one.round_seconds() - 7200.0).abs() < 1e-9);
    }

    #[test]
    fn bad_settings_are_refused_by_flag() {
        let refused = |config: SoakConfig, flag: &str| {
            let error = config.check().expect_err("refused");
            assert!(error.to_string().contains(flag), "{error}");
        };
        refused(SoakConfig::default(), "--launch or --config");
        let mut twice = two();
        twice.servers[1].name = "a".to_owned();
        refused(twice, "--config");
        let mut running = two();
        running.servers[1].launch = None;
        refused(running, "--config");
        refused(
            SoakConfig {
                concurrency: vec![4, 4],
                ..two()
            },
            "--concurrency",
        );
        refused(
            SoakConfig {
                duration_s: 0.0,
                ..two()
            },
            "--duration",
        );
        assert!(two().check().is_ok());
    }
}
