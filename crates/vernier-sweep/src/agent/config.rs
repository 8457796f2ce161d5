//! What an agent run or a trace replay is asked to do, checked before anything is sent.

use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vernier_stats::SplitMix64;

use crate::capacity_target::Target;
use crate::config::Workload;

/// The pause between a session's turns: the time an agent spends running a tool or a user
/// spends reading.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Think {
    /// The same pause every time.
    Fixed {
        /// Seconds.
        seconds: f64,
    },
    /// Drawn from an exponential distribution (seeded), as independent arrivals would be.
    Exponential {
        /// The mean, in seconds.
        mean_s: f64,
    },
}

impl Think {
    /// One pause, drawn with `rng` when random.
    pub(crate) fn draw(self, rng: &mut SplitMix64) -> Duration {
        let seconds = match self {
            Self::Fixed { seconds } => seconds,
            Self::Exponential { mean_s } => {
                // Inverse transform: −mean · ln(1 − u), u in [0, 1).
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                -mean_s * (1.0 - u).ln()
            }
        };
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
    }

    /// How it is written on the command line (`0.5s`, `exp:2s`).
    pub fn label(self) -> String {
        match self {
            Self::Fixed { seconds } => format!("{seconds}s"),
            Self::Exponential { mean_s } => format!("exp:{mean_s}s"),
        }
    }
}

fn seconds_of(text: &str) -> Option<f64> {
    let text = text.trim();
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1.0)
    } else {
        (text, 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * scale)
        .filter(|v| v.is_finite() && *v >= 0.0 && *v <= 3600.0)
}

impl FromStr for Think {
    type Err = String;

    /// `0.5`, `0.5s`, `500ms` (fixed) or `exp:2s` (exponential with that mean).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let help = "give a pause like 0.5s or 500ms, or exp:2s for pauses drawn with a 2 s mean (at most 3600 s)";
        if let Some(mean) = text.strip_prefix("exp:") {
            return seconds_of(mean)
                .map(|mean_s| Self::Exponential { mean_s })
                .ok_or_else(|| format!("think time {text:?}: {help}"));
        }
        seconds_of(text)
            .map(|seconds| Self::Fixed { seconds })
            .ok_or_else(|| format!("think time {text:?}: {help}"))
    }
}

/// The most sessions one run (or one step of the capacity search) holds at once.
pub const MAX_SESSIONS: u32 = 1024;
/// The most turns a session has.
pub const MAX_TURNS: u32 = 1000;
/// The most tools offered.
pub const MAX_TOOLS: u32 = 64;

/// An agent run: `sessions` conversations of `turns` turns each, sharing one system prompt and
/// tool list, with the prefix cache allowed and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentConfig {
    /// The model (filled in from `/v1/models` when empty).
    pub model: String,
    /// Concurrent sessions.
    pub sessions: u32,
    /// Turns per session (one request each).
    pub turns: u32,
    /// The shared system prompt's length, in the server's tokens.
    pub system_tokens: u32,
    /// Tools offered with every turn (0: none, and no tool calls).
    pub tools: u32,
    /// Each user message's length, in the server's tokens.
    pub user_tokens: u32,
    /// Each tool result's length, in the server's tokens.
    pub tool_result_tokens: u32,
    /// The most tokens a turn's answer may have.
    pub max_tokens: u32,
    /// The pause between a session's turns.
    pub think: Think,
    /// The corpus the texts come from.
    pub workload: Workload,
    /// The seed of the texts' places in the corpus and of drawn pauses.
    pub seed: u64,
    /// The sampling temperature sent.
    pub temperature: f64,
    /// After the run, the same sessions again with the prefix cache defeated.
    pub baseline_no_cache: bool,
    /// The goodput target: a turn meets it when every part holds for that turn.
    pub target: Option<Target>,
    /// Search the largest number of sessions whose turns meet the target, up to this many.
    pub capacity_up_to: Option<u32>,
    /// Keep every response byte for byte under `captures/`.
    pub capture: bool,
    /// Extra fields merged into every request body.
    #[serde(default)]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Seconds without a stream event before a request is given up as hung (and the server
    /// asked whether it still answers).
    #[serde(default = "default_idle_timeout_s")]
    pub idle_timeout_s: f64,
}

/// The default of `--idle-timeout-s`, as the sweep's.
pub(crate) fn default_idle_timeout_s() -> f64 {
    60.0
}

