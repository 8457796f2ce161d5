//! Load as capacity planners mean it, read from the journal: aggregate throughput over a
//! stated window, how late an open-loop client sent its requests, and the capacity at a target.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vernier_stats::Interval;

use crate::capacity_target::{Target, TargetMetric};
use crate::config::{CellKey, LoadMode};
use crate::journal::Attempt;

/// Aggregate throughput of one window: every stream of a repetition together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Throughput {
    /// Completion tokens (server's count) per second of window.
    pub output_tokens_per_s: Option<f64>,
    /// Prompt tokens (server's count) per second of window.
    pub prompt_tokens_per_s: Option<f64>,
    /// Requests completed per second of window.
    pub requests_per_s: Option<f64>,
}

/// Percentile-bootstrap 95% intervals on the medians of [`Throughput`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThroughputIntervals {
    /// On the median output tokens per second.
    pub output_tokens_per_s: Option<Interval>,
    /// On the median prompt tokens per second.
    pub prompt_tokens_per_s: Option<Interval>,
    /// On the median requests per second.
    pub requests_per_s: Option<Interval>,
}

/// A cell's aggregate figures: one window per measured repetition, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Aggregate {
    /// How the window was taken.
    pub window: String,
    /// Windows (repetitions) summarised.
    pub n_windows: u32,
    /// Median window length in seconds.
    pub window_s_median: Option<f64>,
    /// Medians over the windows.
    pub median: Throughput,
    /// 10th percentiles over the windows.
    pub p10: Throughput,
    /// 90th percentiles over the windows.
    pub p90: Throughput,
    /// 95% intervals on the medians (with two windows or more).
    pub interval_95: ThroughputIntervals,
}

/// How late an open-loop client sent its requests against the schedule, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Lateness {
    /// Requests with a schedule.
    pub n_requests: u32,
    /// Median of sent − scheduled.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Largest.
    pub max_ms: f64,
}

const BURST_WINDOW: &str =
    "burst: from the first request sent to the last token received, per repetition";
const STEADY_WINDOW: &str = "steady: from the moment every stream slot had its first token (ramp-up cut) to the first slot's last token (ramp-down cut), per repetition; tokens of requests that straddle an edge are pro-rated over their decode span";
const RATE_WINDOW: &str =
    "open loop: from the first request sent to the last token received, per repetition";

/// One window's length, tokens and requests.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    seconds: f64,
    output_tokens: f64,
    prompt_tokens: f64,
    requests: f64,
}

impl Window {
    fn throughput(self) -> Option<Throughput> {
        (self.seconds > 0.0).then(|| Throughput {
            output_tokens_per_s: Some(self.output_tokens / self.seconds),
            prompt_tokens_per_s: Some(self.prompt_tokens / self.seconds),
            requests_per_s: Some(self.requests / self.seconds),
        })
    }
}

fn ns_to_s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// All requests of a repetition together: first sent to last token.
fn whole_window(attempts: &[&Attempt]) -> Option<Window> {
    let mut start = u64::MAX;
    let mut end = 0_u64;
    let mut window = Window::default();
    for attempt in attempts {
        let timeline = attempt.timeline?;
        start = start.min(timeline.request_sent_unix_ns);
        end = end.max(
            timeline
                .last_token_unix_ns
                .unwrap_or(timeline.headers_unix_ns),
        );
        window.output_tokens += attempt.completion_tokens.unwrap_or(0) as f64;
        window.prompt_tokens += attempt.prompt_tokens_actual.unwrap_or(0) as f64;
        window.requests += 1.0;
    }
    (end > start).then(|| Window {
        seconds: ns_to_s(end - start),
        ..window
    })
}

/// Tokens of one request that arrived inside `[start, end]` (ns): the first event's tokens at
/// the first token's instant, the rest spread evenly over the decode span.
fn tokens_inside(attempt: &Attempt, start: u64, end: u64) -> f64 {
    let (Some(timeline), Some(total)) = (attempt.timeline, attempt.completion_tokens) else {
        return 0.0;
    };
    let (Some(first), Some(last)) = (timeline.first_token_unix_ns, timeline.last_token_unix_ns)
    else {
        return 0.0;
    };
    let total = total as f64;
    let first_tokens = attempt
        .measurement
        .as_ref()
        .map_or(1.0, |m| m.first_event_tokens)
        .min(total);
    let mut inside = if (start..=end).contains(&first) {
        first_tokens
    } else {
        0.0
    };
    if last > first {
        let low = first.max(start);
        let high = last.min(end);
        if high > low {
            inside += (total - first_tokens) * (high - low) as f64 / (last - first) as f64;
        }
    }
    inside
}

