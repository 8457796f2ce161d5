//! The resolved configuration of a sweep and its cells.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::SweepError;

/// What kind of text the prompts are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Workload {
    /// Natural English prose (essays and stories).
    Prose,
    /// Natural Python and Rust code.
    Code,
}

impl Workload {
    /// The lowercase name used in keys and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Prose => "prose",
            Self::Code => "code",
        }
    }
}

impl std::str::FromStr for Workload {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "prose" => Ok(Self::Prose),
            "code" => Ok(Self::Code),
            other => Err(format!("unknown workload {other:?}: give prose or code")),
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One cell of the sweep: workload × prompt length × output length × concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CellKey {
    /// Prompt text kind.
    pub workload: Workload,
    /// Wanted prompt length in server tokens.
    pub prompt_tokens_target: u32,
    /// Requested completion tokens.
    pub output_tokens: u32,
    /// Concurrent streams.
    pub concurrency: u32,
}

impl CellKey {
    /// A cell key.
    pub const fn new(
        workload: Workload,
        prompt_tokens_target: u32,
        output_tokens: u32,
        concurrency: u32,
    ) -> Self {
        Self {
            workload,
            prompt_tokens_target,
            output_tokens,
            concurrency,
        }
    }
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} prompt {} out {} c{}",
            self.workload, self.prompt_tokens_target, self.output_tokens, self.concurrency
        )
    }
}

/// The full configuration of a sweep, as recorded in the journal header and run file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one recorded switch"
)]
pub struct SweepConfig {
    /// Server URL, or `simulator` for the in-process simulator.
    pub target: String,
    /// Model id.
    pub model: String,
    /// Workloads in order.
    pub workloads: Vec<Workload>,
    /// Prompt lengths in server tokens.
    pub prompt_tokens: Vec<u32>,
    /// Output lengths in tokens.
    pub output_tokens: Vec<u32>,
    /// Concurrency levels.
    pub concurrency: Vec<u32>,
    /// Measured repetitions per cell (minimum with `until_ci_percent`).
    pub reps: u32,
    /// Discarded warm-up repetitions per cell.
    pub warmup: u32,
    /// Wanted relative width of the 95% interval on the median decode rate, percent.
    pub until_ci_percent: Option<f64>,
    /// Cap on repetitions with `until_ci_percent`.
    pub max_reps: u32,
    /// Retries per failed request.
    pub retries: u32,
    /// Sampling temperature.
    pub temperature: f64,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Fields merged into every request body.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// `ignore_eos` and `min_tokens` are sent.
    pub force_length: bool,
    /// `cache_salt` is sent.
    pub cache_salt: bool,
    /// `cache_prompt: false` is sent.
    pub cache_prompt_field: bool,
    /// `return_token_ids` is sent.
    pub token_ids: bool,
    /// `stream_options.continuous_usage_stats` is sent.
    pub continuous_usage: bool,
    /// Prompts open with a unique nonce (false only in tests of cache-hit flagging).
    pub defeat_prefix_cache: bool,
    /// The nonce closes the prompt instead of opening it, so prompts share a prefix (true only
    /// in tests that show a suffix nonce does not defeat a prefix cache; absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nonce_as_suffix: bool,
    /// `--idle-timeout-s`: seconds without a stream event before the watchdog checks the
    /// server (absent in journals written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_s: Option<f64>,
    /// `--busy-wait-cap-s`: longest wait on a silent stream while the server is busy elsewhere
    /// (absent in journals written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_wait_cap_s: Option<f64>,
    /// `--allow-busy`: the run went ahead although the server had requests in flight or its
    /// `/metrics` could not say (absent in journals written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_busy: Option<bool>,
    /// SHA-256 of the bundled corpora, hex.
    pub prompt_set_sha256: String,
    /// Free-form label.
    pub label: Option<String>,
}

impl Default for SweepConfig {
    /// The command line's defaults: prose and code at 111, 364, 5,378 and 10,714 prompt
    /// tokens, 512 output tokens, one stream, five measured repetitions after one warm-up,
    /// greedy, with every cache defeat and every token source asked for. `model` is empty
    /// (taken from `/v1/models`), as are `target` and `prompt_set_sha256` (filled in by the run).
    fn default() -> Self {
        Self {
            target: String::new(),
            model: String::new(),
            workloads: vec![Workload::Prose, Workload::Code],
            prompt_tokens: vec![111, 364, 5378, 10714],
            output_tokens: vec![512],
            concurrency: vec![1],
            reps: 5,
            warmup: 1,
            until_ci_percent: None,
            max_reps: 30,
            retries: 2,
            temperature: 0.0,
            seed: None,
            extra_body: serde_json::Map::new(),
            force_length: true,
            cache_salt: true,
            cache_prompt_field: true,
            token_ids: true,
            continuous_usage: true,
            defeat_prefix_cache: true,
            nonce_as_suffix: false,
            idle_timeout_s: Some(60.0),
            busy_wait_cap_s: Some(900.0),
            allow_busy: Some(false),
            prompt_set_sha256: String::new(),
            label: None,
        }
    }
}

fn invalid(what: &str, detail: &str) -> SweepError {
    SweepError::InvalidArgument {
        what: what.to_owned(),
        detail: detail.to_owned(),
    }
}

