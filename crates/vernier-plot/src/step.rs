//! The step chart: curves over a linear x axis (a budget), each level until the next point's
//! x, with marked values (crossovers) as labelled dashed lines.

use crate::series::{Mark, Series};
use crate::ticks::Format;
use crate::xy::{Head, Plot, Spread, Style, XAxis};

/// Step curves over a linear x axis with round ticks.
///
/// A curve runs level from each point to the next point's x, then straight to its value.
/// The first series is drawn solid, the others dashed, so that curves running together all
/// show.
#[derive(Debug, Clone)]
pub struct StepChart {
    head: Head,
    series: Vec<Series>,
    marks: Vec<Mark>,
    x_format: Format,
    x_range: Option<(f64, f64)>,
    y_format: Format,
    y_range: Option<(f64, f64)>,
}

impl StepChart {
    /// A chart titled `title`; `subtitle` names the runs: model, server and date.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Self {
            head: Head::new(title.into(), subtitle.into()),
            series: Vec::new(),
            marks: Vec::new(),
            x_format: Format::Plain,
            x_range: None,
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

    /// Adds curves, each in the next colour of the palette; points in x order.
    #[must_use]
    pub fn series(mut self, series: impl IntoIterator<Item = Series>) -> Self {
        self.series.extend(series);
        self
    }

    /// Adds marks: a crossover is a [`Mark::At`].
    #[must_use]
    pub fn marks(mut self, marks: impl IntoIterator<Item = Mark>) -> Self {
        self.marks.extend(marks);
        self
    }

    /// The x axis covers `low..=high` (rounded out to ticks).
    #[must_use]
    pub fn x_range(mut self, low: f64, high: f64) -> Self {
        self.x_range = Some((low, high));
        self
    }

    /// How the x axis shows its values.
    #[must_use]
    pub fn x_format(mut self, format: Format) -> Self {
        self.x_format = format;
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
        Plot {
            titles: self.head.titles(),
            x_title: &self.head.x_title,
            y_title: &self.head.y_title,
            x: XAxis::Linear {
                range: self.x_range,
                format: self.x_format,
            },
            y_format: self.y_format,
            y_range: self.y_range,
            series: &self.series,
            style: Style::Step,
            spread: Spread::Bars,
            marks: &self.marks,
            front: None,
            band_name: None,
            min_width: self.head.width,
            empty: "no data",
            legend_hint: None,
        }
        .render()
    }
}
