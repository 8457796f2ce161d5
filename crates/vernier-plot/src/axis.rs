//! Axes: the categorical x axis (the values asked for, evenly spaced in order, labelled as
//! asked, every k-th label only where they would meet) and the linear axis (round ticks, one
//! number of decimals, labels thinned the same way).

use crate::svg::{AXIS, GREY_TEXT, GRID, Svg, TextStyle};
use crate::text::{Anchor, TEXT_SIZE, fit, text_width};
use crate::ticks::{Format, Ticks, value_label};

/// Room kept between the plot's edges and the first and last category.
const PAD: f64 = 34.0;
/// The space kept between two x labels: about two characters.
const LABEL_GAP: f64 = 14.0;
/// No x label is wider than this; longer ones are cut.
pub(crate) const MAX_X_LABEL: f64 = 160.0;
/// Baselines under the plot: the labels, then their notes.
pub(crate) const LABEL_BASELINE: f64 = 20.0;
pub(crate) const NOTE_BASELINE: f64 = 36.0;

/// The smallest k for which every k-th of labels `widest` pixels wide, `spacing` apart, keep
/// their gap.
fn every(widest: f64, spacing: f64) -> usize {
    let needed = widest + LABEL_GAP;
    let mut every = 1_usize;
    while spacing > 0.0 && (every as f64) * spacing < needed {
        every += 1;
    }
    every
}

/// A categorical x axis.
#[derive(Debug, Clone)]
pub(crate) struct Categories {
    values: Vec<f64>,
    left: f64,
    right: f64,
}

impl Categories {
    /// The distinct finite `values` in order, placed between `left` and `right`.
    pub(crate) fn new(mut values: Vec<f64>, left: f64, right: f64) -> Self {
        values.retain(|x| x.is_finite());
        values.sort_by(f64::total_cmp);
        values.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        Self {
            values,
            left,
            right,
        }
    }

    #[cfg(test)]
    fn values(&self) -> &[f64] {
        &self.values
    }

    /// The distance between two neighbouring categories.
    pub(crate) fn spacing(&self) -> f64 {
        let width = self.right - self.left - 2.0 * PAD;
        if self.values.len() > 1 {
            width / (self.values.len() - 1) as f64
        } else {
            width
        }
    }

    /// The pixel position of `x`, one of the axis's values.
    pub(crate) fn position(&self, x: f64) -> f64 {
        let slot = self
            .values
            .iter()
            .position(|v| (v - x).abs() < 1e-9)
            .unwrap_or(self.values.len().saturating_sub(1)) as f64;
        if self.values.len() > 1 {
            self.left + PAD + self.spacing() * slot
        } else {
            f64::midpoint(self.left, self.right)
        }
    }

    /// Tick marks at every value; its label (and note, in grey under it) at every k-th.
    pub(crate) fn draw(
        &self,
        svg: &mut Svg,
        bottom: f64,
        label_of: &dyn Fn(f64) -> String,
        note_of: &dyn Fn(f64) -> Option<String>,
    ) {
        let labels: Vec<(String, Option<String>)> = self
            .values
            .iter()
            .map(|x| {
                (
                    fit(&label_of(*x), MAX_X_LABEL, TEXT_SIZE),
                    note_of(*x).map(|note| fit(&note, MAX_X_LABEL, TEXT_SIZE)),
                )
            })
            .collect();
        let widest = labels
            .iter()
            .flat_map(|(label, note)| {
                std::iter::once(text_width(label, TEXT_SIZE))
                    .chain(note.as_deref().map(|n| text_width(n, TEXT_SIZE)))
            })
            .fold(0.0, f64::max);
        let every = every(widest, self.spacing());
        for (index, (x, (label, note))) in self.values.iter().zip(&labels).enumerate() {
            let px = self.position(*x);
            svg.line((px, bottom), (px, bottom + 5.0), AXIS, "");
            if index % every == 0 {
                svg.text(
                    px,
                    bottom + LABEL_BASELINE,
                    label,
                    TextStyle::new(Anchor::Middle),
                );
                if let Some(note) = note {
                    svg.text(
                        px,
                        bottom + NOTE_BASELINE,
                        note,
                        TextStyle::new(Anchor::Middle).fill(GREY_TEXT),
                    );
                }
            }
        }
    }
}

/// A linear axis from `ticks.low` at pixel `start` to `ticks.high` at pixel `end`, in the
/// units `format` shows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Linear {
    pub(crate) ticks: Ticks,
    pub(crate) format: Format,
    pub(crate) start: f64,
    pub(crate) end: f64,
}

