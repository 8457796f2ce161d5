//! The head-to-head of two sides: every dimension both measured, side by side, with the ratio
//! (speed, A over B) or the difference (quality, A − B) and its 95% interval; what a solved
//! task cost; pass rate against budget; and the settings that differ.

pub(crate) mod glance;
mod headlines;
mod paired;
mod recipe;
mod schema;

pub use recipe::{recipe_differences, study_differences};

pub use schema::{
    Batching, GlanceRow, QualityRow, SettingDifference, SideSummary, SuiteVersus,
    VERSUS_SCHEMA_VERSION, Versus,
};

use vernier_hardsuite::{CompareOptions, ResultsFile};

use crate::error::BatteryError;
use crate::side::{Side, SweepSide};
use crate::speed::{CellRatio, Metric};

/// Compares side A with side B.
pub fn versus(a: &Side, b: &Side) -> Result<Versus, BatteryError> {
    let mut not_compared = Vec::new();
    let mut settings = Vec::new();
    let (speed, prefill, batching) = if let (Some(sweep_a), Some(sweep_b)) = (&a.sweep, &b.sweep) {
        settings.extend(sweep_differences(sweep_a, sweep_b));
        let rows = crate::speed::cell_ratios(sweep_a, sweep_b);
        if rows.is_empty() {
            not_compared.push("speed: the two sweeps share no cell".to_owned());
        }
        let trends = crate::speed::prefill_trends(&rows);
        let batching = batching(&rows);
        (rows, trends, batching)
    } else {
        not_compared.push(if a.sweep.is_none() && b.sweep.is_none() {
            "speed: neither side has a sweep".to_owned()
        } else {
            format!(
                "speed: only {} has a sweep",
                one_side(a.sweep.is_some(), b.sweep.is_some())
            )
        });
        (Vec::new(), Vec::new(), Vec::new())
    };
    if let (Some(battery_a), Some(battery_b)) = (&a.battery, &b.battery) {
        match (&battery_a.config, &battery_b.config) {
            (Some(config_a), Some(config_b)) => {
                settings.extend(battery_differences(config_a, config_b));
            }
            _ => settings.extend(recipe::battery_study_differences(battery_a, battery_b)),
        }
    }
    let mut suites = Vec::new();
    // Paired part by part, by name, in A's order and then B's.
    let mut names: Vec<&str> = a.suites.iter().map(|(name, _)| name.as_str()).collect();
    for (name, _) in &b.suites {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    for part in names {
        match (a.suite(part), b.suite(part)) {
            (Some(results_a), Some(results_b)) => {
                for difference in vernier_hardsuite::setting_differences(results_a, results_b) {
                    settings.push(SettingDifference {
                        what: format!("{part}: {difference}"),
                        confounds: vec![format!("quality: {part}")],
                    });
                }
                suites.push(suite_versus(part, results_a, results_b)?);
            }
            (None, None) => {}
            (found_a, found_b) => not_compared.push(format!(
                "{part}: only {} ran it",
                one_side(found_a.is_some(), found_b.is_some())
            )),
        }
    }
    match (a.ready.is_some(), b.ready.is_some()) {
        (true, false) | (false, true) => not_compared.push(format!(
            "time to ready: only {} launched its server",
            one_side(a.ready.is_some(), b.ready.is_some())
        )),
        _ => {}
    }
    let both_ready = a.ready.is_some() && b.ready.is_some();
    let mut result = Versus {
        schema_version: VERSUS_SCHEMA_VERSION,
        a: SideSummary::of(a),
        b: SideSummary::of(b),
        settings,
        glance: Vec::new(),
        speed,
        prefill,
        batching,
        suites,
        not_compared,
    };
    let mut more = Vec::new();
    headlines::headline_rows(&result, a, b, &mut more);
    // Parts read by their headlines alone (quality under load, agent sessions, soaks) are
    // something in common too.
    if result.speed.is_empty() && result.suites.is_empty() && !both_ready && more.is_empty() {
        return Err(BatteryError::NothingInCommon {
            detail: format!(
                "{} and {} share no sweep cell, no suite and no part's figures ({})",
                a.label,
                b.label,
                result.not_compared.join("; ")
            ),
        });
    }
    result.glance = glance::glance(&result, a, b);
    result.glance.extend(more);
    Ok(result)
}

fn one_side(a: bool, b: bool) -> &'static str {
    match (a, b) {
        (true, false) => "A",
        (false, true) => "B",
        _ => "neither side",
    }
}

fn batching(rows: &[CellRatio]) -> Vec<Batching> {
    let decode = |row: &&CellRatio| row.metric == Metric::Decode;
    rows.iter()
        .filter(decode)
        .filter(|row| row.concurrency == 1)
        .filter_map(|single| {
            let batched = rows.iter().filter(decode).find(|row| {
                row.concurrency > 1
                    && row.workload == single.workload
                    && row.prompt_tokens == single.prompt_tokens
                    && row.output_tokens == single.output_tokens
            })?;
            Some(Batching {
                workload: single.workload,
                prompt_tokens: single.prompt_tokens,
                single: single.ratio,
                concurrency: batched.concurrency,
                batched: batched.ratio,
            })
        })
        .collect()
}

