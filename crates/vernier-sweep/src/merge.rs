//! `sweep merge`: one run from the journals of a configuration's shards. Every measured
//! request of every shard goes into one journal, so each figure is computed from the pooled
//! requests (percentiles of the union, never averages of the shards' percentiles) and each
//! repetition's throughput over the union of the shards' windows; the merge checks that the
//! shards ran the same configuration against the same server, and a shard that is missing,
//! failed or ran something else makes the merged run `invalid`, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::config::{CellKey, SweepConfig, Workload};
use crate::error::SweepError;
use crate::journal::{
    Attempt, CellWindow, Header, LoadedSweepJournal, RepDone, RepPhase, SweepJournalLine,
    read_sweep_journal,
};
use crate::report::{ReportFiles, write_reports};
use crate::run_file::RunFile;
use crate::shard::{MergedFrom, ShardSource};
use crate::shard_report::start_of;
use crate::summary::summarise;

/// Clocks further apart than this (beyond their own uncertainty) make a merged run
/// questionable: the shards' schedules may be misaligned by as much.
const CLOCK_SPREAD_MS: f64 = 50.0;

/// A merged run: its run file, the reports written from it and its journal.
#[derive(Debug)]
#[non_exhaustive]
pub struct MergeOutcome {
    /// The merged run file.
    pub run: RunFile,
    /// The files written into the output folder.
    pub files: ReportFiles,
    /// The merged journal.
    pub journal: PathBuf,
}

/// One shard's journal, read.
struct ShardRun {
    folder: PathBuf,
    journal: LoadedSweepJournal,
    header: Header,
    index: u32,
    count: u32,
}

/// What the merge found wrong, sorted by weight.
#[derive(Default)]
struct Findings {
    invalid: Vec<String>,
    questionable: Vec<String>,
}

/// Reads every folder's journal; one that cannot be read or is not a shard's is a finding.
fn read_shards(folders: &[PathBuf], findings: &mut Findings) -> Vec<ShardRun> {
    let mut runs = Vec::new();
    for folder in folders {
        let path = vernier_run::run_file_in(folder, "journal.jsonl");
        let journal = match read_sweep_journal(&path) {
            Ok(journal) => journal,
            Err(error) => {
                findings.invalid.push(format!(
                    "{} holds no shard's journal: {}",
                    folder.display(),
                    vernier_cli::one_line(&error)
                ));
                continue;
            }
        };
        let Some(mut header) = journal.header().cloned() else {
            findings.invalid.push(format!(
                "{} has a journal without its header line",
                path.display()
            ));
            continue;
        };
        moved_server(&mut header, &journal);
        let Some(shard) = header.config.shard else {
            findings.invalid.push(format!(
                "{} is not a shard's run (it was run without --shard)",
                folder.display()
            ));
            continue;
        };
        runs.push(ShardRun {
            folder: vernier_run::run_folder(folder),
            journal,
            header,
            index: shard.index,
            count: shard.count,
        });
    }
    runs.sort_by_key(|run| run.index);
    runs
}

/// A shard resumed against its server at a new address (the same server, as the resume
/// checked) is compared by the address it measured last, which its last `resumed` line
/// records.
fn moved_server(header: &mut Header, journal: &LoadedSweepJournal) {
    let last = journal.lines.iter().rev().find_map(|line| match line {
        SweepJournalLine::Resumed(resumed) => Some(&resumed.environment.server),
        _ => None,
    });
    if let Some(server) = last
        && !server.simulator
        && server.base_url != header.environment.server.base_url
    {
        header.config.target.clone_from(&server.base_url);
        header
            .environment
            .server
            .base_url
            .clone_from(&server.base_url);
    }
}

/// The configuration without its shard: what every shard must share.
fn unsharded(config: &SweepConfig) -> SweepConfig {
    SweepConfig {
        shard: None,
        ..config.clone()
    }
}

