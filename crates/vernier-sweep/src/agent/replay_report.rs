//! A replay's run file (`replay.json`), verdict and report (`report.md`), written from its
//! journal alone: each record counted once, by its last line.

use serde::{Deserialize, Serialize};
use vernier_run::{Reason, Verdict, VerdictLevel};

use super::config::ReplayConfig;
use super::journal::{self, AgentLine, Job, ReplayRecord, TurnStatus};
use super::summary::{Goodput, Spread, goodput_of};
use crate::environment::Environment;
use crate::error::SweepError;

/// Lateness p99 above which a replay is `questionable`: the client, not the trace, set when
/// requests went out.
pub const LATE_P99_MS: f64 = 5.0;

/// A replay's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReplayRunFile {
    /// `replay`.
    pub kind: String,
    /// How far the figures can be trusted.
    pub verdict: Verdict,
    /// The configuration.
    pub config: ReplayConfig,
    /// Words of synthesised text per server token.
    pub words_per_token: f64,
    /// The server, model and machine.
    pub environment: Environment,
    /// When it began, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// Records in the trace (after `--limit`).
    pub records: usize,
    /// Records answered within budget, cut off, failed, too long.
    pub ok: usize,
    /// Cut off by the token budget.
    pub cut_off: usize,
    /// Failed at the server.
    pub infra: usize,
    /// Too long for the server.
    pub too_long: usize,
    /// Each request's send against its schedule, ms.
    pub late_ms: Option<Spread>,
    /// TTFT, ms.
    pub ttft_ms: Option<Spread>,
    /// Decode rate, tokens per second.
    pub decode_tokens_per_s: Option<Spread>,
    /// Records whose hash ids repeat an earlier record's (a perfect cache would hit).
    pub repeat_records: usize,
    /// Of those, records the server reported a hit for.
    pub repeat_hits: usize,
    /// Cached tokens reported / tokens a perfect cache would hold.
    pub hit_ratio: Option<f64>,
    /// Per trace session: its records, and its cached / ideal ratio.
    pub sessions: Vec<(String, usize, Option<f64>)>,
    /// Against the target.
    pub goodput: Option<Goodput>,
    /// Whether the replay was interrupted.
    pub interrupted: bool,
}

/// The replay's figures from its journal.
pub(crate) fn replay_run_file(
    lines: &[AgentLine],
    n_records: usize,
    interrupted: bool,
) -> Result<ReplayRunFile, SweepError> {
    let Some(AgentLine::Start(start)) = lines.first() else {
        return Err(SweepError::invalid("the journal", "it has no start line"));
    };
    let Job::Replay {
        config,
        words_per_token,
    } = &start.job
    else {
        return Err(SweepError::invalid(
            "the journal",
            "it is an agent run's, not a replay's",
        ));
    };
    let records = last_records(lines);
    let answered: Vec<&ReplayRecord> = records
        .iter()
        .copied()
        .filter(|r| r.status.answered())
        .collect();
    let count = |status: TurnStatus| records.iter().filter(|r| r.status == status).count();
    let reported: Vec<&ReplayRecord> = answered
        .iter()
        .copied()
        .filter(|r| r.cached_tokens.is_some())
        .collect();
    let cached: u64 = reported.iter().filter_map(|r| r.cached_tokens).sum();
    let ideal: u64 = reported.iter().map(|r| r.ideal_cached_tokens).sum();
    let sessions = per_session(&records, &reported);
    let late_ms = Spread::of(answered.iter().filter_map(|r| r.late_ms));
    let infra = count(TurnStatus::Infra);
    let (_, server_changes) = journal::end_of(lines);
    let mut verdict = replay_verdict(
        late_ms,
        (infra, records.len(), n_records),
        !answered.is_empty() && reported.is_empty(),
        interrupted,
    );
    let mut reasons = verdict.reasons.clone();
    reasons.extend(simulated_or_not_sent(
        start.environment.server.simulator,
        &records,
    ));
    verdict = Verdict::from_reasons(reasons);
    if !server_changes.is_empty() {
        let mut reasons = verdict.reasons.clone();
        reasons.push(Reason::new(
            "server_changed",
            VerdictLevel::Invalid,
            format!(
                "the server changed during the replay: {}",
                server_changes.join("; ")
            ),
        ));
        verdict = Verdict::from_reasons(reasons);
    }
    Ok(ReplayRunFile {
        kind: "replay".to_owned(),
        verdict,
        config: (**config).clone(),
        words_per_token: *words_per_token,
        environment: (*start.environment).clone(),
        started_unix_ms: start.started_unix_ms,
        records: n_records,
        ok: count(TurnStatus::Ok),
        cut_off: count(TurnStatus::CutOff),
        infra,
        too_long: count(TurnStatus::TooLong),
        late_ms,
        ttft_ms: Spread::of(answered.iter().filter_map(|r| r.ttft_ms)),
        decode_tokens_per_s: Spread::of(answered.iter().filter_map(|r| r.decode_tokens_per_s)),
        repeat_records: answered
            .iter()
            .filter(|r| r.ideal_cached_tokens > 0)
            .count(),
        repeat_hits: answered
            .iter()
            .filter(|r| r.ideal_cached_tokens > 0 && r.cached_tokens.unwrap_or(0) > 0)
            .count(),
        hit_ratio: (ideal > 0).then(|| cached as f64 / ideal as f64),
        sessions,
        goodput: config.target.as_ref().map(|target| {
            goodput_of(
                records.iter().map(|r| {
                    (
                        r.status.answered(),
                        r.ttft_ms,
                        r.decode_tokens_per_s,
                        r.itl_median_ms,
                    )
                }),
                target,
                n_records,
            )
        }),
        interrupted,
    })
}

