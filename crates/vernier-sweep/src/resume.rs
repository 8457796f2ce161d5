//! What a resumed run continues from: the progress its journal records, and the settings
//! typed beside `--resume` checked against the journal's (one policy, `vernier_run`'s).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use vernier_run::{RunError, Setting, SettingKind};

use crate::config::{CellKey, SweepConfig, Workload};
use crate::error::SweepError;
use crate::journal::{self, Attempt, Header, LoadedSweepJournal, RepPhase, SweepJournalLine};
use crate::summary;

/// Progress through the journal so far, for resuming.
#[derive(Debug, Default)]
pub(crate) struct ResumeState {
    pub(crate) calibrations: BTreeMap<(Workload, u32), usize>,
    pub(crate) done_reps: BTreeMap<CellKey, BTreeSet<u32>>,
    pub(crate) next_rep: BTreeMap<CellKey, u32>,
    pub(crate) next_warmup: BTreeMap<CellKey, u32>,
    /// Decode rates of the counted requests per cell, for `--until-ci` (kept in memory so
    /// the journal is read once, at resume, not after every repetition).
    pub(crate) decode_rates: BTreeMap<CellKey, Vec<f64>>,
    /// Fields the server refused before the resume.
    pub(crate) dropped_fields: BTreeSet<&'static str>,
    /// The counted attempts the journal held at the resume, per cell (the capacity search
    /// adds this session's, kept in memory).
    pub(crate) counted: BTreeMap<CellKey, Vec<Attempt>>,
    /// Cells left out as `context_exceeded`, with the reason.
    pub(crate) skipped: BTreeMap<CellKey, String>,
}

impl ResumeState {
    pub(crate) fn from_journal(journal: &LoadedSweepJournal) -> Self {
        let mut state = Self::default();
        for line in &journal.lines {
            match line {
                SweepJournalLine::Calibration(c) => {
                    state
                        .calibrations
                        .insert((c.workload, c.prompt_tokens_target), c.n_units);
                }
                SweepJournalLine::RepDone(done) => {
                    state
                        .done_reps
                        .entry(done.cell)
                        .or_default()
                        .insert(done.rep);
                }
                SweepJournalLine::CellSkipped(skipped) => {
                    state.skipped.insert(skipped.cell, skipped.reason.clone());
                }
                SweepJournalLine::FieldDropped(dropped) => {
                    if let Some(field) = vernier_run::refusable(&dropped.field) {
                        state.dropped_fields.insert(field);
                    }
                }
                SweepJournalLine::Attempt(attempt) => {
                    let next = match attempt.phase {
                        RepPhase::Measured => state.next_rep.entry(attempt.cell).or_default(),
                        RepPhase::Warmup => state.next_warmup.entry(attempt.cell).or_default(),
                    };
                    *next = (*next).max(attempt.rep + 1);
                }
                _ => {}
            }
        }
        for (cell, attempts) in crate::counted::counted_attempts(journal) {
            state
                .decode_rates
                .insert(cell, summary::decode_rates(&attempts));
            state
                .counted
                .insert(cell, attempts.into_iter().cloned().collect());
        }
        state
    }

    /// Measured repetitions already finished for `cell`.
    pub(crate) fn done(&self, cell: &CellKey) -> u32 {
        self.done_reps
            .get(cell)
            .map_or(0, |reps| u32::try_from(reps.len()).unwrap_or(u32::MAX))
    }
}

/// Reads a sweep journal and checks that it is one this version can continue.
pub fn read_resumable(path: &Path) -> Result<(LoadedSweepJournal, Header), SweepError> {
    let loaded = journal::read_sweep_journal(path)?;
    let header = loaded
        .header()
        .ok_or_else(|| SweepError::JournalParse {
            path: path.to_path_buf(),
            line: 1,
            detail: "the first line is not a sweep header".to_owned(),
        })?
        .clone();
    if header.journal_version != journal::SWEEP_JOURNAL_VERSION {
        return Err(RunError::JournalVersion {
            path: path.to_path_buf(),
            found: header.journal_version,
            supported: journal::SWEEP_JOURNAL_VERSION,
        }
        .into());
    }
    Ok((loaded, header))
}

/// The configuration fields that do not shape the figures: typed beside `--resume`, the new
/// value is recorded (and `allow_busy` applies to this session).
const OPERATIONAL_FIELDS: [&str; 2] = ["label", "allow_busy"];

/// The flag that sets a configuration field, as typed.
fn flag_of(field: &str) -> String {
    let flag = match field {
        "workloads" => "workload",
        "until_ci_percent" => "until-ci",
        "force_length" => "no-force-length",
        "cache_salt" => "no-cache-salt",
        "cache_prompt_field" => "no-cache-prompt-field",
        "token_ids" => "no-token-ids",
        "continuous_usage" => "no-continuous-usage",
        "defeat_prefix_cache" => "unsafe-allow-prefix-cache",
        "nonce_as_suffix" => "unsafe-nonce-as-suffix",
        "rates_per_s" => "rate",
        "duration_s" => "duration",
        "capacity_target" => "target",
        "max_wait_s" => "max-wait",
        "capture_streams" => "capture",
        other => other,
    };
    format!("--{}", flag.replace('_', "-"))
}

/// The resume policy's view of a sweep: one [`Setting`] per configuration field typed beside
/// `--resume` (`typed` holds their names in the run file), measurement unless it is one of the
/// operational fields.
pub(crate) fn resume_settings(
    recorded: &SweepConfig,
    given: &SweepConfig,
    typed: &BTreeSet<String>,
) -> Vec<Setting> {
    let recorded_value = serde_json::to_value(recorded).unwrap_or_default();
    let given_value = serde_json::to_value(given).unwrap_or_default();
    let field = |value: &serde_json::Value, name: &str| {
        value
            .get(name)
            .cloned()
            .unwrap_or(serde_json::Value::Null)
            .to_string()
    };
    typed
        .iter()
        .filter(|name| recorded_value.get(name.as_str()).is_some())
        .map(|name| {
            let kind = if OPERATIONAL_FIELDS.contains(&name.as_str()) {
                SettingKind::Operational
            } else {
                SettingKind::Measurement
            };
            Setting::new(
                flag_of(name),
                kind,
                field(&recorded_value, name),
                Some(field(&given_value, name)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_fields_become_settings_and_only_measurement_ones_are_refused() {
        let recorded = SweepConfig {
            model: "m".to_owned(),
            reps: 3,
            ..SweepConfig::default()
        };
        let mut given = recorded.clone();
        given.reps = 5;
        given.allow_busy = Some(true);
        given.prompt_tokens = vec![1, 2];
        let typed: BTreeSet<String> = ["reps", "allow_busy"].map(str::to_owned).into();
        let settings = resume_settings(&recorded, &given, &typed);
        let error =
            vernier_run::check_resume(Path::new("j"), None, &settings).expect_err("--reps differs");
        let text = error.to_string();
        assert!(text.contains("--reps 5 (the journal's run: 3)"), "{text}");
        assert!(
            !text.contains("allow-busy") && !text.contains("prompt"),
            "{text}"
        );
        let only_operational: BTreeSet<String> = ["allow_busy"].map(str::to_owned).into();
        let changed = vernier_run::check_resume(
            Path::new("j"),
            None,
            &resume_settings(&recorded, &given, &only_operational),
        )
        .expect("operational changes pass");
        assert_eq!(changed.len(), 1, "{changed:?}");
        assert!(changed[0].starts_with("--allow-busy true"), "{changed:?}");
    }
}
