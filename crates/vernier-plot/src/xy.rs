//! The x-y plot that line, step, scatter and history charts are: the frame, the y axis, a
//! categorical or linear x axis, then bands, marks, lines or steps, the Pareto front, error
//! bars, points, flags, the labels placed where they overprint nothing, and the legend.

use crate::axis::{Categories, Linear, category_label};
use crate::frame::{
    Entry, LEGEND_GAP, LEGEND_WIDTH, MARGIN, Swatch, TOP, Titles, axis_titles, legend,
};
use crate::palette::{AT, FRONT, LEVEL, colour};
use crate::placer::{Placer, Spot, around_point};
use crate::series::{Mark, Point, Series};
use crate::svg::{AXIS, Svg, TextStyle, escape, points_attribute};
use crate::text::{Anchor, Rect, SMALL_SIZE, TEXT_SIZE, fit};
use crate::ticks::{Format, Ticks, value_label};

/// The canvas an x-y chart starts from (wider when its title or subtitle needs it).
pub(crate) const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 460.0;
/// The plot's left edge at least; further right when the y labels are wide.
const MIN_LEFT: f64 = 76.0;
/// Under the plot: the x labels, then the x title.
const UNDER: f64 = 64.0;
/// Added under the plot when x labels have notes.
const NOTES: f64 = 16.0;
/// A point's radius, and a flag's ring around it.
const RADIUS: f64 = 3.5;
const RING: f64 = 7.5;
/// The widest mark label.
const MARK_LABEL: f64 = 240.0;

/// The x axis: the values asked for, or a linear scale.
#[derive(Debug, Clone, Copy)]
pub(crate) enum XAxis<'a> {
    /// Every distinct x value (of the points, the marks and `values`) evenly spaced,
    /// labelled as asked (`labels`, else the value), with an optional grey note under a label.
    Categories {
        values: &'a [f64],
        labels: &'a [(f64, String)],
        notes: &'a [(f64, String)],
    },
    /// A linear scale with round ticks, over `range` or the data.
    Linear {
        range: Option<(f64, f64)>,
        format: Format,
    },
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Points joined by straight lines.
    Line,
    /// A step curve: from each point level to the next x, then up or down to its value.
    Step,
    /// Points alone.
    Points,
}

/// How y intervals are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spread {
    /// An error bar at each point.
    Bars,
    /// A pale band through the series' intervals.
    Band,
}

/// A Pareto front: its points (data units) in x order, drawn as a step line along the edge of
/// what they dominate.
#[derive(Debug, Clone)]
pub(crate) struct Front<'a> {
    pub(crate) name: &'a str,
    pub(crate) points: Vec<(f64, f64)>,
    /// Whether a lower x is the better one (latency); else a higher (throughput).
    pub(crate) lower_x_better: bool,
    /// Whether a higher y is the better one.
    pub(crate) higher_y_better: bool,
}

impl Front<'_> {
    /// The step line's vertices: between two neighbours, the corner at the worse x and the
    /// worse y of the two.
    fn vertices(&self) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        for (index, &(x, y)) in self.points.iter().enumerate() {
            if let Some(&(px, py)) = index.checked_sub(1).and_then(|i| self.points.get(i)) {
                let corner_x = if self.lower_x_better { x } else { px };
                let corner_y = if self.higher_y_better {
                    y.min(py)
                } else {
                    y.max(py)
                };
                out.push((corner_x, corner_y));
            }
            out.push((x, y));
        }
        out
    }
}

/// What every x-y chart says about itself, and its least width.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) title: String,
    pub(crate) subtitle: String,
    pub(crate) x_title: String,
    pub(crate) y_title: String,
    pub(crate) width: f64,
}

impl Head {
    pub(crate) fn new(title: String, subtitle: String) -> Self {
        Self {
            title,
            subtitle,
            x_title: String::new(),
            y_title: String::new(),
            width: WIDTH,
        }
    }

    pub(crate) fn titles(&self) -> Titles<'_> {
        Titles {
            title: &self.title,
            subtitle: &self.subtitle,
        }
    }
}

/// One x-y chart, ready to draw.
#[derive(Debug, Clone)]
pub(crate) struct Plot<'a> {
    pub(crate) titles: Titles<'a>,
    pub(crate) x_title: &'a str,
    pub(crate) y_title: &'a str,
    pub(crate) x: XAxis<'a>,
    pub(crate) y_format: Format,
    pub(crate) y_range: Option<(f64, f64)>,
    pub(crate) series: &'a [Series],
    pub(crate) style: Style,
    pub(crate) spread: Spread,
    pub(crate) marks: &'a [Mark],
    pub(crate) front: Option<Front<'a>>,
    /// The legend's name for the band, when intervals are drawn as one.
    pub(crate) band_name: Option<&'a str>,
    pub(crate) min_width: f64,
    /// What the plot says when there is no point.
    pub(crate) empty: &'a str,
    /// Where the legend's left-out entries can be read.
    pub(crate) legend_hint: Option<&'a str>,
}

