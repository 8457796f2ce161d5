//! An agent run's figures, from its journal alone: per pass the cache's hits against a
//! perfect cache, TTFT by turn index, session time and turns per minute, goodput against the
//! target; the speed-up the cache gives against the defeated baseline; the capacity search.

use serde::{Deserialize, Serialize};

use super::journal::{Pass, TurnRecord, TurnStatus};
use crate::capacity_target::{Target, TargetMetric};

/// Median, 10th and 90th percentiles and mean of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Spread {
    /// Values.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Mean.
    pub mean: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (non-finite ones left out); `None` when empty.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        let data: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        let q = |p: f64| vernier_stats::quantile(&data, p).ok();
        Some(Self {
            n: data.len(),
            median: q(0.5)?,
            p10: q(0.1)?,
            p90: q(0.9)?,
            p99: q(0.99)?,
            mean: vernier_stats::mean(&data).ok()?,
            max: data.iter().copied().fold(f64::MIN, f64::max),
        })
    }
}

/// One turn index's figures over the sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TurnFigures {
    /// The turn (from 1).
    pub turn: u32,
    /// Turns answered.
    pub answered: usize,
    /// Median prompt tokens.
    pub prompt_tokens: Option<f64>,
    /// Median cached tokens.
    pub cached_tokens: Option<f64>,
    /// Median of what a perfect cache would hold.
    pub ideal_cached_tokens: Option<f64>,
    /// TTFT, ms.
    pub ttft_ms: Option<Spread>,
    /// Prefill rate of the uncached part, tokens per second (median).
    pub prefill_uncached_tokens_per_s: Option<f64>,
    /// Decode rate, tokens per second (median).
    pub decode_tokens_per_s: Option<f64>,
}

/// The share of turns meeting a target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Goodput {
    /// Answered turns meeting every part.
    pub met: usize,
    /// Turns planned (failed and unsent ones count as missing the target).
    pub of: usize,
    /// `met / of`.
    pub share: f64,
    /// Whether every part holds at its quantile over the planned turns (failed and unsent
    /// ones at their worst).
    pub holds: bool,
    /// Each part: its text, the value at its quantile, whether it holds.
    pub parts: Vec<(String, Option<f64>, bool)>,
}

/// One pass's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PassSummary {
    /// The pass.
    pub pass: Pass,
    /// Sessions at once.
    pub sessions: u32,
    /// Turns answered within budget.
    pub ok: usize,
    /// Turns stopped by the token budget.
    pub cut_off: usize,
    /// Turns the server failed.
    pub infra: usize,
    /// Turns the server could not take (too long).
    pub too_long: usize,
    /// Turns offered tools.
    pub tool_turns: usize,
    /// Of those, turns that called one.
    pub tool_call_turns: usize,
    /// Answered turns that needed more than one try.
    pub retried: usize,
    /// Turns where the server reported its cache.
    pub cache_reported: usize,
    /// Sum of prompt tokens of answered turns.
    pub prompt_tokens: u64,
    /// Sum of cached tokens reported.
    pub cached_tokens: u64,
    /// Sum of what a perfect cache would hold.
    pub ideal_cached_tokens: u64,
    /// `cached / ideal` over the turns that reported a count.
    pub hit_ratio: Option<f64>,
    /// `cached / prompt` over the same turns.
    pub cached_share: Option<f64>,
    /// TTFT over answered turns, ms.
    pub ttft_ms: Option<Spread>,
    /// Time to first content, ms.
    pub ttfc_ms: Option<Spread>,
    /// Prefill rate of the uncached part.
    pub prefill_uncached_tokens_per_s: Option<Spread>,
    /// Decode rate.
    pub decode_tokens_per_s: Option<Spread>,
    /// A session's time: its pauses and its turns' end-to-end times, s.
    pub session_s: Option<Spread>,
    /// Answered turns per minute: each session's turns over its own time (pauses and turns),
    /// summed over the sessions running side by side.
    pub turns_per_minute: Option<f64>,
    /// The pass's first send to its last end, s (an interrupted and resumed pass includes the
    /// gap).
    pub wall_s: Option<f64>,
    /// By turn index.
    pub by_turn: Vec<TurnFigures>,
    /// Against the target, when one was given.
    pub goodput: Option<Goodput>,
}

fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    Spread::of(values).map(|s| s.median)
}

/// A turn's value of one target figure.
fn figure(turn: &TurnRecord, metric: TargetMetric) -> Option<f64> {
    match metric {
        TargetMetric::Ttft => turn.ttft_ms,
        TargetMetric::Decode => turn.decode_tokens_per_s,
        TargetMetric::Itl => turn.itl_median_ms,
    }
}

/// One turn as goodput reads it: answered, TTFT, decode and inter-token latency.
pub(crate) type GoodputRow = (bool, Option<f64>, Option<f64>, Option<f64>);

/// The goodput of `turns` against `target`: per turn, every part's bound holds for that turn.
/// `planned` turns were meant to be sent: those never sent (a session ended early) and those
/// that failed miss the target, and count at their worst in each part's quantile (TTFT and
/// inter-token latency unbounded, decode zero), so failures cannot make a load look better.
pub(crate) fn goodput_of(
    turns: impl IntoIterator<Item = GoodputRow>,
    target: &Target,
    planned: usize,
) -> Goodput {
    let mut rows: Vec<GoodputRow> = turns.into_iter().collect();
    rows.resize(rows.len().max(planned), (false, None, None, None));
    let value = |row: &GoodputRow, metric| match metric {
        TargetMetric::Ttft => row.1,
        TargetMetric::Decode => row.2,
        TargetMetric::Itl => row.3,
    };
    let meets = |bound: f64, at_most: bool, v: Option<f64>| {
        v.is_some_and(|v| if at_most { v <= bound } else { v >= bound })
    };
    let met = rows
        .iter()
        .filter(|row| {
            row.0
                && target
                    .parts
                    .iter()
                    .all(|part| meets(part.bound, part.at_most, value(row, part.metric)))
        })
        .count();
    let parts: Vec<(String, Option<f64>, bool)> = target
        .parts
        .iter()
        .map(|part| {
            // The largest finite value stands for "never" (the quantile refuses infinities).
            let worst = if part.at_most { f64::MAX } else { 0.0 };
            let values: Vec<f64> = rows
                .iter()
                .map(|row| {
                    if row.0 {
                        value(row, part.metric).unwrap_or(worst)
                    } else {
                        worst
                    }
                })
                .collect();
            // A "≥" bound reads the low tail: decode_p10 ≥ 20 means 90% of turns decode at
            // 20 or more, so its quantile is taken as written.
            let at = vernier_stats::quantile(&values, part.quantile).ok();
            (part.text.clone(), at, meets(part.bound, part.at_most, at))
        })
        .collect();
    let of = rows.len();
    Goodput {
        met,
        of,
        share: if of == 0 { 0.0 } else { met as f64 / of as f64 },
        holds: of > 0 && parts.iter().all(|part| part.2),
        parts,
    }
}

/// Each turn index's figures over the answered turns.
fn by_turn(answered: &[&TurnRecord], last_turn: u32) -> Vec<TurnFigures> {
    let mut by_turn = Vec::new();
    for index in 1..=last_turn {
        let these: Vec<&TurnRecord> = answered
            .iter()
            .copied()
            .filter(|t| t.turn == index)
            .collect();
        let as_f64 = |v: Option<u64>| v.map(|v| v as f64);
        by_turn.push(TurnFigures {
            turn: index,
            answered: these.len(),
            prompt_tokens: median(these.iter().filter_map(|t| as_f64(t.prompt_tokens))),
            cached_tokens: median(these.iter().filter_map(|t| as_f64(t.cached_tokens))),
            ideal_cached_tokens: median(these.iter().filter_map(|t| as_f64(t.ideal_cached_tokens))),
            ttft_ms: Spread::of(these.iter().filter_map(|t| t.ttft_ms)),
            prefill_uncached_tokens_per_s: median(
                these.iter().filter_map(|t| t.prefill_uncached_tokens_per_s),
            ),
            decode_tokens_per_s: median(these.iter().filter_map(|t| t.decode_tokens_per_s)),
        });
    }
    by_turn
}

