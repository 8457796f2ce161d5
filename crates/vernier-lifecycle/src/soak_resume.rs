//! Continuing a soak: what the journal says was held (load per arm, deaths, launches, the
//! round), and what the flags typed beside `--resume` may change.

use std::collections::BTreeMap;
use std::path::Path;

use vernier_run::{Setting, SettingKind};

use crate::error::LifecycleError;
use crate::resume::ResumeFlags;
use crate::soak_config::{SoakArm, SoakConfig};
use crate::soak_journal::SoakJournalLine;

/// Reads a soak journal (a torn last line, from a kill mid-write, is dropped).
pub fn read_soak_journal(path: &Path) -> Result<Vec<SoakJournalLine>, LifecycleError> {
    Ok(vernier_journal::read::<SoakJournalLine>(path)?.into_values())
}

/// What was typed beside `soak --resume` (see [`ResumeFlags`]).
pub type SoakResumeFlags = ResumeFlags<SoakConfig>;

impl ResumeFlags<SoakConfig> {
    /// Every setting of the journal's run with the value typed where it was: where the server
    /// answers, how long to wait for it and how often to look are operational; the rest shape
    /// what is measured.
    pub(crate) fn settings(&self, recorded: &SoakConfig, journal_folder: &Path) -> Vec<Setting> {
        use SettingKind::{Measurement, Operational};
        let json = |value: &SoakConfig| serde_json::to_value(value).unwrap_or_default();
        let (recorded_json, given_json) = (json(recorded), json(&self.config));
        let shown = |value: &serde_json::Value, field: &str| match &value[field] {
            serde_json::Value::String(text) => text.clone(),
            serde_json::Value::Null => "none".to_owned(),
            other => other.to_string(),
        };
        let fields: [(&str, &str, SettingKind); 18] = [
            ("--base-url", "base_url", Operational),
            ("--api-key-env", "api_key_env", Operational),
            ("--ca-cert", "ca_cert", Operational),
            ("--ready-timeout", "ready_timeout_s", Operational),
            ("--probe-interval", "probe_interval_s", Operational),
            ("--stop-grace", "stop_grace_s", Operational),
            ("--log-tail", "log_tail_lines", Operational),
            ("--launch", "servers", Measurement),
            ("--config", "servers", Measurement),
            ("--stop", "stop", Measurement),
            ("--model", "model", Measurement),
            ("--concurrency", "concurrency", Measurement),
            ("--duration", "duration_s", Measurement),
            ("--round", "round_s", Measurement),
            ("--max-tokens", "max_tokens", Measurement),
            ("--ignore-eos", "ignore_eos", Measurement),
            ("--extra-body", "extra_body", Measurement),
            ("--hang-after", "hang_after_s", Measurement),
        ];
        let mut settings: Vec<Setting> = fields
            .iter()
            .map(|(flag, field, kind)| {
                Setting::new(
                    *flag,
                    *kind,
                    shown(&recorded_json, field),
                    self.typed
                        .contains(*flag)
                        .then(|| shown(&given_json, field)),
                )
            })
            .collect();
        for (flag, field) in [("--prompt", "prompt"), ("--settle", "settle_s")] {
            settings.push(Setting::new(
                flag,
                Measurement,
                shown(&recorded_json, field),
                self.typed.contains(flag).then(|| shown(&given_json, field)),
            ));
        }
        settings.extend(self.out_setting(journal_folder));
        settings
    }

    /// The settings this session runs with: the journal's, with the operational ones typed.
    pub(crate) fn session_config(&self, recorded: &SoakConfig) -> SoakConfig {
        let mut config = recorded.clone();
        let given = &self.config;
        let typed = |flag: &str| self.typed.contains(flag);
        if typed("--base-url") {
            config.base_url.clone_from(&given.base_url);
        }
        if typed("--api-key-env") {
            config.api_key_env.clone_from(&given.api_key_env);
        }
        if typed("--ca-cert") {
            config.ca_cert.clone_from(&given.ca_cert);
        }
        if typed("--ready-timeout") {
            config.ready_timeout_s = given.ready_timeout_s;
        }
        if typed("--probe-interval") {
            config.probe_interval_s = given.probe_interval_s;
        }
        if typed("--stop-grace") {
            config.stop_grace_s = given.stop_grace_s;
        }
        if typed("--log-tail") {
            config.log_tail_lines = given.log_tail_lines;
        }
        config
    }
}