/// The x axis as placed.
enum XMap {
    Categories(Categories),
    Linear(Linear),
}

impl XMap {
    fn position(&self, x: f64) -> f64 {
        match self {
            Self::Categories(axis) => axis.position(x),
            Self::Linear(axis) => axis.position(x),
        }
    }
}

/// The plot's edges.
#[derive(Debug, Clone, Copy)]
struct Area {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

impl Plot<'_> {
    fn points(&self) -> impl Iterator<Item = &Point> {
        self.series.iter().flat_map(|s| s.points.iter())
    }

    fn label_of(&self, x: f64) -> String {
        match self.x {
            XAxis::Categories { labels, .. } => labels
                .iter()
                .find(|(value, _)| (value - x).abs() < 1e-9)
                .map_or_else(|| category_label(x), |(_, label)| label.clone()),
            XAxis::Linear { .. } => value_label(x),
        }
    }

    fn note_of(&self, x: f64) -> Option<String> {
        match self.x {
            XAxis::Categories { notes, .. } => notes
                .iter()
                .find(|(value, _)| (value - x).abs() < 1e-9)
                .map(|(_, note)| note.clone()),
            XAxis::Linear { .. } => None,
        }
    }

    fn marked_x(&self) -> impl Iterator<Item = f64> {
        self.marks.iter().filter_map(|m| match m {
            Mark::At(x, _) => Some(*x),
            Mark::Level(..) => None,
        })
    }

    /// Round ticks over every y value, interval and level.
    fn y_ticks(&self) -> Ticks {
        let mut ys: Vec<f64> = self
            .points()
            .flat_map(|p| {
                std::iter::once(p.y).chain(
                    p.finite_interval()
                        .into_iter()
                        .flat_map(|(low, high)| [low, high]),
                )
            })
            .collect();
        ys.extend(self.marks.iter().filter_map(|m| match m {
            Mark::Level(y, _) => Some(*y),
            Mark::At(..) => None,
        }));
        Linear::ticks_over(&ys, self.y_format, self.y_range)
    }

    /// The SVG document.
    pub(crate) fn render(&self) -> String {
        let y_ticks = self.y_ticks();
        let left = MIN_LEFT
            .max(36.0 + Linear::widest_label(y_ticks, self.y_format))
            .ceil();
        let notes = matches!(self.x, XAxis::Categories { notes, .. } if !notes.is_empty());
        let extra = if notes { NOTES } else { 0.0 };
        let width = self.titles.width(self.min_width);
        let height = HEIGHT + extra;
        let legend_x = width - MARGIN - LEGEND_WIDTH;
        let area = Area {
            left,
            top: TOP,
            right: legend_x - LEGEND_GAP,
            bottom: height - UNDER - extra,
        };
        let mut svg = Svg::open(width, height, self.titles.title);
        svg.plot_area(area.left, area.top, area.right, area.bottom);
        self.titles.draw(&mut svg, width);
        axis_titles(
            &mut svg,
            (area.left, area.top, area.right, area.bottom),
            self.x_title,
            self.y_title,
            area.bottom + 44.0 + extra,
        );
        let y_axis = Linear {
            ticks: y_ticks,
            format: self.y_format,
            start: area.bottom,
            end: area.top,
        };
        y_axis.draw_y(&mut svg, area.left, area.right);
        svg.line(
            (area.left, area.bottom),
            (area.right, area.bottom),
            AXIS,
            "",
        );
        svg.line((area.left, area.top), (area.left, area.bottom), AXIS, "");
        let x_map = self.x_axis(area);
        if self.points().next().is_none() {
            svg.text(
                f64::midpoint(area.left, area.right),
                f64::midpoint(area.top, area.bottom),
                self.empty,
                TextStyle::new(Anchor::Middle),
            );
            return svg.finish();
        }
        match &x_map {
            XMap::Categories(axis) => {
                axis.draw(&mut svg, area.bottom, &|x| self.label_of(x), &|x| {
                    self.note_of(x)
                });
            }
            XMap::Linear(axis) => axis.draw_x(&mut svg, area.bottom),
        }
        self.data(&mut svg, area, &x_map, &y_axis);
        legend(
            &mut svg,
            &self.legend_entries(),
            (legend_x, area.top),
            area.bottom,
            width - MARGIN,
            self.legend_hint,
        );
        svg.finish()
    }

