//! What a sweep will do before it does it (`sweep --dry-run`): its cells, requests and tokens,
//! and how long it should take at the rates one probe request measured.

use std::fmt::Write as _;

use crate::config::{LoadMode, SweepConfig};

/// The rates two probe requests measured, in the server's tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ProbeRates {
    /// Decode tokens per second of one stream.
    pub decode_tokens_per_s: f64,
    /// Prefill tokens per second: the extra prompt tokens of the long probe over its extra
    /// time to first token.
    pub prefill_tokens_per_s: f64,
    /// Seconds to the first token that do not grow with the prompt (the request's overhead).
    pub overhead_s: f64,
}

impl ProbeRates {
    /// The rates of a short and a long probe, each `(prompt tokens, seconds to the first
    /// token)`, and the short one's decode rate. `None` unless the rates come out positive and
    /// finite.
    pub fn from_probes(
        short: (u64, f64),
        long: (u64, f64),
        decode_tokens_per_s: f64,
    ) -> Option<Self> {
        let usable = |value: f64| value.is_finite() && value > 0.0;
        let extra_tokens = long.0.saturating_sub(short.0) as f64;
        let extra_s = long.1 - short.1;
        let prefill_tokens_per_s = if usable(extra_s) && extra_tokens > 0.0 {
            extra_tokens / extra_s
        } else {
            // The long prompt was no slower: bound the rate by the long probe alone.
            long.0 as f64 / long.1
        };
        let overhead_s = (short.1 - short.0 as f64 / prefill_tokens_per_s).max(0.0);
        (usable(decode_tokens_per_s) && usable(prefill_tokens_per_s)).then_some(Self {
            decode_tokens_per_s,
            prefill_tokens_per_s,
            overhead_s,
        })
    }
}

/// A sweep's plan: what the configuration asks for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// Cells (none for a capacity search, whose loads are chosen as it goes).
    pub cells: usize,
    /// Streamed requests, warm-ups included (`None` under steady or open-loop load, where the
    /// count follows the server's speed).
    pub requests: Option<u64>,
    /// Completion tokens those requests ask for.
    pub output_tokens: Option<u64>,
    /// Prompt tokens those requests send.
    pub prompt_tokens: Option<u64>,
    /// Seconds of steady or open-loop load, all repetitions of all cells.
    pub timed_load_s: Option<f64>,
}

/// The plan of `config`, with `--until-ci` counted at its minimum repetitions.
pub fn plan(config: &SweepConfig) -> Plan {
    let cells = config.cells();
    let repetitions = u64::from(config.warmup) + u64::from(config.reps);
    let burst = config.load == LoadMode::Burst && !config.is_search();
    let mut requests = 0u64;
    let mut output = 0u64;
    let mut prompt = 0u64;
    for cell in &cells {
        let n = repetitions * u64::from(cell.concurrency.max(1));
        requests += n;
        output += n * u64::from(cell.output_tokens);
        prompt += n * u64::from(cell.prompt_tokens_target);
    }
    let timed_load_s = (!burst && !config.is_search())
        .then(|| config.duration_s.unwrap_or(0.0) * repetitions as f64 * cells.len() as f64);
    Plan {
        cells: cells.len(),
        requests: burst.then_some(requests),
        output_tokens: burst.then_some(output),
        prompt_tokens: burst.then_some(prompt),
        timed_load_s,
    }
}

/// Seconds a burst sweep should take at `rates`: per repetition, the request's overhead, every
/// stream's prompt prefilled one after another, then the output decoded at one stream's rate.
/// Slowdowns under concurrency and the calibration requests are not included.
pub fn estimate_s(config: &SweepConfig, rates: &ProbeRates) -> f64 {
    let repetitions = f64::from(config.warmup) + f64::from(config.reps);
    config
        .cells()
        .iter()
        .map(|cell| {
            let prefill = f64::from(cell.concurrency.max(1)) * f64::from(cell.prompt_tokens_target)
                / rates.prefill_tokens_per_s;
            let decode = f64::from(cell.output_tokens) / rates.decode_tokens_per_s;
            repetitions * (rates.overhead_s + prefill + decode)
        })
        .sum()
}

