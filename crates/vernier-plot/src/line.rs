//! The line chart: series over the x values asked for (evenly spaced, labelled as asked),
//! 95% intervals as error bars, series shifted a little sideways so none hides another, and
//! marks for target levels and marked values.

use crate::series::{Mark, Series};
use crate::ticks::Format;
use crate::xy::{Head, Plot, Spread, Style, XAxis};

/// A line chart over a categorical x axis.
///
/// Every distinct x of every point is one evenly spaced position, labelled with its value
/// (or the text given with [`LineChart::x_label`]); labels are thinned where they would meet.
#[derive(Debug, Clone)]
pub struct LineChart {
    head: Head,
    series: Vec<Series>,
    marks: Vec<Mark>,
    values: Vec<f64>,
    labels: Vec<(f64, String)>,
    notes: Vec<(f64, String)>,
    y_format: Format,
    y_range: Option<(f64, f64)>,
    empty: String,
    legend_hint: Option<String>,
}

impl LineChart {
    /// A chart titled `title`; `subtitle` names the run: model, server and date.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Self {
            head: Head::new(title.into(), subtitle.into()),
            series: Vec::new(),
            marks: Vec::new(),
            values: Vec::new(),
            labels: Vec::new(),
            notes: Vec::new(),
            y_format: Format::Plain,
            y_range: None,
            empty: "no data".to_owned(),
            legend_hint: None,
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

    /// Adds series, each in the next colour of the palette.
    #[must_use]
    pub fn series(mut self, series: impl IntoIterator<Item = Series>) -> Self {
        self.series.extend(series);
        self
    }

    /// Adds marks: target levels, marked x values (each x is then one of the axis's values).
    #[must_use]
    pub fn marks(mut self, marks: impl IntoIterator<Item = Mark>) -> Self {
        self.marks.extend(marks);
        self
    }

    /// Adds x values to the axis whether or not a point is at them (a level that has no
    /// figure still has its place).
    #[must_use]
    pub fn x_values(mut self, values: impl IntoIterator<Item = f64>) -> Self {
        self.values.extend(values);
        self
    }

    /// Labels the x value `x` with `label` instead of its number.
    #[must_use]
    pub fn x_label(mut self, x: f64, label: impl Into<String>) -> Self {
        self.labels.push((x, label.into()));
        self
    }

    /// Writes `note` in grey under the label of `x` (thinned with the labels).
    #[must_use]
    pub fn x_note(mut self, x: f64, note: impl Into<String>) -> Self {
        self.notes.push((x, note.into()));
        self
    }

    /// How the y axis shows its values.
    #[must_use]
    pub fn y_format(mut self, format: Format) -> Self {
        self.y_format = format;
        self
    }

    /// The y axis covers `low..=high` (rounded out to ticks) whatever the data.
    #[must_use]
    pub fn y_range(mut self, low: f64, high: f64) -> Self {
        self.y_range = Some((low, high));
        self
    }

    /// The canvas's least width in pixels (860 unless set; wider where the title or
    /// subtitle needs it).
    #[must_use]
    pub fn width(mut self, width: f64) -> Self {
        self.head.width = width;
        self
    }

    /// What the plot says when no series has a point.
    #[must_use]
    pub fn empty(mut self, text: impl Into<String>) -> Self {
        self.empty = text.into();
        self
    }

    /// Where the series the legend has no room for can be read (after "and N more").
    #[must_use]
    pub fn legend_hint(mut self, hint: impl Into<String>) -> Self {
        self.legend_hint = Some(hint.into());
        self
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> String {
        Plot {
            titles: self.head.titles(),
            x_title: &self.head.x_title,
            y_title: &self.head.y_title,
            x: XAxis::Categories {
                values: &self.values,
                labels: &self.labels,
                notes: &self.notes,
            },
            y_format: self.y_format,
            y_range: self.y_range,
            series: &self.series,
            style: Style::Line,
            spread: Spread::Bars,
            marks: &self.marks,
            front: None,
            band_name: None,
            min_width: self.head.width,
            empty: &self.empty,
            legend_hint: self.legend_hint.as_deref(),
        }
        .render()
    }
}
