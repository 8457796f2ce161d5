//! The ratio chart: one row per cell, its value as a dot with its 95% interval as a bar, around
//! a labelled reference line (parity), on a log or linear x axis.

use crate::frame::{
    Entry, LEGEND_GAP, LEGEND_WIDTH, MARGIN, Swatch, TOP, Titles, axis_titles, legend,
};
use crate::palette::{FRONT, colour};
use crate::placer::{Placer, Spot, around_point};
use crate::svg::{AXIS, GRID, Svg, TextStyle, escape};
use crate::text::{Anchor, Rect, SMALL_SIZE, TEXT_SIZE, fit, text_box, text_width};
use crate::ticks::{Format, Ticks, number};
use crate::xy::WIDTH;

/// A row's height.
const ROW: f64 = 22.0;
/// The row labels' column: at least, at most.
const MIN_LEFT: f64 = 120.0;
const MAX_LABEL: f64 = 280.0;
const RADIUS: f64 = 4.0;

/// One row: a cell's label, its value and its 95% interval.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RatioRow {
    /// The row's label, left of the plot.
    pub label: String,
    /// The value (a ratio, a difference).
    pub value: f64,
    /// Its 95% interval (low, high).
    pub interval: Option<(f64, f64)>,
}

impl RatioRow {
    /// A row labelled `label` at `value`.
    pub fn new(label: impl Into<String>, value: f64) -> Self {
        Self {
            label: label.into(),
            value,
            interval: None,
        }
    }

    /// With its 95% interval.
    #[must_use]
    pub const fn with_interval(mut self, low: f64, high: f64) -> Self {
        self.interval = Some((low, high));
        self
    }
}

/// How the ratio chart's x axis is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scale {
    /// Logarithmic: a ratio and its inverse equally far from 1.
    Log,
    /// Linear: differences.
    Linear,
}

/// Values with intervals, one row each, around a reference line.
#[derive(Debug, Clone)]
pub struct RatioChart {
    title: String,
    subtitle: String,
    x_title: String,
    rows: Vec<RatioRow>,
    reference: (f64, String),
    scale: Scale,
    format: Format,
    names: (String, String),
    width: f64,
}

