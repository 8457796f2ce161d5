//! The heat map: rows by columns of cells, each filled by its value on a red–yellow–green scale
//! and labelled, with the scale and the meaning of grey cells in the legend beside it.

use crate::frame::{
    Entry, LEGEND_GAP, LEGEND_WIDTH, MARGIN, Swatch, TOP, Titles, axis_titles, legend,
};
use crate::svg::{AXIS, Svg, TextStyle};
use crate::text::{Anchor, TEXT_SIZE, fit, text_width};
use crate::ticks::{Format, number};

const CELL_HEIGHT: f64 = 32.0;
const MIN_CELL: f64 = 64.0;
const MAX_CELL: f64 = 160.0;
const MIN_LEFT: f64 = 76.0;
/// Cells that were not scored (refused), and cells with nothing.
const GREY: &str = "#bbbbbb";
const BLANK: &str = "#eeeeee";

/// How a cell is filled.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fill {
    Value(f64),
    Grey,
    Blank,
}

/// One cell: its fill and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatCell {
    fill: Fill,
    label: String,
}

impl HeatCell {
    /// A cell filled by `value` on the map's scale.
    pub fn value(value: f64, label: impl Into<String>) -> Self {
        Self {
            fill: if value.is_finite() {
                Fill::Value(value)
            } else {
                Fill::Blank
            },
            label: label.into(),
        }
    }

    /// A grey cell: measured but not scored (what grey means is in the legend).
    pub fn grey(label: impl Into<String>) -> Self {
        Self {
            fill: Fill::Grey,
            label: label.into(),
        }
    }

    /// A pale cell with nothing in it.
    pub fn blank(label: impl Into<String>) -> Self {
        Self {
            fill: Fill::Blank,
            label: label.into(),
        }
    }
}

/// The colour of `share` (0 to 1): red through yellow to green.
pub(crate) fn ramp(share: f64) -> String {
    let share = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "0..=255 by construction"
    )]
    let (red, green) = (
        (255.0 * (1.0 - share).min(0.5) * 2.0) as u8,
        (255.0 * share.min(0.5) * 2.0) as u8,
    );
    format!("#{red:02x}{green:02x}5a")
}

/// A heat map of rows by columns.
#[derive(Debug, Clone)]
pub struct HeatMap {
    title: String,
    subtitle: String,
    x_title: String,
    y_title: String,
    columns: Vec<String>,
    rows: Vec<(String, Vec<HeatCell>)>,
    range: (f64, f64),
    format: Format,
    scale_name: String,
    grey_means: Option<String>,
    blank_means: Option<String>,
}

