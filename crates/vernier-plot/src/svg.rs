//! The SVG writer: the document's head and background, text with its escaping, and shapes,
//! every number written with a fixed number of decimals so that the same chart is the same
//! bytes.

use std::fmt::Write as _;

use crate::text::{Anchor, TEXT_SIZE};

/// The fonts every chart names: `DejaVu Sans` first (its widths are what the layout measures).
pub(crate) const FONT_FAMILY: &str = "DejaVu Sans, Verdana, sans-serif";
/// The colour of secondary text (subtitles, notes) and of axes.
pub(crate) const GREY_TEXT: &str = "#444";
pub(crate) const AXIS: &str = "#333";
pub(crate) const GRID: &str = "#e4e4e4";

/// `text` safe inside SVG or HTML, as element text or a double-quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// How a text is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TextStyle {
    pub(crate) anchor: Anchor,
    pub(crate) size: f64,
    pub(crate) bold: bool,
    pub(crate) fill: Option<&'static str>,
    /// A white outline under the glyphs, for text drawn over lines inside the plot.
    pub(crate) halo: bool,
    /// Turned by -90 degrees about its own position (a y axis's title).
    pub(crate) vertical: bool,
}

impl TextStyle {
    pub(crate) const fn new(anchor: Anchor) -> Self {
        Self {
            anchor,
            size: TEXT_SIZE,
            bold: false,
            fill: None,
            halo: false,
            vertical: false,
        }
    }

    pub(crate) const fn size(mut self, size: f64) -> Self {
        self.size = size;
        self
    }

    pub(crate) const fn bold(mut self) -> Self {
        self.bold = true;
        self
    }

    pub(crate) const fn fill(mut self, colour: &'static str) -> Self {
        self.fill = Some(colour);
        self
    }

    pub(crate) const fn halo(mut self) -> Self {
        self.halo = true;
        self
    }

    pub(crate) const fn vertical(mut self) -> Self {
        self.vertical = true;
        self
    }
}

/// An SVG document being written.
#[derive(Debug)]
pub(crate) struct Svg {
    out: String,
}

impl Svg {
    /// The head of a `width` by `height` document (whole pixels) with a white background;
    /// `label` is its accessible name.
    pub(crate) fn open(width: f64, height: f64, label: &str) -> Self {
        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{}" font-family="{FONT_FAMILY}" font-size="{TEXT_SIZE:.0}">"#,
            escape(label)
        );
        let _ = writeln!(
            out,
            r#"<rect width="{width:.0}" height="{height:.0}" fill="white"/>"#
        );
        Self { out }
    }

    /// A line of text, escaped, with its baseline at `y`.
    pub(crate) fn text(&mut self, x: f64, y: f64, text: &str, style: TextStyle) {
        let _ = write!(self.out, r#"<text x="{x:.1}" y="{y:.1}""#);
        if style.anchor != Anchor::Start {
            let _ = write!(self.out, r#" text-anchor="{}""#, style.anchor.attribute());
        }
        if (style.size - TEXT_SIZE).abs() > 1e-9 {
            let _ = write!(self.out, r#" font-size="{:.0}""#, style.size);
        }
        if style.bold {
            self.out.push_str(r#" font-weight="bold""#);
        }
        if let Some(fill) = style.fill {
            let _ = write!(self.out, r#" fill="{fill}""#);
        }
        if style.halo {
            self.out.push_str(
                r#" stroke="white" stroke-width="3" stroke-linejoin="round" paint-order="stroke""#,
            );
        }
        if style.vertical {
            let _ = write!(self.out, r#" transform="rotate(-90 {x:.1} {y:.1})""#);
        }
        let _ = writeln!(self.out, ">{}</text>", escape(text));
    }

    /// A straight line.
    pub(crate) fn line(&mut self, from: (f64, f64), to: (f64, f64), stroke: &str, extra: &str) {
        let _ = writeln!(
            self.out,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{stroke}"{}{extra}/>"#,
            from.0,
            from.1,
            to.0,
            to.1,
            if extra.is_empty() { "" } else { " " }
        );
    }

    /// A filled rectangle.
    pub(crate) fn rect(&mut self, at: (f64, f64), size: (f64, f64), fill: &str, extra: &str) {
        let _ = writeln!(
            self.out,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}"{}{extra}/>"#,
            at.0,
            at.1,
            size.0,
            size.1,
            if extra.is_empty() { "" } else { " " }
        );
    }

    /// The plot's area, unpainted: where a reader (and a test) finds the plot's edges.
    pub(crate) fn plot_area(&mut self, left: f64, top: f64, right: f64, bottom: f64) {
        let _ = writeln!(
            self.out,
            r#"<rect class="plot" x="{left:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="none"/>"#,
            right - left,
            bottom - top
        );
    }

    /// Anything else, written as given (one element per line).
    pub(crate) fn raw(&mut self, element: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(element);
        self.out.push('\n');
    }

    /// The finished document.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// `x,y x,y …` for a `points` attribute.
pub(crate) fn points_attribute(points: &[(f64, f64)]) -> String {
    let mut out = String::new();
    for (index, (x, y)) in points.iter().enumerate() {
        if index > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{x:.1},{y:.1}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_svg_and_html_well_formed() {
        assert_eq!(
            escape("a<b & \"c\">'d'"),
            "a&lt;b &amp; &quot;c&quot;&gt;'d'"
        );
        assert_eq!(escape("plain … text"), "plain … text");
    }

    #[test]
    fn a_document_opens_with_its_size_and_closes() {
        let mut svg = Svg::open(860.0, 460.0, "a <chart>");
        svg.text(10.0, 20.0, "x & y", TextStyle::new(Anchor::Middle).bold());
        let out = svg.finish();
        assert!(out.contains(r#" width="860" height="460" viewBox="0 0 860 460""#));
        assert!(out.contains(r#"aria-label="a &lt;chart&gt;""#));
        assert!(out.contains(
            r#"<text x="10.0" y="20.0" text-anchor="middle" font-weight="bold">x &amp; y</text>"#
        ));
        assert!(out.ends_with("</svg>\n"));
    }
}
