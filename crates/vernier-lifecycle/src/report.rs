//! `ready`'s run file and Markdown report, derived from its journal; and the file writing
//! that `watch`'s reports share.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::distribution::Distribution;
use crate::error::LifecycleError;
use crate::ready_config::ReadyConfig;
use crate::ready_journal::{LaunchRep, Milestones, ReadyJournalLine, SwapRequest};

/// Version of `run.json`.
pub const READY_RUN_VERSION: u32 = 1;

/// Cold against warm requests: the first request after ready and the median of the next ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ColdWarm {
    /// TTFT of each repetition's first request, ms.
    pub cold_ttft_ms: Option<Distribution>,
    /// Per repetition, the median TTFT of the warm requests, ms.
    pub warm_ttft_ms: Option<Distribution>,
    /// Decode rate of each first request, tokens/s.
    pub cold_decode_tokens_per_s: Option<Distribution>,
    /// Per repetition, the median decode rate of the warm requests, tokens/s.
    pub warm_decode_tokens_per_s: Option<Distribution>,
}

/// One direction of a model switch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SwapDirection {
    /// Model loaded before (as asked before).
    pub from: String,
    /// Model asked.
    pub to: String,
    /// From the request to its first token, seconds.
    pub time_to_first_token_s: Option<Distribution>,
    /// Requests that failed.
    pub failed: usize,
}

/// The summary of a `ready` run: `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadyRun {
    /// Format version.
    pub run_version: u32,
    /// The settings.
    pub config: Option<ReadyConfig>,
    /// A signal stopped the run early.
    pub interrupted: bool,
    /// Launch repetitions that reached every milestone.
    pub complete_reps: usize,
    /// Launch repetitions that did not.
    pub failed_reps: usize,
    /// Each milestone's distribution over complete repetitions, seconds from launch.
    pub milestones: BTreeMap<String, Distribution>,
    /// The engine, as its log names itself (`vllm`, `llama_cpp`, `sglang`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Each milestone the engine's log announced, over complete repetitions: seconds from
    /// launch until the line was read.
    #[serde(default)]
    pub engine_milestones: BTreeMap<String, Distribution>,
    /// The durations those lines state (`Loading weights took 0.62 seconds`), seconds.
    #[serde(default)]
    pub engine_stated_s: BTreeMap<String, Distribution>,
    /// The KV cache's capacity in tokens, as the engine's log states it (each distinct
    /// value once, in launch order: one value unless launches differed).
    #[serde(default)]
    pub kv_cache_tokens: Vec<u64>,
    /// Cold against warm.
    pub cold_warm: ColdWarm,
    /// Per direction, what a switch cost.
    pub swaps: Vec<SwapDirection>,
    /// Every launch repetition, as journalled.
    pub launches: Vec<LaunchRep>,
    /// Every swap request, as journalled.
    pub swap_requests: Vec<SwapRequest>,
}

fn median_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    let values: Vec<f64> = values.collect();
    vernier_stats::median(&values).ok()
}

/// The engines' own accounts of their starts, over the launches.
struct EngineSummary {
    engine: Option<String>,
    milestones: BTreeMap<String, Distribution>,
    stated_s: BTreeMap<String, Distribution>,
    kv_cache_tokens: Vec<u64>,
}

/// Each milestone's time over the complete launches, the durations the lines state, and the
/// KV-cache sizes every launch stated.
fn engine_summary(launches: &[LaunchRep], complete: &[&LaunchRep]) -> EngineSummary {
    let mut seen: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut stated: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for milestone in complete.iter().flat_map(|rep| &rep.engine_start.milestones) {
        seen.entry(milestone.name.clone())
            .or_default()
            .push(milestone.seen_s);
        if let Some(value) = milestone.stated_s {
            stated
                .entry(milestone.name.clone())
                .or_default()
                .push(value);
        }
    }
    let distributions = |values: BTreeMap<String, Vec<f64>>| -> BTreeMap<String, Distribution> {
        values
            .into_iter()
            .filter_map(|(name, values)| Some((name, Distribution::of(&values)?)))
            .collect()
    };
    let mut kv_cache_tokens: Vec<u64> = Vec::new();
    for tokens in launches
        .iter()
        .filter_map(|rep| rep.engine_start.kv_cache_tokens)
    {
        if !kv_cache_tokens.contains(&tokens) {
            kv_cache_tokens.push(tokens);
        }
    }
    EngineSummary {
        engine: launches
            .iter()
            .find_map(|rep| rep.engine_start.engine.clone()),
        milestones: distributions(seen),
        stated_s: distributions(stated),
        kv_cache_tokens,
    }
}

