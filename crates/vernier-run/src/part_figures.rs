//! What a study's part says about itself, needing no command-line parser: its plan before it
//! runs, and its headline figures and scores after (kept in `battery.json`, read by versus).

use serde::{Deserialize, Serialize};

/// What a part will do, said before it runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PartPlan {
    /// What it runs, in one line (cells, tasks, sessions, launches).
    pub summary: String,
    /// Requests it sends (an estimate where the count depends on the server).
    pub requests: u64,
    /// Prompt plus completion tokens it asks for, at most.
    pub tokens: u64,
    /// Seconds it should take, at the rates assumed in `assumptions`.
    pub seconds: f64,
    /// What the estimate assumes (the rates, the stop rules).
    pub assumptions: String,
    /// What cannot run here, each with its fix (a missing Docker engine for code tasks, a
    /// launch onto a port already answering).
    pub cannot_run: Vec<String>,
}

/// One headline figure of a part, as its report gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Headline {
    /// What it is (`decode tokens/s at 1 stream`).
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Its unit (`tokens/s`, `ms`, `%`, `s`).
    pub unit: String,
    /// Its 95% interval, where the part states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// Whether more is better.
    pub higher_is_better: bool,
}

impl Headline {
    /// A figure `name` of `value` `unit`.
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value,
            unit: unit.into(),
            interval: None,
            higher_is_better: true,
        }
    }

    /// With its 95% interval.
    #[must_use]
    pub fn interval(mut self, low: f64, high: f64) -> Self {
        self.interval = Some((low, high));
        self
    }

    /// Less is better (a latency, a cost).
    #[must_use]
    pub fn lower_is_better(mut self) -> Self {
        self.higher_is_better = false;
        self
    }

    /// `name: value unit [low–high]`.
    pub fn line(&self) -> String {
        let value = vernier_cli::figure(self.value);
        let interval = self.interval.map_or_else(String::new, |(low, high)| {
            format!(
                " [{}–{}]",
                vernier_cli::figure(low),
                vernier_cli::figure(high)
            )
        });
        format!("{}: {value} {}{interval}", self.name, self.unit)
    }
}

/// A part's score in one dimension (a suite's category): tasks passed over tasks scored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Score {
    /// The dimension (`math`, `code`, `tools`, `mmlu`, `context`, …).
    pub dimension: String,
    /// Samples that passed.
    pub passed: u64,
    /// Samples scored (cut off and wrong count; `infra`, `context_exceeded` and `unsupported`
    /// do not).
    pub scored: u64,
}

impl Score {
    /// `passed` of `scored` in `dimension`.
    pub fn new(dimension: impl Into<String>, passed: u64, scored: u64) -> Self {
        Self {
            dimension: dimension.into(),
            passed,
            scored,
        }
    }
}