/// Keeps the shards of one run: the first shard's count, configuration and server; a shard of
/// another, or a number twice, is a finding and left out.
fn same_run(runs: Vec<ShardRun>, findings: &mut Findings) -> Vec<ShardRun> {
    let Some(first) = runs.first() else {
        return runs;
    };
    let config = unsharded(&first.header.config);
    let (count, server) = (first.count, server_of(&first.header));
    let mut kept: Vec<ShardRun> = Vec::new();
    for run in runs {
        let name = format!("shard {} ({})", run.index, run.folder.display());
        if run.count != count {
            findings.invalid.push(format!(
                "{name} is one of {} shards, the others of {count}",
                run.count
            ));
            continue;
        }
        let differences = config.differences(&unsharded(&run.header.config));
        if !differences.is_empty() {
            findings.invalid.push(format!(
                "{name} ran another configuration: {}",
                differences.join("; ")
            ));
            continue;
        }
        if server_of(&run.header) != server {
            findings.invalid.push(format!(
                "{name} measured another server: {} (the others {})",
                server_of(&run.header),
                server
            ));
            continue;
        }
        if let Some(twin) = kept.iter().find(|k| k.index == run.index) {
            findings.invalid.push(format!(
                "shard {} appears twice, in {} and {}; the second was left out",
                run.index,
                twin.folder.display(),
                run.folder.display()
            ));
            continue;
        }
        kept.push(run);
    }
    kept
}

/// The server as a run names it: address, kind, version and model.
fn server_of(header: &Header) -> String {
    let env = &header.environment;
    format!(
        "{} {}{} serving {}",
        env.server.base_url,
        env.server.kind,
        crate::report::text::server_version(env),
        env.model.id
    )
}

/// The prompt lengths the shards calibrated, in the server's tokens: each shard opens its
/// sample prompt with a nonce of its own, so two shards may pick a different number of corpus
/// units for the same length (seen against llama-server: 3 and 4 units, both 64 tokens); only
/// lengths apart by more than 2% (and 2 tokens) are a finding.
fn check_calibrations(runs: &[ShardRun], findings: &mut Findings) {
    let mut sized: BTreeMap<(Workload, u32), (u32, u64)> = BTreeMap::new();
    for run in runs {
        for line in &run.journal.lines {
            if let SweepJournalLine::Calibration(c) = line {
                let key = (c.workload, c.prompt_tokens_target);
                match sized.get(&key) {
                    Some(&(index, tokens)) => {
                        let apart = tokens.abs_diff(c.prompt_tokens_actual);
                        let allowed = (u64::from(c.prompt_tokens_target) / 50).max(2);
                        if apart > allowed {
                            findings.questionable.push(format!(
                                "shard {} sized {} prompts of {} tokens to {} tokens and shard {index} to {tokens}: their prompts differ in length",
                                run.index, c.workload, c.prompt_tokens_target, c.prompt_tokens_actual
                            ));
                        }
                    }
                    None => {
                        sized.insert(key, (run.index, c.prompt_tokens_actual));
                    }
                }
            }
        }
    }
}

/// The shards' clocks against the server's: further apart than their uncertainty allows and
/// [`CLOCK_SPREAD_MS`], the schedules may be misaligned.
fn check_clocks(sources: &[ShardSource], findings: &mut Findings) {
    let clocks: Vec<(u32, f64, f64)> = sources
        .iter()
        .filter_map(|s| {
            let clock = s.start.as_ref()?.clock.as_ref()?;
            Some((s.index, clock.offset_ms, clock.uncertainty_ms))
        })
        .collect();
    let low = clocks.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let high = clocks.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    if let (Some(low), Some(high)) = (low, high) {
        let spread = high.1 - low.1;
        if spread > CLOCK_SPREAD_MS + low.2 + high.2 {
            findings.questionable.push(format!(
                "the shards' clocks disagree by {spread:.0} ms against the server's (shard {} {:+.0} ms, shard {} {:+.0} ms): their schedules and the union window may be off by as much; synchronise the machines' clocks (NTP)",
                low.0, low.1, high.0, high.1
            ));
        }
    }
    for source in sources {
        if let Some(start) = &source.start
            && start.start_at_unix_ms.is_none()
        {
            findings.questionable.push(format!(
                "shard {} had no --start-at: the shards started when each was ready, not together",
                source.index
            ));
        }
    }
}