impl Default for AgentConfig {
    /// Four sessions of six turns, a 1,000-token system prompt with four tools, 60-token user
    /// messages, 150-token tool results, 64-token answers, 0.2 s between turns.
    fn default() -> Self {
        Self {
            model: String::new(),
            sessions: 4,
            turns: 6,
            system_tokens: 1000,
            tools: 4,
            user_tokens: 60,
            tool_result_tokens: 150,
            max_tokens: 64,
            think: Think::Fixed { seconds: 0.2 },
            workload: Workload::Prose,
            seed: 0,
            temperature: 0.0,
            baseline_no_cache: false,
            target: None,
            capacity_up_to: None,
            capture: false,
            extra_body: serde_json::Map::new(),
            idle_timeout_s: default_idle_timeout_s(),
        }
    }
}

/// What an agent run sends, planned from its configuration before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentLoad {
    /// Passes: 2 with the cache defeated as a baseline, else 1.
    pub passes: u32,
    /// Turns of one pass (sessions × turns): one request each.
    pub turns: u64,
    /// Prompt tokens of one pass, at most: each turn sends the whole conversation so far (the
    /// system prompt and every earlier turn's messages, the answers at their full budget).
    pub prompt_tokens: u64,
    /// Completion tokens of one pass, at most.
    pub completion_tokens: u64,
}

impl AgentConfig {
    /// What the run sends (a capacity search's steps, chosen as it goes, not counted).
    pub fn planned(&self) -> AgentLoad {
        let per_turn = u64::from(self.user_tokens)
            + u64::from(self.tool_result_tokens)
            + u64::from(self.max_tokens);
        let prompt_tokens = (1..=u64::from(self.turns))
            .map(|turn| u64::from(self.system_tokens) + turn * per_turn)
            .sum::<u64>()
            * u64::from(self.sessions);
        let turns = u64::from(self.sessions) * u64::from(self.turns);
        AgentLoad {
            passes: if self.baseline_no_cache { 2 } else { 1 },
            turns,
            prompt_tokens,
            completion_tokens: turns * u64::from(self.max_tokens),
        }
    }

    /// The idle deadline of a stream.
    pub(crate) fn idle_timeout(&self) -> std::time::Duration {
        Duration::try_from_secs_f64(self.idle_timeout_s).unwrap_or(Duration::from_secs(60))
    }

    /// Refuses what cannot run, naming the flag and the fix.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_SESSIONS).contains(&self.sessions) {
            return Err(format!(
                "--sessions {}: give 1 to {MAX_SESSIONS}",
                self.sessions
            ));
        }
        if !(1..=MAX_TURNS).contains(&self.turns) {
            return Err(format!("--turns {}: give 1 to {MAX_TURNS}", self.turns));
        }
        if self.tools > MAX_TOOLS {
            return Err(format!("--tools {}: give 0 to {MAX_TOOLS}", self.tools));
        }
        if self.max_tokens == 0 {
            return Err("--max-tokens 0: a turn must be allowed at least one token".to_owned());
        }
        if self.user_tokens == 0 || self.tool_result_tokens == 0 {
            return Err(
                "--user-tokens and --tool-result-tokens must be at least 1 token".to_owned(),
            );
        }
        if !(self.idle_timeout_s.is_finite() && (0.1..=3600.0).contains(&self.idle_timeout_s)) {
            return Err(format!(
                "--idle-timeout-s {}: give 0.1 to 3600 seconds without a stream event before a request counts as hung",
                self.idle_timeout_s
            ));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(format!("--temperature {}: give 0 to 2", self.temperature));
        }
        match (self.capacity_up_to, &self.target) {
            (Some(_), None) => {
                return Err(
                    "--find-capacity needs --target: the largest number of sessions meeting what?"
                        .to_owned(),
                );
            }
            (Some(0), _) => return Err("--find-capacity 0: give at least 1 session".to_owned()),
            (Some(n), _) if n > MAX_SESSIONS => {
                return Err(format!("--find-capacity {n}: give 1 to {MAX_SESSIONS}"));
            }
            _ => {}
        }
        Ok(())
    }
}

/// A trace replay: each record of a trace sent at its recorded time (scaled), with synthesised
/// text of the recorded lengths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayConfig {
    /// The model (filled in from `/v1/models` when empty).
    pub model: String,
    /// Where the trace came from: a file path or `bundled:NAME`.
    pub trace: String,
    /// The trace's format (`jsonl`, `mooncake` or `azure`).
    pub format: String,
    /// Arrivals are sent this many times faster than recorded (10 = ten times faster).
    pub time_scale: f64,
    /// Only the first records (0: all).
    pub limit: usize,
    /// Output lengths are forced with `ignore_eos` and `min_tokens` where the server allows.
    pub force_length: bool,
    /// The goodput target: a request meets it when every part holds for it.
    pub target: Option<Target>,
    /// Keep every response byte for byte under `captures/`.
    pub capture: bool,
    /// Extra fields merged into every request body.
    #[serde(default)]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Records that do not fit the server's context are journaled as `too_long` without being
    /// sent; without it such a trace is refused before any request.
    #[serde(default)]
    pub skip_over_context: bool,
    /// Seconds without a stream event before a request is given up as hung (and the server
    /// asked whether it still answers).
    #[serde(default = "default_idle_timeout_s")]
    pub idle_timeout_s: f64,
}