/// Derives the summary from the journal's lines (a repetition measured twice, after a resume,
/// counts once: the last one).
pub fn summarise(lines: &[ReadyJournalLine], interrupted: bool) -> ReadyRun {
    let mut config = None;
    let mut launches: BTreeMap<u32, LaunchRep> = BTreeMap::new();
    let mut swap_requests: BTreeMap<(u32, u32), SwapRequest> = BTreeMap::new();
    for line in lines {
        match line {
            ReadyJournalLine::Header { config: c, .. } => config = Some(c.clone()),
            ReadyJournalLine::Launch(rep) => {
                launches.insert(rep.rep, (**rep).clone());
            }
            ReadyJournalLine::Swap(request) => {
                swap_requests.insert((request.rep, request.index), (**request).clone());
            }
            _ => {}
        }
    }
    let launches: Vec<LaunchRep> = launches.into_values().collect();
    let complete: Vec<&LaunchRep> = launches
        .iter()
        .filter(|rep| rep.error.is_none() && rep.milestones.complete())
        .collect();
    let mut milestones = BTreeMap::new();
    for (index, (name, _)) in Milestones::default().named().iter().enumerate() {
        let values: Vec<f64> = complete
            .iter()
            .filter_map(|rep| rep.milestones.named()[index].1)
            .collect();
        if let Some(distribution) = Distribution::of(&values) {
            milestones.insert((*name).to_owned(), distribution);
        }
    }
    let engine = engine_summary(&launches, &complete);
    let cold: Vec<_> = complete
        .iter()
        .filter_map(|rep| rep.cold.as_ref())
        .collect();
    let cold_warm = ColdWarm {
        cold_ttft_ms: Distribution::of(&cold.iter().filter_map(|f| f.ttft_ms).collect::<Vec<_>>()),
        cold_decode_tokens_per_s: Distribution::of(
            &cold
                .iter()
                .filter_map(|f| f.decode_tokens_per_s)
                .collect::<Vec<_>>(),
        ),
        warm_ttft_ms: Distribution::of(
            &complete
                .iter()
                .filter_map(|rep| median_of(rep.warm.iter().filter_map(|f| f.ttft_ms)))
                .collect::<Vec<_>>(),
        ),
        warm_decode_tokens_per_s: Distribution::of(
            &complete
                .iter()
                .filter_map(|rep| median_of(rep.warm.iter().filter_map(|f| f.decode_tokens_per_s)))
                .collect::<Vec<_>>(),
        ),
    };
    let swap_requests: Vec<SwapRequest> = swap_requests.into_values().collect();
    let mut directions: BTreeMap<(String, String), (Vec<f64>, usize)> = BTreeMap::new();
    for request in &swap_requests {
        let from = request.from.clone().unwrap_or_else(|| "?".to_owned());
        let entry = directions.entry((from, request.to.clone())).or_default();
        match (request.time_to_first_token_s, &request.figures.error) {
            (Some(seconds), None) => entry.0.push(seconds),
            _ => entry.1 += 1,
        }
    }
    let swaps = directions
        .into_iter()
        .map(|((from, to), (values, failed))| SwapDirection {
            from,
            to,
            time_to_first_token_s: Distribution::of(&values),
            failed,
        })
        .collect();
    ReadyRun {
        run_version: READY_RUN_VERSION,
        config,
        interrupted,
        complete_reps: complete.len(),
        failed_reps: launches.len() - complete.len(),
        milestones,
        engine: engine.engine,
        engine_milestones: engine.milestones,
        engine_stated_s: engine.stated_s,
        kv_cache_tokens: engine.kv_cache_tokens,
        cold_warm,
        swaps,
        launches,
        swap_requests,
    }
}

/// Creates a run's output folder and its `logs/` (launched servers' output), for `ready` and
/// `soak` alike.
pub(crate) fn make_run_folders(out: &Path) -> Result<(), LifecycleError> {
    std::fs::create_dir_all(out.join("logs")).map_err(|source| LifecycleError::Write {
        path: out.to_owned(),
        source,
    })
}

pub(crate) fn write(path: PathBuf, text: &str) -> Result<PathBuf, LifecycleError> {
    vernier_run::write_atomically(&path, text.as_bytes()).map_err(|source| {
        LifecycleError::Write {
            path: path.clone(),
            source,
        }
    })?;
    Ok(path)
}

pub(crate) fn json(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value)
        .map_or_else(|e| format!("{{\"error\": \"{e}\"}}"), |t| t + "\n")
}

