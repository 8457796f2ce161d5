//! What every chart shares around its plot: the canvas as wide as its title and subtitle need,
//! the two lines centred at the top, the axes' titles, and the legend in a column right of the
//! plot (never over it), with "and N more" when its entries do not fit.

use crate::svg::{GREY_TEXT, Svg, TextStyle};
use crate::text::{Anchor, TEXT_SIZE, TITLE_SIZE, fit, fit_as, width_of};

/// Room kept at the canvas's edges.
pub(crate) const MARGIN: f64 = 12.0;
/// The legend's column.
pub(crate) const LEGEND_WIDTH: f64 = 200.0;
/// Between the plot's right edge and the legend.
pub(crate) const LEGEND_GAP: f64 = 18.0;
/// The plot's top edge, under the title and subtitle.
pub(crate) const TOP: f64 = 64.0;
/// No canvas grows wider than this for its text; longer lines are cut.
const MAX_WIDTH: f64 = 1600.0;
/// A legend row.
const ROW: f64 = 20.0;

/// The title and the subtitle naming the run (model, server, date).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Titles<'a> {
    pub(crate) title: &'a str,
    pub(crate) subtitle: &'a str,
}

impl Titles<'_> {
    /// The canvas width: at least `min`, wider where the title or subtitle needs it (up to
    /// 1600 px), in whole pixels.
    pub(crate) fn width(&self, min: f64) -> f64 {
        let needed =
            width_of(self.title, TITLE_SIZE, true).max(width_of(self.subtitle, TEXT_SIZE, false))
                + 2.0 * MARGIN
                + 4.0;
        min.max(needed.min(MAX_WIDTH)).ceil()
    }

    pub(crate) fn draw(&self, svg: &mut Svg, width: f64) {
        let room = width - 2.0 * MARGIN;
        svg.text(
            width / 2.0,
            24.0,
            &fit_as(self.title, room, TITLE_SIZE, true),
            TextStyle::new(Anchor::Middle).size(TITLE_SIZE).bold(),
        );
        svg.text(
            width / 2.0,
            44.0,
            &fit(self.subtitle, room, TEXT_SIZE),
            TextStyle::new(Anchor::Middle).fill(GREY_TEXT),
        );
    }
}

/// The titles of the two axes: x centred under the plot at `x_baseline`, y turned along its
/// left edge.
pub(crate) fn axis_titles(
    svg: &mut Svg,
    plot: (f64, f64, f64, f64),
    x_title: &str,
    y_title: &str,
    x_baseline: f64,
) {
    let (left, top, right, bottom) = plot;
    if !x_title.is_empty() {
        svg.text(
            f64::midpoint(left, right),
            x_baseline,
            &fit(x_title, right - left, TEXT_SIZE),
            TextStyle::new(Anchor::Middle),
        );
    }
    if !y_title.is_empty() {
        let y = f64::midpoint(top, bottom);
        svg.text(
            18.0,
            y,
            &fit(y_title, bottom - top, TEXT_SIZE),
            TextStyle::new(Anchor::Middle).vertical(),
        );
    }
}

/// How a legend entry shows its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Swatch {
    /// A line with a small square: a line chart's series.
    Line,
    /// A dashed line: a step curve drawn dashed, a mark.
    Dashed,
    /// A solid line alone: a step curve, an interval.
    Stroke,
    /// A round dot: a scatter's points.
    Dot,
    /// A pale block: an interval band.
    Band,
    /// A ring: a flagged point.
    Ring,
    /// A filled block: a heat map's colour.
    Block,
}

/// One legend row.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) colour: String,
    pub(crate) swatch: Swatch,
}

impl Entry {
    pub(crate) fn new(name: &str, colour: &str, swatch: Swatch) -> Self {
        Self {
            name: name.to_owned(),
            colour: colour.to_owned(),
            swatch,
        }
    }
}

/// Draws `entries` in a column from (`x`, `top`), one row each, no lower than `bottom`; the
/// rows that do not fit become "and N more" (and `hint`, where the rest can be read).
pub(crate) fn legend(
    svg: &mut Svg,
    entries: &[Entry],
    at: (f64, f64),
    bottom: f64,
    right: f64,
    hint: Option<&str>,
) {
    let (x, top) = at;
    let first = top + 8.0;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a few dozen rows at most, from a positive height"
    )]
    let rows = (((bottom - first) / ROW).floor().max(0.0) as usize) + 1;
    let shown = if entries.len() > rows {
        rows.saturating_sub(1)
    } else {
        entries.len()
    };
    let text_x = x + 28.0;
    for (index, entry) in entries.iter().take(shown).enumerate() {
        let y = first + ROW * index as f64;
        swatch(svg, entry, x, y);
        svg.text(
            text_x,
            y + 4.0,
            &fit(&entry.name, right - text_x, TEXT_SIZE),
            TextStyle::new(Anchor::Start),
        );
    }
    if shown < entries.len() {
        let y = first + ROW * shown as f64;
        let more = match hint {
            Some(hint) => format!("and {} more ({hint})", entries.len() - shown),
            None => format!("and {} more", entries.len() - shown),
        };
        svg.text(
            x,
            y + 4.0,
            &fit(&more, right - x, TEXT_SIZE),
            TextStyle::new(Anchor::Start),
        );
    }
}

fn swatch(svg: &mut Svg, entry: &Entry, x: f64, y: f64) {
    let colour = entry.colour.as_str();
    match entry.swatch {
        Swatch::Line => {
            svg.line((x, y), (x + 22.0, y), colour, r#"stroke-width="2""#);
            svg.rect((x + 8.0, y - 3.0), (6.0, 6.0), colour, "");
        }
        Swatch::Dashed => svg.line(
            (x, y),
            (x + 22.0, y),
            colour,
            r#"stroke-width="2" stroke-dasharray="6 3""#,
        ),
        Swatch::Stroke => svg.line((x, y), (x + 22.0, y), colour, r#"stroke-width="2.5""#),
        Swatch::Dot => svg.rect((x + 7.0, y - 4.0), (8.0, 8.0), colour, r#"rx="4""#),
        Swatch::Band => svg.rect((x, y - 5.0), (22.0, 10.0), colour, r#"fill-opacity="0.25""#),
        Swatch::Ring => svg.rect(
            (x + 5.0, y - 6.0),
            (12.0, 12.0),
            "none",
            &format!(r#"rx="6" stroke="{colour}" stroke-width="2""#),
        ),
        Swatch::Block => svg.rect(
            (x + 4.0, y - 6.0),
            (14.0, 12.0),
            colour,
            r##"stroke="#999""##,
        ),
    }
}