/// Per trace session: its records, and its cached / ideal ratio over the records that
/// reported a count.
fn per_session(
    records: &[&ReplayRecord],
    reported: &[&ReplayRecord],
) -> Vec<(String, usize, Option<f64>)> {
    let mut names: Vec<String> = records.iter().filter_map(|r| r.session.clone()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let mine: Vec<&ReplayRecord> = reported
                .iter()
                .copied()
                .filter(|r| r.session.as_deref() == Some(name.as_str()))
                .collect();
            let ideal: u64 = mine.iter().map(|r| r.ideal_cached_tokens).sum();
            let cached: u64 = mine.iter().filter_map(|r| r.cached_tokens).sum();
            let n = records
                .iter()
                .filter(|r| r.session.as_deref() == Some(name.as_str()))
                .count();
            (name, n, (ideal > 0).then(|| cached as f64 / ideal as f64))
        })
        .collect()
}

/// Each record by its last line: one a resume sent again counts once, as it went then.
fn last_records(lines: &[AgentLine]) -> Vec<&ReplayRecord> {
    let mut by_index: std::collections::BTreeMap<usize, &ReplayRecord> =
        std::collections::BTreeMap::new();
    for line in lines {
        if let AgentLine::Replayed(record) = line {
            by_index.insert(record.index, record);
        }
    }
    by_index.into_values().collect()
}

/// The verdict's reasons a replay of the simulator, or one that left records unsent, adds.
fn simulated_or_not_sent(simulated: bool, records: &[&ReplayRecord]) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if simulated {
        reasons.push(Reason::new(
            "simulated",
            VerdictLevel::Questionable,
            "the bundled simulator answered: the figures describe it, not a server",
        ));
    }
    let not_sent = records
        .iter()
        .filter(|r| r.status == TurnStatus::TooLong && r.tries == 0)
        .count();
    if not_sent > 0 {
        reasons.push(Reason::new(
            "over_context",
            VerdictLevel::Questionable,
            format!(
                "{not_sent} records do not fit the server's context and were not sent (--skip-over-context): the load is lighter than the trace's"
            ),
        ));
    }
    reasons
}

