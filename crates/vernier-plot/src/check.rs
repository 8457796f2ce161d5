//! Image checks for chart tests (feature `check`): a chart rendered as a reader sees it (resvg,
//! text laid out in `DejaVu Sans`), every text's box on the canvas, and what the SVG says it
//! drew where: points, cells and lines with their colours.
//!
//! ```no_run
//! use vernier_plot::check;
//!
//! let svg = vernier_plot::LineChart::new("title", "model on server, 2026-01-02 10:00")
//!     .series([vernier_plot::Series::new("a", vec![vernier_plot::Point::at(1.0, 2.0)])])
//!     .to_svg();
//! let image = check::render(&svg);
//! assert!(image.overlapping().is_empty() && image.outside().is_empty());
//! for point in check::circles(&svg) {
//!     assert!(image.shows(point.x, point.y, point.rgb));
//! }
//! ```

use std::path::Path;
use std::sync::{Arc, OnceLock};

pub use resvg;
use resvg::{tiny_skia, usvg};

/// One text as laid out: its words and its box in canvas pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct TextBox {
    /// The text.
    pub text: String,
    /// Its left edge.
    pub left: f32,
    /// Its top edge.
    pub top: f32,
    /// Its right edge.
    pub right: f32,
    /// Its bottom edge.
    pub bottom: f32,
}

impl TextBox {
    /// `[left, top, right, bottom]`.
    pub fn edges(&self) -> [f32; 4] {
        [self.left, self.top, self.right, self.bottom]
    }
}

/// Whether two text boxes overlap (touching, or half a pixel into each other where glyph
/// boxes meet, is not overlapping).
pub fn overlap(a: &TextBox, b: &TextBox) -> bool {
    edges_overlap(a.edges(), b.edges())
}

/// [`overlap`] of two boxes given as `[left, top, right, bottom]`.
pub fn edges_overlap(a: [f32; 4], b: [f32; 4]) -> bool {
    a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5
}

/// A chart rendered: its pixels and its texts' boxes.
#[derive(Debug)]
pub struct Rendered {
    /// The image.
    pub pixmap: tiny_skia::Pixmap,
    /// Every text element, in document order.
    pub texts: Vec<TextBox>,
}

impl Rendered {
    /// The canvas's width in pixels.
    pub fn width(&self) -> f32 {
        self.pixmap.width() as f32
    }

    /// The canvas's height in pixels.
    pub fn height(&self) -> f32 {
        self.pixmap.height() as f32
    }

    /// The texts that reach outside the canvas.
    pub fn outside(&self) -> Vec<&TextBox> {
        let (width, height) = (self.width(), self.height());
        self.texts
            .iter()
            .filter(|b| b.left < 0.0 || b.top < 0.0 || b.right > width || b.bottom > height)
            .collect()
    }

    /// Every pair of texts that overlap.
    pub fn overlapping(&self) -> Vec<(&TextBox, &TextBox)> {
        let mut pairs = Vec::new();
        for (index, a) in self.texts.iter().enumerate() {
            for b in &self.texts[index + 1..] {
                if overlap(a, b) {
                    pairs.push((a, b));
                }
            }
        }
        pairs
    }

    /// The texts exactly `text`.
    pub fn find(&self, text: &str) -> Vec<&TextBox> {
        self.texts.iter().filter(|b| b.text == text).collect()
    }

    /// The colour of the pixel nearest (`x`, `y`), `None` off the canvas.
    pub fn colour_at(&self, x: f32, y: f32) -> Option<[u8; 3]> {
        if x < 0.0 || y < 0.0 {
            return None;
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a position on the canvas: small and positive"
        )]
        let (px, py) = (x.round() as u32, y.round() as u32);
        let pixel = self.pixmap.pixel(px, py)?;
        Some([pixel.red(), pixel.green(), pixel.blue()])
    }

    /// Whether the pixel at (`x`, `y`) shows `rgb` (each channel within 40).
    pub fn shows(&self, x: f32, y: f32, rgb: [u8; 3]) -> bool {
        self.colour_at(x, y).is_some_and(|seen| close(seen, rgb))
    }

    /// Whether any pixel along the straight line from `from` to `to` shows `rgb`.
    pub fn shows_along(&self, from: (f32, f32), to: (f32, f32), rgb: [u8; 3]) -> bool {
        let steps = (to.0 - from.0)
            .abs()
            .max((to.1 - from.1).abs())
            .ceil()
            .max(1.0);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a segment on the canvas: a few thousand pixels at most"
        )]
        let steps_n = steps as u32;
        (0..=steps_n).any(|i| {
            let t = i as f32 / steps;
            self.shows(
                from.0 + (to.0 - from.0) * t,
                from.1 + (to.1 - from.1) * t,
                rgb,
            )
        })
    }

    /// Writes the image as PNG at `path` (for a person to look at).
    pub fn save_png(&self, path: &Path) -> Result<(), String> {
        self.pixmap
            .save_png(path)
            .map_err(|error| error.to_string())
    }
}

/// Whether two colours are the same to the eye: each channel within 40.
pub fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 40)
}

fn font_database() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    Arc::clone(FONTS.get_or_init(|| {
        let mut database = usvg::fontdb::Database::new();
        database.load_system_fonts();
        // `sans-serif` is Arial to the font database unless told otherwise.
        database.set_sans_serif_family("DejaVu Sans");
        Arc::new(database)
    }))
}

/// Rendering options with the system's fonts, `sans-serif` being `DejaVu Sans`.
///
/// # Panics
///
/// When the system has no fonts (install Debian's `fonts-dejavu-core`).
pub fn fonts() -> usvg::Options<'static> {
    let options = usvg::Options {
        fontdb: font_database(),
        ..usvg::Options::default()
    };
    assert!(
        !options.fontdb.is_empty(),
        "no system fonts to lay out the charts' text: install Debian's fonts-dejavu-core (scripts/test.sh does)"
    );
    options
}

