//! A run's record read from its folder: the one way a run is turned into rows, used when an
//! engine registers the run it just finished and when `runs reindex` rebuilds the store, so
//! both give the same rows.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest as _, Sha256};
use vernier_run::Headline;

use crate::error::StoreError;
use crate::record::RunRecord;

/// The runs in `path`: its own, and, for a battery or a study, each of its parts' (each part
/// is a run of its engine, registered with the battery that ran it).
pub fn read_runs(path: &Path) -> Result<Vec<RunRecord>, StoreError> {
    let run = read_run(path)?;
    let mut runs = Vec::new();
    if run.kind == "battery" || run.kind == "study" {
        let mut parts: Vec<PathBuf> = std::fs::read_dir(&run.folder)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|entry| entry.path())
                    .filter(|path| path.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        parts.sort();
        runs.extend(parts.iter().filter_map(|part| read_run(part).ok()));
    }
    runs.insert(0, run);
    Ok(runs)
}

/// Reads the run in `path` (its folder, or a file in it).
pub fn read_run(path: &Path) -> Result<RunRecord, StoreError> {
    let folder = if path.is_file() {
        path.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        path.to_path_buf()
    };
    if !folder.is_dir() {
        return Err(StoreError::NotARun { path: folder });
    }
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    let mut record = blank(&folder);
    let file = if folder.join(vernier_battery::BATTERY_FILE).is_file() {
        battery(&mut record, &folder)?
    } else if let Some(name) = ["agent.json", "replay.json", "watch.json", "ladder.json"]
        .into_iter()
        .find(|name| folder.join(name).is_file())
    {
        let path = folder.join(name);
        let json = read_json(&path)?;
        match name {
            "agent.json" => agent(&mut record, &path, &json)?,
            "replay.json" => replay(&mut record, &path, &json)?,
            "watch.json" => watch(&mut record, &json),
            _ => ladder(&mut record, &json),
        }
        path
    } else if folder.join("results.json").is_file() {
        suite(&mut record, &folder)?
    } else if folder.join("run.json").is_file() {
        let path = folder.join("run.json");
        let json = read_json(&path)?;
        if json.get("cells").is_some() {
            sweep(&mut record, &path, &json)?;
        } else if json.get("milestones").is_some() {
            ready(&mut record, &json);
        } else if json.get("deaths").is_some() || json.get("arms").is_some() {
            soak(&mut record, &json);
        } else {
            return Err(StoreError::NotARun { path: folder });
        }
        path
    } else {
        return Err(StoreError::NotARun { path: folder });
    };
    record.ended_unix_ms = modified_ms(&file).unwrap_or(0);
    if record.started_unix_ms == 0 {
        record.started_unix_ms = journal_start(&folder)
            .or_else(|| created_ms(&folder))
            .unwrap_or(record.ended_unix_ms);
    }
    record.figures.retain(|figure| figure.value.is_finite());
    record.id = run_id(&record.kind, record.started_unix_ms, &folder);
    Ok(record)
}

/// `KIND-STARTED-HASH`, the hash of the folder's path.
fn run_id(kind: &str, started_unix_ms: i64, folder: &Path) -> String {
    let digest = Sha256::digest(folder.to_string_lossy().as_bytes());
    let hash = digest[..4].iter().fold(String::new(), |mut hash, byte| {
        let _ = write!(hash, "{byte:02x}");
        hash
    });
    format!("{kind}-{started_unix_ms}-{hash}")
}

fn blank(folder: &Path) -> RunRecord {
    RunRecord {
        id: String::new(),
        kind: String::new(),
        folder: folder.to_string_lossy().into_owned(),
        started_unix_ms: 0,
        ended_unix_ms: 0,
        target: String::new(),
        server_kind: String::new(),
        server_version: String::new(),
        model: String::new(),
        weights: String::new(),
        gpu: String::new(),
        driver: String::new(),
        machine: String::new(),
        verdict: "unstated".to_owned(),
        verdict_reasons: String::new(),
        folder_present: true,
        figures: Vec::new(),
        scores: Vec::new(),
        settings: Vec::new(),
    }
}

fn read_json(path: &Path) -> Result<Value, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|error| StoreError::Parse {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })
}

fn typed<T: serde::de::DeserializeOwned>(path: &Path, json: &Value) -> Result<T, StoreError> {
    serde_json::from_value(json.clone()).map_err(|error| StoreError::Parse {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })
}

