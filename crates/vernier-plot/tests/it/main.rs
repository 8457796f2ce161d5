//! Every chart kind rendered as a reader sees it (resvg, `DejaVu Sans`) and checked in the
//! image: no two texts overlap, nothing outside the canvas, every point, line and cell shown in
//! its colour, the legend right of the plot, labels at the values asked for.

mod categorical;
mod linear;
mod readings;
mod rows;

use vernier_plot::check::{self, Rendered};

/// `svg` rendered, with the rules every chart keeps asserted: no text outside the canvas, no
/// two texts on each other. `VERNIER_KEEP_CHARTS=FOLDER` keeps the PNG as `name.png`.
pub(crate) fn rendered(name: &str, svg: &str) -> Rendered {
    let image = check::render(svg);
    if let Some(folder) = std::env::var_os("VERNIER_KEEP_CHARTS") {
        let path = std::path::Path::new(&folder).join(format!("{name}.png"));
        image.save_png(&path).expect("write the PNG");
    }
    let outside = image.outside();
    assert!(
        outside.is_empty(),
        "{name}: outside the canvas: {outside:?}"
    );
    let overlapping = image.overlapping();
    assert!(
        overlapping.is_empty(),
        "{name}: overprinted: {overlapping:?}"
    );
    image
}

/// Every point the SVG draws shows in its own colour; their number.
pub(crate) fn points_visible(name: &str, svg: &str, image: &Rendered) -> usize {
    let points = check::circles(svg);
    for point in &points {
        assert!(
            image.shows(point.x, point.y, point.rgb),
            "{name}: the point at ({}, {}) shows {:?}, not {:?}",
            point.x,
            point.y,
            image.colour_at(point.x, point.y),
            point.rgb
        );
    }
    points.len()
}

/// The plot's edges.
pub(crate) fn plot(svg: &str) -> [f32; 4] {
    check::plot_area(svg).expect("the SVG marks its plot area")
}

/// Each of `names` is a text right of the plot (the legend's column).
pub(crate) fn legend_right_of_plot(name: &str, svg: &str, image: &Rendered, names: &[&str]) {
    let [_, _, right, _] = plot(svg);
    for entry in names {
        let found = image.find(entry);
        assert!(!found.is_empty(), "{name}: no legend entry {entry:?}");
        for b in found {
            assert!(b.left > right, "{name}: {entry:?} is on the plot: {b:?}");
        }
    }
}

/// The texts exactly `labels`, one each, their centres left to right and evenly spaced.
pub(crate) fn evenly_spaced(name: &str, image: &Rendered, labels: &[&str]) -> Vec<f32> {
    let centres: Vec<f32> = labels
        .iter()
        .map(|label| {
            let found = image.find(label);
            assert_eq!(found.len(), 1, "{name}: the label {label:?}: {found:?}");
            f32::midpoint(found[0].left, found[0].right)
        })
        .collect();
    for pair in centres.windows(3) {
        let (a, b) = (pair[1] - pair[0], pair[2] - pair[1]);
        assert!(a > 0.0 && (a - b).abs() < 1.0, "{name}: {centres:?}");
    }
    centres
}

/// The numbers printed left of the plot (the y axis's ticks), top to bottom, checked round:
/// one step of 1, 2, 2.5 or 5 times a power of ten, and one number of decimals.
pub(crate) fn round_y_ticks(name: &str, svg: &str, image: &Rendered, suffix: &str) -> Vec<f64> {
    let [left, top, _, bottom] = plot(svg);
    let mut ticks: Vec<(f32, &str)> = image
        .texts
        .iter()
        .filter(|b| b.right <= left && b.top >= top - 10.0 && b.bottom <= bottom + 10.0)
        .filter_map(|b| Some((b.top, b.text.strip_suffix(suffix)?)))
        .filter(|(_, text)| text.parse::<f64>().is_ok())
        .collect();
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let decimals: Vec<usize> = ticks
        .iter()
        .map(|(_, t)| t.split_once('.').map_or(0, |(_, d)| d.len()))
        .collect();
    assert!(
        decimals.windows(2).all(|w| w[0] == w[1]),
        "{name}: {ticks:?}"
    );
    let values: Vec<f64> = ticks.iter().filter_map(|(_, t)| t.parse().ok()).collect();
    assert!(values.len() >= 3, "{name}: {ticks:?}");
    let step = values[0] - values[1];
    for pair in values.windows(2) {
        assert!(
            ((pair[0] - pair[1]) - step).abs() < 1e-9 * step.max(1.0),
            "{name}: {values:?}"
        );
    }
    let mantissa = step / 10f64.powf(step.log10().floor());
    assert!(
        [1.0, 2.0, 2.5, 5.0]
            .iter()
            .any(|m| (m - mantissa).abs() < 1e-9),
        "{name}: step {step}"
    );
    values
}
