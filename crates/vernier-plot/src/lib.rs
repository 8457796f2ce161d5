//! Vernier's one plotter: every chart of the project, written as SVG text that a browser lays
//! out (no font shipped, nothing drawn at run time), with the house rules kept here once.
//!
//! - The x axis is at the values asked for: categorical, evenly spaced, labelled as asked
//!   ([`LineChart`], [`HistoryChart`]), or linear with round ticks where a chart needs one
//!   ([`StepChart`], [`ScatterChart`]).
//! - Ticks are round: a step of 1, 2, 2.5 or 5 times a power of ten, one number of decimals per
//!   axis ([`Ticks`]).
//! - 95% intervals are error bars, or a band along a history.
//! - The legend is beside the plot, never over it, with "and N more" when it does not fit.
//! - No label overprints another: x labels are thinned, labels inside the plot are placed
//!   where they are clear of points and other labels, and long text is cut with an ellipsis at
//!   a width measured in `DejaVu Sans` ([`text_width`], [`fit`]).
//! - Every chart has a subtitle naming the run (model, server, date): each constructor
//!   requires one.
//! - One palette ([`PALETTE`], Tableau 10) and one [`escape`].
//! - The same input gives the same bytes: every number is written with fixed decimals.
//!
//! Chart kinds: [`LineChart`] (series over categories with error bars and marks),
//! [`StepChart`] (curves over a linear x with marked crossovers), [`RatioChart`] (values with
//! intervals around a reference line), [`HeatMap`] (rows by columns with a colour scale),
//! [`ScatterChart`] (x and y intervals, labels, a Pareto front) and [`HistoryChart`] (one
//! figure per run with a band and flags). With the feature `check`, the module `check` renders a chart
//! as a reader sees it for tests.
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod axis;
#[cfg(feature = "check")]
pub mod check;
mod frame;
mod heat_map;
mod history;
mod line;
mod palette;
mod placer;
mod ratio;
mod scatter;
mod series;
mod step;
mod svg;
mod text;
mod ticks;
mod xy;

pub use heat_map::{HeatCell, HeatMap};
pub use history::HistoryChart;
pub use line::LineChart;
pub use palette::{PALETTE, colour};
pub use ratio::{RatioChart, RatioRow, Scale};
pub use scatter::{Better, ScatterChart, pareto_front};
pub use series::{Mark, Point, Series};
pub use step::StepChart;
pub use svg::escape;
pub use text::{fit, text_width};
pub use ticks::{Format, Ticks, number, value_label};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