impl Default for ReplayConfig {
    /// The bundled Mooncake-format trace at recorded speed.
    fn default() -> Self {
        Self {
            model: String::new(),
            trace: "bundled:mini-mooncake".to_owned(),
            format: String::new(),
            time_scale: 1.0,
            limit: 0,
            force_length: true,
            target: None,
            capture: false,
            extra_body: serde_json::Map::new(),
            skip_over_context: false,
            idle_timeout_s: default_idle_timeout_s(),
        }
    }
}

impl ReplayConfig {
    /// The idle deadline of a stream.
    pub(crate) fn idle_timeout(&self) -> std::time::Duration {
        Duration::try_from_secs_f64(self.idle_timeout_s).unwrap_or(Duration::from_secs(60))
    }

    /// Refuses what cannot run, naming the flag and the fix.
    pub fn check(&self) -> Result<(), String> {
        if !(self.time_scale.is_finite() && self.time_scale >= 0.001 && self.time_scale <= 10_000.0)
        {
            return Err(format!(
                "--time-scale {}: give a speed-up from 0.001 to 10000 (10 replays ten times faster, 0.5 at half speed)",
                self.time_scale
            ));
        }
        if !(self.idle_timeout_s.is_finite() && (0.1..=3600.0).contains(&self.idle_timeout_s)) {
            return Err(format!(
                "--idle-timeout-s {}: give 0.1 to 3600 seconds without a stream event before a request counts as hung",
                self.idle_timeout_s
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planned_load_counts_every_turn_resending_the_conversation() {
        // Worked by hand: each of 3 turns sends the 100-token system prompt and 35 tokens
        // (10 user + 5 tool result + 20 answer) per turn so far: 135 + 170 + 205 = 510 per
        // session, 1,020 for two; 6 turns of 20 completion tokens; a baseline doubles passes.
        let config = AgentConfig {
            sessions: 2,
            turns: 3,
            system_tokens: 100,
            user_tokens: 10,
            tool_result_tokens: 5,
            max_tokens: 20,
            baseline_no_cache: true,
            ..AgentConfig::default()
        };
        let load = config.planned();
        assert_eq!(
            (
                load.passes,
                load.turns,
                load.prompt_tokens,
                load.completion_tokens
            ),
            (2, 6, 1_020, 120)
        );
    }

    #[test]
    fn think_times_parse_and_draw() {
        assert_eq!("500ms".parse::<Think>(), Ok(Think::Fixed { seconds: 0.5 }));
        assert_eq!("2".parse::<Think>(), Ok(Think::Fixed { seconds: 2.0 }));
        assert_eq!(
            "exp:2s".parse::<Think>(),
            Ok(Think::Exponential { mean_s: 2.0 })
        );
        assert!("-1s".parse::<Think>().is_err());
        assert!("soon".parse::<Think>().is_err());
        let mut rng = SplitMix64::new(7);
        let think = Think::Exponential { mean_s: 2.0 };
        let n = 20_000;
        let mean = (0..n)
            .map(|_| think.draw(&mut rng).as_secs_f64())
            .sum::<f64>()
            / f64::from(n);
        // The exponential's mean is its parameter; 20,000 draws put it within 3% (its standard
        // error is 2/√20000 = 0.014 s).
        assert!((mean - 2.0).abs() < 0.06, "{mean}");
    }

    #[test]
    fn impossible_runs_are_refused_by_flag() {
        let mut config = AgentConfig::default();
        assert_eq!(config.check(), Ok(()));
        config.sessions = 0;
        assert!(config.check().expect_err("refused").contains("--sessions"));
        config.sessions = 2;
        config.capacity_up_to = Some(8);
        assert!(config.check().expect_err("refused").contains("--target"));
        let replay = ReplayConfig {
            time_scale: 0.0,
            ..ReplayConfig::default()
        };
        assert!(
            replay
                .check()
                .expect_err("refused")
                .contains("--time-scale")
        );
    }
}