impl HeatMap {
    /// A map titled `title`; `subtitle` names the run: model, server and date. Values run
    /// from 0 to 1, shown as percentages.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            subtitle: subtitle.into(),
            x_title: String::new(),
            y_title: String::new(),
            columns: Vec::new(),
            rows: Vec::new(),
            range: (0.0, 1.0),
            format: Format::Percent,
            scale_name: "value".to_owned(),
            grey_means: None,
            blank_means: None,
        }
    }

    /// The title under the columns' labels.
    #[must_use]
    pub fn x_title(mut self, title: impl Into<String>) -> Self {
        self.x_title = title.into();
        self
    }

    /// The title along the rows' labels.
    #[must_use]
    pub fn y_title(mut self, title: impl Into<String>) -> Self {
        self.y_title = title.into();
        self
    }

    /// The columns' labels, left to right.
    #[must_use]
    pub fn columns(mut self, columns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.columns = columns.into_iter().map(Into::into).collect();
        self
    }

    /// Adds a row, top to bottom: its label and one cell per column (missing cells blank).
    #[must_use]
    pub fn row(mut self, label: impl Into<String>, cells: Vec<HeatCell>) -> Self {
        self.rows.push((label.into(), cells));
        self
    }

    /// The scale: its name in the legend, the values at its red and green ends, and how
    /// they are shown.
    #[must_use]
    pub fn scale(mut self, name: impl Into<String>, low: f64, high: f64, format: Format) -> Self {
        self.scale_name = name.into();
        self.range = (low, high);
        self.format = format;
        self
    }

    /// What grey cells and blank cells mean, in the legend.
    #[must_use]
    pub fn meanings(mut self, grey: impl Into<String>, blank: impl Into<String>) -> Self {
        self.grey_means = Some(grey.into());
        self.blank_means = Some(blank.into());
        self
    }

    fn fill_of(&self, fill: Fill) -> String {
        match fill {
            Fill::Value(value) => {
                let (low, high) = self.range;
                let span = high - low;
                ramp(if span > 0.0 {
                    (value - low) / span
                } else {
                    1.0
                })
            }
            Fill::Grey => GREY.to_owned(),
            Fill::Blank => BLANK.to_owned(),
        }
    }

    /// The map as an SVG document.
    pub fn to_svg(&self) -> String {
        let titles = Titles {
            title: &self.title,
            subtitle: &self.subtitle,
        };
        let widest = |texts: &mut dyn Iterator<Item = &str>| {
            texts.map(|t| text_width(t, TEXT_SIZE)).fold(0.0, f64::max)
        };
        let cell_width = MIN_CELL
            .max(
                12.0 + widest(
                    &mut self
                        .rows
                        .iter()
                        .flat_map(|(_, c)| c.iter().map(|c| c.label.as_str())),
                ),
            )
            .max(10.0 + widest(&mut self.columns.iter().map(String::as_str)))
            .min(MAX_CELL)
            .ceil();
        let row_labels: Vec<String> = self
            .rows
            .iter()
            .map(|(label, _)| fit(label, MAX_CELL, TEXT_SIZE))
            .collect();
        let left = MIN_LEFT
            .max(36.0 + widest(&mut row_labels.iter().map(String::as_str)))
            .ceil();
        let grid_right = left + cell_width * self.columns.len().max(1) as f64;
        let legend_x = grid_right + LEGEND_GAP;
        let width = titles.width(legend_x + LEGEND_WIDTH + MARGIN);
        let bottom = TOP + CELL_HEIGHT * self.rows.len().max(1) as f64;
        let entries = self.legend_entries();
        let legend_bottom = TOP + 8.0 + 20.0 * entries.len() as f64;
        let height = (bottom + 64.0).max(legend_bottom + MARGIN).ceil();
        let mut svg = Svg::open(width, height, &self.title);
        svg.plot_area(left, TOP, grid_right, bottom);
        titles.draw(&mut svg, width);
        axis_titles(
            &mut svg,
            (left, TOP, grid_right, bottom),
            &self.x_title,
            &self.y_title,
            bottom + 44.0,
        );
        for (column, label) in self.columns.iter().enumerate() {
            let x = left + cell_width * (column as f64 + 0.5);
            svg.line((x, bottom), (x, bottom + 5.0), AXIS, "");
            svg.text(
                x,
                bottom + 20.0,
                &fit(label, cell_width - 8.0, TEXT_SIZE),
                TextStyle::new(Anchor::Middle),
            );
        }
        for (row, ((_, cells), label)) in self.rows.iter().zip(&row_labels).enumerate() {
            let top = TOP + CELL_HEIGHT * row as f64;
            svg.text(
                left - 8.0,
                top + CELL_HEIGHT / 2.0 + 4.0,
                label,
                TextStyle::new(Anchor::End),
            );
            for column in 0..self.columns.len() {
                let x = left + cell_width * column as f64;
                let (fill, text) = cells.get(column).map_or((Fill::Blank, "–"), |cell| {
                    (cell.fill, cell.label.as_str())
                });
                let fill = self.fill_of(fill);
                svg.raw(format_args!(
                    r#"<rect class="cell" x="{x:.1}" y="{top:.1}" width="{cell_width:.1}" height="{CELL_HEIGHT:.1}" fill="{fill}" stroke="white"/>"#
                ));
                svg.text(
                    x + cell_width / 2.0,
                    top + CELL_HEIGHT / 2.0 + 4.0,
                    &fit(text, cell_width - 8.0, TEXT_SIZE),
                    TextStyle::new(Anchor::Middle),
                );
            }
        }
        if self.rows.is_empty() {
            svg.text(
                f64::midpoint(left, grid_right),
                f64::midpoint(TOP, bottom) + 4.0,
                "no data",
                TextStyle::new(Anchor::Middle),
            );
        }
        legend(
            &mut svg,
            &entries,
            (legend_x, TOP),
            height - MARGIN - 8.0,
            width - MARGIN,
            None,
        );
        svg.finish()
    }

    fn legend_entries(&self) -> Vec<Entry> {
        let (low, high) = self.range;
        let shown_step = (self.format.shown(high) - self.format.shown(low)) / 4.0;
        let decimals = usize::from((shown_step - shown_step.round()).abs() >= 1e-9);
        let mut entries: Vec<Entry> = (0..=4)
            .map(|stop| {
                let share = f64::from(stop) / 4.0;
                let value = self.format.shown(low)
                    + share * (self.format.shown(high) - self.format.shown(low));
                let text = format!("{}{}", number(value, decimals), self.format.suffix());
                let name = if stop == 0 {
                    format!("{} {text}", self.scale_name)
                } else {
                    text
                };
                Entry::new(&name, &ramp(share), Swatch::Block)
            })
            .collect();
        if let Some(grey) = &self.grey_means {
            entries.push(Entry::new(grey, GREY, Swatch::Block));
        }
        if let Some(blank) = &self.blank_means {
            entries.push(Entry::new(blank, BLANK, Swatch::Block));
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_runs_red_through_yellow_to_green() {
        assert_eq!(ramp(0.0), "#ff005a");
        assert_eq!(ramp(0.5), "#ffff5a");
        assert_eq!(ramp(1.0), "#00ff5a");
        assert_eq!(ramp(f64::NAN), ramp(0.0));
    }
}