    /// Bands, marks, lines, the front, error bars, points and labels, in that order.
    fn data(&self, svg: &mut Svg, area: Area, x_map: &XMap, y_axis: &Linear) {
        let n = self.series.len() as f64;
        let dodge = match (x_map, self.style) {
            (XMap::Categories(axis), Style::Line) if n > 1.0 => (axis.spacing() * 0.5 / n).min(9.0),
            _ => 0.0,
        };
        let at = |index: usize, p: &Point| {
            (
                x_map.position(p.x) + (index as f64 - (n - 1.0) / 2.0) * dodge,
                y_axis.position(p.y),
            )
        };
        let y_of = |y: f64| y_axis.position(y);
        self.bands(svg, &at, &y_of);
        self.mark_lines(svg, area, x_map, &y_of);
        self.lines(svg, &at);
        if let Some(front) = &self.front {
            let vertices: Vec<(f64, f64)> = front
                .vertices()
                .into_iter()
                .map(|(x, y)| (x_map.position(x), y_of(y)))
                .collect();
            svg.raw(format_args!(
                r#"<polyline class="front" fill="none" stroke="{FRONT}" stroke-width="3" stroke-opacity="0.55" points="{}"/>"#,
                points_attribute(&vertices)
            ));
        }
        self.error_bars(svg, &at, &|x| x_map.position(x), &y_of);
        let mut placer = Placer::new(Rect {
            left: area.left + 1.0,
            top: area.top,
            right: area.right,
            bottom: area.bottom - 1.0,
        });
        self.dots(svg, &at, &mut placer);
        self.mark_labels(svg, area, x_map, &y_of, &mut placer);
        self.point_labels(svg, &at, &mut placer);
    }

    fn x_axis(&self, area: Area) -> XMap {
        match self.x {
            XAxis::Categories { values, .. } => XMap::Categories(Categories::new(
                self.points()
                    .map(|p| p.x)
                    .chain(self.marked_x())
                    .chain(values.iter().copied())
                    .collect(),
                area.left,
                area.right,
            )),
            XAxis::Linear { range, format } => {
                let xs: Vec<f64> = self
                    .points()
                    .flat_map(|p| {
                        std::iter::once(p.x).chain(
                            p.finite_x_interval()
                                .into_iter()
                                .flat_map(|(low, high)| [low, high]),
                        )
                    })
                    .chain(self.marked_x())
                    .collect();
                XMap::Linear(Linear {
                    ticks: Linear::ticks_over(&xs, format, range),
                    format,
                    start: area.left,
                    end: area.right,
                })
            }
        }
    }

    fn bands(
        &self,
        svg: &mut Svg,
        at: &dyn Fn(usize, &Point) -> (f64, f64),
        y_of: &dyn Fn(f64) -> f64,
    ) {
        if self.spread != Spread::Band {
            return;
        }
        for (index, series) in self.series.iter().enumerate() {
            let edge: Vec<(f64, f64, f64)> = series
                .points
                .iter()
                .filter_map(|p| {
                    let (low, high) = p.finite_interval()?;
                    Some((at(index, p).0, y_of(low), y_of(high)))
                })
                .collect();
            if edge.len() < 2 {
                continue;
            }
            let outline: Vec<(f64, f64)> = edge
                .iter()
                .map(|(x, _, high)| (*x, *high))
                .chain(edge.iter().rev().map(|(x, low, _)| (*x, *low)))
                .collect();
            svg.raw(format_args!(
                r#"<polygon class="band" fill="{}" fill-opacity="0.18" points="{}"/>"#,
                colour(index),
                points_attribute(&outline)
            ));
        }
    }

    fn mark_lines(&self, svg: &mut Svg, area: Area, x_map: &XMap, y_of: &dyn Fn(f64) -> f64) {
        for mark in self.marks {
            match mark {
                Mark::Level(level, _) => {
                    let y = y_of(*level);
                    svg.line(
                        (area.left, y),
                        (area.right, y),
                        LEVEL,
                        r#"stroke-dasharray="6 4""#,
                    );
                }
                Mark::At(at, _) => {
                    let x = x_map.position(*at);
                    svg.line(
                        (x, area.top),
                        (x, area.bottom),
                        AT,
                        r#"stroke-dasharray="6 4""#,
                    );
                }
            }
        }
    }