impl Linear {
    /// Round ticks over `values` (shown in `format`), from zero when none is negative.
    pub(crate) fn ticks_over(values: &[f64], format: Format, range: Option<(f64, f64)>) -> Ticks {
        if let Some((low, high)) = range {
            return Ticks::covering(format.shown(low), format.shown(high));
        }
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let (low, high) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if !low.is_finite() {
            return Ticks::from_zero(0.0);
        }
        if low >= 0.0 {
            Ticks::from_zero(format.shown(high))
        } else {
            Ticks::covering(format.shown(low), format.shown(high.max(0.0)))
        }
    }

    /// The tick labels, suffix included.
    pub(crate) fn labels(&self) -> Vec<(f64, String)> {
        self.ticks
            .values()
            .into_iter()
            .map(|v| {
                (
                    v,
                    format!("{}{}", self.ticks.label(v), self.format.suffix()),
                )
            })
            .collect()
    }

    /// The widest tick label.
    pub(crate) fn widest_label(ticks: Ticks, format: Format) -> f64 {
        ticks
            .values()
            .iter()
            .map(|v| {
                text_width(
                    &format!("{}{}", ticks.label(*v), format.suffix()),
                    TEXT_SIZE,
                )
            })
            .fold(0.0, f64::max)
    }

    /// The pixel of a shown value, kept on the axis.
    fn pixel(&self, shown: f64) -> f64 {
        let span = self.ticks.high - self.ticks.low;
        let share = if span > 0.0 {
            ((shown - self.ticks.low) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.start + (self.end - self.start) * share
    }

    /// The pixel of a data value.
    pub(crate) fn position(&self, value: f64) -> f64 {
        self.pixel(self.format.shown(value))
    }

    /// As a y axis: a grid line across the plot and a label left of it at every tick.
    pub(crate) fn draw_y(&self, svg: &mut Svg, left: f64, right: f64) {
        for (value, label) in self.labels() {
            let y = self.pixel(value);
            svg.line((left, y), (right, y), GRID, "");
            svg.text(left - 6.0, y + 4.0, &label, TextStyle::new(Anchor::End));
        }
    }

    /// As an x axis: a tick mark under the plot at every tick, labels at every k-th.
    pub(crate) fn draw_x(&self, svg: &mut Svg, bottom: f64) {
        let labels = self.labels();
        let widest = labels
            .iter()
            .map(|(_, label)| text_width(label, TEXT_SIZE))
            .fold(0.0, f64::max);
        let spacing = if labels.len() > 1 {
            (self.end - self.start).abs() / (labels.len() - 1) as f64
        } else {
            self.end - self.start
        };
        let every = every(widest, spacing);
        for (index, (value, label)) in labels.iter().enumerate() {
            let x = self.pixel(*value);
            svg.line((x, bottom), (x, bottom + 5.0), AXIS, "");
            if index % every == 0 {
                svg.text(
                    x,
                    bottom + LABEL_BASELINE,
                    label,
                    TextStyle::new(Anchor::Middle),
                );
            }
        }
    }
}

/// A categorical value's default label.
pub(crate) fn category_label(x: f64) -> String {
    value_label(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_evenly_spaced_in_order() {
        let axis = Categories::new(vec![4096.0, 64.0, 256.0, 64.0, f64::NAN], 76.0, 630.0);
        assert_eq!(axis.values(), [64.0, 256.0, 4096.0]);
        let (a, b, c) = (
            axis.position(64.0),
            axis.position(256.0),
            axis.position(4096.0),
        );
        assert!((b - a - (c - b)).abs() < 1e-9);
        assert!((a - 110.0).abs() < 1e-9 && (c - 596.0).abs() < 1e-9);
        let one = Categories::new(vec![5.0], 76.0, 630.0);
        assert!((one.position(5.0) - 353.0).abs() < 1e-9);
    }

    #[test]
    fn labels_are_thinned_where_they_would_meet() {
        assert_eq!(every(30.0, 100.0), 1);
        assert_eq!(every(30.0, 20.0), 3);
    }

    #[test]
    fn a_linear_axis_maps_its_ticks_to_its_pixels() {
        let ticks = Linear::ticks_over(&[0.2, 0.9], Format::Percent, Some((0.0, 1.0)));
        let axis = Linear {
            ticks,
            format: Format::Percent,
            start: 396.0,
            end: 64.0,
        };
        assert!((axis.position(0.0) - 396.0).abs() < 1e-9);
        assert!((axis.position(1.0) - 64.0).abs() < 1e-9);
        assert!((axis.position(2.0) - 64.0).abs() < 1e-9, "kept on the axis");
        let labels: Vec<String> = axis.labels().into_iter().map(|(_, l)| l).collect();
        assert_eq!(labels, ["0%", "20%", "40%", "60%", "80%", "100%"]);
    }
}