impl RatioChart {
    /// A chart titled `title`; `subtitle` names the runs compared. The reference line is at
    /// 1 (`parity`), the axis logarithmic, values shown as `1.23×`.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            subtitle: subtitle.into(),
            x_title: String::new(),
            rows: Vec::new(),
            reference: (1.0, "1× (parity)".to_owned()),
            scale: Scale::Log,
            format: Format::Times,
            names: ("ratio".to_owned(), "95% interval".to_owned()),
            width: WIDTH,
        }
    }

    /// The x axis's title.
    #[must_use]
    pub fn x_title(mut self, title: impl Into<String>) -> Self {
        self.x_title = title.into();
        self
    }

    /// Adds rows, top to bottom.
    #[must_use]
    pub fn rows(mut self, rows: impl IntoIterator<Item = RatioRow>) -> Self {
        self.rows.extend(rows);
        self
    }

    /// The reference line's value and label.
    #[must_use]
    pub fn reference(mut self, value: f64, label: impl Into<String>) -> Self {
        self.reference = (value, label.into());
        self
    }

    /// The x axis's scale and how it shows values.
    #[must_use]
    pub fn scale(mut self, scale: Scale, format: Format) -> Self {
        self.scale = scale;
        self.format = format;
        self
    }

    /// The legend's names of the dots and the bars.
    #[must_use]
    pub fn legend(mut self, value: impl Into<String>, interval: impl Into<String>) -> Self {
        self.names = (value.into(), interval.into());
        self
    }

    /// The canvas's least width in pixels.
    #[must_use]
    pub fn width(mut self, width: f64) -> Self {
        self.width = width;
        self
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let titles = Titles {
            title: &self.title,
            subtitle: &self.subtitle,
        };
        let width = titles.width(self.width);
        let rows: Vec<&RatioRow> = self.rows.iter().filter(|r| r.value.is_finite()).collect();
        let labels: Vec<String> = rows
            .iter()
            .map(|r| fit(&r.label, MAX_LABEL, TEXT_SIZE))
            .collect();
        let widest = labels
            .iter()
            .map(|l| text_width(l, TEXT_SIZE))
            .fold(0.0, f64::max);
        let left = MIN_LEFT.max(36.0 + widest).ceil();
        let legend_x = width - MARGIN - LEGEND_WIDTH;
        let right = legend_x - LEGEND_GAP;
        let first = TOP + 30.0;
        let bottom = first + ROW * rows.len().saturating_sub(1) as f64 + 18.0;
        let height = (bottom + 64.0).max(TOP + 8.0 + 20.0 * 3.0 + MARGIN);
        let axis = XScale::over(&rows, self.reference.0, self.scale, left, right);
        let mut svg = Svg::open(width, height, &self.title);
        svg.plot_area(left, TOP, right, bottom);
        titles.draw(&mut svg, width);
        axis_titles(
            &mut svg,
            (left, TOP, right, bottom),
            &self.x_title,
            "",
            bottom + 44.0,
        );
        let mut placer = Placer::new(Rect {
            left: left + 1.0,
            top: TOP,
            right,
            bottom: bottom - 1.0,
        });
        axis.draw(&mut svg, bottom, self.format);
        let x_ref = axis.position(self.reference.0);
        svg.line(
            (x_ref, TOP),
            (x_ref, bottom),
            FRONT,
            r#"stroke-dasharray="4 3""#,
        );
        let colour = colour(0);
        for (index, (row, label)) in rows.iter().zip(&labels).enumerate() {
            let y = first + ROW * index as f64;
            svg.text(left - 8.0, y + 4.0, label, TextStyle::new(Anchor::End));
            self.draw_row(&mut svg, row, y, &axis, &mut placer);
        }
        let reference = &self.reference.1;
        if let Some(spot) = placer.place(
            reference,
            TEXT_SIZE,
            &[
                Spot::new(x_ref, TOP + 14.0, Anchor::Middle),
                Spot::new(x_ref + 4.0, TOP + 14.0, Anchor::Start),
                Spot::new(x_ref - 4.0, TOP + 14.0, Anchor::End),
            ],
        ) {
            svg.text(
                spot.x,
                spot.y,
                reference,
                TextStyle::new(spot.anchor).halo(),
            );
        }
        for (index, row) in rows.iter().enumerate() {
            let y = first + ROW * index as f64;
            let x = axis.position(row.value);
            let text = self.format.tooltip(row.value);
            if let Some(spot) = placer.place(&text, SMALL_SIZE, &around_point(x, y, RADIUS)) {
                svg.text(
                    spot.x,
                    spot.y,
                    &text,
                    TextStyle::new(spot.anchor).size(SMALL_SIZE).halo(),
                );
            }
        }
        legend(
            &mut svg,
            &[
                Entry::new(&self.names.0, colour, Swatch::Dot),
                Entry::new(&self.names.1, colour, Swatch::Stroke),
                Entry::new(reference, FRONT, Swatch::Dashed),
            ],
            (legend_x, TOP),
            height - MARGIN - 8.0,
            width - MARGIN,
            None,
        );
        svg.finish()
    }

    /// A row's interval as a bar and its value as a dot, kept clear of labels.
    fn draw_row(&self, svg: &mut Svg, row: &RatioRow, y: f64, axis: &XScale, placer: &mut Placer) {
        let colour = colour(0);
        if let Some((low, high)) = row.interval.filter(|(l, h)| l.is_finite() && h.is_finite()) {
            let (x_low, x_high) = (axis.position(low), axis.position(high));
            svg.raw(format_args!(
                r#"<path d="M{x_low:.1},{y:.1}H{x_high:.1}M{x_low:.1},{t:.1}V{b:.1}M{x_high:.1},{t:.1}V{b:.1}" stroke="{colour}" stroke-width="2" fill="none"/>"#,
                t = y - 4.0,
                b = y + 4.0
            ));
        }
        let x = axis.position(row.value);
        svg.raw(format_args!(
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{RADIUS}" fill="{colour}"><title>{}: {}</title></circle>"#,
            escape(&row.label),
            escape(&self.format.tooltip(row.value))
        ));
        placer.block(Rect::around(x, y, RADIUS + 1.0));
    }
}

/// The x axis as placed: its range, its ticks and their decimals.
struct XScale {
    scale: Scale,
    low: f64,
    high: f64,
    left: f64,
    right: f64,
    ticks: Vec<f64>,
    decimals: usize,
}