fn duration(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// The plan for people: what runs, and how long it should take.
pub fn render_plan(config: &SweepConfig, rates: Option<&ProbeRates>) -> String {
    let plan = plan(config);
    let mut out = String::new();
    if config.is_search() {
        let _ = writeln!(
            out,
            "plan: a capacity search for {}; its loads are chosen as it goes, so no count is known before it runs",
            config.capacity_target.as_deref().unwrap_or_default()
        );
        return out;
    }
    let _ = writeln!(
        out,
        "plan: {} (workloads {} × prompt lengths {} × output lengths {} × loads {}), {} warm-up and {} measured repetitions each{}",
        vernier_cli::counted(plan.cells as u64, "cell", "cells"),
        config.workloads.len(),
        config.prompt_tokens.len(),
        config.output_tokens.len(),
        if config.load == LoadMode::Rate {
            config.rates_per_s.len()
        } else {
            config.concurrency.len()
        },
        config.warmup,
        config.reps,
        config
            .until_ci_percent
            .map_or_else(String::new, |p| format!(
                " (up to {} until the interval is within {p}%)",
                config.max_reps
            ))
    );
    match (plan.requests, plan.output_tokens, plan.prompt_tokens) {
        (Some(requests), Some(output), Some(prompt)) => {
            let _ = writeln!(
                out,
                "  {}, {output} tokens to generate, {prompt} prompt tokens to send",
                vernier_cli::counted(requests, "streamed request", "streamed requests")
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "  {} of load in all (the request count follows the server's speed)",
                duration(plan.timed_load_s.unwrap_or(0.0))
            );
        }
    }
    match (rates, plan.requests) {
        (Some(rates), Some(_)) => {
            let _ = writeln!(
                out,
                "  about {}: two probes measured {:.0} tok/s decode, {:.0} tok/s prefill and {:.0} ms of overhead per request; slowdowns under concurrency and the calibration requests come on top",
                duration(estimate_s(config, rates)),
                rates.decode_tokens_per_s,
                rates.prefill_tokens_per_s,
                rates.overhead_s * 1000.0
            );
        }
        (None, Some(_)) => {
            let _ = writeln!(
                out,
                "  no duration estimate: the probes did not give a decode and a prefill rate"
            );
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_plan_counts_every_request_and_token() {
        let config = SweepConfig {
            workloads: vec![crate::Workload::Prose, crate::Workload::Code],
            prompt_tokens: vec![100, 1000],
            output_tokens: vec![50],
            concurrency: vec![1, 4],
            warmup: 1,
            reps: 2,
            ..SweepConfig::default()
        };
        let plan = plan(&config);
        // 2 workloads × 2 lengths × 2 loads = 8 cells; 3 repetitions of 1 or 4 streams.
        assert_eq!(plan.cells, 8);
        assert_eq!(plan.requests, Some(4 * 3 * (1 + 4)));
        assert_eq!(plan.output_tokens, Some(60 * 50));
        assert_eq!(plan.prompt_tokens, Some(2 * 3 * 5 * (100 + 1000)));
        // Probes of 100 and 1100 prompt tokens answered after 0.15 and 1.15 s: 1000 tok/s
        // prefill and 0.05 s of overhead. At 100 tok/s decode, per workload: 3 × (c1: 0.1 +
        // 0.5, 1.0 + 0.5; c4: 0.4 + 0.5, 4.0 + 0.5) + 12 × 0.05 = 23.1 s; two workloads, 46.2 s.
        let rates = ProbeRates::from_probes((100, 0.15), (1100, 1.15), 100.0).expect("rates");
        assert!(
            (rates.prefill_tokens_per_s - 1000.0).abs() < 1e-6,
            "{rates:?}"
        );
        assert!((rates.overhead_s - 0.05).abs() < 1e-9, "{rates:?}");
        assert!((estimate_s(&config, &rates) - 46.2).abs() < 1e-6);
        let text = render_plan(&config, Some(&rates));
        assert!(text.contains("8 cells"), "{text}");
        assert!(
            text.contains("60 streamed requests, 3000 tokens to generate"),
            "{text}"
        );
        assert!(text.contains("about 46 s: two probes"), "{text}");
    }

    #[test]
    fn rates_that_are_not_positive_give_no_estimate() {
        assert!(ProbeRates::from_probes((10, 0.1), (1000, 1.0), 0.0).is_none());
        assert!(ProbeRates::from_probes((10, 0.1), (1000, 1.0), f64::NAN).is_none());
        // A long probe no slower than the short one: the long one alone bounds prefill.
        let rates = ProbeRates::from_probes((10, 0.5), (1000, 0.5), 50.0).expect("rates");
        assert!((rates.prefill_tokens_per_s - 2000.0).abs() < 1e-9);
    }
}
