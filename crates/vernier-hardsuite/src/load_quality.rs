//! Quality under load: one suite run twice against one server, one request at a time and then
//! N in flight, compared item by item (task and sample) as one paired measurement. The drop
//! (alone − loaded) has its interval per suite and per category; a drop whose interval lies
//! above zero is a finding (batching, speculative decoding or a quantised cache changed the
//! answers), one whose interval holds zero is none.

use std::fmt::Write as _;

use serde::Serialize;
use vernier_stats::Interval;

use crate::compare::{CompareOptions, compare_with};
use crate::error::HardsuiteError;
use crate::results::ResultsFile;

/// What one row's interval says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LoadFinding {
    /// The interval of the drop lies above zero: answers are worse under load.
    Drops,
    /// The interval lies below zero: answers are better under load (a chance finding, or a
    /// server whose one-at-a-time path differs).
    Rises,
    /// The interval holds zero: no change told apart at this many items.
    NoChange,
    /// Too few paired items for an interval.
    TooFew,
}

impl LoadFinding {
    /// In words.
    pub fn words(self) -> &'static str {
        match self {
            Self::Drops => "quality drops under load",
            Self::Rises => "quality rises under load",
            Self::NoChange => "no change told apart",
            Self::TooFew => "too few paired items",
        }
    }
}

/// One row: the whole suite, or one category.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LoadRow {
    /// `total` or the category's name.
    pub name: String,
    /// Items (task, sample) scored in both passes.
    pub n_items: u64,
    /// Tasks with a paired item.
    pub n_tasks: usize,
    /// Pass rate one at a time (mean of per-task pass fractions).
    pub alone: f64,
    /// Pass rate at N in flight.
    pub loaded: f64,
    /// `alone − loaded`: positive is a drop.
    pub drop: f64,
    /// Its 95% interval: Newcombe's for paired proportions with one sample per task, the
    /// task-clustered one with several.
    pub interval: Option<Interval>,
    /// Which interval: `newcombe_paired` or `task_clustered`.
    pub method: &'static str,
    /// Items solved alone and lost under load, and the reverse.
    pub lost: u64,
    /// Items lost alone and solved under load.
    pub gained: u64,
    /// What the interval says.
    pub finding: LoadFinding,
}

/// The paired measurement of one suite alone and under load.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LoadQuality {
    /// Requests in flight in the loaded pass.
    pub in_flight: usize,
    /// Samples per task in each pass.
    pub samples: u32,
    /// The model.
    pub model: String,
    /// The whole suite first, then each category in report order.
    pub rows: Vec<LoadRow>,
}

fn row(
    name: &str,
    alone: &ResultsFile,
    loaded: &ResultsFile,
) -> Result<Option<LoadRow>, HardsuiteError> {
    let options = CompareOptions {
        resamples: 0,
        ..CompareOptions::default()
    };
    let comparison = match compare_with(alone, loaded, &options) {
        Ok(comparison) => comparison,
        Err(error @ HardsuiteError::DifferentInstances { .. }) => return Err(error),
        // No item scored in both passes (every task unsupported, say): no row.
        Err(_) => return Ok(None),
    };
    if comparison.n_items == 0 {
        return Ok(None);
    }
    let (interval, method) = match (&comparison.newcombe, &comparison.task_clustered) {
        (Some(newcombe), _) => (Some(*newcombe), "newcombe_paired"),
        (None, Some(clustered)) => (clustered.interval, "task_clustered"),
        (None, None) => (None, "none"),
    };
    let finding = match interval {
        None => LoadFinding::TooFew,
        Some(interval) if interval.low > 0.0 => LoadFinding::Drops,
        Some(interval) if interval.high < 0.0 => LoadFinding::Rises,
        Some(_) => LoadFinding::NoChange,
    };
    Ok(Some(LoadRow {
        name: name.to_owned(),
        n_items: comparison.n_items,
        n_tasks: comparison.n_tasks,
        alone: comparison.pass_rate_a,
        loaded: comparison.pass_rate_b,
        drop: comparison.difference,
        interval,
        method,
        lost: comparison.only_a,
        gained: comparison.only_b,
        finding,
    }))
}

/// Compares the pass `alone` (one request at a time) with the pass `loaded` (`in_flight` at
/// once), item by item: the whole suite, then each category. Runs of different suites or
/// draws are refused ([`HardsuiteError::DifferentInstances`]).
pub fn load_quality(
    alone: &ResultsFile,
    loaded: &ResultsFile,
    in_flight: usize,
) -> Result<LoadQuality, HardsuiteError> {
    let mut rows: Vec<LoadRow> = row("total", alone, loaded)?.into_iter().collect();
    let mut categories: Vec<vernier_tasks::Category> =
        alone.tasks.iter().map(|task| task.category).collect();
    categories.sort();
    categories.dedup();
    if categories.len() > 1 {
        for category in categories {
            let only = |file: &ResultsFile| {
                let mut file = file.clone();
                file.tasks.retain(|task| task.category == category);
                file
            };
            rows.extend(row(category.as_str(), &only(alone), &only(loaded))?);
        }
    }
    Ok(LoadQuality {
        in_flight,
        samples: alone.samples,
        model: alone.model.clone(),
        rows,
    })
}

impl LoadQuality {
    /// The whole suite's row.
    pub fn total(&self) -> Option<&LoadRow> {
        self.rows.iter().find(|row| row.name == "total")
    }

    /// The figures a study's part reports: the pass rate alone and under load, and the drop in
    /// points with its interval (lower is better).
    pub fn headlines(&self) -> Vec<vernier_run::Headline> {
        let Some(total) = self.total() else {
            return Vec::new();
        };
        let drop = vernier_run::Headline::new(
            format!("quality drop at {} in flight", self.in_flight),
            total.drop * 100.0,
            "points",
        )
        .lower_is_better();
        let drop = match total.interval {
            Some(interval) => drop.interval(interval.low * 100.0, interval.high * 100.0),
            None => drop,
        };
        vec![
            vernier_run::Headline::new("pass rate alone", total.alone * 100.0, "%"),
            vernier_run::Headline::new(
                format!("pass rate at {} in flight", self.in_flight),
                total.loaded * 100.0,
                "%",
            ),
            drop,
        ]
    }
}

fn points(value: f64) -> String {
    format!("{:+.1}", value * 100.0)
}

/// The comparison as Markdown: one row per suite and category.
pub fn render_load_quality_markdown(quality: &LoadQuality) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Quality under load\n\n{}: the same tasks one request at a time and {} in flight, {} \
         sample(s) per task, paired item by item. Drop = alone − loaded, in points, with its \
         95% interval.\n",
        quality.model, quality.in_flight, quality.samples
    );
    let _ = writeln!(
        out,
        "| | items | alone | at {} in flight | drop | 95% interval | lost / gained | finding |",
        quality.in_flight
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|---:|---|");
    for row in &quality.rows {
        let interval = row.interval.map_or_else(
            || "—".to_owned(),
            |i| format!("{} to {} ({})", points(i.low), points(i.high), row.method),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {:.1}% | {:.1}% | {} | {} | {} / {} | {} |",
            row.name,
            row.n_items,
            row.alone * 100.0,
            row.loaded * 100.0,
            points(row.drop),
            interval,
            row.lost,
            row.gained,
            row.finding.words()
        );
    }
    if let Some(total) = quality.total() {
        let _ = writeln!(
            out,
            "\nVerdict: {} ({} points, {} items).",
            total.finding.words(),
            points(total.drop),
            total.n_items
        );
    }
    out
}