fn unix_ms(time: std::time::SystemTime) -> Option<i64> {
    time.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|since| i64::try_from(since.as_millis()).ok())
}

fn modified_ms(path: &Path) -> Option<i64> {
    unix_ms(std::fs::metadata(path).ok()?.modified().ok()?)
}

fn created_ms(path: &Path) -> Option<i64> {
    unix_ms(std::fs::metadata(path).ok()?.created().ok()?)
}

/// The first `started_unix_ms` anywhere in the journal's first line.
fn journal_start(folder: &Path) -> Option<i64> {
    let text = std::fs::read_to_string(folder.join("journal.jsonl")).ok()?;
    let first: Value = serde_json::from_str(text.lines().next()?).ok()?;
    find_key(&first, "started_unix_ms").and_then(Value::as_i64)
}

fn find_key<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map
            .get(key)
            .or_else(|| map.values().find_map(|inner| find_key(inner, key))),
        Value::Array(items) => items.iter().find_map(|inner| find_key(inner, key)),
        _ => None,
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn started(record: &mut RunRecord, json: &Value) {
    record.started_unix_ms = json["started_unix_ms"].as_i64().unwrap_or(0);
}

fn verdict(record: &mut RunRecord, verdict: &Value) {
    if let Ok(verdict) = serde_json::from_value::<vernier_run::Verdict>(verdict.clone()) {
        record.verdict = verdict.verdict.to_string();
        record.verdict_reasons = verdict
            .reasons
            .iter()
            .map(|reason| format!("{} ({})", reason.detail, reason.code))
            .collect::<Vec<_>>()
            .join("; ");
    }
}

fn target(record: &mut RunRecord, base_url: &Value, simulated: bool) {
    record.target = if simulated {
        "simulator".to_owned()
    } else {
        text(base_url)
    };
}

/// The longest a setting's value is kept.
const SETTING_LIMIT: usize = 400;

/// `value` flattened into `prefix.key = value` settings.
fn flatten(prefix: &str, value: &Value, settings: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                flatten(&format!("{prefix}.{key}"), inner, settings);
            }
        }
        Value::Null => {}
        other => {
            let mut value = text(other);
            if value.len() > SETTING_LIMIT {
                let mut end = SETTING_LIMIT;
                while !value.is_char_boundary(end) {
                    end -= 1;
                }
                value.truncate(end);
                value.push('…');
            }
            settings.push((prefix.to_owned(), value));
        }
    }
}

fn weights(record: &mut RunRecord, weights: &Value) {
    if weights.is_null() {
        return;
    }
    let loaded = text(&weights["loaded_from"]);
    let file_type = text(&weights["file_type"]);
    record.weights = if file_type.is_empty() {
        loaded
    } else {
        format!("{loaded} ({file_type})")
    };
    flatten("server", &weights["launch_flags"], &mut record.settings);
}

fn gpu(record: &mut RunRecord, gpu: &Value) {
    let devices = gpu["devices"].as_array().cloned().unwrap_or_default();
    record.gpu = devices
        .iter()
        .map(|device| text(&device["name"]))
        .collect::<Vec<_>>()
        .join(", ");
    record.driver = String::from(
        devices
            .iter()
            .find_map(|device| device["driver_version"].as_str())
            .unwrap_or_default(),
    );
}

/// The sweep's, agent's and replay's environment: server, model, weights, client, GPU.
fn environment(record: &mut RunRecord, environment: &Value) {
    let server = &environment["server"];
    target(
        record,
        &server["base_url"],
        server["simulator"].as_bool() == Some(true),
    );
    record.server_kind = text(&server["kind"]);
    let version = &server["version"];
    record.server_version = version.get("version").map_or_else(|| text(version), text);
    record.model = text(&environment["model"]["id"]);
    weights(record, &environment["model"]["weights"]);
    let client = &environment["client"];
    if client.is_object() {
        record.machine = format!(
            "{}, {} cores, {}",
            text(&client["cpu_model"]),
            text(&client["logical_cores"]),
            text(&client["os"])
        );
    }
    gpu(record, &environment["gpu"]);
}

