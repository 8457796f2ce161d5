//! Labels inside the plot placed where they overprint nothing: each label tries its places in
//! order and takes the first that stays inside the plot and clear of every point and every
//! label placed before it; a label with no free place is left out.

use crate::text::{Anchor, Rect, text_box};

/// Pixels kept between a label and anything else.
const GAP: f64 = 1.0;

/// Where one label may go: its anchor point and baseline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spot {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) anchor: Anchor,
}

impl Spot {
    pub(crate) const fn new(x: f64, y: f64, anchor: Anchor) -> Self {
        Self { x, y, anchor }
    }
}

/// The places around a point of radius `r` at (`x`, `y`), nearest first: above right, above
/// left, below right, below left, above, below.
pub(crate) fn around_point(x: f64, y: f64, r: f64) -> [Spot; 6] {
    let side = r + 3.0;
    [
        Spot::new(x + side, y - r - 2.0, Anchor::Start),
        Spot::new(x - side, y - r - 2.0, Anchor::End),
        Spot::new(x + side, y + r + 11.0, Anchor::Start),
        Spot::new(x - side, y + r + 11.0, Anchor::End),
        Spot::new(x, y - r - 5.0, Anchor::Middle),
        Spot::new(x, y + r + 14.0, Anchor::Middle),
    ]
}

/// What is already on the plot, and the plot's bounds.
#[derive(Debug)]
pub(crate) struct Placer {
    bounds: Rect,
    taken: Vec<Rect>,
}

impl Placer {
    pub(crate) fn new(bounds: Rect) -> Self {
        Self {
            bounds,
            taken: Vec::new(),
        }
    }

    /// Keeps labels off `area` (a point, a text drawn elsewhere).
    pub(crate) fn block(&mut self, area: Rect) {
        self.taken.push(area);
    }

    /// The first of `spots` where `text` at `size` is inside the bounds and meets nothing
    /// taken; taken from then on.
    pub(crate) fn place(&mut self, text: &str, size: f64, spots: &[Spot]) -> Option<Spot> {
        let spot = spots.iter().copied().find(|spot| {
            let area = text_box(spot.x, spot.y, text, size, spot.anchor);
            area.inside(&self.bounds) && !self.taken.iter().any(|t| t.meets(&area, GAP))
        })?;
        self.taken
            .push(text_box(spot.x, spot.y, text, size, spot.anchor));
        Some(spot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> Rect {
        Rect {
            left: 0.0,
            top: 0.0,
            right: 200.0,
            bottom: 100.0,
        }
    }

    #[test]
    fn a_label_takes_the_first_free_place() {
        let mut placer = Placer::new(bounds());
        placer.block(Rect::around(50.0, 50.0, 4.5));
        let first = placer
            .place("12.3%", 11.0, &around_point(50.0, 50.0, 3.5))
            .expect("a place");
        assert_eq!(first.anchor, Anchor::Start);
        // The same label again cannot sit on the first: it goes left.
        let second = placer
            .place("12.3%", 11.0, &around_point(50.0, 50.0, 3.5))
            .expect("a place");
        assert_eq!(second.anchor, Anchor::End);
    }

    #[test]
    fn a_label_never_leaves_the_plot() {
        let mut placer = Placer::new(bounds());
        // At the right edge: only places on the left fit.
        let spot = placer
            .place("a long label", 11.0, &around_point(198.0, 50.0, 3.5))
            .expect("a place");
        assert_eq!(spot.anchor, Anchor::End);
        // Wider than the plot: nowhere.
        let wide = "w".repeat(60);
        assert!(
            placer
                .place(&wide, 11.0, &around_point(100.0, 50.0, 3.5))
                .is_none()
        );
    }
}