/// Sizes of the two batteries that differ, each with the rows it confounds.
fn battery_differences(
    a: &crate::config::BatteryConfig,
    b: &crate::config::BatteryConfig,
) -> Vec<SettingDifference> {
    let mut differences = Vec::new();
    let mut push = |what: String, confounds: &[&str]| {
        differences.push(SettingDifference {
            what,
            confounds: confounds.iter().map(|c| (*c).to_owned()).collect(),
        });
    };
    if a.batched_concurrency != b.batched_concurrency {
        push(
            format!(
                "batched concurrency: A {}, B {}",
                a.batched_concurrency, b.batched_concurrency
            ),
            &["speed", "quality: suite_batched"],
        );
    }
    if a.suite_concurrency != b.suite_concurrency {
        push(
            format!(
                "suite concurrency: A {}, B {}",
                a.suite_concurrency, b.suite_concurrency
            ),
            &["quality: suite"],
        );
    }
    if a.suite_budget != b.suite_budget {
        let budget = |value: Option<u32>| {
            value.map_or_else(|| "each task's own".to_owned(), |b| b.to_string())
        };
        push(
            format!(
                "suite budget: A {}, B {}",
                budget(a.suite_budget),
                budget(b.suite_budget)
            ),
            &[
                "quality: suite",
                "quality: suite_batched",
                "quality: probe",
                "quality: context",
            ],
        );
    }
    if a.reps != b.reps {
        push(
            format!("sweep repetitions: A {}, B {}", a.reps, b.reps),
            &[],
        );
    }
    differences
}

/// Settings of the two sweeps that differ. The server and the machine are what a comparison
/// is about and confound nothing; the rest confounds the speed rows.
fn sweep_differences(a: &SweepSide, b: &SweepSide) -> Vec<SettingDifference> {
    let mut differences = Vec::new();
    let mut push = |what: String, confounds: bool| {
        differences.push(SettingDifference {
            what,
            confounds: if confounds {
                vec!["speed".to_owned()]
            } else {
                Vec::new()
            },
        });
    };
    let (config_a, config_b) = (&a.run.config, &b.run.config);
    if config_a.output_tokens != config_b.output_tokens {
        push(
            format!(
                "sweep output tokens: A {:?}, B {:?}",
                config_a.output_tokens, config_b.output_tokens
            ),
            true,
        );
    }
    if config_a.temperature.to_bits() != config_b.temperature.to_bits() {
        push(
            format!(
                "sweep temperature: A {}, B {}",
                config_a.temperature, config_b.temperature
            ),
            true,
        );
    }
    if config_a.defeat_prefix_cache != config_b.defeat_prefix_cache {
        push(
            format!(
                "prefix-cache defeat: A {}, B {}",
                config_a.defeat_prefix_cache, config_b.defeat_prefix_cache
            ),
            true,
        );
    }
    differences.extend(environment_differences(a, b));
    differences
}

/// The GPUs (by model and count) and the weights' file types, where both runs read them and
/// they differ.
fn accelerator_differences(
    env_a: &vernier_sweep::Environment,
    env_b: &vernier_sweep::Environment,
) -> Vec<String> {
    let mut differences = Vec::new();
    // The GPUs by model and count: memory figures and the source's name differ between NVML
    // and an exporter reading the same GPUs.
    let read = |record: &Option<vernier_gpu::GpuRecord>| {
        record
            .as_ref()
            .filter(|record| !record.devices.is_empty())
            .map(|record| {
                let mut names: Vec<&str> = record
                    .devices
                    .iter()
                    .map(|device| device.name.as_str())
                    .collect();
                names.sort_unstable();
                let mut counted: Vec<String> = Vec::new();
                for name in names.iter().copied() {
                    let n = names.iter().filter(|other| **other == name).count();
                    let entry = format!("{n} × {name}");
                    if !counted.contains(&entry) {
                        counted.push(entry);
                    }
                }
                counted.join(" + ")
            })
    };
    if let (Some(gpu_a), Some(gpu_b)) = (read(&env_a.gpu), read(&env_b.gpu))
        && gpu_a != gpu_b
    {
        differences.push(format!("GPUs: A {gpu_a}; B {gpu_b}"));
    }
    let weights = |model: &vernier_sweep::ServedModel| {
        model
            .weights
            .as_ref()
            .and_then(|weights| weights.file_type.clone())
    };
    if let (Some(type_a), Some(type_b)) = (weights(&env_a.model), weights(&env_b.model))
        && type_a != type_b
    {
        differences.push(format!("weights' file type: A {type_a}, B {type_b}"));
    }
    differences
}