/// Where a journal's run stands.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resumed {
    /// Seconds of load each arm held.
    pub(crate) loaded_s: Vec<f64>,
    /// Deaths of each arm.
    pub(crate) deaths: Vec<usize>,
    /// Launches of each arm (log files are numbered by them).
    pub(crate) launches: Vec<usize>,
    /// The round to continue in.
    pub(crate) round: usize,
    /// The next request's number.
    pub(crate) next_request: u64,
    /// Requests of each arm that finished.
    pub(crate) finished: Vec<u64>,
}

/// Load held per arm: each slice's last recorded figure (its end, else its last progress line
/// or death), summed over slices.
pub(crate) fn resumed_state(lines: &[SoakJournalLine], arms: &[SoakArm]) -> Resumed {
    let index = |name: &str| arms.iter().position(|arm| arm.name == name);
    // Load held per slice, a slice being what follows a `slice_start` of its arm (a resumed
    // slice of the same round is a new one).
    let mut slices: Vec<(usize, f64)> = Vec::new();
    let mut current: BTreeMap<usize, usize> = BTreeMap::new();
    let mut state = Resumed {
        loaded_s: vec![0.0; arms.len()],
        deaths: vec![0; arms.len()],
        launches: vec![0; arms.len()],
        finished: vec![0; arms.len()],
        ..Resumed::default()
    };
    for line in lines {
        match line {
            SoakJournalLine::SliceStart { arm, round, .. } => {
                state.round = state.round.max(*round);
                if let Some(i) = index(arm) {
                    current.insert(i, slices.len());
                    slices.push((i, 0.0));
                }
            }
            SoakJournalLine::Progress { arm, loaded_s, .. } => {
                if let Some(slice) = index(arm)
                    .and_then(|i| current.get(&i))
                    .and_then(|slice| slices.get_mut(*slice))
                {
                    slice.1 = slice.1.max(*loaded_s);
                }
            }
            // The slice's own account at its end is the figure.
            SoakJournalLine::SliceEnd { arm, loaded_s, .. } => {
                if let Some(slice) = index(arm)
                    .and_then(|i| current.get(&i))
                    .and_then(|slice| slices.get_mut(*slice))
                {
                    slice.1 = *loaded_s;
                }
            }
            SoakJournalLine::Death(record) => {
                for request in &record.in_flight {
                    state.next_request = state.next_request.max(request.request + 1);
                }
                if let Some(i) = index(&record.arm) {
                    state.deaths[i] = state.deaths[i].max(record.number);
                    // Progress lines written while a hang went unseen count load the death
                    // takes back: at a death, the slice has held what the record says.
                    let before: f64 = slices
                        .iter()
                        .enumerate()
                        .filter(|(k, (arm, _))| *arm == i && Some(k) != current.get(&i))
                        .map(|(_, (_, held))| held)
                        .sum();
                    if let Some(slice) = current.get(&i).and_then(|slice| slices.get_mut(*slice)) {
                        slice.1 = (record.loaded_s - before).max(0.0);
                    }
                }
            }
            SoakJournalLine::Launched { arm, .. } => {
                if let Some(i) = index(arm) {
                    state.launches[i] += 1;
                }
            }
            SoakJournalLine::Request(request) => {
                state.next_request = state.next_request.max(request.request + 1);
                if let (None, Some(i)) = (&request.error, index(&request.arm)) {
                    state.finished[i] += 1;
                }
            }
            SoakJournalLine::RequestError { request, .. } => {
                state.next_request = state.next_request.max(request + 1);
            }
            _ => {}
        }
    }
    for (i, held) in slices {
        state.loaded_s[i] += held;
    }
    state
}
