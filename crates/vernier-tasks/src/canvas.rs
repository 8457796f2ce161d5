//! The canvas the vision tasks are drawn on: an RGB image with rectangles, discs, triangles and
//! text (`DejaVu` Sans through `ab_glyph`), PNG in and out, and the reading the proofs rest on:
//! the 4-connected regions of one colour, and the box the ink covers.

#![expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "pixel geometry: every coordinate and count is far below u32::MAX (images are at most 384 pixels a side)"
)]

use std::collections::VecDeque;
use std::sync::OnceLock;

use ab_glyph::{Font as _, FontRef, PxScale, ScaleFont as _};
use serde::{Deserialize, Serialize};

const FONT_BYTES: &[u8] = include_bytes!("../../../fixtures/fonts/DejaVuSans.ttf");

/// An RGB colour.
pub type Rgb = [u8; 3];

pub(crate) const WHITE: Rgb = [255, 255, 255];
pub(crate) const BLACK: Rgb = [0, 0, 0];
pub(crate) const GRID: Rgb = [205, 205, 205];

/// The closed palette every shape is drawn in, with the names the prompts use.
pub const PALETTE: [(&str, Rgb); 6] = [
    ("red", [220, 40, 40]),
    ("green", [40, 160, 60]),
    ("blue", [40, 80, 220]),
    ("yellow", [230, 200, 30]),
    ("purple", [140, 60, 180]),
    ("orange", [240, 130, 20]),
];

pub(crate) fn colour(name: &str) -> Rgb {
    PALETTE
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(BLACK, |(_, rgb)| *rgb)
}

fn font() -> Option<&'static FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(FONT_BYTES).ok())
        .as_ref()
}

/// An RGB image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major pixels.
    pub pixels: Vec<Rgb>,
}

/// The box a text covers, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBox {
    /// Left edge.
    pub x0: u32,
    /// Top edge.
    pub y0: u32,
    /// Right edge (exclusive).
    pub x1: u32,
    /// Bottom edge (exclusive).
    pub y1: u32,
}

impl TextBox {
    /// `bounds` grown to hold the pixel (x, y) (a box of that pixel alone when empty).
    fn grow(bounds: &mut Option<Self>, x: u32, y: u32) {
        let b = bounds.get_or_insert(Self {
            x0: x,
            y0: y,
            x1: x + 1,
            y1: y + 1,
        });
        b.x0 = b.x0.min(x);
        b.y0 = b.y0.min(y);
        b.x1 = b.x1.max(x + 1);
        b.y1 = b.y1.max(y + 1);
    }
}

