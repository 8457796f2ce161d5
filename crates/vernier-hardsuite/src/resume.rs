//! Resuming a run: where it writes, and the flags given beside `--resume` checked against the
//! journal's run with the one resume policy of every engine ([`vernier_run::check_resume`]).
//! Everything the hard suite compares shapes what is measured, so each is a measurement
//! [`Setting`]: a difference is refused by name.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use vernier_run::{RunError, Setting};

use crate::config::{RunConfig, RunTarget};
use crate::error::HardsuiteError;
use crate::journal::{LoadedHardsuiteJournal, RunHeader, read_hardsuite_journal};
use crate::settings::{check_extra_body, sampling_from};

/// Two paths name the same file (as given, or once resolved).
fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

fn shown<T: std::fmt::Display>(value: Option<T>, absent: &str) -> String {
    value.map_or_else(|| absent.to_owned(), |value| value.to_string())
}

/// A measurement setting whose value, when given, counts as typed only where `differs` says
/// it differs from the journal's (paths, id sets and numbers are compared as such, not as text).
fn measured<T: std::fmt::Display>(
    flag: &str,
    recorded: impl std::fmt::Display,
    given: Option<T>,
    differs: impl FnOnce(&T) -> bool,
) -> Setting {
    Setting::measurement(flag, recorded, given.filter(differs))
}

/// Every run-shaping flag of the hard suite, with the journal's value and the value given
/// beside `--resume` (flags left out take the journal's values).
fn resume_settings(
    config: &RunConfig,
    header: &RunHeader,
    journal_dir: &Path,
    out_given: Option<&Path>,
) -> Result<Vec<Setting>, HardsuiteError> {
    let mut settings = Vec::new();
    settings.push(measured(
        "--suite",
        header.suite_path.as_ref().map_or_else(
            || "the bundled suite".to_owned(),
            |path| path.display().to_string(),
        ),
        config
            .suite
            .suite
            .as_ref()
            .map(|path| path.display().to_string()),
        |given| {
            !header
                .suite_path
                .as_deref()
                .is_some_and(|recorded| same_path(recorded, Path::new(given)))
        },
    ));
    settings.push(measured(
        "--level",
        header
            .effective_draw()
            .map_or_else(|| "a suite file".to_owned(), |draw| draw.to_string()),
        config
            .suite
            .draw
            .filter(|draw| Some(*draw) != header.effective_draw())
            .map(|draw| format!("{} --seed {}", draw.level, draw.seed)),
        |_| true,
    ));
    let sorted = |ids: &[String]| {
        let mut ids = ids.to_vec();
        ids.sort();
        ids.dedup();
        ids
    };
    settings.push(measured(
        "--tasks",
        header.task_ids.join(","),
        config
            .suite
            .tasks
            .as_ref()
            .filter(|ids| sorted(ids) != sorted(&header.task_ids))
            .map(|ids| ids.join(",")),
        |_| true,
    ));
    settings.push(Setting::measurement(
        "--model",
        &header.model,
        config.model.as_ref(),
    ));
    if header.simulated {
        settings.push(
            Setting::measurement(
                "--base-url",
                "the in-process simulator",
                config.base_url.as_ref(),
            )
            .explained(
                "the journal's run used the in-process simulator; resume it without --base-url",
            ),
        );
    }
    sampling_settings(config, header, &mut settings);
    let extra_body = match &config.extra_body {
        Some(value) => Some(Value::Object(check_extra_body(value)?)),
        None => None,
    };
    let recorded_body = Value::Object(match &header.extra_body {
        Some(Value::Object(fields)) => fields.clone(),
        _ => Map::new(),
    });
    settings.push(measured(
        "--extra-body",
        &recorded_body,
        extra_body,
        |given| *given != recorded_body,
    ));
    other_settings(config, header, journal_dir, out_given, &mut settings);
    Ok(settings)
}