/// The figures of one pass's turns; `planned` is how many turns it meant to send.
pub(crate) fn summarise_pass(
    (pass, sessions, planned): (Pass, u32, usize),
    turns: &[&TurnRecord],
    target: Option<&Target>,
) -> PassSummary {
    let answered: Vec<&TurnRecord> = turns
        .iter()
        .copied()
        .filter(|t| t.status.answered())
        .collect();
    let count = |status: TurnStatus| turns.iter().filter(|t| t.status == status).count();
    let reported: Vec<&TurnRecord> = answered
        .iter()
        .copied()
        .filter(|t| t.cached_tokens.is_some())
        .collect();
    let cached: u64 = reported.iter().filter_map(|t| t.cached_tokens).sum();
    let ideal: u64 = reported.iter().filter_map(|t| t.ideal_cached_tokens).sum();
    let prompt_reported: u64 = reported.iter().filter_map(|t| t.prompt_tokens).sum();
    let by_turn = by_turn(&answered, turns.iter().map(|t| t.turn).max().unwrap_or(0));
    // A session's time is the sum of its pauses and its turns' end-to-end times: a resumed
    // run's interruption is not in it.
    let per_session: Vec<(f64, usize)> = (0..sessions)
        .filter_map(|session| {
            let mine: Vec<&&TurnRecord> = turns.iter().filter(|t| t.session == session).collect();
            let seconds: f64 = mine
                .iter()
                .map(|t| (t.think_ms + t.end_to_end_ms.unwrap_or(0.0)) / 1000.0)
                .sum();
            let done = mine.iter().filter(|t| t.status.answered()).count();
            (seconds > 0.0).then_some((seconds, done))
        })
        .collect();
    let sessions_s = per_session.iter().map(|(seconds, _)| *seconds);
    // Sessions run side by side: the pass's rate is the sum of theirs.
    let turns_per_minute = (!per_session.is_empty()).then(|| {
        per_session
            .iter()
            .map(|(seconds, done)| *done as f64 * 60.0 / seconds)
            .sum::<f64>()
    });
    let first = turns.iter().filter_map(|t| t.sent_unix_ns).min();
    let last = turns.iter().filter_map(|t| t.end_unix_ns).max();
    let wall_s = first
        .zip(last)
        .map(|(first, last)| last.saturating_sub(first) as f64 / 1e9)
        .filter(|s| *s > 0.0);
    let tool_turns = turns
        .iter()
        .filter(|t| t.tools_offered > 0 && t.status.answered())
        .count();
    PassSummary {
        pass,
        sessions,
        ok: count(TurnStatus::Ok),
        cut_off: count(TurnStatus::CutOff),
        infra: count(TurnStatus::Infra),
        too_long: count(TurnStatus::TooLong),
        tool_turns,
        tool_call_turns: answered
            .iter()
            .filter(|t| t.tools_offered > 0 && !t.calls.is_empty())
            .count(),
        cache_reported: reported.len(),
        retried: answered.iter().filter(|t| t.tries > 1).count(),
        prompt_tokens: answered.iter().filter_map(|t| t.prompt_tokens).sum(),
        cached_tokens: cached,
        ideal_cached_tokens: ideal,
        hit_ratio: (ideal > 0).then(|| cached as f64 / ideal as f64),
        cached_share: (prompt_reported > 0).then(|| cached as f64 / prompt_reported as f64),
        ttft_ms: Spread::of(answered.iter().filter_map(|t| t.ttft_ms)),
        ttfc_ms: Spread::of(answered.iter().filter_map(|t| t.ttfc_ms)),
        prefill_uncached_tokens_per_s: Spread::of(
            answered
                .iter()
                .filter_map(|t| t.prefill_uncached_tokens_per_s),
        ),
        decode_tokens_per_s: Spread::of(answered.iter().filter_map(|t| t.decode_tokens_per_s)),
        session_s: Spread::of(sessions_s),
        turns_per_minute,
        wall_s,
        by_turn,
        goodput: target.map(|target| {
            goodput_of(
                // A turn cut off by its budget is not a good turn: it never ended as the model
                // meant it to, so it counts with the failed ones.
                turns.iter().map(|t| {
                    (
                        t.status == TurnStatus::Ok,
                        figure(t, TargetMetric::Ttft),
                        figure(t, TargetMetric::Decode),
                        figure(t, TargetMetric::Itl),
                    )
                }),
                target,
                planned,
            )
        }),
    }
}