/// The steady window of one repetition: every slot generating, ramp-up and ramp-down cut.
fn steady_window(attempts: &[&Attempt]) -> Option<Window> {
    let mut slots: BTreeMap<u32, Vec<&Attempt>> = BTreeMap::new();
    for attempt in attempts {
        slots.entry(attempt.stream).or_default().push(attempt);
    }
    let mut start = 0_u64;
    let mut end = u64::MAX;
    for requests in slots.values_mut() {
        requests.sort_by_key(|a| a.sequence.unwrap_or(0));
        let first = requests.first()?.timeline?.first_token_unix_ns?;
        let last = requests.last()?.timeline?.last_token_unix_ns?;
        start = start.max(first);
        end = end.min(last);
    }
    if end <= start {
        return None;
    }
    let mut window = Window {
        seconds: ns_to_s(end - start),
        ..Window::default()
    };
    for attempt in attempts {
        window.output_tokens += tokens_inside(attempt, start, end);
        let Some(timeline) = attempt.timeline else {
            continue;
        };
        if timeline
            .first_token_unix_ns
            .is_some_and(|t| (start..=end).contains(&t))
        {
            window.prompt_tokens += attempt.prompt_tokens_actual.unwrap_or(0) as f64;
        }
        if timeline
            .last_token_unix_ns
            .is_some_and(|t| (start..=end).contains(&t))
        {
            window.requests += 1.0;
        }
    }
    Some(window)
}

fn quantile_of(values: &[f64], q: f64) -> Option<f64> {
    vernier_stats::quantile(values, q).ok()
}

fn throughput_at(windows: &[Throughput], q: f64) -> Throughput {
    let pick = |f: fn(&Throughput) -> Option<f64>| {
        let values: Vec<f64> = windows.iter().filter_map(f).collect();
        quantile_of(&values, q)
    };
    Throughput {
        output_tokens_per_s: pick(|t| t.output_tokens_per_s),
        prompt_tokens_per_s: pick(|t| t.prompt_tokens_per_s),
        requests_per_s: pick(|t| t.requests_per_s),
    }
}

/// The aggregate figures of a cell from its counted attempts (`None` when no attempt has a
/// timeline, as in journals written before they were recorded).
pub(crate) fn aggregate(load: LoadMode, attempts: &[&Attempt]) -> Option<Aggregate> {
    let mut reps: BTreeMap<u32, Vec<&Attempt>> = BTreeMap::new();
    for attempt in attempts {
        reps.entry(attempt.rep).or_default().push(attempt);
    }
    let (describe, windows): (&str, Vec<Window>) = match load {
        LoadMode::Steady => (
            STEADY_WINDOW,
            reps.values().filter_map(|r| steady_window(r)).collect(),
        ),
        LoadMode::Rate => (
            RATE_WINDOW,
            reps.values().filter_map(|r| whole_window(r)).collect(),
        ),
        LoadMode::Burst => (
            BURST_WINDOW,
            reps.values().filter_map(|r| whole_window(r)).collect(),
        ),
    };
    let throughputs: Vec<Throughput> = windows.iter().filter_map(|w| w.throughput()).collect();
    if throughputs.is_empty() {
        return None;
    }
    let interval = |f: fn(&Throughput) -> Option<f64>| {
        let values: Vec<f64> = throughputs.iter().filter_map(f).collect();
        crate::interval::median_interval(&values)
    };
    let seconds: Vec<f64> = windows.iter().map(|w| w.seconds).collect();
    Some(Aggregate {
        window: describe.to_owned(),
        n_windows: u32::try_from(throughputs.len()).unwrap_or(u32::MAX),
        window_s_median: quantile_of(&seconds, 0.5),
        median: throughput_at(&throughputs, 0.5),
        p10: throughput_at(&throughputs, 0.1),
        p90: throughput_at(&throughputs, 0.9),
        interval_95: ThroughputIntervals {
            output_tokens_per_s: interval(|t| t.output_tokens_per_s),
            prompt_tokens_per_s: interval(|t| t.prompt_tokens_per_s),
            requests_per_s: interval(|t| t.requests_per_s),
        },
    })
}