/// Budgets, samples, the re-run budget and the output directory.
fn other_settings(
    config: &RunConfig,
    header: &RunHeader,
    journal_dir: &Path,
    out_given: Option<&Path>,
    settings: &mut Vec<Setting>,
) {
    let budgets = [
        (
            "--budget-math",
            config.suite.budgets.math,
            header.budget_flags.math,
        ),
        (
            "--budget-code",
            config.suite.budgets.code,
            header.budget_flags.code,
        ),
        (
            "--budget-tools",
            config.suite.budgets.tools,
            header.budget_flags.tools,
        ),
    ];
    for (flag, given, recorded) in budgets {
        settings.push(measured(
            flag,
            shown(recorded, "the suite's budget"),
            given,
            |value| Some(*value) != recorded,
        ));
    }
    settings.push(Setting::measurement(
        "--samples",
        header.samples,
        config.samples,
    ));
    settings.push(
        measured(
            "--rerun-cut-off",
            shown(header.rerun_budget, "no re-run"),
            config.rerun_cut_off,
            |budget| Some(*budget) != header.rerun_budget,
        )
        .explained(format!(
            "the journal's run: {}; the re-run budget is fixed when a run starts",
            shown(header.rerun_budget, "no re-run")
        )),
    );
    settings.push(
        measured(
            "--out",
            journal_dir.display(),
            out_given.map(|out| out.display().to_string()),
            |out| !same_path(Path::new(out), journal_dir),
        )
        .explained(format!(
            "a resumed run writes next to its journal, in {}",
            journal_dir.display()
        )),
    );
}

/// The sampling flags: with `--preset`, the sampling the flags make; without it, each flag
/// given.
fn sampling_settings(config: &RunConfig, header: &RunHeader, settings: &mut Vec<Setting>) {
    if let Some(preset) = config.preset {
        let sampling = sampling_from(config);
        settings.push(measured(
            "--preset",
            header.sampling,
            (sampling != header.sampling)
                .then(|| format!("{} and the sampling flags give {sampling}", preset.as_str())),
            |_| true,
        ));
        return;
    }
    let recorded = header.sampling;
    let floats = [
        ("--temperature", config.temperature, recorded.temperature),
        ("--top-p", config.top_p, recorded.top_p),
        (
            "--presence-penalty",
            config.presence_penalty,
            recorded.presence_penalty,
        ),
    ];
    for (flag, given, recorded) in floats {
        settings.push(measured(
            flag,
            shown(recorded, "not sent"),
            given,
            |value| Some(*value) != recorded,
        ));
    }
    settings.push(measured(
        "--top-k",
        shown(recorded.top_k, "not sent"),
        config.top_k,
        |value| Some(*value) != recorded.top_k,
    ));
}

/// The resumed journal (if any), the output directory and the journal's path, once the
/// settings are checked against a resumed journal and a new run is known not to overwrite a
/// journal.
pub(crate) type Destination = (Option<LoadedHardsuiteJournal>, PathBuf, PathBuf);

pub(crate) fn destination(
    config: &RunConfig,
    target: &RunTarget,
) -> Result<Destination, HardsuiteError> {
    let (previous, out_dir, journal_path) = match target {
        RunTarget::Resume { journal, .. } => (
            Some(read_hardsuite_journal(journal)?),
            journal
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            journal.clone(),
        ),
        RunTarget::New { out_dir } => (None, out_dir.clone(), out_dir.join("journal.jsonl")),
    };
    let out_given = match target {
        RunTarget::Resume { out_dir, .. } => out_dir.as_deref(),
        RunTarget::New { .. } => None,
    };
    if let Some(journal) = &previous {
        let settings = resume_settings(config, &journal.header, &out_dir, out_given)?;
        let command = journal.header.command_line.join(" ");
        vernier_run::check_resume(
            &journal_path,
            (!command.is_empty()).then_some(command.as_str()),
            &settings,
        )?;
    } else if journal_path.exists() {
        return Err(RunError::JournalExists {
            out: out_dir,
            journal: journal_path,
        }
        .into());
    }
    Ok((previous, out_dir, journal_path))
}