impl SweepConfig {
    /// Checks the values a run cannot work with; the error names the flag and the fix.
    pub fn check(&self) -> Result<(), SweepError> {
        if self.reps == 0 {
            return Err(invalid(
                "--reps",
                "at least one measured repetition is needed",
            ));
        }
        if self.prompt_tokens.is_empty() || self.prompt_tokens.contains(&0) {
            return Err(invalid(
                "--prompt-tokens",
                "give positive lengths, e.g. 111,364",
            ));
        }
        if self.output_tokens.is_empty() || self.output_tokens.iter().any(|&t| t < 2) {
            return Err(invalid(
                "--output-tokens",
                "a decode rate needs at least 2 output tokens",
            ));
        }
        if self.concurrency.is_empty() || self.concurrency.contains(&0) {
            return Err(invalid(
                "--concurrency",
                "give positive stream counts, e.g. 1,2,4,8",
            ));
        }
        if self.workloads.is_empty() {
            return Err(invalid("--workload", "give prose, code or both"));
        }
        if self
            .until_ci_percent
            .is_some_and(|pct| !(pct > 0.0 && pct.is_finite()))
        {
            return Err(invalid("--until-ci", "give a positive percentage, e.g. 2"));
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(invalid(
                "--temperature",
                "give a temperature of 0 or more, e.g. 0",
            ));
        }
        Ok(())
    }

    /// Every cell in run order: workload, then prompt length, output length, concurrency.
    pub fn cells(&self) -> Vec<CellKey> {
        let mut cells = Vec::new();
        for &workload in &self.workloads {
            for &prompt in &self.prompt_tokens {
                for &output in &self.output_tokens {
                    for &concurrency in &self.concurrency {
                        cells.push(CellKey::new(workload, prompt, output, concurrency));
                    }
                }
            }
        }
        cells
    }

    /// Field-by-field differences that matter for a resumed run (the label may change). Only
    /// fields the journal (`self`) records are compared, so a journal written before a field
    /// was recorded still resumes.
    pub fn differences(&self, other: &Self) -> Vec<String> {
        let left = serde_json::to_value(self).unwrap_or_default();
        let right = serde_json::to_value(other).unwrap_or_default();
        let (Some(left), Some(right)) = (left.as_object(), right.as_object()) else {
            return vec!["configuration: not comparable".to_owned()];
        };
        let mut out = Vec::new();
        for (key, value) in left {
            if key == "label" {
                continue;
            }
            let now = right.get(key).unwrap_or(&serde_json::Value::Null);
            if value != now {
                out.push(format!("{key}: journal {value}, now {now}"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SweepConfig {
        SweepConfig {
            target: "simulator".to_owned(),
            model: "m".to_owned(),
            workloads: vec![Workload::Prose, Workload::Code],
            prompt_tokens: vec![100, 200],
            output_tokens: vec![64],
            concurrency: vec![1, 4],
            reps: 5,
            warmup: 1,
            until_ci_percent: None,
            max_reps: 30,
            retries: 2,
            temperature: 0.0,
            seed: None,
            extra_body: serde_json::Map::new(),
            force_length: true,
            cache_salt: true,
            cache_prompt_field: true,
            token_ids: true,
            continuous_usage: true,
            defeat_prefix_cache: true,
            nonce_as_suffix: false,
            idle_timeout_s: Some(60.0),
            busy_wait_cap_s: Some(900.0),
            allow_busy: Some(false),
            prompt_set_sha256: "abc".to_owned(),
            label: None,
        }
    }

    fn refused(config: &SweepConfig) -> String {
        match config.check() {
            Err(SweepError::InvalidArgument { what, .. }) => what,
            other => panic!("{config:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn check_names_the_flag_of_every_unusable_value() {
        assert!(SweepConfig::default().check().is_ok());
        let c = SweepConfig {
            reps: 0,
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--reps");
        let c = SweepConfig {
            output_tokens: vec![1],
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--output-tokens");
        let c = SweepConfig {
            concurrency: vec![4, 0],
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--concurrency");
        let c = SweepConfig {
            until_ci_percent: Some(f64::NAN),
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--until-ci");
        let c = SweepConfig {
            temperature: -1.0,
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--temperature");
        let mut c = SweepConfig::default();
        c.workloads.clear();
        assert_eq!(refused(&c), "--workload");
        assert_eq!("code".parse::<Workload>(), Ok(Workload::Code));
        assert!("poetry".parse::<Workload>().is_err());
    }

    #[test]
    fn cells_enumerate_the_product_in_order() {
        let cells = config().cells();
        assert_eq!(cells.len(), 8);
        assert_eq!(cells[0], CellKey::new(Workload::Prose, 100, 64, 1));
        assert_eq!(cells[1], CellKey::new(Workload::Prose, 100, 64, 4));
        assert_eq!(cells[7], CellKey::new(Workload::Code, 200, 64, 4));
    }

    #[test]
    fn differences_name_the_changed_fields_but_not_the_label() {
        let a = config();
        let mut b = config();
        b.reps = 7;
        b.label = Some("x".to_owned());
        let diff = a.differences(&b);
        assert_eq!(diff, vec!["reps: journal 5, now 7".to_owned()]);
    }

    #[test]
    fn a_journal_without_the_watchdog_fields_loads_and_resumes() {
        let mut old = serde_json::to_value(config()).expect("serialise");
        let fields = old.as_object_mut().expect("an object");
        for key in ["idle_timeout_s", "busy_wait_cap_s", "allow_busy"] {
            assert!(fields.remove(key).is_some(), "{key} is recorded");
        }
        let old: SweepConfig = serde_json::from_value(old).expect("an old config loads");
        assert_eq!(
            (old.idle_timeout_s, old.busy_wait_cap_s, old.allow_busy),
            (None, None, None)
        );
        assert!(old.differences(&config()).is_empty());
        let mut changed = config();
        changed.idle_timeout_s = Some(5.0);
        changed.allow_busy = Some(true);
        let mut diff = config().differences(&changed);
        diff.sort();
        assert_eq!(
            diff,
            vec![
                "allow_busy: journal false, now true".to_owned(),
                "idle_timeout_s: journal 60.0, now 5.0".to_owned(),
            ]
        );
    }
}