/// The output tokens per second of each repetition's window of a cell (the windows
/// [`aggregate`] takes its medians over), in repetition order.
pub(crate) fn window_output_rates(load: LoadMode, attempts: &[&Attempt]) -> Vec<f64> {
    let mut reps: BTreeMap<u32, Vec<&Attempt>> = BTreeMap::new();
    for attempt in attempts {
        reps.entry(attempt.rep).or_default().push(attempt);
    }
    reps.values()
        .filter_map(|rep| match load {
            LoadMode::Steady => steady_window(rep),
            LoadMode::Rate | LoadMode::Burst => whole_window(rep),
        })
        .filter_map(|window| window.throughput()?.output_tokens_per_s)
        .collect()
}

/// How late the requests of an open-loop cell were sent (`None` without schedules).
pub(crate) fn lateness(attempts: &[&Attempt]) -> Option<Lateness> {
    let late: Vec<f64> = attempts
        .iter()
        .filter_map(|a| {
            let timeline = a.timeline?;
            let scheduled = timeline.scheduled_unix_ns?;
            Some((timeline.request_sent_unix_ns as f64 - scheduled as f64) / 1e6)
        })
        .collect();
    Some(Lateness {
        n_requests: u32::try_from(late.len()).unwrap_or(u32::MAX),
        p50_ms: quantile_of(&late, 0.5)?,
        p99_ms: quantile_of(&late, 0.99)?,
        max_ms: late.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The server's own clock beside ours, over the requests whose responses carried timings
/// (llama.cpp's `timings`): medians, and the median of the per-request ratios ours / the
/// server's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerClock {
    /// Requests with server timings.
    pub n_requests: u32,
    /// Our decode rate (first event's tokens excluded), median.
    pub decode_tokens_per_s: Option<f64>,
    /// The server's `predicted_per_second`, median.
    pub server_decode_tokens_per_s: Option<f64>,
    /// Median of ours / the server's, request by request.
    pub decode_ratio: Option<f64>,
    /// Our prefill rate (prompt tokens / TTFT, so it includes the network and any queueing),
    /// median.
    pub prefill_tokens_per_s: Option<f64>,
    /// The server's `prompt_per_second` (its prompt evaluation alone), median.
    pub server_prefill_tokens_per_s: Option<f64>,
    /// Median of ours / the server's, request by request.
    pub prefill_ratio: Option<f64>,
}

/// The server's clock beside ours (`None` when no response carried timings).
pub(crate) fn server_clock(attempts: &[&Attempt]) -> Option<ServerClock> {
    let with: Vec<(&vernier_meter::Measurement, crate::journal::ServerTimings)> = attempts
        .iter()
        .filter_map(|a| Some((a.measurement.as_ref()?, a.server_timings?)))
        .collect();
    if with.is_empty() {
        return None;
    }
    let median = |values: Vec<f64>| quantile_of(&values, 0.5);
    let pairs = |ours: fn(&vernier_meter::Measurement) -> Option<f64>,
                 theirs: fn(&crate::journal::ServerTimings) -> Option<f64>| {
        with.iter()
            .filter_map(|(m, t)| Some((ours(m)?, theirs(t)?)))
            .filter(|(_, t)| *t > 0.0)
            .collect::<Vec<(f64, f64)>>()
    };
    let decode = pairs(|m| m.decode_tokens_per_s, |t| t.predicted_per_second);
    let prefill = pairs(|m| m.prefill_tokens_per_s, |t| t.prompt_per_second);
    Some(ServerClock {
        n_requests: u32::try_from(with.len()).unwrap_or(u32::MAX),
        decode_tokens_per_s: median(decode.iter().map(|p| p.0).collect()),
        server_decode_tokens_per_s: median(decode.iter().map(|p| p.1).collect()),
        decode_ratio: median(decode.iter().map(|p| p.0 / p.1).collect()),
        prefill_tokens_per_s: median(prefill.iter().map(|p| p.0).collect()),
        server_prefill_tokens_per_s: median(prefill.iter().map(|p| p.1).collect()),
        prefill_ratio: median(prefill.iter().map(|p| p.0 / p.1).collect()),
    })
}

/// How one part fared in one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PartCheck {
    /// The part as written.
    pub part: String,
    /// The quantile measured (`None` when no request defined it).
    pub value: Option<f64>,
    /// The unit of `value`.
    pub unit: String,
    /// Whether the part holds.
    pub met: bool,
}

/// How a cell fared against the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TargetCheck {
    /// Every part held.
    pub met: bool,
    /// Each part.
    pub parts: Vec<PartCheck>,
}

/// The figure `metric` bounds, for one request.
fn metric_value(metric: TargetMetric, attempt: &Attempt) -> Option<f64> {
    let m = attempt.measurement.as_ref()?;
    match metric {
        TargetMetric::Ttft => m.ttft_ms,
        TargetMetric::Itl => m.inter_token_latency_ms.map(|itl| itl.median_ms),
        TargetMetric::Decode => m.decode_tokens_per_s,
    }
}

