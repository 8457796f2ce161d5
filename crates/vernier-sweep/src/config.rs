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
    /// Concurrent streams (0 for an open-loop rate cell).
    pub concurrency: u32,
    /// Open-loop request rate in thousandths of a request per second (`--rate`); absent for
    /// closed-loop cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_milli_per_s: Option<u32>,
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
            rate_milli_per_s: None,
        }
    }

    /// An open-loop cell sending `rate_per_s` requests per second (to the nearest 0.001).
    pub fn at_rate(
        workload: Workload,
        prompt_tokens_target: u32,
        output_tokens: u32,
        rate_per_s: f64,
    ) -> Self {
        Self {
            workload,
            prompt_tokens_target,
            output_tokens,
            concurrency: 0,
            rate_milli_per_s: Some(rate_to_milli(rate_per_s)),
        }
    }

    /// The open-loop rate in requests per second, for a rate cell.
    pub fn rate_per_s(&self) -> Option<f64> {
        self.rate_milli_per_s.map(|milli| f64::from(milli) / 1000.0)
    }

    /// The load as a short label: `c4` for four streams, `2.5/s` for a rate.
    pub fn load_label(&self) -> String {
        match self.rate_per_s() {
            Some(rate) => format!("{}/s", trim_number(rate)),
            None => format!("c{}", self.concurrency),
        }
    }
}

/// A rate in thousandths per second, rounded and kept within `u32`.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "clamped to the u32 range first"
)]
fn rate_to_milli(rate_per_s: f64) -> u32 {
    (rate_per_s * 1000.0)
        .round()
        .clamp(0.0, f64::from(u32::MAX)) as u32
}

/// `2.5` rather than `2.500`; `3` rather than `3.000`.
fn trim_number(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// How load is applied in a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LoadMode {
    /// Each repetition starts `concurrency` streams at once and waits for all (the default).
    #[default]
    Burst,
    /// `concurrency` streams kept in flight for `duration_s`, each finished stream replaced at
    /// once; the steady window (ramp-up and ramp-down cut) is measured.
    Steady,
    /// Requests sent on a schedule at each of `rates_per_s`, regardless of completions.
    Rate,
}

impl LoadMode {
    /// `burst`, `steady` or `rate`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Burst => "burst",
            Self::Steady => "steady",
            Self::Rate => "rate",
        }
    }

    #[expect(
        clippy::trivially_copy_pass_by_ref,
        reason = "serde's skip_serializing_if passes a reference"
    )]
    const fn is_burst(&self) -> bool {
        matches!(self, Self::Burst)
    }
}

impl std::str::FromStr for LoadMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "burst" => Ok(Self::Burst),
            "steady" => Ok(Self::Steady),
            "rate" => Ok(Self::Rate),
            other => Err(format!(
                "unknown load {other:?}: give burst or steady (or --rate R for open loop)"
            )),
        }
    }
}

/// When open-loop requests are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Arrival {
    /// Exponential gaps drawn from the run's seed (a Poisson process).
    #[default]
    Poisson,
    /// Evenly spaced, one every 1/rate seconds.
    Constant,
}

impl std::str::FromStr for Arrival {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "poisson" => Ok(Self::Poisson),
            "constant" => Ok(Self::Constant),
            other => Err(format!(
                "unknown arrival {other:?}: give poisson or constant"
            )),
        }
    }
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} prompt {} out {} {}",
            self.workload,
            self.prompt_tokens_target,
            self.output_tokens,
            self.load_label()
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
    /// How load is applied (absent for the default burst).
    #[serde(default, skip_serializing_if = "LoadMode::is_burst")]
    pub load: LoadMode,
    /// Seconds of steady load, or of open-loop sending, per repetition (`--duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Open-loop request rates per second (`--rate`); set with `load: rate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates_per_s: Vec<f64>,
    /// Open-loop arrival process (absent for the default Poisson).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    /// Capacity target (`--target`, e.g. `ttft_p90<=1000ms,decode_p10>=20`): the run searches
    /// the concurrency (or rate) for the largest load meeting every part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_target: Option<String>,
    /// The highest concurrency (or rate) the capacity search may try.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_load: Option<f64>,
    /// Keep the first this many measured streams of each cell byte for byte (`--capture N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_streams: Option<u32>,
    /// The most requests per second the run sends (`--max-rps`), for rate-limited endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rps: Option<f64>,
    /// The longest the run waits on rate limits in all, seconds (`--max-wait`; default 900).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait_s: Option<f64>,
    /// SHA-256 of the bundled corpora, hex.
    pub prompt_set_sha256: String,
    /// Free-form label.
    pub label: Option<String>,
    /// `--shard I/N`: this run is shard `I` of `N` of the configuration (absent for a run on
    /// one machine, and in a merged run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
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
            load: LoadMode::Burst,
            duration_s: None,
            rates_per_s: Vec::new(),
            arrival: None,
            capacity_target: None,
            max_load: None,
            capture_streams: None,
            max_rps: None,
            max_wait_s: None,
            prompt_set_sha256: String::new(),
            label: None,
            shard: None,
        }
    }
}

