//! What the x-y charts draw: points with their intervals, labels, names and flags, series of
//! them, and marks over the plot.

/// One point, with its 95% intervals when there are some.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Point {
    /// Its x value: on a categorical axis, one of the values asked for.
    pub x: f64,
    /// Its y value.
    pub y: f64,
    /// The interval of `y` (low, high), drawn as an error bar or a band.
    pub interval: Option<(f64, f64)>,
    /// The interval of `x` (low, high), drawn as a horizontal error bar (scatter plots).
    pub x_interval: Option<(f64, f64)>,
    /// Text written beside the point, placed where it overprints nothing (left out where
    /// nothing is free).
    pub label: Option<String>,
    /// The point's name: a Pareto front names its points, and the tooltip shows it.
    pub name: Option<String>,
    /// Why the point is flagged: it is ringed and this text written beside it.
    pub flag: Option<String>,
}

impl Point {
    /// A point at (`x`, `y`) with nothing else.
    pub const fn at(x: f64, y: f64) -> Self {
        Self {
            x,
            y,
            interval: None,
            x_interval: None,
            label: None,
            name: None,
            flag: None,
        }
    }

    /// With the 95% interval of its y value.
    #[must_use]
    pub const fn with_interval(mut self, low: f64, high: f64) -> Self {
        self.interval = Some((low, high));
        self
    }

    /// With the 95% interval of its x value.
    #[must_use]
    pub const fn with_x_interval(mut self, low: f64, high: f64) -> Self {
        self.x_interval = Some((low, high));
        self
    }

    /// With a label written beside it.
    #[must_use]
    pub fn labelled(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// With a name.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Flagged, with the reason written beside it.
    #[must_use]
    pub fn flagged(mut self, reason: impl Into<String>) -> Self {
        self.flag = Some(reason.into());
        self
    }

    /// Its interval, when both ends are finite.
    pub(crate) fn finite_interval(&self) -> Option<(f64, f64)> {
        self.interval
            .filter(|(low, high)| low.is_finite() && high.is_finite())
    }

    pub(crate) fn finite_x_interval(&self) -> Option<(f64, f64)> {
        self.x_interval
            .filter(|(low, high)| low.is_finite() && high.is_finite())
    }
}

/// A named series of points, drawn in one colour of the palette.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// Its points, in drawing order.
    pub points: Vec<Point>,
}

impl Series {
    /// A series named `name`.
    pub fn new(name: impl Into<String>, points: Vec<Point>) -> Self {
        Self {
            name: name.into(),
            points,
        }
    }
}

/// A mark drawn over an x-y chart, labelled.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Mark {
    /// A dashed horizontal line at this y value: a target.
    Level(f64, String),
    /// A dashed vertical line at this x value: a marked load, a crossover.
    At(f64, String),
}
