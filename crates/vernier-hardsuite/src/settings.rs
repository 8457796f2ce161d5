//! What a run is: the configuration checked, and its settings, taken from the journal on a
//! resume and from the configuration otherwise.

use std::path::PathBuf;

use serde_json::{Map, Value};
use vernier_tasks::{ContextPlan, Draw, Suite};

use crate::config::{MAX_TIMEOUT_SECS, RunConfig};
use crate::error::HardsuiteError;
use crate::journal::{
    BudgetFlags, DroppedLength, LoadedHardsuiteJournal, RecordedLimit, Sampling, VideoAs,
};
use crate::selection::{Generated, check_selection, load_suite_from};

pub(crate) fn sampling_from(config: &RunConfig) -> Sampling {
    let mut sampling = config.preset.unwrap_or_default().sampling();
    if config.temperature.is_some() {
        sampling.temperature = config.temperature;
    }
    if config.top_p.is_some() {
        sampling.top_p = config.top_p;
    }
    if config.top_k.is_some() {
        sampling.top_k = config.top_k;
    }
    if config.presence_penalty.is_some() {
        sampling.presence_penalty = config.presence_penalty;
    }
    sampling
}

pub(crate) fn check_extra_body(value: &Value) -> Result<Map<String, Value>, HardsuiteError> {
    let Value::Object(fields) = value else {
        return Err(HardsuiteError::invalid(
            "--extra-body",
            "it must be a JSON object, e.g. '{\"chat_template_kwargs\": {\"enable_thinking\": true}}'",
        ));
    };
    if fields.contains_key("stop") {
        return Err(HardsuiteError::invalid(
            "--extra-body",
            "it sets `stop`; hardsuite never sends stop sequences (they would end answers early); remove it",
        ));
    }
    Ok(fields.clone())
}

pub(crate) fn validate(config: &RunConfig) -> Result<(), HardsuiteError> {
    check_selection(&config.suite)?;
    for (flag, seconds) in [
        ("--request-timeout", config.request_timeout_secs),
        ("--idle-timeout", config.idle_timeout_secs),
    ] {
        if seconds > MAX_TIMEOUT_SECS {
            return Err(HardsuiteError::invalid(
                flag,
                format!("{seconds} seconds is longer than 7 days; pass at most {MAX_TIMEOUT_SECS}"),
            ));
        }
    }
    let positive = [
        (
            "--samples",
            config.samples == Some(0),
            "it must be at least 1",
        ),
        (
            "--concurrency",
            config.concurrency == 0,
            "it must be at least 1",
        ),
        (
            "--max-tries",
            config.max_tries == 0,
            "it must be at least 1",
        ),
        (
            "--rerun-cut-off",
            config.rerun_cut_off == Some(0),
            "the budget must be positive",
        ),
        (
            "--max-rps",
            config
                .max_rps
                .is_some_and(|rps| !(rps.is_finite() && rps > 0.0)),
            "give a positive number of requests per second, e.g. 2",
        ),
        (
            "--max-wait",
            config
                .max_wait_secs
                .is_some_and(|s| !(s.is_finite() && (0.0..=7.0 * 86_400.0).contains(&s))),
            "give seconds from 0 to 604800 (7 days)",
        ),
    ];
    for (flag, refused, detail) in positive {
        if refused {
            return Err(HardsuiteError::invalid(flag, detail));
        }
    }
    Ok(())
}

/// What a run is: from the journal on `--resume`, else from the flags.
pub(crate) struct Settings {
    pub(crate) suite_path: Option<PathBuf>,
    pub(crate) draw: Option<Draw>,
    pub(crate) flags: BudgetFlags,
    pub(crate) selected: Option<Vec<String>>,
    pub(crate) samples: u32,
    pub(crate) sampling: Sampling,
    pub(crate) rerun_budget: Option<u32>,
    pub(crate) simulated: bool,
    pub(crate) extra_body: Map<String, Value>,
    /// The long-context plan, and whether its lengths are final (given, or read back).
    pub(crate) context: Option<(ContextPlan, bool)>,
    /// The generated suite's seed (vision, video or probe).
    pub(crate) generated: Generated,
    /// How video tasks send their clips.
    pub(crate) video_as: VideoAs,
    /// A dataset run's selection.
    pub(crate) dataset: Option<crate::dataset_run::DatasetSelection>,
    /// The server's context and the lengths left out for it (a new context run).
    pub(crate) context_fit: ContextFit,
}

/// The server's context and the default lengths left out because they cannot fit it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContextFit {
    pub(crate) limit: Option<RecordedLimit>,
    pub(crate) dropped: Vec<DroppedLength>,
}

pub(crate) fn settings(
    config: &RunConfig,
    previous: Option<&LoadedHardsuiteJournal>,
) -> Result<Settings, HardsuiteError> {
    Ok(match previous {
        Some(journal) => {
            let header = &journal.header;
            Settings {
                suite_path: header.suite_path.clone(),
                draw: header.draw,
                flags: header.budget_flags,
                selected: Some(header.task_ids.clone()),
                samples: header.samples,
                sampling: header.sampling,
                rerun_budget: header.rerun_budget,
                simulated: header.simulated,
                extra_body: match &header.extra_body {
                    Some(Value::Object(fields)) => fields.clone(),
                    _ => Map::new(),
                },
                context: header.context.clone().map(|plan| (plan, true)),
                generated: Generated {
                    vision: header.vision_seed,
                    instructions: header.instructions_seed,
                    structured: header.structured_seed,
                    calls: header.calls_seed,
                    video: header.video_seed,
                    probe: header.probe_seed,
                },
                video_as: header.video_as,
                dataset: match &header.dataset {
                    Some(record) => {
                        crate::dataset_run::check_unchanged(record)?;
                        Some(record.selection.clone())
                    }
                    None => None,
                },
                context_fit: ContextFit {
                    limit: header.context_limit.clone(),
                    dropped: header.context_dropped.clone(),
                },
            }
        }
        None => Settings {
            suite_path: config.suite.suite.clone(),
            draw: match (
                &config.suite.suite,
                config.suite.draw,
                &config.suite.context,
            ) {
                (_, _, Some(_)) => None,
                _ if config.suite.dataset.is_some() => None,
                (None, None, None) => Some(Draw::BUNDLED),
                (_, draw, None) => draw,
            },
            flags: config.suite.budgets,
            selected: config.suite.tasks.clone(),
            samples: config.samples.unwrap_or(1),
            sampling: sampling_from(config),
            rerun_budget: config.rerun_cut_off,
            simulated: config.base_url.is_none(),
            extra_body: match &config.extra_body {
                Some(value) => check_extra_body(value)?,
                None => Map::new(),
            },
            context: config
                .suite
                .context
                .clone()
                .map(|context| (context.plan, context.lengths_given)),
            generated: Generated::of(&config.suite),
            video_as: config.suite.video_as,
            dataset: config.suite.dataset.clone(),
            context_fit: ContextFit::default(),
        },
    })
}

/// The suite the settings name.
pub(crate) fn settings_suite(settings: &Settings) -> Result<Suite, HardsuiteError> {
    load_suite_from(
        settings.suite_path.as_deref(),
        settings.draw.filter(|_| settings.suite_path.is_none()),
        settings.flags,
        settings.selected.as_deref(),
        settings.context.as_ref().map(|(plan, _)| plan),
        settings.generated,
        settings.dataset.as_ref(),
    )
}