/// `svg` rendered with [`fonts`].
///
/// # Panics
///
/// When `svg` is not valid SVG, or there are no fonts.
pub fn render(svg: &str) -> Rendered {
    render_with(svg, &fonts())
}

/// `svg` rendered with `options`.
///
/// # Panics
///
/// When `svg` is not valid SVG.
pub fn render_with(svg: &str, options: &usvg::Options<'_>) -> Rendered {
    let tree = match usvg::Tree::from_str(svg, options) {
        Ok(tree) => tree,
        Err(error) => panic!("the chart is not valid SVG ({error}): {svg}"),
    };
    let size = tree.size().to_int_size();
    let Some(mut pixmap) = tiny_skia::Pixmap::new(size.width(), size.height()) else {
        panic!("no canvas of {size:?}");
    };
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let mut texts = Vec::new();
    text_boxes(tree.root(), &mut texts);
    Rendered { pixmap, texts }
}

fn text_boxes(group: &usvg::Group, out: &mut Vec<TextBox>) {
    for node in group.children() {
        match node {
            usvg::Node::Group(inner) => text_boxes(inner, out),
            usvg::Node::Text(text) => {
                let b = text.abs_bounding_box();
                out.push(TextBox {
                    text: text.chunks().iter().map(usvg::TextChunk::text).collect(),
                    left: b.left(),
                    top: b.top(),
                    right: b.right(),
                    bottom: b.bottom(),
                });
            }
            _ => {}
        }
    }
}

/// `#rrggbb` as its three channels.
pub fn hex(colour: &str) -> Option<[u8; 3]> {
    let digits = colour.strip_prefix('#')?;
    if digits.len() != 6 {
        return None;
    }
    let channel = |i: usize| u8::from_str_radix(digits.get(i..i + 2)?, 16).ok();
    Some([channel(0)?, channel(2)?, channel(4)?])
}

/// The value of attribute `name` in the tag text `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = start + tag[start..].find('"')?;
    Some(&tag[start..end])
}

fn number(tag: &str, name: &str) -> Option<f32> {
    attribute(tag, name)?.parse().ok()
}

/// The tags of the elements `element` (`circle`, `rect`, …) in `svg`, each up to its `>`.
fn tags<'a>(svg: &'a str, element: &str) -> Vec<&'a str> {
    let opening = format!("<{element} ");
    svg.match_indices(&opening)
        .filter_map(|(start, _)| {
            let from = start + opening.len() - 1;
            let end = from + svg[from..].find('>')?;
            Some(&svg[from..end])
        })
        .collect()
}

/// The plot's area (`<rect class="plot">`): `[left, top, right, bottom]`.
pub fn plot_area(svg: &str) -> Option<[f32; 4]> {
    let tag = tags(svg, "rect")
        .into_iter()
        .find(|tag| attribute(tag, "class") == Some("plot"))?;
    let (x, y) = (number(tag, "x")?, number(tag, "y")?);
    Some([x, y, x + number(tag, "width")?, y + number(tag, "height")?])
}

/// A point the SVG draws: a circle's centre and its fill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marker {
    /// Its centre's x.
    pub x: f32,
    /// Its centre's y.
    pub y: f32,
    /// Its fill colour.
    pub rgb: [u8; 3],
}

/// Every `<circle>` with a `#rrggbb` fill: the points of line, scatter, history and ratio
/// charts.
pub fn circles(svg: &str) -> Vec<Marker> {
    tags(svg, "circle")
        .into_iter()
        .filter_map(|tag| {
            Some(Marker {
                x: number(tag, "cx")?,
                y: number(tag, "cy")?,
                rgb: hex(attribute(tag, "fill")?)?,
            })
        })
        .collect()
}

/// A heat map's cell as drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Its left edge.
    pub x: f32,
    /// Its top edge.
    pub y: f32,
    /// Its width.
    pub width: f32,
    /// Its height.
    pub height: f32,
    /// Its fill colour.
    pub rgb: [u8; 3],
}

impl Cell {
    /// Its centre.
    pub fn centre(&self) -> (f32, f32) {
        (self.x + self.width / 2.0, self.y + self.height / 2.0)
    }
}

/// Every heat-map cell (`<rect class="cell">`).
pub fn cells(svg: &str) -> Vec<Cell> {
    tags(svg, "rect")
        .into_iter()
        .filter(|tag| attribute(tag, "class") == Some("cell"))
        .filter_map(|tag| {
            Some(Cell {
                x: number(tag, "x")?,
                y: number(tag, "y")?,
                width: number(tag, "width")?,
                height: number(tag, "height")?,
                rgb: hex(attribute(tag, "fill")?)?,
            })
        })
        .collect()
}

/// A line the SVG draws: its vertices and its stroke.
#[derive(Debug, Clone, PartialEq)]
pub struct Polyline {
    /// Its vertices in order.
    pub points: Vec<(f32, f32)>,
    /// Its stroke colour.
    pub rgb: [u8; 3],
}

/// Every `<polyline class="{class}">`: `series` (a line or step curve) or `front`.
pub fn polylines(svg: &str, class: &str) -> Vec<Polyline> {
    tags(svg, "polyline")
        .into_iter()
        .filter(|tag| attribute(tag, "class") == Some(class))
        .filter_map(|tag| {
            let points = attribute(tag, "points")?
                .split(' ')
                .filter_map(|pair| {
                    let (x, y) = pair.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            Some(Polyline {
                points,
                rgb: hex(attribute(tag, "stroke")?)?,
            })
        })
        .collect()
}