/// What the prefix cache gives this workload: the defeated pass against the allowed one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CacheSpeedup {
    /// Mean TTFT with the cache defeated / with it allowed, over the (session, turn) pairs
    /// both passes answered.
    pub ttft_mean: f64,
    /// Median TTFT, likewise.
    pub ttft_median: f64,
    /// Median session time, likewise.
    pub session_time: Option<f64>,
    /// The (session, turn) pairs compared.
    pub pairs: usize,
}

/// The speed-up of the allowed pass over the defeated one, over the (session, turn) pairs
/// both answered: mean and median TTFT, and median session time over the sessions both
/// finished.
pub(crate) fn speedup(cached: &[&TurnRecord], baseline: &[&TurnRecord]) -> Option<CacheSpeedup> {
    let key = |t: &TurnRecord| (t.session, t.turn);
    let answered = |turns: &[&TurnRecord]| -> std::collections::BTreeMap<(u32, u32), f64> {
        turns
            .iter()
            .filter(|t| t.status.answered())
            .filter_map(|t| Some((key(t), t.ttft_ms?)))
            .collect()
    };
    let (with, without) = (answered(cached), answered(baseline));
    let pairs: Vec<(f64, f64)> = with
        .iter()
        .filter_map(|(k, w)| Some((*w, *without.get(k)?)))
        .collect();
    let with = Spread::of(pairs.iter().map(|p| p.0))?;
    let without = Spread::of(pairs.iter().map(|p| p.1))?;
    let session_time = |turns: &[&TurnRecord], session: u32| -> f64 {
        turns
            .iter()
            .filter(|t| t.session == session)
            .map(|t| t.think_ms + t.end_to_end_ms.unwrap_or(0.0))
            .sum()
    };
    let sessions: std::collections::BTreeSet<u32> = cached.iter().map(|t| t.session).collect();
    let with_s = Spread::of(sessions.iter().map(|s| session_time(cached, *s)));
    let without_s = Spread::of(sessions.iter().map(|s| session_time(baseline, *s)));
    (with.mean > 0.0 && with.median > 0.0).then(|| CacheSpeedup {
        ttft_mean: without.mean / with.mean,
        ttft_median: without.median / with.median,
        pairs: pairs.len(),
        session_time: with_s
            .zip(without_s)
            .filter(|(with, _)| with.median > 0.0)
            .map(|(with, without)| without.median / with.median),
    })
}

/// The capacity search over sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionCapacity {
    /// The target.
    pub target: String,
    /// The most sessions tried for.
    pub up_to: u32,
    /// Each step: sessions, whether the target held, the goodput share.
    pub steps: Vec<(u32, bool, f64)>,
    /// The largest number of sessions that met the target (`None`: not even one).
    pub largest: Option<u32>,
    /// Whether the search reached `up_to` still meeting the target (the capacity is at
    /// least that).
    pub at_limit: bool,
    /// Whether the search ran to its end (an interrupted step is left out, and the answer
    /// is then only what the steps done show).
    pub complete: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_counts_turns_meeting_every_part_and_failed_turns_as_missing() {
        let target = Target::parse("ttft_p50<=100ms,decode_p50>=20").expect("target");
        // Four answered turns (two meet both parts) and one failed turn.
        let rows = vec![
            (true, Some(50.0), Some(30.0), None),
            (true, Some(90.0), Some(25.0), None),
            (true, Some(150.0), Some(30.0), None),
            (true, Some(60.0), Some(10.0), None),
            (false, None, None, None),
        ];
        let goodput = goodput_of(rows, &target, 5);
        assert_eq!((goodput.met, goodput.of), (2, 5));
        assert!((goodput.share - 0.4).abs() < 1e-12);
        // Medians over all five, the failed turn at its worst: TTFT 90 ms (holds), decode
        // 25 (holds).
        assert!(goodput.holds, "{goodput:?}");
        assert_eq!(goodput.parts[0].1, Some(90.0));
        assert_eq!(goodput.parts[1].1, Some(25.0));
        // Planned turns never sent miss too: with ten planned, the median TTFT is "never".
        let rows = vec![
            (true, Some(50.0), Some(30.0), None),
            (true, Some(90.0), Some(25.0), None),
        ];
        let short = goodput_of(rows, &target, 10);
        assert_eq!((short.met, short.of), (2, 10));
        assert!(!short.holds, "{short:?}");
    }
}
