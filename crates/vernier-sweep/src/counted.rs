//! Which measured attempts of a journal count: each request once, in repetitions that finished.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::CellKey;
use crate::journal::{Attempt, LoadedSweepJournal, RepPhase, Status, SweepJournalLine};

/// Measured attempts that count: status ok in a repetition that finished (a repetition cut
/// short by a crash is redone under a new number on resume, so none is counted twice).
pub(crate) fn counted_attempts(journal: &LoadedSweepJournal) -> BTreeMap<CellKey, Vec<&Attempt>> {
    let done: BTreeSet<(CellKey, u32)> = journal
        .lines
        .iter()
        .filter_map(|line| match line {
            SweepJournalLine::RepDone(done) => Some((done.cell, done.rep)),
            _ => None,
        })
        .collect();
    let mut out: BTreeMap<CellKey, Vec<&Attempt>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for line in &journal.lines {
        if let SweepJournalLine::Attempt(attempt) = line
            && attempt.phase == RepPhase::Measured
            && attempt.status == Status::Ok
            && done.contains(&(attempt.cell, attempt.rep))
            // A line repeated (by hand, or by a copy) is one request, counted once.
            && seen.insert(request_identity(attempt))
        {
            out.entry(attempt.cell).or_default().push(attempt);
        }
    }
    out
}

/// What tells one request's try from another's: cell, repetition, stream, place in the stream
/// (steady load) and try, and the request's nonce.
type RequestIdentity<'a> = (CellKey, u32, u32, Option<u32>, u32, Option<&'a str>);

pub(crate) fn request_identity(attempt: &Attempt) -> RequestIdentity<'_> {
    (
        attempt.cell,
        attempt.rep,
        attempt.stream,
        attempt.sequence,
        attempt.attempt,
        attempt.nonce.as_deref(),
    )
}
