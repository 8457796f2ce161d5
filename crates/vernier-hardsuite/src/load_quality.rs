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
    /// What the loaded pass had in flight as each try was sent, as its journal records it
    /// (absent until [`LoadQuality::with_in_flight`] reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_in_flight: Option<InFlightSeen>,
}

/// The requests in flight as each try of a pass was sent, itself included: the load the
/// comparison rests on, measured rather than assumed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct InFlightSeen {
    /// Tries that reached the server.
    pub n_tries: usize,
    /// The median of their counts.
    pub median: f64,
    /// The most at once.
    pub max: u32,
    /// The share of tries sent with the full `in_flight` under way.
    pub share_at_full: f64,
}

impl InFlightSeen {
    /// The counts of the tries in `attempts` that recorded one, against `full`.
    pub fn of(attempts: &[crate::journal::AttemptRecord], full: usize) -> Option<Self> {
        let counts: Vec<u32> = attempts.iter().filter_map(|a| a.in_flight).collect();
        let max = counts.iter().copied().max()?;
        let mut sorted: Vec<f64> = counts.iter().map(|&c| f64::from(c)).collect();
        sorted.sort_by(f64::total_cmp);
        let full = u32::try_from(full).unwrap_or(u32::MAX);
        let at_full = counts.iter().filter(|&&count| count >= full).count();
        Some(Self {
            n_tries: counts.len(),
            median: vernier_stats::median(&sorted).unwrap_or(0.0),
            max,
            share_at_full: at_full as f64 / counts.len() as f64,
        })
    }
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
        loaded_in_flight: None,
    })
}

impl LoadQuality {
    /// The same comparison with the loaded pass's in-flight counts read from its journal.
    pub fn with_in_flight(
        mut self,
        loaded_journal: &std::path::Path,
    ) -> Result<Self, HardsuiteError> {
        let journal = crate::journal::read_hardsuite_journal(loaded_journal)?;
        self.loaded_in_flight = InFlightSeen::of(&journal.attempts, self.in_flight);
        Ok(self)
    }

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
    if let Some(seen) = &quality.loaded_in_flight {
        let _ = writeln!(
            out,
            "\nUnder load, as each of its {} tries was sent: a median of {} requests in flight \
             (at most {}), {:.0}% of them with all {} under way.",
            seen.n_tries,
            seen.median,
            seen.max,
            seen.share_at_full * 100.0,
            quality.in_flight
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