    fn lines(&self, svg: &mut Svg, at: &dyn Fn(usize, &Point) -> (f64, f64)) {
        for (index, series) in self.series.iter().enumerate() {
            let colour = colour(index);
            match self.style {
                Style::Line => svg.raw(format_args!(
                    r#"<polyline class="series" fill="none" stroke="{colour}" stroke-width="2" stroke-opacity="0.8" points="{}"/>"#,
                    points_attribute(
                        &series
                            .points
                            .iter()
                            .map(|p| at(index, p))
                            .collect::<Vec<_>>()
                    )
                )),
                Style::Step => {
                    let mut vertices: Vec<(f64, f64)> = Vec::new();
                    for p in &series.points {
                        let (x, y) = at(index, p);
                        if let Some(&(_, level)) = vertices.last() {
                            vertices.push((x, level));
                        }
                        vertices.push((x, y));
                    }
                    // The first series solid, the others dashed at shifted phases: where
                    // curves run together, each still shows.
                    let dash = if index == 0 {
                        String::new()
                    } else {
                        format!(
                            r#" stroke-dasharray="8 4" stroke-dashoffset="{}""#,
                            4 * (index - 1)
                        )
                    };
                    svg.raw(format_args!(
                        r#"<polyline class="series" fill="none" stroke="{colour}" stroke-width="2.5"{dash} points="{}"/>"#,
                        points_attribute(&vertices)
                    ));
                }
                Style::Points => {}
            }
        }
    }

    fn error_bars(
        &self,
        svg: &mut Svg,
        at: &dyn Fn(usize, &Point) -> (f64, f64),
        x_of: &dyn Fn(f64) -> f64,
        y_of: &dyn Fn(f64) -> f64,
    ) {
        for (index, series) in self.series.iter().enumerate() {
            let colour = colour(index);
            for p in &series.points {
                let (x, y) = at(index, p);
                if self.spread == Spread::Bars
                    && let Some((low, high)) = p.finite_interval()
                {
                    let (y_low, y_high) = (y_of(low), y_of(high));
                    svg.raw(format_args!(
                        r#"<path d="M{x:.1},{y_low:.1}V{y_high:.1}M{l:.1},{y_low:.1}H{r:.1}M{l:.1},{y_high:.1}H{r:.1}" stroke="{colour}" stroke-width="1.2" fill="none"/>"#,
                        l = x - 3.0,
                        r = x + 3.0
                    ));
                }
                if let Some((low, high)) = p.finite_x_interval() {
                    let shift = x - x_of(p.x);
                    let (x_low, x_high) = (x_of(low) + shift, x_of(high) + shift);
                    svg.raw(format_args!(
                        r#"<path d="M{x_low:.1},{y:.1}H{x_high:.1}M{x_low:.1},{t:.1}V{b:.1}M{x_high:.1},{t:.1}V{b:.1}" stroke="{colour}" stroke-width="1.2" fill="none"/>"#,
                        t = y - 3.0,
                        b = y + 3.0
                    ));
                }
            }
        }
    }

    /// Every point as a circle in its series' colour (step curves have none), flags ringed;
    /// each kept clear of labels.
    fn dots(&self, svg: &mut Svg, at: &dyn Fn(usize, &Point) -> (f64, f64), placer: &mut Placer) {
        if self.style == Style::Step {
            return;
        }
        for (index, series) in self.series.iter().enumerate() {
            let colour = colour(index);
            for p in &series.points {
                let (x, y) = at(index, p);
                let who = match &p.name {
                    Some(name) => format!("{name} ({})", series.name),
                    None => series.name.clone(),
                };
                svg.raw(format_args!(
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="{RADIUS}" fill="{colour}"><title>{} at {}: {}</title></circle>"#,
                    escape(&who),
                    escape(&self.label_of(p.x)),
                    escape(&self.y_format.tooltip(p.y))
                ));
                placer.block(Rect::around(x, y, RADIUS + 1.0));
                if p.flag.is_some() {
                    svg.raw(format_args!(
                        r#"<path class="flag" d="M{:.1},{y:.1}a{RING},{RING} 0 1,0 {d},0a{RING},{RING} 0 1,0 -{d},0" fill="none" stroke="{LEVEL}" stroke-width="2"/>"#,
                        x - RING,
                        d = 2.0 * RING
                    ));
                    placer.block(Rect::around(x, y, RING + 1.0));
                }
            }
        }
    }