fn invalid(what: &str, detail: &str) -> SweepError {
    SweepError::invalid(what, detail)
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
        self.check_load()?;
        match self.shard {
            Some(shard) => check_shard(self, shard),
            None => Ok(()),
        }
    }

    /// The checks of load, pacing and the capacity search.
    fn check_load(&self) -> Result<(), SweepError> {
        // A flag that does nothing in this run is refused, never silently dropped.
        if self.load == LoadMode::Burst && self.duration_s.is_some() {
            return Err(invalid(
                "--duration",
                "a burst repetition ends when its streams end; only steady load (--load steady) and open-loop load (--rate) run for a duration",
            ));
        }
        if self.load != LoadMode::Rate && self.arrival.is_some() {
            return Err(invalid(
                "--arrival",
                "arrivals shape open-loop load only; give --rate R as well, or drop --arrival",
            ));
        }
        if self.capacity_target.is_none() && self.max_load.is_some() {
            return Err(invalid(
                "--max-load",
                "it caps the capacity search; give --target as well, or drop --max-load",
            ));
        }
        if self
            .rates_per_s
            .iter()
            .any(|r| !(r.is_finite() && *r >= 0.001 && *r <= 1e6))
        {
            return Err(invalid(
                "--rate",
                "give request rates per second from 0.001 to 1000000, e.g. 0.5,2",
            ));
        }
        match self.load {
            LoadMode::Rate if self.rates_per_s.is_empty() => {
                return Err(invalid(
                    "--rate",
                    "an open-loop run needs at least one rate, e.g. --rate 1,4",
                ));
            }
            LoadMode::Steady | LoadMode::Rate => {
                if !self
                    .duration_s
                    .is_some_and(|d| d.is_finite() && d > 0.0 && d <= 7.0 * 86_400.0)
                {
                    return Err(invalid(
                        "--duration",
                        "steady and open-loop load need a duration in seconds, e.g. --duration 60",
                    ));
                }
            }
            LoadMode::Burst => {}
        }
        if self
            .max_rps
            .is_some_and(|rps| !(rps.is_finite() && rps > 0.0))
        {
            return Err(invalid(
                "--max-rps",
                "give a positive number of requests per second, e.g. 2",
            ));
        }
        if self
            .max_wait_s
            .is_some_and(|s| !(s.is_finite() && (0.0..=7.0 * 86_400.0).contains(&s)))
        {
            return Err(invalid(
                "--max-wait",
                "give seconds from 0 to 604800 (7 days)",
            ));
        }
        if let Some(target) = &self.capacity_target {
            crate::capacity_target::Target::parse(target)
                .map_err(|detail| invalid("--target", &detail))?;
            if self
                .max_load
                .is_some_and(|max| !(max.is_finite() && max >= 1.0))
            {
                return Err(invalid(
                    "--max-load",
                    "give the highest load to try, 1 or more",
                ));
            }
        }
        Ok(())
    }

    /// Whether the cells come from a capacity search rather than the fixed product.
    pub fn is_search(&self) -> bool {
        self.capacity_target.is_some()
    }

    /// Every cell in run order: workload, then prompt length, output length, concurrency (or
    /// rate). A capacity search has no fixed cells: its loads are chosen as it goes.
    pub fn cells(&self) -> Vec<CellKey> {
        if self.is_search() {
            return Vec::new();
        }
        let mut cells = Vec::new();
        for &workload in &self.workloads {
            for &prompt in &self.prompt_tokens {
                for &output in &self.output_tokens {
                    if self.load == LoadMode::Rate {
                        for &rate in &self.rates_per_s {
                            cells.push(CellKey::at_rate(workload, prompt, output, rate));
                        }
                    } else {
                        for &concurrency in &self.concurrency {
                            cells.push(CellKey::new(workload, prompt, output, concurrency));
                        }
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

/// The loads a shard cannot take, refused before anything is sent: each needs one process to
/// see every request.
fn check_shard(config: &SweepConfig, shard: crate::shard::Shard) -> Result<(), SweepError> {
    let refuse = |detail: String| Err(SweepError::invalid("--shard", detail));
    if config.is_search() {
        return refuse(
            "a capacity search (--target) chooses each load from the last one's figures, which one process must see whole; run the search on one machine, then shard the load it found with --rate or --load steady".to_owned(),
        );
    }
    if config.until_ci_percent.is_some() {
        return refuse(
            "--until-ci decides each cell's repetitions from its own figures, which shards cannot share; give a fixed --reps".to_owned(),
        );
    }
    match config.load {
        LoadMode::Burst => refuse(
            "a burst starts its streams together at one barrier inside one process; shard steady load (--load steady --duration S) or open-loop load (--rate R --duration S)".to_owned(),
        ),
        LoadMode::Steady => {
            if let Some(&low) = config.concurrency.iter().find(|&&c| c < shard.count) {
                return refuse(format!(
                    "--concurrency {low} cannot be split over {} shards with a stream each; give each shard at least one stream (a concurrency of {} or more) or fewer shards",
                    shard.count, shard.count
                ));
            }
            Ok(())
        }
        LoadMode::Rate => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults (the command line's) with a small grid of cells.
    fn config() -> SweepConfig {
        SweepConfig {
            target: "simulator".to_owned(),
            model: "m".to_owned(),
            prompt_tokens: vec![100, 200],
            output_tokens: vec![64],
            concurrency: vec![1, 4],
            prompt_set_sha256: "abc".to_owned(),
            ..SweepConfig::default()
        }
    }

    fn refused(config: &SweepConfig) -> String {
        match config.check() {
            Err(SweepError::Run(vernier_run::RunError::InvalidArgument { what, .. })) => what,
            other => panic!("{config:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn flags_that_would_do_nothing_are_refused() {
        let c = SweepConfig {
            duration_s: Some(30.0),
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--duration", "a burst ignores a duration");
        let c = SweepConfig {
            arrival: Some(Arrival::Constant),
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--arrival", "arrivals need a rate");
        let c = SweepConfig {
            max_load: Some(64.0),
            ..SweepConfig::default()
        };
        assert_eq!(refused(&c), "--max-load", "a cap needs a search");
        let steady = SweepConfig {
            load: LoadMode::Steady,
            duration_s: Some(30.0),
            ..SweepConfig::default()
        };
        assert!(steady.check().is_ok());
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

    #[test]
    fn loads_one_process_must_see_whole_are_refused_with_the_reason() {
        let shard = crate::shard::Shard::new(0, 4).expect("a shard");
        let refused = |config: &SweepConfig| match check_shard(config, shard) {
            Err(SweepError::Run(vernier_run::RunError::InvalidArgument { what, detail })) => {
                assert_eq!(what, "--shard");
                detail
            }
            other => panic!("not refused: {other:?}"),
        };
        assert!(refused(&SweepConfig::default()).contains("barrier"));
        let steady = SweepConfig {
            load: LoadMode::Steady,
            duration_s: Some(10.0),
            concurrency: vec![8, 2],
            ..SweepConfig::default()
        };
        assert!(refused(&steady).contains("--concurrency 2"));
        let rate = SweepConfig {
            load: LoadMode::Rate,
            rates_per_s: vec![40.0],
            duration_s: Some(10.0),
            ..SweepConfig::default()
        };
        assert!(check_shard(&rate, shard).is_ok());
        let search = SweepConfig {
            capacity_target: Some("ttft_p90<=1s".to_owned()),
            ..rate.clone()
        };
        assert!(refused(&search).contains("capacity search"));
        let until = SweepConfig {
            until_ci_percent: Some(2.0),
            ..rate
        };
        assert!(refused(&until).contains("--until-ci"));
    }
}
