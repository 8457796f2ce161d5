//! The ladder: one instance set per level, run in turn, and the pass rate per level with its
//! interval, so models tied at one level can be told apart higher up.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vernier_plot::{Format, LineChart, Point, Series};
use vernier_stats::Interval;

use crate::error::HardsuiteError;
use crate::report::{round_count, thousands};
use crate::results::ResultsFile;

/// One level of a ladder run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LadderRung {
    /// Difficulty level.
    pub level: u8,
    /// Seed the level's instances were drawn from.
    pub seed: u64,
    /// The level's `results.json`, relative to the ladder's directory.
    pub results: PathBuf,
    /// Scored samples.
    pub n_scored: u64,
    /// Passed samples.
    pub n_pass: u64,
    /// The pass rate (task-clustered mean with several samples per task).
    pub pass_rate: Option<f64>,
    /// The 95% interval the reports show: Wilson with one sample per task, task-clustered
    /// with more.
    pub interval: Option<Interval>,
    /// Median completion tokens of the passing samples.
    pub median_tokens_solved: Option<f64>,
}

impl LadderRung {
    /// The rung of one level's results.
    pub fn from_results(level: u8, seed: u64, results: PathBuf, file: &ResultsFile) -> Self {
        let total = &file.main.total;
        Self {
            level,
            seed,
            results,
            n_scored: total.n_scored,
            n_pass: total.n_pass,
            pass_rate: total.pass_rate(),
            interval: total.interval(),
            median_tokens_solved: file.main.median_tokens_solved,
        }
    }
}

/// `ladder.json`: the model and one rung per level, lowest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Ladder {
    /// Model id.
    pub model: String,
    /// The in-process simulator answered.
    pub simulated: bool,
    /// The server (absent in ladders written before it was recorded).
    #[serde(default)]
    pub base_url: String,
    /// When the first level's run started, milliseconds since the epoch (0: not recorded).
    #[serde(default)]
    pub started_unix_ms: u64,
    /// One entry per level run.
    pub rungs: Vec<LadderRung>,
}

impl Ladder {
    /// Writes `ladder.json`, `ladder.md` and `ladder.svg` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), HardsuiteError> {
        let json = dir.join("ladder.json");
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|error| HardsuiteError::io("encode", &json, error.into()))?;
        text.push('\n');
        for (path, body) in [
            (json, text),
            (dir.join("ladder.md"), render_ladder_markdown(self)),
            (dir.join("ladder.svg"), render_ladder_svg(self)),
        ] {
            std::fs::write(&path, body)
                .map_err(|source| HardsuiteError::io("write", &path, source))?;
        }
        Ok(())
    }
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

fn interval_text(interval: Option<Interval>) -> String {
    interval.map_or_else(
        || "-".to_owned(),
        |i| format!("{:.1}–{:.1}%", i.low * 100.0, i.high * 100.0),
    )
}

fn tokens(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| thousands(round_count(v)))
}

/// The ladder as a terminal table.
pub fn render_ladder(ladder: &Ladder) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ladder of {}", ladder.model);
    let _ = writeln!(
        out,
        "{:<6} {:>6} {:>9} {:>8} {:>14} {:>15}",
        "level", "seed", "passed", "rate", "95% interval", "median tokens"
    );
    for rung in &ladder.rungs {
        let _ = writeln!(
            out,
            "{:<6} {:>6} {:>9} {:>8} {:>14} {:>15}",
            rung.level,
            rung.seed,
            format!("{}/{}", rung.n_pass, rung.n_scored),
            percent(rung.pass_rate),
            interval_text(rung.interval),
            tokens(rung.median_tokens_solved),
        );
    }
    let _ = writeln!(
        out,
        "Each level is its own instance set; median tokens are per solved task."
    );
    out
}

/// The ladder as Markdown.
pub fn render_ladder_markdown(ladder: &Ladder) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# hardsuite ladder: {}", ladder.model);
    let _ = writeln!(out);
    let _ = writeln!(out, "![ladder](ladder.svg)");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| level | seed | passed | rate | 95% interval | median tokens per solved task |"
    );
    let _ = writeln!(out, "| ---: | ---: | ---: | ---: | --- | ---: |");
    for rung in &ladder.rungs {
        let _ = writeln!(
            out,
            "| {} | {} | {}/{} | {} | {} | {} |",
            rung.level,
            rung.seed,
            rung.n_pass,
            rung.n_scored,
            percent(rung.pass_rate),
            interval_text(rung.interval),
            tokens(rung.median_tokens_solved),
        );
    }
    out
}