/// The merged journal's lines: a header for the whole configuration, the merge's line, the
/// calibrations, every measured request of every shard, the repetitions' counts summed, and
/// one window per cell (the first shard's server counters, every shard's client lag).
fn merged_lines(
    runs: &[ShardRun],
    merged: MergedFrom,
    command_line: Vec<String>,
) -> Vec<SweepJournalLine> {
    let mut header = runs[0].header.clone();
    header.config = unsharded(&header.config);
    header.command_line = command_line;
    header.started_unix_ms = runs
        .iter()
        .map(|run| run.header.started_unix_ms)
        .min()
        .unwrap_or(header.started_unix_ms);
    for run in &runs[1..] {
        for warning in &run.header.warnings {
            if !header.warnings.contains(warning) {
                header.warnings.push(warning.clone());
            }
        }
    }
    let mut lines = vec![
        SweepJournalLine::Header(Box::new(header)),
        SweepJournalLine::Merged(Box::new(merged)),
    ];
    let mut reps: BTreeMap<(CellKey, u32), RepDone> = BTreeMap::new();
    let mut windows: BTreeMap<CellKey, CellWindow> = BTreeMap::new();
    let mut skipped = BTreeSet::new();
    for (place, run) in runs.iter().enumerate() {
        let finished = finished_in_order(&run.journal);
        for line in &run.journal.lines {
            match line {
                SweepJournalLine::Calibration(_) if place == 0 => lines.push(line.clone()),
                SweepJournalLine::Attempt(attempt) if attempt.phase == RepPhase::Measured => {
                    // A repetition cut short (a crash, a signal) is redone under a new number:
                    // its requests are left out, and the k-th finished repetition of every
                    // shard is the merged run's k-th.
                    let Some(&rep) = finished.get(&(attempt.cell, attempt.rep)) else {
                        continue;
                    };
                    let mut attempt: Attempt = (**attempt).clone();
                    attempt.shard = Some(run.index);
                    attempt.rep = rep;
                    lines.push(SweepJournalLine::Attempt(Box::new(attempt)));
                }
                SweepJournalLine::RepDone(done) => {
                    let Some(&rep) = finished.get(&(done.cell, done.rep)) else {
                        continue;
                    };
                    let sum = reps.entry((done.cell, rep)).or_insert(RepDone {
                        rep,
                        n_ok: 0,
                        n_failed: 0,
                        ..*done
                    });
                    sum.n_ok += done.n_ok;
                    sum.n_failed += done.n_failed;
                }
                SweepJournalLine::CellWindow(window) => match windows.get_mut(&window.cell) {
                    Some(kept) => {
                        kept.scheduler_delay.merge(&window.scheduler_delay);
                        kept.timer_overshoot.merge(&window.timer_overshoot);
                    }
                    None => {
                        windows.insert(window.cell, (**window).clone());
                    }
                },
                SweepJournalLine::CellSkipped(skip) if skipped.insert(skip.cell) => {
                    lines.push(line.clone());
                }
                SweepJournalLine::Resumed(_)
                | SweepJournalLine::FieldDropped(_)
                | SweepJournalLine::IdentityChecked(_) => lines.push(line.clone()),
                _ => {}
            }
        }
    }
    lines.extend(reps.into_values().map(SweepJournalLine::RepDone));
    lines.extend(
        windows
            .into_values()
            .map(|window| SweepJournalLine::CellWindow(Box::new(window))),
    );
    lines
}

