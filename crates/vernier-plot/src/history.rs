//! The history chart: one figure per run, in run order (evenly spaced, labelled as asked), its
//! 95% interval as a band, and flagged runs ringed with the reason beside them.

use crate::series::{Point, Series};
use crate::ticks::Format;
use crate::xy::{Head, Plot, Spread, Style, XAxis};

/// One figure across runs.
#[derive(Debug, Clone)]
pub struct HistoryChart {
    head: Head,
    figure: String,
    band: String,
    runs: Vec<(String, Point)>,
    y_format: Format,
    y_range: Option<(f64, f64)>,
}

impl HistoryChart {
    /// A chart titled `title`; `subtitle` names what is compared: model, server, dates.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Self {
            head: Head::new(title.into(), subtitle.into()),
            figure: "median".to_owned(),
            band: "95% interval".to_owned(),
            runs: Vec::new(),
            y_format: Format::Plain,
            y_range: None,
        }
    }

    /// The x axis's title.
    #[must_use]
    pub fn x_title(mut self, title: impl Into<String>) -> Self {
        self.head.x_title = title.into();
        self
    }

    /// The y axis's title.
    #[must_use]
    pub fn y_title(mut self, title: impl Into<String>) -> Self {
        self.head.y_title = title.into();
        self
    }

    /// The figure's name in the legend (`median` unless set) and the band's (`95% interval`).
    #[must_use]
    pub fn legend(mut self, figure: impl Into<String>, band: impl Into<String>) -> Self {
        self.figure = figure.into();
        self.band = band.into();
        self
    }

    /// Adds the next run: its label on the x axis (a date, a version), its value and its 95%
    /// interval.
    #[must_use]
    pub fn run(
        mut self,
        label: impl Into<String>,
        value: f64,
        interval: Option<(f64, f64)>,
    ) -> Self {
        let mut point = Point::at(self.runs.len() as f64, value);
        point.interval = interval;
        self.runs.push((label.into(), point));
        self
    }

    /// Flags the last run labelled `label` (a regression, a changed server), with `reason`
    /// written beside it.
    #[must_use]
    pub fn flag(mut self, label: &str, reason: impl Into<String>) -> Self {
        if let Some((_, point)) = self.runs.iter_mut().rev().find(|(l, _)| l == label) {
            point.flag = Some(reason.into());
        }
        self
    }

    /// How the y axis shows its values.
    #[must_use]
    pub fn y_format(mut self, format: Format) -> Self {
        self.y_format = format;
        self
    }

    /// The y axis covers `low..=high` (rounded out to ticks).
    #[must_use]
    pub fn y_range(mut self, low: f64, high: f64) -> Self {
        self.y_range = Some((low, high));
        self
    }

    /// The canvas's least width in pixels.
    #[must_use]
    pub fn width(mut self, width: f64) -> Self {
        self.head.width = width;
        self
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let labels: Vec<(f64, String)> = self
            .runs
            .iter()
            .map(|(label, point)| (point.x, label.clone()))
            .collect();
        let series = [Series::new(
            self.figure.clone(),
            self.runs.iter().map(|(_, point)| point.clone()).collect(),
        )];
        Plot {
            titles: self.head.titles(),
            x_title: &self.head.x_title,
            y_title: &self.head.y_title,
            x: XAxis::Categories {
                values: &[],
                labels: &labels,
                notes: &[],
            },
            y_format: self.y_format,
            y_range: self.y_range,
            series: &series,
            style: Style::Line,
            spread: Spread::Band,
            marks: &[],
            front: None,
            band_name: Some(&self.band),
            min_width: self.head.width,
            empty: "no run",
            legend_hint: None,
        }
        .render()
    }
}