/// The server, the model file, the client machine and the GPU: what a comparison is about,
/// named, confounding nothing.
fn environment_differences(a: &SweepSide, b: &SweepSide) -> Vec<SettingDifference> {
    let mut differences = Vec::new();
    let mut push = |what: String, _: bool| {
        differences.push(SettingDifference {
            what,
            confounds: Vec::new(),
        });
    };
    let (env_a, env_b) = (&a.run.environment, &b.run.environment);
    // llama.cpp's /props names the model file, whose name usually carries the quantisation.
    let model_file = |props: &Option<serde_json::Value>| {
        props
            .as_ref()
            .and_then(|props| props["model_path"].as_str())
            .map(|path| path.rsplit('/').next().unwrap_or(path).to_owned())
    };
    if let (Some(file_a), Some(file_b)) = (
        model_file(&env_a.server.props),
        model_file(&env_b.server.props),
    ) && file_a != file_b
    {
        push(
            format!("model file (quantisation): A {file_a}, B {file_b}"),
            false,
        );
    }
    if env_a.server.kind != env_b.server.kind {
        push(
            format!("server: A {}, B {}", env_a.server.kind, env_b.server.kind),
            false,
        );
    }
    let version = |value: &Option<serde_json::Value>| {
        value
            .as_ref()
            .map_or_else(|| "not reported".to_owned(), ToString::to_string)
    };
    if env_a.server.version != env_b.server.version {
        push(
            format!(
                "server version: A {}, B {}",
                version(&env_a.server.version),
                version(&env_b.server.version)
            ),
            false,
        );
    }
    if env_a.client.cpu_model != env_b.client.cpu_model
        || env_a.client.logical_cores != env_b.client.logical_cores
    {
        push(
            format!(
                "client machine: A {} ({} cores), B {} ({} cores)",
                env_a.client.cpu_model,
                env_a.client.logical_cores,
                env_b.client.cpu_model,
                env_b.client.logical_cores
            ),
            false,
        );
    }
    let gpu = |info: &Option<vernier_sweep::GpuInfo>| {
        info.as_ref().map_or_else(
            || "not recorded".to_owned(),
            |gpu| gpu.stdout.trim().to_owned(),
        )
    };
    for what in accelerator_differences(env_a, env_b) {
        push(what, false);
    }
    if gpu(&env_a.gpu_info) != gpu(&env_b.gpu_info) {
        push(
            format!(
                "GPU and driver: A {}, B {}",
                gpu(&env_a.gpu_info),
                gpu(&env_b.gpu_info)
            ),
            false,
        );
    }
    differences
}

/// The paired comparison of one suite, overall and by category, with cost and curves, over
/// the tasks both runs hold.
fn suite_versus(part: &str, a: &ResultsFile, b: &ResultsFile) -> Result<SuiteVersus, BatteryError> {
    let (a, b) = paired::common_tasks(a, b);
    let (a, b) = (&a, &b);
    let mut options = CompareOptions::default();
    options.unpaired = !vernier_hardsuite::instance_differences(a, b).is_empty();
    let mut quality = vec![quality_row("all", a, b, &options)?];
    // Categories both sides scored; one side's alone is left to the overall row.
    let categories_of = |results: &ResultsFile| -> std::collections::BTreeSet<String> {
        results
            .tasks
            .iter()
            .map(|task| task.category.as_str().to_owned())
            .collect()
    };
    let categories: Vec<String> = categories_of(a)
        .intersection(&categories_of(b))
        .cloned()
        .collect();
    if categories.len() > 1 {
        for category in categories {
            let only = |results: &ResultsFile| {
                let mut filtered = results.clone();
                filtered
                    .tasks
                    .retain(|task| task.category.as_str() == category);
                filtered
            };
            quality.push(quality_row(&category, &only(a), &only(b), &options)?);
        }
    }
    let tokens = (crate::budget::token_curve(a), crate::budget::token_curve(b));
    let seconds = (
        crate::budget::seconds_curve(a),
        crate::budget::seconds_curve(b),
    );
    Ok(SuiteVersus {
        part: part.to_owned(),
        quality,
        cost_a: crate::budget::solve_cost(a),
        cost_b: crate::budget::solve_cost(b),
        token_crossovers: crate::budget::crossovers(&tokens.0, &tokens.1),
        seconds_crossovers: crate::budget::crossovers(&seconds.0, &seconds.1),
        tokens,
        seconds,
    })
}

fn quality_row(
    category: &str,
    a: &ResultsFile,
    b: &ResultsFile,
    options: &CompareOptions,
) -> Result<QualityRow, BatteryError> {
    let comparison = vernier_hardsuite::compare_with(a, b, options)?;
    let (interval, method) = if let Some(clustered) = comparison
        .task_clustered
        .as_ref()
        .and_then(|clustered| clustered.interval)
    {
        (Some(clustered), "task_clustered")
    } else if let Some(newcombe) = comparison.newcombe {
        (Some(newcombe), "newcombe_paired")
    } else if let Some(independent) = comparison.newcombe_independent {
        (Some(independent), "newcombe_independent")
    } else {
        (comparison.bootstrap, "bootstrap")
    };
    Ok(QualityRow {
        category: category.to_owned(),
        a: comparison.pass_rate_a,
        b: comparison.pass_rate_b,
        difference: comparison.difference,
        interval,
        method: method.to_owned(),
        n_items: comparison.n_items,
        items_for_two_points: comparison
            .items_for_power
            .iter()
            .find(|(points, _)| (*points - 2.0).abs() < 1e-9)
            .map(|(_, items)| *items),
    })
}