fn cell(distribution: Option<&Distribution>, digits: usize) -> String {
    distribution.map_or_else(
        || "–".to_owned(),
        |d| {
            format!(
                "{:.digits$} ({:.digits$}–{:.digits$}, n={})",
                d.median, d.min, d.max, d.n
            )
        },
    )
}

/// The Markdown report of a `ready` run.
pub fn ready_markdown(run: &ReadyRun) -> String {
    let mut text = String::from("# Time to ready\n\n");
    if let Some(config) = &run.config {
        if let Some(launch) = &config.launch {
            let _ = writeln!(
                text,
                "Launch: `{launch}`, {}.\n",
                vernier_cli::counted(u64::from(config.reps), "repetition", "repetitions")
            );
        } else {
            let _ = writeln!(
                text,
                "Swaps between {} on {}, {}.\n",
                config.swap.join(", "),
                config.base_url,
                vernier_cli::counted(u64::from(config.reps), "repetition", "repetitions")
            );
        }
    }
    if run.interrupted {
        text.push_str(
            "**Interrupted**: the figures cover what was measured before the signal.\n\n",
        );
    }
    if !run.launches.is_empty() {
        let _ = writeln!(
            text,
            "{} reached every milestone, {} did not.\n",
            vernier_cli::counted(run.complete_reps as u64, "repetition", "repetitions"),
            run.failed_reps
        );
        text.push_str("| milestone (s from launch) | median (min–max, n) |\n| --- | --- |\n");
        for (name, _) in Milestones::default().named() {
            let _ = writeln!(text, "| {name} | {} |", cell(run.milestones.get(name), 2));
        }
        engine_section(run, &mut text);
        text.push_str("\n| first request against warm ones | cold | warm (median per repetition) |\n| --- | --- | --- |\n");
        let _ = writeln!(
            text,
            "| TTFT, ms | {} | {} |",
            cell(run.cold_warm.cold_ttft_ms.as_ref(), 1),
            cell(run.cold_warm.warm_ttft_ms.as_ref(), 1)
        );
        let _ = writeln!(
            text,
            "| decode, tokens/s | {} | {} |",
            cell(run.cold_warm.cold_decode_tokens_per_s.as_ref(), 1),
            cell(run.cold_warm.warm_decode_tokens_per_s.as_ref(), 1)
        );
        for rep in run.launches.iter().filter(|rep| rep.error.is_some()) {
            let _ = writeln!(
                text,
                "\nRepetition {}: {} (log: `{}`).",
                rep.rep,
                rep.error.as_deref().unwrap_or_default(),
                rep.log
            );
        }
    }
    if !run.swaps.is_empty() {
        text.push_str(
            "\n| from | to | request to first token, s | failed |\n| --- | --- | --- | --- |\n",
        );
        for swap in &run.swaps {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} |",
                swap.from,
                swap.to,
                cell(swap.time_to_first_token_s.as_ref(), 2),
                swap.failed
            );
        }
    }
    text
}

/// The engine's own account of its start, from its log.
fn engine_section(run: &ReadyRun, text: &mut String) {
    let Some(engine) = &run.engine else {
        text.push_str(
            "\nThe server's log announced no start-up milestone Vernier knows (vLLM's, llama.cpp's or SGLang's lines).\n",
        );
        return;
    };
    let _ = writeln!(
        text,
        "\nThe engine's own start, from its log ({engine}; seconds from launch until the line was read, and what the line states):\n"
    );
    text.push_str(
        "| engine milestone | read at, s: median (min–max, n) | stated, s |\n| --- | --- | --- |\n",
    );
    let mut named: Vec<(&String, &Distribution)> = run.engine_milestones.iter().collect();
    named.sort_by(|a, b| a.1.median.total_cmp(&b.1.median));
    for (name, distribution) in named {
        let _ = writeln!(
            text,
            "| {name} | {} | {} |",
            cell(Some(distribution), 2),
            cell(run.engine_stated_s.get(name), 2)
        );
    }
    match run.kv_cache_tokens.as_slice() {
        [] => {}
        [tokens] => {
            let _ = writeln!(
                text,
                "\nKV cache: {} tokens (the engine's statement).",
                vernier_cli::thousands(*tokens)
            );
        }
        several => {
            let _ = writeln!(
                text,
                "\nKV cache: the launches stated different sizes: {} tokens.",
                several
                    .iter()
                    .map(|t| vernier_cli::thousands(*t))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

/// Writes `run.json` and `report.md` into `out`.
pub fn write_ready_reports(
    run: &ReadyRun,
    out: &Path,
) -> Result<(PathBuf, PathBuf), LifecycleError> {
    Ok((
        write(out.join("run.json"), &json(run))?,
        write(out.join("report.md"), &ready_markdown(run))?,
    ))
}