fn sweep(record: &mut RunRecord, path: &Path, json: &Value) -> Result<(), StoreError> {
    let run: vernier_sweep::RunFile = typed(path, json)?;
    record.kind = String::from("sweep");
    started(record, json);
    environment(record, &json["environment"]);
    verdict(record, &json["validity"]);
    record.figures = vernier_sweep::sweep_headlines(&run);
    record.figures.extend(energy_per_token(&run));
    Ok(())
}

/// Joules per output token at each load where the GPUs were read: the median over the
/// load's cells.
fn energy_per_token(run: &vernier_sweep::RunFile) -> Vec<Headline> {
    let mut loads: Vec<u32> = run.cells.iter().map(|cell| cell.concurrency).collect();
    loads.sort_unstable();
    loads.dedup();
    loads
        .into_iter()
        .filter_map(|load| {
            let joules: Vec<f64> = run
                .cells
                .iter()
                .filter(|cell| cell.concurrency == load)
                .filter_map(|cell| cell.gpu.as_ref()?.per_token.as_ref())
                .map(|per_token| per_token.joules_per_output_token)
                .collect();
            let median = vernier_stats::median(&joules).ok()?;
            Some(
                Headline::new(
                    format!("energy per output token at {load} in flight (median over cells)"),
                    median,
                    "J",
                )
                .lower_is_better(),
            )
        })
        .collect()
}

fn agent(record: &mut RunRecord, path: &Path, json: &Value) -> Result<(), StoreError> {
    let run: vernier_sweep::agent::AgentRunFile = typed(path, json)?;
    record.kind = String::from("agent");
    started(record, json);
    environment(record, &json["environment"]);
    verdict(record, &json["verdict"]);
    record.figures = vernier_sweep::agent::agent_headlines(&run);
    Ok(())
}

fn replay(record: &mut RunRecord, path: &Path, json: &Value) -> Result<(), StoreError> {
    let run: vernier_sweep::agent::ReplayRunFile = typed(path, json)?;
    record.kind = String::from("replay");
    started(record, json);
    environment(record, &json["environment"]);
    verdict(record, &json["verdict"]);
    record.figures = vernier_sweep::agent::replay_headlines(&run);
    Ok(())
}

fn suite(record: &mut RunRecord, folder: &Path) -> Result<PathBuf, StoreError> {
    let path = folder.join("results.json");
    let results =
        vernier_hardsuite::ResultsFile::load(folder).map_err(|error| StoreError::Parse {
            path: path.clone(),
            detail: error.to_string(),
        })?;
    let json = read_json(&path)?;
    record.kind = String::from(if results.dataset.is_some() {
        "dataset"
    } else {
        "suite"
    });
    started(record, &json);
    target(record, &json["base_url"], results.simulated);
    record.model.clone_from(&results.model);
    weights(record, &json["weights"]);
    gpu(record, &json["gpu"]);
    verdict(record, &json["validity"]);
    record.figures = vec![results.pass_rate_headline()];
    let cost = vernier_battery::solve_cost(&results);
    if let Some(seconds) = cost.seconds_per_solved {
        record
            .figures
            .push(Headline::new("seconds per solved task", seconds, "s").lower_is_better());
    }
    if let Some(tokens) = cost.tokens_per_solved {
        record
            .figures
            .push(Headline::new("tokens per solved task", tokens, "tokens").lower_is_better());
    }
    if let Some(per_token) = results
        .energy
        .as_ref()
        .and_then(|energy| energy.per_token.as_ref())
    {
        record.figures.push(
            Headline::new(
                "energy per output token",
                per_token.joules_per_output_token,
                "J",
            )
            .lower_is_better(),
        );
    }
    record.scores = results.scores();
    let total = &results.main.total;
    record.scores.push(vernier_run::Score::new(
        "total",
        total.n_pass,
        total.n_scored,
    ));
    record
        .settings
        .push(("run.suite".to_owned(), results.suite.clone()));
    Ok(path)
}

fn ladder(record: &mut RunRecord, json: &Value) {
    record.kind = String::from("ladder");
    started(record, json);
    target(
        record,
        &json["base_url"],
        json["simulated"].as_bool() == Some(true),
    );
    record.model = text(&json["model"]);
}

fn lifecycle_identity(record: &mut RunRecord, json: &Value) {
    let config = &json["config"];
    target(record, &config["base_url"], false);
    record.model = text(&config["model"]);
    if record.model.is_empty() {
        record.model = text(&json["model"]);
    }
    verdict(record, &json["validity"]);
}

