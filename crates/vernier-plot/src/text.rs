//! Text as a browser lays it out in `DejaVu Sans`, the font the charts name first: each
//! character's advance, a line's width and box, and long text cut with an ellipsis to a width.

/// Advance widths of `' '..='~'` in `DejaVu Sans (Book)`, in 1/2048 em, read from the font's
/// `hmtx` table.
const REGULAR: [u16; 95] = [
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048,
    1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235,
    1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799, 690, 799, 1716, 1024, 1024,
    1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298, 1253, 1300,
    1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716,
];
/// The same for `DejaVu Sans Bold` (the titles).
const BOLD: [u16; 95] = [
    713, 934, 1067, 1716, 1425, 2052, 1786, 627, 936, 936, 1071, 1716, 778, 850, 778, 748, 1425,
    1425, 1425, 1425, 1425, 1425, 1425, 1425, 1425, 1425, 819, 819, 1716, 1716, 1716, 1188, 2048,
    1585, 1561, 1503, 1700, 1399, 1399, 1681, 1714, 762, 762, 1587, 1305, 2038, 1714, 1741, 1501,
    1741, 1577, 1475, 1397, 1663, 1585, 2259, 1579, 1483, 1485, 936, 748, 936, 1716, 1024, 1024,
    1382, 1466, 1214, 1466, 1389, 891, 1466, 1458, 702, 702, 1362, 702, 2134, 1458, 1407, 1466,
    1466, 1010, 1219, 979, 1458, 1335, 1892, 1321, 1335, 1192, 1458, 748, 1458, 1716,
];
const UNITS_PER_EM: f64 = 2048.0;
/// The font's ascent and descent (`hhea`: 1901 and 483 of 2048): a line's box, as a browser
/// and resvg measure it, runs from `baseline - ASCENT * size` to `baseline + DESCENT * size`.
pub(crate) const ASCENT: f64 = 1901.0 / UNITS_PER_EM;
pub(crate) const DESCENT: f64 = 483.0 / UNITS_PER_EM;

/// Font sizes, in pixels: the title (bold), every other text, and labels inside the plot.
pub(crate) const TITLE_SIZE: f64 = 15.0;
pub(crate) const TEXT_SIZE: f64 = 12.0;
pub(crate) const SMALL_SIZE: f64 = 11.0;

fn advance(c: char, bold: bool) -> u16 {
    let table = if bold { &BOLD } else { &REGULAR };
    match c {
        ' '..='~' => table[c as usize - 32],
        '–' | '°' => 1024,
        '·' => 651,
        'µ' => 1303,
        '×' | '≥' | '≤' | '±' | '✓' | '✗' | '−' => 1716,
        // The ellipsis, the em dash, and anything else at the widest advance the font has for
        // Latin text, so that a width is never under-estimated.
        _ => 2048,
    }
}

/// The width in pixels of `text` in `DejaVu Sans` at `font_size` pixels.
pub fn text_width(text: &str, font_size: f64) -> f64 {
    width_of(text, font_size, false)
}

pub(crate) fn width_of(text: &str, font_size: f64, bold: bool) -> f64 {
    let units: u32 = text.chars().map(|c| u32::from(advance(c, bold))).sum();
    f64::from(units) * font_size / UNITS_PER_EM
}

/// `text` cut to fit `max_width` pixels at `font_size` in `DejaVu Sans`, ending in an ellipsis
/// when cut; unchanged when it fits.
pub fn fit(text: &str, max_width: f64, font_size: f64) -> String {
    fit_as(text, max_width, font_size, false)
}

pub(crate) fn fit_as(text: &str, max_width: f64, font_size: f64, bold: bool) -> String {
    if width_of(text, font_size, bold) <= max_width {
        return text.to_owned();
    }
    let room = max_width - width_of("…", font_size, bold);
    let mut cut = String::new();
    let mut used = 0.0;
    for c in text.chars() {
        let next = f64::from(advance(c, bold)) * font_size / UNITS_PER_EM;
        if used + next > room {
            break;
        }
        used += next;
        cut.push(c);
    }
    let mut cut = cut.trim_end().to_owned();
    cut.push('…');
    cut
}

/// Where a text's `x` is: its start, middle or end (SVG's `text-anchor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Middle => "middle",
            Self::End => "end",
        }
    }
}

/// A box on the canvas, in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rect {
    pub(crate) left: f64,
    pub(crate) top: f64,
    pub(crate) right: f64,
    pub(crate) bottom: f64,
}

impl Rect {
    /// A square of side `2 * half` around a point.
    pub(crate) fn around(x: f64, y: f64, half: f64) -> Self {
        Self {
            left: x - half,
            top: y - half,
            right: x + half,
            bottom: y + half,
        }
    }

    /// Whether the two boxes share more than an edge, with `gap` pixels kept between them.
    pub(crate) fn meets(&self, other: &Self, gap: f64) -> bool {
        self.left < other.right + gap
            && other.left < self.right + gap
            && self.top < other.bottom + gap
            && other.top < self.bottom + gap
    }

    pub(crate) fn inside(&self, bounds: &Self) -> bool {
        self.left >= bounds.left
            && self.right <= bounds.right
            && self.top >= bounds.top
            && self.bottom <= bounds.bottom
    }
}

/// The box a line of `text` takes with its baseline at `y`.
pub(crate) fn text_box(x: f64, y: f64, text: &str, font_size: f64, anchor: Anchor) -> Rect {
    let width = text_width(text, font_size);
    let left = match anchor {
        Anchor::Start => x,
        Anchor::Middle => x - width / 2.0,
        Anchor::End => x - width,
    };
    Rect {
        left,
        top: y - ASCENT * font_size,
        right: left + width,
        bottom: y + DESCENT * font_size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_dejavu_sans_advances() {
        // "0" is 1303/2048 em: 7.63 px at 12 px; "level 5" 6824/2048 em.
        assert!((text_width("0", 12.0) - 7.634_765_625).abs() < 1e-9);
        assert!((text_width("level 5", 12.0) - 39.984_375).abs() < 1e-9);
        assert!(width_of("A", 15.0, true) > width_of("A", 15.0, false));
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis_at_a_width() {
        assert_eq!(fit("abc", 100.0, 12.0), "abc");
        let cut = fit("a long series name that cannot fit", 80.0, 12.0);
        assert!(cut.ends_with('…'), "{cut}");
        assert!(text_width(&cut, 12.0) <= 80.0, "{cut}");
        assert!(cut.starts_with("a long"), "{cut}");
        // Nothing fits: the ellipsis alone.
        assert_eq!(fit("abcdef", 1.0, 12.0), "…");
    }

    #[test]
    fn a_text_box_follows_its_anchor() {
        let start = text_box(10.0, 20.0, "ab", 12.0, Anchor::Start);
        let end = text_box(10.0, 20.0, "ab", 12.0, Anchor::End);
        assert!((start.left - 10.0).abs() < 1e-9 && (end.right - 10.0).abs() < 1e-9);
        assert!((start.top - (20.0 - ASCENT * 12.0)).abs() < 1e-9);
        assert!(start.meets(&Rect::around(12.0, 18.0, 1.0), 0.0));
        assert!(!start.meets(&Rect::around(40.0, 18.0, 1.0), 0.0));
    }
}