/// Checks the cell's counted attempts against `target`.
pub(crate) fn check_target(target: &Target, attempts: &[&Attempt]) -> TargetCheck {
    let parts: Vec<PartCheck> = target
        .parts
        .iter()
        .map(|part| {
            let values: Vec<f64> = attempts
                .iter()
                .filter_map(|a| metric_value(part.metric, a))
                .collect();
            let value = quantile_of(&values, part.quantile);
            let met = value.is_some_and(|v| {
                if part.at_most {
                    v <= part.bound
                } else {
                    v >= part.bound
                }
            });
            PartCheck {
                part: part.text.clone(),
                value,
                unit: part.metric.unit().to_owned(),
                met,
            }
        })
        .collect();
    TargetCheck {
        met: parts.iter().all(|p| p.met),
        parts,
    }
}

/// One load the capacity search measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CapacityStep {
    /// Concurrency, or requests per second for a rate search.
    pub load: f64,
    /// The check at that load.
    pub check: TargetCheck,
}

/// The result of a capacity search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Capacity {
    /// The target as written.
    pub target: String,
    /// `concurrency` or `rate`.
    pub load_kind: String,
    /// The largest load that met every part below the first load that missed (`None` when the
    /// smallest load tried already missed).
    pub capacity: Option<f64>,
    /// The first load that missed, with what it missed by.
    pub first_miss: Option<CapacityStep>,
    /// Whether the search reached its ceiling (`--max-load`) still meeting the target.
    pub ceiling_reached: bool,
    /// Every load measured, in increasing order.
    pub steps: Vec<CapacityStep>,
}

/// The capacity from the checked loads (any order).
pub(crate) fn capacity(
    target: &str,
    load_kind: &str,
    mut steps: Vec<CapacityStep>,
    ceiling: f64,
) -> Capacity {
    steps.sort_by(|a, b| a.load.total_cmp(&b.load));
    let first_miss = steps.iter().find(|s| !s.check.met).cloned();
    let capacity = steps
        .iter()
        .filter(|s| s.check.met && first_miss.as_ref().is_none_or(|m| s.load < m.load))
        .map(|s| s.load)
        .next_back();
    Capacity {
        target: target.to_owned(),
        load_kind: load_kind.to_owned(),
        ceiling_reached: first_miss.is_none() && capacity.is_some_and(|c| c >= ceiling),
        capacity,
        first_miss,
        steps,
    }
}

/// The load a cell was measured at: its rate, or its concurrency.
pub(crate) fn load_of(cell: &CellKey) -> f64 {
    cell.rate_per_s().unwrap_or(f64::from(cell.concurrency))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_units_and_refuse_nonsense() {
        let target =
            Target::parse("ttft_p90<=1s, decode_p10>=20, itl_median<=50ms").expect("parses");
        assert_eq!(target.parts.len(), 3);
        assert_eq!(target.parts[0].metric, TargetMetric::Ttft);
        assert!((target.parts[0].bound - 1000.0).abs() < 1e-9);
        assert!((target.parts[0].quantile - 0.9).abs() < 1e-12);
        assert!(target.parts[0].at_most);
        assert!(!target.parts[1].at_most);
        assert!((target.parts[2].quantile - 0.5).abs() < 1e-12);
        for bad in [
            "",
            "ttft<=1",
            "speed_p90<=1",
            "ttft_p100<=1",
            "ttft_p90=1",
            "decode_p10>=fast",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    fn step(load: f64, met: bool) -> CapacityStep {
        CapacityStep {
            load,
            check: TargetCheck {
                met,
                parts: Vec::new(),
            },
        }
    }

    #[test]
    fn capacity_is_the_largest_passing_load_below_the_first_miss() {
        let result = capacity(
            "t",
            "concurrency",
            vec![
                step(8.0, false),
                step(1.0, true),
                step(4.0, true),
                step(6.0, true),
                step(7.0, false),
                step(16.0, true),
            ],
            64.0,
        );
        assert_eq!(result.capacity, Some(6.0));
        assert_eq!(result.first_miss.map(|m| m.load), Some(7.0));
        let none = capacity("t", "concurrency", vec![step(1.0, false)], 64.0);
        assert_eq!(none.capacity, None);
        let ceiling = capacity(
            "t",
            "concurrency",
            vec![step(1.0, true), step(64.0, true)],
            64.0,
        );
        assert!(ceiling.ceiling_reached);
    }
}