fn ready(record: &mut RunRecord, json: &Value) {
    let swaps = json["swaps"]
        .as_array()
        .is_some_and(|swaps| !swaps.is_empty());
    record.kind = String::from(if swaps { "swap" } else { "ready" });
    lifecycle_identity(record, json);
    if let Some(launch) = json["config"]["launch"].as_str() {
        record
            .settings
            .push(("run.launch".to_owned(), launch.to_owned()));
    }
    record.figures = lifecycle_headlines(&record.kind, json);
}

fn soak(record: &mut RunRecord, json: &Value) {
    record.kind = String::from("soak");
    started(record, json);
    lifecycle_identity(record, json);
    record.figures = lifecycle_headlines("soak", json);
}

fn watch(record: &mut RunRecord, json: &Value) {
    record.kind = String::from("watch");
    lifecycle_identity(record, json);
    record.figures = lifecycle_headlines("watch", json);
}

/// The headline figures of a lifecycle run file (`ready`, `swap`, `soak` or `watch`), as a
/// study's part reports them.
pub fn lifecycle_headlines(kind: &str, file: &Value) -> Vec<Headline> {
    let mut headlines = Vec::new();
    match kind {
        "ready" => {
            if let Some(median) = file["milestones"]["first_token_s"]["median"].as_f64() {
                headlines.push(
                    Headline::new("launch to first token (median)", median, "s").lower_is_better(),
                );
            }
            if let Some(tokens) = file["kv_cache_tokens"][0].as_f64() {
                headlines.push(Headline::new(
                    "KV cache (the engine's statement)",
                    tokens,
                    "tokens",
                ));
            }
        }
        "swap" => {
            for swap in file["swaps"].as_array().into_iter().flatten() {
                if let Some(median) = swap["time_to_first_token_s"]["median"].as_f64() {
                    headlines.push(
                        Headline::new(
                            format!(
                                "switch {} → {} (median)",
                                swap["from"].as_str().unwrap_or("?"),
                                swap["to"].as_str().unwrap_or("?")
                            ),
                            median,
                            "s",
                        )
                        .lower_is_better(),
                    );
                }
            }
        }
        "soak" => {
            let deaths = file["deaths"].as_array().map_or(0, Vec::len);
            headlines.push(Headline::new("deaths", deaths as f64, "").lower_is_better());
        }
        _ => {
            let failed = file["failed_probes"]
                .as_f64()
                .or_else(|| file["summary"]["failed_probes"].as_f64());
            if let Some(failed) = failed {
                headlines.push(Headline::new("failed probes", failed, "").lower_is_better());
            }
        }
    }
    headlines
}

fn battery(record: &mut RunRecord, folder: &Path) -> Result<PathBuf, StoreError> {
    let path = folder.join(vernier_battery::BATTERY_FILE);
    let file = vernier_battery::BatteryFile::load(folder).map_err(|error| StoreError::Parse {
        path: path.clone(),
        detail: error.to_string(),
    })?;
    record.kind = String::from(if file.study.is_some() {
        "study"
    } else {
        "battery"
    });
    record.started_unix_ms = i64::try_from(file.started_unix_ms).unwrap_or(0);
    record.target.clone_from(&file.target);
    record.model.clone_from(&file.model);
    verdict(
        record,
        &serde_json::to_value(&file.validity).unwrap_or(Value::Null),
    );
    // Who it measured, from its first part that records the server (a sweep's or a suite's
    // files say more than the battery's index).
    for entry in &file.parts {
        if let Ok(part) = read_run(&folder.join(&entry.folder))
            && !part.server_kind.is_empty()
        {
            record.server_kind = part.server_kind;
            record.server_version = part.server_version;
            record.weights = part.weights;
            record.gpu = part.gpu;
            record.driver = part.driver;
            record.machine = part.machine;
            record.settings = part.settings;
            break;
        }
    }
    for entry in &file.parts {
        for headline in &entry.headlines {
            let mut figure = headline.clone();
            figure.name = format!("{}: {}", entry.part, headline.name);
            record.figures.push(figure);
        }
    }
    record.scores = file
        .totals
        .iter()
        .map(|row| vernier_run::Score::new(row.dimension.clone(), row.passed, row.scored))
        .collect();
    if let Some(study) = &file.study_file {
        record
            .settings
            .push(("run.study".to_owned(), study.clone()));
    }
    Ok(path)
}