/// Each finished repetition of a shard's journal, per cell, with its place among the cell's
/// finished repetitions (0, 1, …): a shard resumed after a repetition was cut short numbers
/// the ones after it higher than a shard that ran straight through.
fn finished_in_order(journal: &LoadedSweepJournal) -> BTreeMap<(CellKey, u32), u32> {
    let mut places = BTreeMap::new();
    let mut next: BTreeMap<CellKey, u32> = BTreeMap::new();
    for line in &journal.lines {
        if let SweepJournalLine::RepDone(done) = line
            && !places.contains_key(&(done.cell, done.rep))
        {
            let place = next.entry(done.cell).or_default();
            places.insert((done.cell, done.rep), *place);
            *place += 1;
        }
    }
    places
}

/// Builds one run in `out` from the shards' run folders (or journals) `folders`: the merged
/// journal, its run file and reports. A shard missing, failed, or of another configuration or
/// server makes the run `invalid` and is named; no readable shard at all is an error.
pub fn merge_shards(
    out: &Path,
    folders: &[PathBuf],
    command_line: Vec<String>,
) -> Result<MergeOutcome, SweepError> {
    let journal_path = crate::journal::journal_path(out);
    if journal_path.exists() {
        return Err(SweepError::invalid(
            "OUT",
            format!(
                "{} already holds a run ({}); merge into a new folder",
                out.display(),
                journal_path.display()
            ),
        ));
    }
    let mut findings = Findings::default();
    let runs = same_run(read_shards(folders, &mut findings), &mut findings);
    let Some(first) = runs.first() else {
        return Err(SweepError::invalid(
            "SHARD_DIR",
            format!(
                "no folder given holds a shard's run: {}",
                findings.invalid.join("; ")
            ),
        ));
    };
    let count = first.count;
    let present: BTreeSet<u32> = runs.iter().map(|run| run.index).collect();
    let missing: Vec<u32> = (0..count).filter(|i| !present.contains(i)).collect();
    for index in &missing {
        findings.invalid.push(format!(
            "shard {index} of {count} is missing: no folder given holds it, so the merged run lacks its share of the load"
        ));
    }
    check_calibrations(&runs, &mut findings);
    let sources: Vec<ShardSource> = runs
        .iter()
        .map(|run| {
            let complete = summarise(&run.journal).is_some_and(|r| r.complete);
            let start = start_of(&run.journal);
            if !complete {
                findings.invalid.push(format!(
                    "shard {} ({}) did not finish every repetition{}",
                    run.index,
                    run.folder.display(),
                    match &start {
                        None => ": it never reached its start".to_owned(),
                        Some(s) if s.late_ms > s.tolerance_ms => format!(
                            ": it reached its start {:.0} ms late (tolerance {:.0} ms)",
                            s.late_ms, s.tolerance_ms
                        ),
                        Some(_) => String::new(),
                    }
                ));
            }
            ShardSource {
                index: run.index,
                folder: run.folder.display().to_string(),
                start,
                complete,
            }
        })
        .collect();
    check_clocks(&sources, &mut findings);
    check_instants(&sources, &mut findings);
    let merged = MergedFrom {
        count,
        shards: sources,
        missing,
        invalid: findings.invalid,
        questionable: findings.questionable,
        unix_ms: vernier_run::unix_ms(),
    };
    let lines = merged_lines(&runs, merged, command_line);
    write_journal(out, &journal_path, &lines)?;
    let loaded = LoadedSweepJournal {
        lines,
        valid_len: 0,
        torn_tail: false,
    };
    let run = summarise(&loaded).ok_or_else(|| SweepError::JournalParse {
        path: journal_path.clone(),
        line: 1,
        detail: "the merged journal has no header".to_owned(),
    })?;
    let files = write_reports(&run, out)?;
    if run.validity.verdict == vernier_run::VerdictLevel::Invalid {
        // The files say what is wrong; the merge itself is refused (a partial union or shards
        // of different runs is never one run).
        return Err(SweepError::MergeInvalid {
            out: out.to_path_buf(),
            reasons: run
                .validity
                .reasons
                .iter()
                .filter(|reason| reason.level == vernier_run::VerdictLevel::Invalid)
                .map(|reason| reason.detail.clone())
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    Ok(MergeOutcome {
        run,
        files,
        journal: journal_path,
    })
}

/// The shards of one run were started for one agreed instant (`--start-at`): shards that name
/// different instants, or one with an instant beside one without, are shards of different runs.
fn check_instants(sources: &[ShardSource], findings: &mut Findings) {
    let instants: Vec<(u32, Option<u64>)> = sources
        .iter()
        .filter_map(|s| Some((s.index, s.start.as_ref()?.start_at_unix_ms)))
        .collect();
    let named: BTreeSet<u64> = instants.iter().filter_map(|(_, at)| *at).collect();
    let show = |at: Option<u64>| at.map_or_else(|| "none".to_owned(), vernier_run::rfc3339_ms);
    if named.len() > 1 || (!named.is_empty() && instants.iter().any(|(_, at)| at.is_none())) {
        let list: Vec<String> = instants
            .iter()
            .map(|(index, at)| format!("shard {index} {}", show(*at)))
            .collect();
        findings.invalid.push(format!(
            "the shards were started for different instants ({}): they are shards of different runs; merge the shards of one run, started with one --start-at",
            list.join(", ")
        ));
    }
}

fn write_journal(out: &Path, path: &Path, lines: &[SweepJournalLine]) -> Result<(), SweepError> {
    let fail = |source: std::io::Error| SweepError::WriteReport {
        path: path.to_owned(),
        source,
    };
    std::fs::create_dir_all(out).map_err(fail)?;
    let mut text = String::new();
    for line in lines {
        text.push_str(&serde_json::to_string(line).map_err(|e| fail(std::io::Error::other(e)))?);
        text.push('\n');
    }
    vernier_run::write_atomically(path, text.as_bytes()).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Calibration;
    use crate::shard::{ClockOffset, Shard, ShardStart};

    fn source(index: u32, offset_ms: f64, start_at: Option<u64>) -> ShardSource {
        ShardSource {
            index,
            folder: format!("shard-{index}"),
            start: Some(ShardStart {
                shard: Shard { index, count: 3 },
                start_at_unix_ms: start_at,
                began_unix_ms: 0,
                late_ms: 0.0,
                tolerance_ms: 2000.0,
                gap_s: 10.0,
                clock: Some(ClockOffset {
                    method: "date_header_second_edge".to_owned(),
                    offset_ms,
                    uncertainty_ms: 5.0,
                    n_probes: 50,
                }),
                clock_note: None,
            }),
            complete: true,
        }
    }

    #[test]
    fn clocks_apart_beyond_their_uncertainty_make_the_merge_questionable() {
        // 58 ms apart with 5 ms uncertainty each: within 50 + 5 + 5.
        let mut findings = Findings::default();
        check_clocks(
            &[source(0, 1.0, Some(1)), source(1, 59.0, Some(1))],
            &mut findings,
        );
        assert!(
            findings.questionable.is_empty(),
            "{:?}",
            findings.questionable
        );
        // 120 ms apart: the schedules may be off by as much.
        check_clocks(
            &[
                source(0, -20.0, Some(1)),
                source(1, 3.0, Some(1)),
                source(2, 100.0, Some(1)),
            ],
            &mut findings,
        );
        assert_eq!(findings.questionable.len(), 1);
        assert!(
            findings.questionable[0].contains("disagree by 120 ms")
                && findings.questionable[0].contains("shard 0 -20 ms, shard 2 +100 ms"),
            "{}",
            findings.questionable[0]
        );
        let mut findings = Findings::default();
        check_clocks(&[source(0, 0.0, None)], &mut findings);
        assert!(findings.questionable[0].contains("shard 0 had no --start-at"));
    }

    #[test]
    fn shards_started_for_different_instants_are_shards_of_different_runs() {
        // Shard 0 of a run started at 1,000 s and shard 1 of one started 41 s later.
        let mut findings = Findings::default();
        check_instants(
            &[
                source(0, 0.0, Some(1_000_000)),
                source(1, 0.0, Some(1_041_000)),
            ],
            &mut findings,
        );
        assert_eq!(findings.invalid.len(), 1, "{:?}", findings.invalid);
        assert!(
            findings.invalid[0].contains("shards of different runs"),
            "{}",
            findings.invalid[0]
        );
        // One shard with the agreed instant beside one without.
        let mut findings = Findings::default();
        check_instants(
            &[source(0, 0.0, Some(1_000_000)), source(1, 0.0, None)],
            &mut findings,
        );
        assert_eq!(findings.invalid.len(), 1);
        // One run's shards, one instant: nothing to say.
        let mut findings = Findings::default();
        check_instants(
            &[
                source(0, 0.0, Some(1_000_000)),
                source(1, 0.0, Some(1_000_000)),
            ],
            &mut findings,
        );
        assert!(findings.invalid.is_empty(), "{:?}", findings.invalid);
    }

    #[test]
    fn a_resumed_shard_keeps_the_instant_its_first_start_agreed() {
        let start = |at: Option<u64>| {
            let ShardSource { start, .. } = source(1, 0.0, at);
            SweepJournalLine::ShardStart(Box::new(start.expect("a start")))
        };
        // The first start waited for the agreed instant; the resumed one started at once.
        let journal = LoadedSweepJournal {
            lines: vec![start(Some(1_000_000)), start(None)],
            valid_len: 0,
            torn_tail: false,
        };
        let found = start_of(&journal).expect("a start");
        assert_eq!(found.start_at_unix_ms, Some(1_000_000));
        let mut findings = Findings::default();
        check_clocks(
            &[ShardSource {
                start: Some(found),
                ..source(1, 0.0, None)
            }],
            &mut findings,
        );
        assert!(
            findings.questionable.is_empty(),
            "it had a --start-at: {:?}",
            findings.questionable
        );
    }

    fn shard_with_units(index: u32, n_units: usize, tokens: u64) -> ShardRun {
        let config = SweepConfig {
            shard: Shard::new(index, 2),
            ..SweepConfig::default()
        };
        let header = Header {
            journal_version: crate::journal::SWEEP_JOURNAL_VERSION,
            started_unix_ms: 0,
            command_line: Vec::new(),
            config,
            environment: crate::environment::Environment::default(),
            warnings: Vec::new(),
        };
        let calibration = Calibration {
            workload: Workload::Prose,
            prompt_tokens_target: 364,
            n_units,
            prompt_tokens_actual: tokens,
            method: "tokenize_chat".to_owned(),
            n_probes: 3,
        };
        ShardRun {
            folder: PathBuf::from(format!("shard-{index}")),
            journal: LoadedSweepJournal {
                lines: vec![
                    SweepJournalLine::Header(Box::new(header.clone())),
                    SweepJournalLine::Calibration(calibration),
                ],
                valid_len: 0,
                torn_tail: false,
            },
            header,
            index,
            count: 2,
        }
    }

    #[test]
    fn shards_that_sized_their_prompts_apart_are_named() {
        // Other unit counts for the same length in the server's tokens are no finding; 364
        // tokens allow 7 apart (2%).
        let mut findings = Findings::default();
        check_calibrations(
            &[shard_with_units(0, 300, 364), shard_with_units(1, 302, 371)],
            &mut findings,
        );
        assert!(
            findings.questionable.is_empty(),
            "{:?}",
            findings.questionable
        );
        check_calibrations(
            &[shard_with_units(0, 300, 364), shard_with_units(1, 310, 372)],
            &mut findings,
        );
        assert_eq!(
            findings.questionable,
            vec![
                "shard 1 sized prose prompts of 364 tokens to 372 tokens and shard 0 to 364: their prompts differ in length"
                    .to_owned()
            ]
        );
        assert!(findings.invalid.is_empty());
    }
}
