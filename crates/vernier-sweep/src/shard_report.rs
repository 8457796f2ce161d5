//! The shards of a run in its run file: each shard's start, requests, lateness against the
//! schedule and client lag, from a shard's own journal or a merged one.

use serde::{Deserialize, Serialize};

use crate::journal::{Attempt, LoadedSweepJournal, SweepJournalLine};
use crate::offered_load::Lateness;
use crate::shard::ShardStart;

/// One shard's figures in a run file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ShardFigures {
    /// The shard's number.
    pub index: u32,
    /// Its run folder (merged runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// Its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<ShardStart>,
    /// Measured requests that finished.
    pub n_ok: u64,
    /// How late its open-loop requests went out against the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness: Option<Lateness>,
    /// Its own client lag: p99 of the delay between an event's arrival and its reading, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_lag_p99_us: Option<f64>,
    /// Whether it ran every repetition.
    pub complete: bool,
}

/// The shards of a run: this shard alone (a shard's own run file) or every shard merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ShardsReport {
    /// How many shards the configuration was split into.
    pub count: u32,
    /// True for a merged run (`sweep merge`).
    pub merged: bool,
    /// The shards' figures, by number.
    pub shards: Vec<ShardFigures>,
    /// Shard numbers missing from a merged run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u32>,
    /// What makes the run invalid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<String>,
    /// What a reader must weigh.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questionable: Vec<String>,
}

/// The start line of a shard's journal (the last, after a resume).
pub(crate) fn start_of(journal: &LoadedSweepJournal) -> Option<ShardStart> {
    let starts: Vec<&ShardStart> = journal
        .lines
        .iter()
        .filter_map(|line| match line {
            SweepJournalLine::ShardStart(start) => Some(&**start),
            _ => None,
        })
        .collect();
    let mut last = (*starts.last()?).clone();
    // The instant the shards agreed on is the first start's: a resumed shard past it starts at
    // once (its own line has none), but it is still a shard of that run.
    if last.start_at_unix_ms.is_none() {
        last.start_at_unix_ms = starts.iter().find_map(|start| start.start_at_unix_ms);
    }
    Some(last)
}

/// The shards of a run, from its journal: every shard of a merged run, or a shard's own.
pub(crate) fn shards_report(journal: &LoadedSweepJournal, complete: bool) -> Option<ShardsReport> {
    let counted = crate::counted::counted_attempts(journal);
    let figures =
        |index: u32, folder: Option<String>, start: Option<ShardStart>, complete: bool| {
            let attempts: Vec<&Attempt> = counted
                .values()
                .flatten()
                .copied()
                .filter(|a| a.shard.is_none_or(|s| s == index))
                .collect();
            let mut lag = crate::lag::LagHistogram::new();
            for attempt in &attempts {
                lag.merge(&attempt.client_lag);
            }
            ShardFigures {
                index,
                folder,
                start,
                n_ok: attempts.len() as u64,
                lateness: crate::offered_load::lateness(&attempts).filter(|l| l.n_requests > 0),
                event_lag_p99_us: lag.quantile_us(0.99),
                complete,
            }
        };
    let merged = journal.lines.iter().find_map(|line| match line {
        SweepJournalLine::Merged(merged) => Some(merged),
        _ => None,
    });
    if let Some(merged) = merged {
        return Some(ShardsReport {
            count: merged.count,
            merged: true,
            shards: merged
                .shards
                .iter()
                .map(|s| figures(s.index, Some(s.folder.clone()), s.start.clone(), s.complete))
                .collect(),
            missing: merged.missing.clone(),
            invalid: merged.invalid.clone(),
            questionable: merged.questionable.clone(),
        });
    }
    let shard = journal.header()?.config.shard?;
    let start = start_of(journal);
    let mut questionable = Vec::new();
    if start.as_ref().is_some_and(|s| s.start_at_unix_ms.is_none()) {
        questionable.push(format!(
            "shard {shard} had no --start-at: it started when it was ready, not with the others"
        ));
    }
    Some(ShardsReport {
        count: shard.count,
        merged: false,
        shards: vec![figures(shard.index, None, start, complete)],
        missing: Vec::new(),
        invalid: Vec::new(),
        questionable,
    })
}
