//! The runs of one target over time: each headline figure as a line, and the newest run
//! flagged where a figure falls outside what the earlier runs' spread allows.
//!
//! The test, stated: for each figure with at least [`MIN_EARLIER`] earlier runs, the
//! prediction interval of one new run from the earlier values (mean ± t · s · √(1 + 1/n)) at
//! confidence 1 − α/k, α = 0.05 and k the figures tested (Bonferroni, so that a run with no
//! change is flagged on no figure with at least 95% probability). The newest run is flagged
//! on a figure when its value lies outside that interval and its own 95% interval, where it
//! states one, does not reach it either.

use serde::Serialize;

use crate::error::StoreError;
use crate::record::RunRecord;

/// Earlier runs a figure needs before the newest can be flagged on it.
pub const MIN_EARLIER: usize = 3;

/// The family-wise error rate of one history's flags.
pub const ALPHA: f64 = 0.05;

/// One run on a figure's line.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct HistoryPoint {
    /// The run.
    pub run: String,
    /// Its start, `YYYY-MM-DD HH:MM UTC`.
    pub started: String,
    /// Its value.
    pub value: f64,
    /// Its 95% interval, where stated.
    pub interval: Option<(f64, f64)>,
}

/// One figure over the runs.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct FigureHistory {
    /// The figure.
    pub name: String,
    /// Its unit.
    pub unit: String,
    /// Whether more is better.
    pub higher_is_better: bool,
    /// Each run that has it, oldest first.
    pub points: Vec<HistoryPoint>,
    /// Where the newest run should fall, from the earlier ones (absent with too few).
    pub expected: Option<(f64, f64)>,
    /// Why the newest run is flagged on it (`slower` or `faster`, by how much), if it is.
    pub flag: Option<String>,
}

/// The history of one target.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct History {
    /// The model.
    pub model: String,
    /// The server's kind.
    pub server_kind: String,
    /// The runs, oldest first: id and start.
    pub runs: Vec<(String, String)>,
    /// Each figure.
    pub figures: Vec<FigureHistory>,
    /// The confidence of each expected interval (1 − α/k).
    pub confidence: f64,
    /// What changed between the newest run and the one before it: server version, weights,
    /// GPU driver, machine and each launch setting, `name: before → now`.
    pub changed: Vec<String>,
}

impl History {
    /// The figures the newest run is flagged on.
    pub fn flagged(&self) -> impl Iterator<Item = &FigureHistory> {
        self.figures.iter().filter(|figure| figure.flag.is_some())
    }
}

/// The history of `runs` (one target's, any order).
pub fn history(runs: &[RunRecord]) -> Result<History, StoreError> {
    let mut runs: Vec<&RunRecord> = runs.iter().collect();
    runs.sort_by_key(|run| (run.started_unix_ms, run.id.clone()));
    let mut figures: Vec<FigureHistory> = Vec::new();
    for run in &runs {
        for figure in &run.figures {
            let point = HistoryPoint {
                run: run.id.clone(),
                started: run.started(),
                value: figure.value,
                interval: figure.interval,
            };
            match figures.iter_mut().find(|known| known.name == figure.name) {
                Some(known) => known.points.push(point),
                None => figures.push(FigureHistory {
                    name: figure.name.clone(),
                    unit: figure.unit.clone(),
                    higher_is_better: figure.higher_is_better,
                    points: vec![point],
                    expected: None,
                    flag: None,
                }),
            }
        }
    }
    let newest = runs.last().map(|run| run.id.clone());
    let testable = |figure: &FigureHistory| {
        figure.points.len() > MIN_EARLIER
            && figure.points.last().map(|point| &point.run) == newest.as_ref()
    };
    let k = figures
        .iter()
        .filter(|figure| testable(figure))
        .count()
        .max(1);
    let confidence = 1.0 - ALPHA / k as f64;
    for figure in &mut figures {
        if !testable(figure) {
            continue;
        }
        let Some((last, earlier)) = figure.points.split_last() else {
            continue;
        };
        let values: Vec<f64> = earlier.iter().map(|point| point.value).collect();
        let expected = vernier_stats::prediction_interval(&values, confidence)?;
        figure.expected = Some((expected.low, expected.high));
        let (own_low, own_high) = last.interval.unwrap_or((last.value, last.value));
        let below = last.value < expected.low && own_high < expected.low;
        let above = last.value > expected.high && own_low > expected.high;
        if below || above {
            let mean = vernier_stats::mean(&values)?;
            let change = if mean.abs() > 0.0 {
                (last.value - mean) / mean.abs() * 100.0
            } else {
                0.0
            };
            let worse = below == figure.higher_is_better;
            figure.flag = Some(format!(
                "{} {} than the earlier runs allow ({:+.1}% from their mean {}; expected {}–{})",
                vernier_cli::figure(last.value),
                if worse { "worse" } else { "better" },
                change,
                vernier_cli::figure(mean),
                vernier_cli::figure(expected.low),
                vernier_cli::figure(expected.high),
            ));
        }
    }
    let changed = match runs.as_slice() {
        [.., before, now] => changes(before, now),
        _ => Vec::new(),
    };
    Ok(History {
        model: runs.last().map(|run| run.model.clone()).unwrap_or_default(),
        server_kind: runs
            .last()
            .map(|run| run.server_kind.clone())
            .unwrap_or_default(),
        runs: runs
            .iter()
            .map(|run| (run.id.clone(), run.started()))
            .collect(),
        figures,
        confidence,
        changed,
    })
}

/// What differs between two runs' identity and settings, `name: before → now`.
pub fn changes(before: &RunRecord, now: &RunRecord) -> Vec<String> {
    let mut changed = Vec::new();
    for (name, a, b) in [
        (
            "server version",
            &before.server_version,
            &now.server_version,
        ),
        ("weights", &before.weights, &now.weights),
        ("GPU", &before.gpu, &now.gpu),
        ("GPU driver", &before.driver, &now.driver),
        ("machine", &before.machine, &now.machine),
    ] {
        if a != b {
            changed.push(format!("{name}: {a} → {b}"));
        }
    }
    let mut names: Vec<&String> = before.settings.iter().map(|(name, _)| name).collect();
    for (name, _) in &now.settings {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    for name in names {
        let a = before.setting(name).unwrap_or("—");
        let b = now.setting(name).unwrap_or("—");
        if a != b {
            changed.push(format!("{name}: {a} → {b}"));
        }
    }
    changed
}