impl Image {
    /// A white image.
    pub fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            pixels: vec![WHITE; (width * height) as usize],
        }
    }

    pub(crate) fn put(&mut self, x: i64, y: i64, rgb: Rgb) {
        if x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height) {
            let index = y as usize * self.width as usize + x as usize;
            self.pixels[index] = rgb;
        }
    }

    /// The pixel at (x, y).
    pub fn get(&self, x: u32, y: u32) -> Rgb {
        self.pixels[y as usize * self.width as usize + x as usize]
    }

    /// Fills the rectangle with its top-left corner at (x, y).
    pub fn fill_rect(&mut self, x: u32, y: u32, w: u32, h: u32, rgb: Rgb) {
        for dy in 0..h {
            for dx in 0..w {
                self.put(i64::from(x + dx), i64::from(y + dy), rgb);
            }
        }
    }

    /// Fills the disc centred at (cx, cy).
    pub fn fill_circle(&mut self, cx: u32, cy: u32, r: u32, rgb: Rgb) {
        let (cx, cy, r) = (i64::from(cx), i64::from(cy), i64::from(r));
        for y in cy - r..=cy + r {
            for x in cx - r..=cx + r {
                if (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r {
                    self.put(x, y, rgb);
                }
            }
        }
    }

    /// Fills the upward triangle inside the square of side `s` at (x, y).
    pub fn fill_triangle(&mut self, x: u32, y: u32, s: u32, rgb: Rgb) {
        for dy in 0..s {
            // Row dy spans a width growing linearly from the apex to the base.
            let half = (u64::from(dy) * u64::from(s) / u64::from(s.max(1)) / 2) as u32;
            let mid = x + s / 2;
            for px in mid.saturating_sub(half)..=(mid + half).min(x + s - 1) {
                self.put(i64::from(px), i64::from(y + dy), rgb);
            }
        }
    }

    /// Draws `text` in black at `px` pixels per em with its top-left at (x, y); gives the box
    /// its ink covers. Lines are split at `\n`.
    pub fn draw_text(&mut self, text: &str, x: u32, y: u32, px: f32) -> Option<TextBox> {
        let font = font()?;
        let scaled = font.as_scaled(PxScale::from(px));
        let mut ink: Option<TextBox> = None;
        let line_height = scaled.height() + scaled.line_gap();
        for (row, line) in text.split('\n').enumerate() {
            let baseline = y as f32 + scaled.ascent() + row as f32 * line_height;
            let mut caret = x as f32;
            let mut previous = None;
            for ch in line.chars() {
                let id = font.glyph_id(ch);
                if let Some(previous) = previous {
                    caret += scaled.kern(previous, id);
                }
                let glyph = id.with_scale_and_position(px, ab_glyph::point(caret, baseline));
                caret += scaled.h_advance(id);
                previous = Some(id);
                let Some(outlined) = font.outline_glyph(glyph) else {
                    continue;
                };
                let bounds = outlined.px_bounds();
                let mut marks = Vec::new();
                outlined.draw(|gx, gy, coverage| {
                    if coverage > 0.5 {
                        marks.push((
                            bounds.min.x as i64 + i64::from(gx),
                            bounds.min.y as i64 + i64::from(gy),
                        ));
                    }
                });
                for (mx, my) in marks {
                    self.put(mx, my, BLACK);
                    if mx >= 0 && my >= 0 {
                        TextBox::grow(&mut ink, mx as u32, my as u32);
                    }
                }
            }
        }
        ink
    }

    /// The image as a PNG file.
    pub fn to_png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let data: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        if let Ok(mut writer) = encoder.write_header() {
            let _ = writer.write_image_data(&data);
        }
        out
    }

    /// Decodes an 8-bit RGB PNG.
    pub fn from_png(bytes: &[u8]) -> Result<Self, String> {
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder
            .read_info()
            .map_err(|e| format!("decode the PNG: {e}"))?;
        let mut data = vec![0; reader.output_buffer_size().unwrap_or(0)];
        let info = reader
            .next_frame(&mut data)
            .map_err(|e| format!("decode the PNG: {e}"))?;
        if info.color_type != png::ColorType::Rgb || info.bit_depth != png::BitDepth::Eight {
            return Err(format!(
                "the PNG is {:?} at {:?}; the proof reads 8-bit RGB",
                info.color_type, info.bit_depth
            ));
        }
        let pixels = data[..info.buffer_size()]
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        Ok(Self {
            width: info.width,
            height: info.height,
            pixels,
        })
    }

    /// The 4-connected regions of exactly this colour: (pixels, bounding box) each.
    pub fn regions(&self, rgb: Rgb) -> Vec<(u32, TextBox)> {
        let (width, height) = (self.width as usize, self.height as usize);
        let mut seen = vec![false; width * height];
        let mut found = Vec::new();
        for start in 0..width * height {
            if seen[start] || self.pixels[start] != rgb {
                continue;
            }
            seen[start] = true;
            let mut queue = VecDeque::from([start]);
            let mut count = 0u32;
            let mut bounds = TextBox {
                x0: u32::MAX,
                y0: u32::MAX,
                x1: 0,
                y1: 0,
            };
            while let Some(at) = queue.pop_front() {
                count += 1;
                let (x, y) = ((at % width) as u32, (at / width) as u32);
                bounds.x0 = bounds.x0.min(x);
                bounds.y0 = bounds.y0.min(y);
                bounds.x1 = bounds.x1.max(x + 1);
                bounds.y1 = bounds.y1.max(y + 1);
                let mut visit = |next: usize| {
                    if !seen[next] && self.pixels[next] == rgb {
                        seen[next] = true;
                        queue.push_back(next);
                    }
                };
                if x > 0 {
                    visit(at - 1);
                }
                if (x as usize) + 1 < width {
                    visit(at + 1);
                }
                if y > 0 {
                    visit(at - width);
                }
                if (y as usize) + 1 < height {
                    visit(at + width);
                }
            }
            found.push((count, bounds));
        }
        found
    }

    /// The box of every pixel darker than mid-grey (text ink), if any.
    pub fn ink_box(&self) -> Option<TextBox> {
        let mut ink: Option<TextBox> = None;
        for (index, p) in self.pixels.iter().enumerate() {
            if u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 3 * 80 {
                let (x, y) = (
                    (index % self.width as usize) as u32,
                    (index / self.width as usize) as u32,
                );
                TextBox::grow(&mut ink, x, y);
            }
        }
        ink
    }
}