/// The ladder as an SVG: pass rate per level with its interval as an error bar, the rate
/// beside each point, and the median tokens per solved task under each level.
pub fn render_ladder_svg(ladder: &Ladder) -> String {
    let subtitle = crate::results::run_line(
        &ladder.model,
        &ladder.base_url,
        ladder.simulated,
        ladder.started_unix_ms,
    );
    let mut chart = LineChart::new("Pass rate per level, with its 95% interval", subtitle)
        .x_title("level, with the median tokens per solved task")
        .y_title("share of tasks passed")
        .y_format(Format::Percent)
        .y_range(0.0, 1.0)
        .x_values(ladder.rungs.iter().map(|rung| f64::from(rung.level)));
    let mut points = Vec::new();
    for rung in &ladder.rungs {
        let level = f64::from(rung.level);
        chart = chart
            .x_label(level, format!("level {}", rung.level))
            .x_note(
                level,
                format!("{} tok/solved", tokens(rung.median_tokens_solved)),
            );
        if let Some(rate) = rung.pass_rate {
            let mut point = Point::at(level, rate).labelled(percent(Some(rate)));
            if let Some(interval) = rung.interval {
                point = point.with_interval(interval.low, interval.high);
            }
            points.push(point);
        }
    }
    chart.series([Series::new("pass rate", points)]).to_svg()
}

/// Parses a `--levels` value: `1-5`, `2,4` or `3`.
pub fn parse_levels(text: &str) -> Result<Vec<u8>, HardsuiteError> {
    let invalid = || {
        HardsuiteError::invalid(
            "--levels",
            format!("{text:?} is not a level range; write e.g. 1-5 or 1,3,5 with levels 1 to 5"),
        )
    };
    let mut levels = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (low.trim(), high.trim()),
            None => (part, part),
        };
        let (low, high): (u8, u8) = (
            low.parse().map_err(|_| invalid())?,
            high.parse().map_err(|_| invalid())?,
        );
        if !(1..=5).contains(&low) || !(1..=5).contains(&high) || low > high {
            return Err(invalid());
        }
        levels.extend(low..=high);
    }
    levels.sort_unstable();
    levels.dedup();
    if levels.is_empty() {
        return Err(invalid());
    }
    Ok(levels)
}

/// Running a ladder: one run per level (the engine side).
#[cfg(feature = "engine")]
mod run {
    use std::path::{Path, PathBuf};

    use vernier_tasks::Draw;

    use super::{Ladder, LadderRung, render_ladder};
    use crate::config::{RunConfig, RunTarget};
    use crate::engine::{HardsuiteOutcome, run_suite};
    use crate::error::HardsuiteError;
    use crate::observer::RunObserver;

    /// What a finished ladder run gives back.
    #[derive(Debug, Clone)]
    #[non_exhaustive]
    pub struct LadderOutcome {
        /// The ladder, as written to `ladder.json`.
        pub ladder: Ladder,
        /// Each level's run, lowest level first.
        pub runs: Vec<HardsuiteOutcome>,
        /// The terminal table.
        pub table: String,
    }

    /// Runs the suite once per level in `levels` (each drawn at the level and the seed of
    /// `config.suite.draw`, 0 when absent), each in `OUT/level-L/` with its own journal and
    /// results, then writes `OUT/ladder.json`, `OUT/ladder.md` and `OUT/ladder.svg`.
    pub async fn run_ladder(
        config: &RunConfig,
        out_dir: &Path,
        levels: &[u8],
        command_line: Vec<String>,
        observer: &dyn RunObserver,
    ) -> Result<LadderOutcome, HardsuiteError> {
        if config.suite.suite.is_some() {
            return Err(HardsuiteError::invalid(
                "--levels",
                "a ladder draws the bundled suite at each level; drop --suite",
            ));
        }
        let seed = config.suite.draw.map_or(0, |draw| draw.seed);
        let mut runs = Vec::with_capacity(levels.len());
        let mut ladder_rungs = Vec::with_capacity(levels.len());
        for &level in levels {
            let draw = Draw::new(level, seed)?;
            let mut level_config = config.clone();
            level_config.suite.draw = Some(draw);
            let dir = out_dir.join(format!("level-{level}"));
            observer.note(&format!("ladder: {draw} into {}", dir.display()));
            let outcome = run_suite(
                &level_config,
                &RunTarget::new_run(&dir),
                command_line.clone(),
                observer,
            )
            .await?;
            ladder_rungs.push(LadderRung::from_results(
                level,
                seed,
                PathBuf::from(format!("level-{level}")).join("results.json"),
                &outcome.results,
            ));
            runs.push(outcome);
        }
        let ladder = Ladder {
            model: runs
                .first()
                .map(|run| run.results.model.clone())
                .unwrap_or_default(),
            simulated: runs.first().is_some_and(|run| run.results.simulated),
            base_url: runs
                .first()
                .map(|run| run.results.base_url.clone())
                .unwrap_or_default(),
            started_unix_ms: runs.first().map_or(0, |run| run.results.started_unix_ms),
            rungs: ladder_rungs,
        };
        ladder.write(out_dir)?;
        let table = render_ladder(&ladder);
        Ok(LadderOutcome {
            ladder,
            runs,
            table,
        })
    }
}

#[cfg(feature = "engine")]
pub use run::{LadderOutcome, run_ladder};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_ranges_parse() {
        assert_eq!(parse_levels("1-5").expect("range"), [1, 2, 3, 4, 5]);
        assert_eq!(parse_levels("4,2").expect("list"), [2, 4]);
        assert_eq!(parse_levels("3").expect("one"), [3]);
        for bad in ["0-3", "1-6", "5-1", "", "a"] {
            assert!(parse_levels(bad).is_err(), "{bad}");
        }
    }
}