/// The replay's verdict: late sends, failures, no cache count, records not sent.
fn replay_verdict(
    late_ms: Option<Spread>,
    (infra, sent, n_records): (usize, usize, usize),
    no_cache_count: bool,
    interrupted: bool,
) -> Verdict {
    let mut reasons = Vec::new();
    if let Some(late) = late_ms
        && late.p99 > LATE_P99_MS
    {
        reasons.push(Reason::new(
            "late_sends",
            VerdictLevel::Questionable,
            format!(
                "requests went out late against the trace's schedule: p99 {:.1} ms (above {LATE_P99_MS} ms)",
                late.p99
            ),
        ));
    }
    if infra > 0 {
        let level = if infra as f64 / sent.max(1) as f64 > vernier_run::INFRA_INVALID_SHARE {
            VerdictLevel::Invalid
        } else {
            VerdictLevel::Questionable
        };
        reasons.push(Reason::new(
            "infra",
            level,
            format!("{infra} of {sent} requests failed at the server after every try"),
        ));
    }
    if no_cache_count {
        reasons.push(Reason::new(
            "no_cache_count",
            VerdictLevel::Questionable,
            "the server reported no cached tokens: the hit ratio is unknown",
        ));
    }
    if interrupted || sent < n_records {
        reasons.push(Reason::new(
            "interrupted",
            VerdictLevel::Questionable,
            format!("{sent} of {n_records} records were sent"),
        ));
    }
    Verdict::from_reasons(reasons)
}

pub(crate) fn markdown(run: &ReplayRunFile) -> String {
    use std::fmt::Write as _;
    let mut md = String::new();
    let env = &run.environment;
    let _ = writeln!(
        md,
        "# Trace replay: {} on {}, {}\n",
        env.model.id,
        if env.server.simulator {
            "the bundled simulator (simulated figures)".to_owned()
        } else {
            env.server.kind.clone()
        },
        vernier_run::utc_minute(run.started_unix_ms)
    );
    let _ = writeln!(md, "**{}**\n", run.verdict.line());
    let _ = writeln!(
        md,
        "Trace `{}` ({} records), sent {}× faster than recorded; prompts synthesised at the recorded lengths ({:.3} words per server token), \
         shared prefix blocks as shared text; output lengths {}.\n",
        run.config.trace,
        run.records,
        run.config.time_scale,
        run.words_per_token,
        if run.config.force_length {
            "forced where the server allows"
        } else {
            "as budgets"
        }
    );
    let spread = |s: Option<Spread>, d: usize| {
        s.map_or_else(
            || "—".to_owned(),
            |s| {
                format!(
                    "{} (p99 {}, max {})",
                    crate::report::text::number(Some(s.median), d),
                    crate::report::text::number(Some(s.p99), d),
                    crate::report::text::number(Some(s.max), d)
                )
            },
        )
    };
    let _ = writeln!(md, "| figure | median (p99, max) |\n|---|---|");
    let _ = writeln!(
        md,
        "| lateness against the schedule, ms | {} |",
        spread(run.late_ms, 2)
    );
    let _ = writeln!(md, "| TTFT, ms | {} |", spread(run.ttft_ms, 1));
    let _ = writeln!(
        md,
        "| decode, tok/s | {} |",
        spread(run.decode_tokens_per_s, 1)
    );
    let _ = writeln!(
        md,
        "\n{} ok, {} cut off, {} failed, {} too long. {} records repeat an earlier record's prefix blocks; the server reported a hit for {} of them. \
         Hit ratio (cached / what a perfect cache would hold): {}.",
        run.ok,
        run.cut_off,
        run.infra,
        run.too_long,
        run.repeat_records,
        run.repeat_hits,
        run.hit_ratio
            .map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))
    );
    if let Some(goodput) = &run.goodput {
        let _ = writeln!(
            md,
            "\n**Goodput:** {} of {} requests ({:.1}%) meet the target.",
            goodput.met,
            goodput.of,
            goodput.share * 100.0
        );
    }
    if !run.sessions.is_empty() {
        md.push_str("\n| session | records | hit ratio |\n|---|---|---|\n");
        for (name, n, ratio) in &run.sessions {
            let _ = writeln!(
                md,
                "| {name} | {n} | {} |",
                ratio.map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))
            );
        }
    }
    md
}