    fn mark_labels(
        &self,
        svg: &mut Svg,
        area: Area,
        x_map: &XMap,
        y_of: &dyn Fn(f64) -> f64,
        placer: &mut Placer,
    ) {
        for mark in self.marks {
            let (label, colour, spots) = match mark {
                Mark::Level(level, label) => {
                    let y = y_of(*level);
                    (
                        label,
                        LEVEL,
                        vec![
                            Spot::new(area.right - 4.0, y - 5.0, Anchor::End),
                            Spot::new(area.right - 4.0, y + 14.0, Anchor::End),
                            Spot::new(area.left + 4.0, y - 5.0, Anchor::Start),
                            Spot::new(area.left + 4.0, y + 14.0, Anchor::Start),
                        ],
                    )
                }
                Mark::At(at, label) => {
                    let x = x_map.position(*at);
                    let rows = (0..8).map(|k| area.top + 14.0 + 14.0 * f64::from(k));
                    (
                        label,
                        AT,
                        rows.clone()
                            .map(|y| Spot::new(x + 4.0, y, Anchor::Start))
                            .chain(rows.map(|y| Spot::new(x - 4.0, y, Anchor::End)))
                            .collect(),
                    )
                }
            };
            let label = fit(label, MARK_LABEL, TEXT_SIZE);
            if let Some(spot) = placer.place(&label, TEXT_SIZE, &spots) {
                svg.text(
                    spot.x,
                    spot.y,
                    &label,
                    TextStyle::new(spot.anchor).fill(colour).halo(),
                );
            }
        }
    }

    fn point_labels(
        &self,
        svg: &mut Svg,
        at: &dyn Fn(usize, &Point) -> (f64, f64),
        placer: &mut Placer,
    ) {
        // Flags first: a flag's reason matters more than a value.
        for (index, series) in self.series.iter().enumerate() {
            for p in &series.points {
                let (x, y) = at(index, p);
                if let Some(flag) = &p.flag
                    && let Some(spot) = placer.place(flag, SMALL_SIZE, &around_point(x, y, RING))
                {
                    svg.text(
                        spot.x,
                        spot.y,
                        flag,
                        TextStyle::new(spot.anchor)
                            .size(SMALL_SIZE)
                            .fill(LEVEL)
                            .halo(),
                    );
                }
            }
        }
        for (index, series) in self.series.iter().enumerate() {
            for p in &series.points {
                let (x, y) = at(index, p);
                let radius = if p.flag.is_some() { RING } else { RADIUS };
                if let Some(label) = &p.label
                    && let Some(spot) = placer.place(label, SMALL_SIZE, &around_point(x, y, radius))
                {
                    svg.text(
                        spot.x,
                        spot.y,
                        label,
                        TextStyle::new(spot.anchor).size(SMALL_SIZE).halo(),
                    );
                }
            }
        }
    }

    fn legend_entries(&self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = self
            .series
            .iter()
            .enumerate()
            .map(|(index, series)| {
                let swatch = match (self.style, index) {
                    (Style::Line, _) => Swatch::Line,
                    (Style::Step, 0) => Swatch::Stroke,
                    (Style::Step, _) => Swatch::Dashed,
                    (Style::Points, _) => Swatch::Dot,
                };
                Entry::new(&series.name, colour(index), swatch)
            })
            .collect();
        if let Some(name) = self.band_name
            && self.spread == Spread::Band
        {
            entries.push(Entry::new(name, colour(0), Swatch::Band));
        }
        if let Some(front) = &self.front {
            entries.push(Entry::new(front.name, FRONT, Swatch::Stroke));
        }
        if self.points().any(|p| p.flag.is_some()) {
            entries.push(Entry::new("flagged", LEVEL, Swatch::Ring));
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_front_steps_along_the_edge_of_what_it_dominates() {
        // Lower latency (x) and higher throughput (y) are better: the front rises to the
        // right, and its corners sit at the next x and the previous y.
        let front = Front {
            name: "front",
            points: vec![(1.0, 10.0), (2.0, 20.0), (4.0, 25.0)],
            lower_x_better: true,
            higher_y_better: true,
        };
        assert_eq!(
            front.vertices(),
            [
                (1.0, 10.0),
                (2.0, 10.0),
                (2.0, 20.0),
                (4.0, 20.0),
                (4.0, 25.0)
            ]
        );
        // Both higher better: the front falls to the right, corners at the previous x.
        let front = Front {
            name: "front",
            points: vec![(1.0, 30.0), (3.0, 10.0)],
            lower_x_better: false,
            higher_y_better: true,
        };
        assert_eq!(front.vertices(), [(1.0, 30.0), (1.0, 10.0), (3.0, 10.0)]);
    }
}
