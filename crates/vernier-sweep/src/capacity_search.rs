//! The capacity search at a target: the load doubled while the target holds, then bisected,
//! each load a whole cell. Whether a cell met the target is read from the attempts this run
//! keeps in memory (and, for cells measured before a resume, from the journal read once at the
//! start), never by reading the journal again after each step.

use std::sync::Arc;

use crate::cells::run_cell;
use crate::config::{CellKey, LoadMode};
use crate::error::SweepError;
use crate::journal::{Attempt, SearchDone, SweepJournalLine};
use crate::parts::Sweep;
use crate::resume::ResumeState;

/// The cell at `load` for one workload, prompt and output length.
fn cell_at(base: CellKey, load_mode: LoadMode, load: f64) -> CellKey {
    if load_mode == LoadMode::Rate {
        CellKey::at_rate(
            base.workload,
            base.prompt_tokens_target,
            base.output_tokens,
            load,
        )
    } else {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "concurrency loads are whole numbers from 1 up to the ceiling"
        )]
        let streams = load.round().max(1.0) as u32;
        CellKey::new(
            base.workload,
            base.prompt_tokens_target,
            base.output_tokens,
            streams,
        )
    }
}

/// Whether the measured cell met the target: its counted attempts (the journal's, read once at
/// the start of a resumed run, then this run's own, kept in memory), checked as the run file
/// checks them.
fn cell_met(sweep: &Sweep, state: &ResumeState, cell: &CellKey) -> bool {
    let Some(target) = sweep
        .plan
        .config
        .capacity_target
        .as_deref()
        .and_then(|text| crate::capacity_target::Target::parse(text).ok())
    else {
        return false;
    };
    let done = state.done_reps.get(cell);
    let session = sweep
        .record
        .measured
        .lock()
        .map(|measured| measured.get(cell).cloned().unwrap_or_default())
        .unwrap_or_default();
    let mut attempts: Vec<&Attempt> = state
        .counted
        .get(cell)
        .map(|earlier| earlier.iter().collect())
        .unwrap_or_default();
    attempts.extend(
        session
            .iter()
            .filter(|attempt| done.is_some_and(|reps| reps.contains(&attempt.rep))),
    );
    crate::offered_load::check_target(&target, &attempts).met
}

/// The capacity search: from the first concurrency (or rate), double the load while the target
/// holds, then bisect between the last load that met it and the first that missed, down to
/// neighbouring concurrencies (or rates within 10% of each other). Each load is a whole cell.
pub(crate) async fn search(sweep: &Arc<Sweep>, state: &mut ResumeState) -> Result<(), SweepError> {
    let config = &sweep.plan.config;
    let rate_search = config.load == LoadMode::Rate;
    let first = if rate_search {
        config.rates_per_s.first().copied().unwrap_or(1.0)
    } else {
        f64::from(config.concurrency.first().copied().unwrap_or(1))
    };
    let ceiling = config
        .max_load
        .unwrap_or(if rate_search { 1e4 } else { 1024.0 });
    for &workload in &config.workloads {
        for &prompt in &config.prompt_tokens {
            for &output in &config.output_tokens {
                let base = CellKey::new(workload, prompt, output, 1);
                let (mut good, mut bad): (Option<f64>, Option<f64>) = (None, None);
                let mut load = first.min(ceiling);
                loop {
                    let cell = cell_at(base, config.load, load);
                    sweep
                        .record
                        .observer
                        .status(&format!("capacity search: {cell}"));
                    run_cell(sweep, state, cell).await?;
                    if cell_met(sweep, state, &cell) {
                        good = Some(load);
                    } else {
                        bad = Some(load);
                    }
                    let next = match (good, bad) {
                        (_, None) if load >= ceiling => break,
                        (_, None) => (load * 2.0).min(ceiling),
                        (None, Some(_)) => break,
                        (Some(low), Some(high)) => {
                            let close = if rate_search {
                                high / low <= 1.1
                            } else {
                                high - low <= 1.0
                            };
                            if close {
                                break;
                            }
                            if rate_search {
                                (low * high).sqrt()
                            } else {
                                f64::midpoint(low, high).floor()
                            }
                        }
                    };
                    load = next;
                }
            }
        }
    }
    sweep
        .record
        .journal
        .append(&SweepJournalLine::SearchDone(SearchDone {
            unix_ms: vernier_run::unix_ms(),
        }))?;
    Ok(())
}
