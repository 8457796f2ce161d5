//! The shards of a sharded or merged run, in the reports: each shard's start, clock, lateness
//! against the schedule and client lag, and what the merge found wrong.

use std::fmt::Write as _;

use super::text::number;
use crate::run_file::RunFile;
use crate::shard_report::ShardFigures;

/// The start of a shard in words: how late it began, and its clock against the server's.
fn start(shard: &ShardFigures) -> (String, String) {
    let Some(start) = &shard.start else {
        return ("never began".to_owned(), "—".to_owned());
    };
    let began = match start.start_at_unix_ms {
        Some(_) => format!("{:.1} ms late", start.late_ms),
        None => "no --start-at".to_owned(),
    };
    let clock = match (&start.clock, &start.clock_note) {
        (Some(clock), _) => format!("{:+.1} ± {:.1} ms", clock.offset_ms, clock.uncertainty_ms),
        (None, Some(note)) => format!("unknown: {note}"),
        (None, None) => "—".to_owned(),
    };
    (began, clock)
}

/// One shard's lateness, `p50/p99/max ms`.
fn lateness(shard: &ShardFigures) -> String {
    shard.lateness.as_ref().map_or_else(
        || "—".to_owned(),
        |l| format!("{:.2}/{:.2}/{:.2}", l.p50_ms, l.p99_ms, l.max_ms),
    )
}

/// The Markdown section (empty for a run on one machine).
pub(crate) fn markdown(run: &RunFile) -> String {
    let Some(shards) = &run.shards else {
        return String::new();
    };
    let mut out = String::new();
    let _ = writeln!(out, "\n## Shards\n");
    if shards.merged {
        let _ = writeln!(
            out,
            "Merged from {} of {} shards (`sweep merge`): every figure above is computed from the pooled requests, \
             and each repetition's throughput over the union of the shards' windows.\n",
            shards.shards.len(),
            shards.count
        );
    } else if let Some(own) = shards.shards.first() {
        let _ = writeln!(
            out,
            "Shard {} of {}: this run sent its share of the load only; merge the shards with `sweep merge` for the whole.\n",
            own.index, shards.count
        );
    }
    let _ = writeln!(
        out,
        "| shard | folder | start | server clock − ours | requests | late to schedule ms p50/p99/max | client lag p99 µs | complete |"
    );
    let _ = writeln!(out, "|---:|---|---|---|---:|---:|---:|---|");
    for shard in &shards.shards {
        let (began, clock) = start(shard);
        let _ = writeln!(
            out,
            "| {} | {} | {began} | {clock} | {} | {} | {} | {} |",
            shard.index,
            shard.folder.as_deref().unwrap_or("this run"),
            shard.n_ok,
            lateness(shard),
            number(shard.event_lag_p99_us, 0),
            if shard.complete { "yes" } else { "**no**" },
        );
    }
    for index in &shards.missing {
        let _ = writeln!(out, "| {index} | **missing** | | | | | | |");
    }
    for line in shards.invalid.iter().chain(&shards.questionable) {
        let _ = writeln!(out, "\n- {line}");
    }
    out
}

/// The terminal's lines (`None` for a run on one machine).
pub(crate) fn terminal(run: &RunFile) -> Option<String> {
    let shards = run.shards.as_ref()?;
    let mut out = String::new();
    for shard in &shards.shards {
        let (began, clock) = start(shard);
        let _ = writeln!(
            out,
            "shard {}/{}: {} requests, began {began}, server clock − ours {clock}, late to schedule p50/p99/max {} ms{}",
            shard.index,
            shards.count,
            shard.n_ok,
            lateness(shard),
            if shard.complete { "" } else { ", NOT complete" },
        );
    }
    for index in &shards.missing {
        let _ = writeln!(out, "shard {index}/{}: MISSING", shards.count);
    }
    Some(out)
}
