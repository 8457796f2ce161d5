//! The scatter plot: points on two linear axes with their x and y intervals, labels placed
//! where they overprint nothing, and a Pareto front drawn as a step line through named points
//! (the tune and board charts).

use crate::series::{Point, Series};
use crate::ticks::Format;
use crate::xy::{Front, Head, Plot, Spread, Style, XAxis};

/// Which end of an axis is the better one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Better {
    /// Less is better: latency, cost.
    Lower,
    /// More is better: throughput, pass rate.
    Higher,
}

impl Better {
    fn at_least_as_good(self, a: f64, b: f64) -> bool {
        match self {
            Self::Lower => a <= b,
            Self::Higher => a >= b,
        }
    }
}

/// The indices of the points (x, y) that no other point beats on both axes at once (as good
/// on both and better on one), in the order given. Points with a value that is not finite
/// are never on the front.
pub fn pareto_front(points: &[(f64, f64)], x: Better, y: Better) -> Vec<usize> {
    let finite = |(a, b): (f64, f64)| a.is_finite() && b.is_finite();
    (0..points.len())
        .filter(|&i| {
            let p = points[i];
            finite(p)
                && !points.iter().enumerate().any(|(j, &q)| {
                    j != i
                        && finite(q)
                        && x.at_least_as_good(q.0, p.0)
                        && y.at_least_as_good(q.1, p.1)
                        && (q.0 - p.0).abs() + (q.1 - p.1).abs() > 0.0
                })
        })
        .collect()
}

/// A scatter plot with intervals on both axes and an optional Pareto front.
#[derive(Debug, Clone)]
pub struct ScatterChart {
    head: Head,
    series: Vec<Series>,
    x_format: Format,
    y_format: Format,
    x_range: Option<(f64, f64)>,
    y_range: Option<(f64, f64)>,
    front: Option<(String, Vec<String>, Better, Better)>,
}

impl ScatterChart {
    /// A chart titled `title`; `subtitle` names the runs: model, server and date.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Self {
            head: Head::new(title.into(), subtitle.into()),
            series: Vec::new(),
            x_format: Format::Plain,
            y_format: Format::Plain,
            x_range: None,
            y_range: None,
            front: None,
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

    /// Adds series of points, each in the next colour of the palette.
    #[must_use]
    pub fn series(mut self, series: impl IntoIterator<Item = Series>) -> Self {
        self.series.extend(series);
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

    /// The x axis covers `low..=high` (rounded out to ticks).
    #[must_use]
    pub fn x_range(mut self, low: f64, high: f64) -> Self {
        self.x_range = Some((low, high));
        self
    }

    /// The y axis covers `low..=high` (rounded out to ticks).
    #[must_use]
    pub fn y_range(mut self, low: f64, high: f64) -> Self {
        self.y_range = Some((low, high));
        self
    }

    /// Highlights the points named `names` (by [`Point::named`]) as a Pareto front called
    /// `name` in the legend: a step line along the edge of what they dominate, given which
    /// end of each axis is better. A front point without a label is labelled with its name.
    #[must_use]
    pub fn front(
        mut self,
        name: impl Into<String>,
        names: impl IntoIterator<Item = impl Into<String>>,
        x: Better,
        y: Better,
    ) -> Self {
        self.front = Some((
            name.into(),
            names.into_iter().map(Into::into).collect(),
            x,
            y,
        ));
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
        let on_front = |p: &Point| {
            self.front.as_ref().is_some_and(|(_, names, _, _)| {
                p.name.as_ref().is_some_and(|name| names.contains(name))
            })
        };
        let series: Vec<Series> = self
            .series
            .iter()
            .map(|s| {
                let points = s
                    .points
                    .iter()
                    .map(|p| match (&p.label, &p.name) {
                        (None, Some(name)) if on_front(p) => p.clone().labelled(name.clone()),
                        _ => p.clone(),
                    })
                    .collect();
                Series::new(s.name.clone(), points)
            })
            .collect();
        let front = self.front.as_ref().map(|(name, _, x, y)| {
            let mut points: Vec<(f64, f64)> = series
                .iter()
                .flat_map(|s| s.points.iter())
                .filter(|p| on_front(p) && p.x.is_finite() && p.y.is_finite())
                .map(|p| (p.x, p.y))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            Front {
                name,
                points,
                lower_x_better: *x == Better::Lower,
                higher_y_better: *y == Better::Higher,
            }
        });
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
            series: &series,
            style: Style::Points,
            spread: Spread::Bars,
            marks: &[],
            front,
            band_name: None,
            min_width: self.head.width,
            empty: "no data",
            legend_hint: None,
        }
        .render()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_holds_the_points_no_other_beats_on_both_axes() {
        // (latency, throughput): lower latency and higher throughput are better.
        let points = [
            (10.0, 100.0),
            (20.0, 150.0),
            (15.0, 90.0),
            (30.0, 150.0),
            (5.0, 40.0),
        ];
        assert_eq!(
            pareto_front(&points, Better::Lower, Better::Higher),
            [0, 1, 4]
        );
        // Both higher better.
        assert_eq!(pareto_front(&points, Better::Higher, Better::Higher), [3]);
        // A tie is on the front twice; NaN never.
        let ties = [(1.0, 1.0), (1.0, 1.0), (f64::NAN, 5.0)];
        assert_eq!(pareto_front(&ties, Better::Lower, Better::Higher), [0, 1]);
    }
}
