//! One battery of measurements per server, and the head-to-head of two.
//!
//! A battery runs, against one server, the sweep and the suites into one folder with one
//! `battery.json` and one verdict (feature `engine`). The reading side, with no runtime or HTTP,
//! reads two batteries (or two sweep or suite runs) and writes their head-to-head: every
//! dimension side by side with its ratio or difference and 95% interval, what a solved task
//! costs, pass rate against budget with its crossovers, and the settings that differ.
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod budget;
mod chart;
mod config;
#[cfg(feature = "engine")]
mod engine;
mod error;
mod file;
#[cfg(feature = "engine")]
mod flags_study;
mod html;
mod markdown;
#[cfg(feature = "engine")]
mod parts;
#[cfg(feature = "engine")]
mod plumbing;
mod reports;
mod side;
mod speed;
mod study;
#[cfg(feature = "engine")]
mod study_args;
mod study_report;
#[cfg(feature = "engine")]
mod study_run;
pub mod tune;
mod versus;

pub use budget::{
    Crossover, Curve, CurvePoint, Leader, SolveCost, crossovers, seconds_curve, solve_cost,
    token_curve,
};
pub use chart::{curve_chart, ratio_chart};
pub use config::{BatteryConfig, Part, Preset};
#[cfg(feature = "engine")]
pub use engine::{BatteryOutcome, BatteryStart, run_battery};
pub use error::BatteryError;
pub use file::{
    BATTERY_FILE, BATTERY_SCHEMA_OLDEST, BATTERY_SCHEMA_VERSION, BatteryFile, PartEntry,
    PartStatus, TotalRow, battery_path, totals,
};
#[cfg(feature = "engine")]
pub use flags_study::study_of_flags;
pub use html::versus_html;
pub use markdown::versus_markdown;
#[cfg(feature = "engine")]
pub use plumbing::{BatteryObserver, BatteryTarget, QuietBattery};
pub use reports::{VersusFiles, write_versus};
pub use side::{ReadySide, RequestFigures, Side, SwapSide, SweepSide};
pub use speed::{
    CellRatio, FLAT_WITHIN, Metric, PrefillTrend, RATIO_RESAMPLES, RATIO_SEED, cell_ratios,
    prefill_trends, ratio_of_medians,
};
pub use study::{
    PART_KEYS, Place, SUITE_KINDS, Study, StudyFileError, StudyPart, StudyPlaces, StudyTarget,
    TARGET_KEYS, parse_study, read_study,
};
#[cfg(feature = "engine")]
pub use study_args::{Kinds, OptionError, names_key, part_words};
pub use study_report::{
    BATTERY_REPORT, duration, headlines_line, status_word, study_report, write_study_report,
};
#[cfg(feature = "engine")]
pub use study_run::{
    StudyProblem, StudyRunner, StudyStart, check_study, plan_study, run_study, study_resume_command,
};
pub use versus::{
    Batching, GlanceRow, QualityRow, SettingDifference, SideSummary, SuiteVersus,
    VERSUS_SCHEMA_VERSION, Versus, recipe_differences, study_differences, versus,
};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
