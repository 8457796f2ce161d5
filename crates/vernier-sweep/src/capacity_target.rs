//! The capacity target's grammar: `ttft_p90<=1000ms,decode_p10>=20`, parts that must all hold.

use serde::{Deserialize, Serialize};

/// A per-request figure a target can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TargetMetric {
    /// Time to first token, ms.
    Ttft,
    /// A request's median inter-token latency, ms.
    Itl,
    /// A request's decode rate, tokens per second.
    Decode,
}

impl TargetMetric {
    pub(crate) const fn unit(self) -> &'static str {
        match self {
            Self::Ttft | Self::Itl => "ms",
            Self::Decode => "tok/s",
        }
    }
}

/// One part of a target: a quantile of a per-request figure, bounded above or below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TargetPart {
    /// The part as written.
    pub text: String,
    /// The figure.
    pub metric: TargetMetric,
    /// The quantile across the cell's requests (0.5 for the median).
    pub quantile: f64,
    /// True for `<=` (at most), false for `>=` (at least).
    pub at_most: bool,
    /// The bound, in ms for TTFT and ITL, tokens per second for decode.
    pub bound: f64,
}

/// A capacity target: every part must hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Target {
    /// The parts, in the order written.
    pub parts: Vec<TargetPart>,
}

impl Target {
    /// Parses `ttft_p90<=1000ms,decode_p10>=20,itl_p99<=50ms`: figures `ttft`, `itl` (ms, or
    /// with an `s` suffix seconds) and `decode` (tokens per second), quantiles `p1`–`p99` or
    /// `median`, bounds `<=` or `>=`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            parts.push(parse_part(part)?);
        }
        if parts.is_empty() {
            return Err("give at least one part, e.g. ttft_p90<=1000ms".to_owned());
        }
        Ok(Self { parts })
    }
}

fn parse_part(part: &str) -> Result<TargetPart, String> {
    let help = "write parts like ttft_p90<=1000ms, itl_p99<=50ms or decode_p10>=20";
    let (left, at_most, right) = if let Some((l, r)) = part.split_once("<=") {
        (l, true, r)
    } else if let Some((l, r)) = part.split_once(">=") {
        (l, false, r)
    } else {
        return Err(format!("{part:?} has no <= or >=; {help}"));
    };
    let (name, quantile) = left
        .trim()
        .split_once('_')
        .ok_or_else(|| format!("{part:?} names no quantile; {help}"))?;
    let metric = match name {
        "ttft" => TargetMetric::Ttft,
        "itl" => TargetMetric::Itl,
        "decode" => TargetMetric::Decode,
        other => {
            return Err(format!(
                "unknown figure {other:?} in {part:?}: give ttft, itl or decode"
            ));
        }
    };
    let quantile = match quantile {
        "median" | "p50" => 0.5,
        q => q
            .strip_prefix('p')
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| (1..=99).contains(n))
            .map(|n| f64::from(n) / 100.0)
            .ok_or_else(|| {
                format!("unknown quantile {q:?} in {part:?}: give p1 to p99 or median")
            })?,
    };
    let right = right.trim();
    let (number, scale) = match metric {
        TargetMetric::Decode => (right.strip_suffix("tok/s").unwrap_or(right), 1.0),
        TargetMetric::Ttft | TargetMetric::Itl => {
            if let Some(ms) = right.strip_suffix("ms") {
                (ms, 1.0)
            } else if let Some(s) = right.strip_suffix('s') {
                (s, 1000.0)
            } else {
                (right, 1.0)
            }
        }
    };
    let bound = number
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("{right:?} in {part:?} is not a number; {help}"))?
        * scale;
    Ok(TargetPart {
        text: part.to_owned(),
        metric,
        quantile,
        at_most,
        bound,
    })
}