impl XScale {
    fn over(rows: &[&RatioRow], reference: f64, scale: Scale, left: f64, right: f64) -> Self {
        let values = rows
            .iter()
            .flat_map(|r| {
                std::iter::once(r.value).chain(r.interval.into_iter().flat_map(|(l, h)| [l, h]))
            })
            .chain(std::iter::once(reference))
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0));
        let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (low, high) = if low.is_finite() {
            (low, high)
        } else {
            (1.0, 1.0)
        };
        match scale {
            Scale::Log => {
                let (low, high) = (low / 1.2, high * 1.2);
                let ticks = log_ticks(low, high);
                let decimals = ticks.iter().map(|t| decimals_of(*t)).max().unwrap_or(0);
                Self {
                    scale,
                    low: low.ln(),
                    high: high.ln(),
                    left,
                    right,
                    ticks,
                    decimals,
                }
            }
            Scale::Linear => {
                let ticks = Ticks::covering(low, high);
                Self {
                    scale,
                    low: ticks.low,
                    high: ticks.high,
                    left,
                    right,
                    ticks: ticks.values(),
                    decimals: ticks.decimals,
                }
            }
        }
    }

    /// A grid line and a tick at every tick, labels where they keep clear of the one before,
    /// and the axis line.
    fn draw(&self, svg: &mut Svg, bottom: f64, format: Format) {
        let mut last_label: Option<Rect> = None;
        for tick in &self.ticks {
            let x = self.position(*tick);
            svg.line((x, TOP), (x, bottom), GRID, "");
            svg.line((x, bottom), (x, bottom + 5.0), AXIS, "");
            let label = format!(
                "{}{}",
                number(format.shown(*tick), self.decimals),
                format.suffix()
            );
            let area = text_box(x, bottom + 20.0, &label, TEXT_SIZE, Anchor::Middle);
            if last_label.is_none_or(|last| !last.meets(&area, 6.0)) {
                svg.text(x, bottom + 20.0, &label, TextStyle::new(Anchor::Middle));
                last_label = Some(area);
            }
        }
        svg.line((self.left, bottom), (self.right, bottom), AXIS, "");
    }

    fn position(&self, value: f64) -> f64 {
        let v = match self.scale {
            Scale::Log => value.max(1e-12).ln(),
            Scale::Linear => value,
        };
        let span = self.high - self.low;
        let share = if span > 0.0 {
            ((v - self.low) / span).clamp(0.0, 1.0)
        } else {
            0.5
        };
        self.left + (self.right - self.left) * share
    }
}

/// The decimals `value` needs (up to 6).
fn decimals_of(value: f64) -> usize {
    (0..=6_i32)
        .find(|d| {
            let scaled = value * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .and_then(|d| usize::try_from(d).ok())
        .unwrap_or(6)
}

/// Round ticks on a log axis over `low..=high`: the coarsest of 1, 1-2-5 and 1-1.5-2-3-5-7
/// times the powers of ten that gives three ticks or more.
fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    let sets: [&[f64]; 3] = [&[1.0], &[1.0, 2.0, 5.0], &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]];
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the powers of ten of finite positive values: a few hundred at most"
    )]
    let (from, to) = (low.log10().floor() as i32, high.log10().ceil() as i32);
    let mut best = Vec::new();
    for set in sets {
        let ticks: Vec<f64> = (from..=to)
            .flat_map(|power| set.iter().map(move |m| m * 10f64.powi(power)))
            .filter(|t| *t >= low * (1.0 - 1e-9) && *t <= high * (1.0 + 1e-9))
            .collect();
        if ticks.len() >= 3 {
            return ticks;
        }
        best = ticks;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_are_round() {
        let close = |got: Vec<f64>, want: &[f64]| {
            got.len() == want.len() && got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9)
        };
        assert!(close(log_ticks(0.05, 20.0), &[0.1, 1.0, 10.0]));
        assert!(close(log_ticks(0.6, 2.4), &[0.7, 1.0, 1.5, 2.0]));
        assert!(close(log_ticks(0.8, 1.6), &[1.0, 1.5]));
        assert_eq!(decimals_of(0.5), 1);
        assert_eq!(decimals_of(2.0), 0);
        assert_eq!(decimals_of(0.15), 2);
    }
}
