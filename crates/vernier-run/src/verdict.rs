//! Whether a run can be trusted, in one word and each reason named: `valid`, `questionable`
//! (the figures stand, read with the reasons) or `invalid` (they do not describe the server as
//! asked). Every engine builds one from its own files; the battery takes the worst of its parts.

use serde::{Deserialize, Serialize};

/// Share of measured requests whose first token shared its socket read with a later event
/// (their TTFT is only an upper bound) above which a run is `questionable`.
pub const COALESCED_FIRST_TOKEN_SHARE: f64 = 0.10;

/// The client's 99th-percentile processing lag per event, in microseconds, above which a run
/// is `questionable`: the client, not the server, may set the inter-token figures.
pub const CLIENT_LAG_P99_US: f64 = 5_000.0;

/// Share of tries or requests that ended as infrastructure failures above which a run is
/// `invalid` (below it, and above zero, `questionable`).
pub const INFRA_INVALID_SHARE: f64 = 0.10;

/// How far a run can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictLevel {
    /// Nothing below holds.
    Valid,
    /// The figures stand, read with the reasons.
    Questionable,
    /// The figures do not describe the server as asked.
    Invalid,
}

impl VerdictLevel {
    /// `valid`, `questionable` or `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::Questionable => "questionable",
            Self::Invalid => "invalid",
        }
    }
}

impl std::fmt::Display for VerdictLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reason a run is not `valid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reason {
    /// A stable name (`prefix_cache_hit`, `short_output`, `server_changed`, …) a script can
    /// match.
    pub code: String,
    /// How serious it is.
    pub level: VerdictLevel,
    /// What happened, with the counts.
    pub detail: String,
}

impl Reason {
    /// A reason.
    pub fn new(code: &str, level: VerdictLevel, detail: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            level,
            detail: detail.into(),
        }
    }
}

/// A run's verdict: the worst level of its reasons, `valid` with none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Verdict {
    /// The worst level among the reasons.
    pub verdict: VerdictLevel,
    /// Each reason, most serious first.
    pub reasons: Vec<Reason>,
}

impl Default for Verdict {
    fn default() -> Self {
        Self::from_reasons(Vec::new())
    }
}

impl Verdict {
    /// The verdict of these reasons, sorted most serious first (stable within a level).
    pub fn from_reasons(mut reasons: Vec<Reason>) -> Self {
        reasons.sort_by_key(|reason| std::cmp::Reverse(reason.level));
        let verdict = reasons
            .first()
            .map_or(VerdictLevel::Valid, |reason| reason.level);
        Self { verdict, reasons }
    }

    /// The parts' verdicts as one: every reason, each prefixed with its part's name.
    pub fn combine<'a>(parts: impl IntoIterator<Item = (&'a str, &'a Verdict)>) -> Self {
        let reasons = parts
            .into_iter()
            .flat_map(|(part, verdict)| {
                verdict.reasons.iter().map(move |reason| Reason {
                    code: reason.code.clone(),
                    level: reason.level,
                    detail: format!("{part}: {}", reason.detail),
                })
            })
            .collect();
        Self::from_reasons(reasons)
    }

    /// True when nothing holds against the run.
    pub fn is_valid(&self) -> bool {
        self.verdict == VerdictLevel::Valid
    }

    /// One line for the top of a report: `verdict: valid`, or the level and each reason.
    pub fn line(&self) -> String {
        if self.reasons.is_empty() {
            return format!("verdict: {}", self.verdict);
        }
        let reasons: Vec<String> = self
            .reasons
            .iter()
            .map(|reason| format!("{} ({})", reason.detail, reason.code))
            .collect();
        format!("verdict: {}: {}", self.verdict, reasons.join("; "))
    }
}

/// `count` of `total` as a share in [0, 1] (0 when `total` is 0).
pub fn share(count: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        #[allow(clippy::cast_precision_loss)]
        let share = count as f64 / total as f64;
        share
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_reason_sets_the_level_and_comes_first() {
        assert_eq!(Verdict::default().line(), "verdict: valid");
        let verdict = Verdict::from_reasons(vec![
            Reason::new("simulated", VerdictLevel::Questionable, "the simulator"),
            Reason::new("prefix_cache_hit", VerdictLevel::Invalid, "2 requests hit"),
        ]);
        assert_eq!(verdict.verdict, VerdictLevel::Invalid);
        assert_eq!(
            verdict.line(),
            "verdict: invalid: 2 requests hit (prefix_cache_hit); the simulator (simulated)"
        );
        let combined = Verdict::combine([("sweep", &verdict), ("suite", &Verdict::default())]);
        assert_eq!(combined.verdict, VerdictLevel::Invalid);
        assert_eq!(combined.reasons[0].detail, "sweep: 2 requests hit");
        let json = serde_json::to_value(&combined).expect("serialises");
        assert_eq!(json["verdict"], "invalid");
        assert_eq!(json["reasons"][1]["level"], "questionable");
    }
}
