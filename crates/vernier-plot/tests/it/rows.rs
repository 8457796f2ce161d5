//! Ratio charts and heat maps: rows of cells.

use vernier_plot::{Format, HeatCell, HeatMap, RatioChart, RatioRow, check};

use crate::{legend_right_of_plot, plot, points_visible, rendered};

const SUBTITLE: &str = "A: qwen-7b on vllm 0.6.3; B: qwen-7b on sglang 0.4";

fn ratios() -> String {
    let rows = [
        ("prose 1024 tok, 1 stream", 1.12, (1.05, 1.2)),
        ("prose 1024 tok, 8 streams", 1.45, (1.3, 1.6)),
        ("prose 8192 tok, 1 stream", 0.82, (0.75, 0.9)),
        ("code 1024 tok, 1 stream", 1.02, (0.97, 1.08)),
        ("code 1024 tok, 8 streams", 2.4, (2.1, 2.7)),
        ("code 8192 tok, 8 streams", 0.98, (0.8, 1.2)),
    ];
    RatioChart::new("decode tok/s: A / B by cell", SUBTITLE)
        .x_title("A / B (log scale)")
        .legend("A / B, median", "95% interval")
        .rows(rows.iter().map(|(label, value, (low, high))| {
            RatioRow::new(*label, *value).with_interval(*low, *high)
        }))
        .to_svg()
}

#[test]
fn a_ratio_chart_draws_each_cell_around_parity() {
    let svg = ratios();
    let image = rendered("ratio", &svg);
    assert_eq!(points_visible("ratio", &svg, &image), 6);
    let [left, _, right, _] = plot(&svg);
    for label in ["prose 1024 tok, 1 stream", "code 8192 tok, 8 streams"] {
        let found = image.find(label);
        assert_eq!(found.len(), 1, "{label}");
        assert!(found[0].right <= left, "{label} is left of the plot");
    }
    let parity = image.find("1× (parity)");
    assert_eq!(parity.len(), 2, "on the line and in the legend: {parity:?}");
    assert!(parity.iter().any(|b| b.right < right));
    assert_eq!(image.find("2.40×").len(), 1, "the value beside its dot");
    // Round ticks on the log axis, one number of decimals.
    let ticks: Vec<&str> = ["0.7×", "1.0×", "1.5×", "2.0×", "3.0×"]
        .into_iter()
        .filter(|t| !image.find(t).is_empty())
        .collect();
    assert!(ticks.len() >= 3, "{:?}", image.texts);
    legend_right_of_plot("ratio", &svg, &image, &["A / B, median", "95% interval"]);
    assert_eq!(svg, ratios());
}

fn heat_map() -> String {
    let depths = ["0%", "25%", "50%", "75%", "100%", "all"];
    let row = |found: [u32; 6]| -> Vec<HeatCell> {
        found
            .iter()
            .map(|n| HeatCell::value(f64::from(*n) / 4.0, format!("{n}/4")))
            .collect()
    };
    let mut refused = vec![HeatCell::grey("exceeded"); 5];
    refused.push(HeatCell::blank("–"));
    HeatMap::new("Needles found by prompt length and depth", SUBTITLE)
        .x_title("needle depth")
        .y_title("prompt length")
        .columns(depths)
        .scale("found", 0.0, 1.0, Format::Percent)
        .meanings("refused: context exceeded", "not run")
        .row("1k", row([4, 4, 4, 4, 4, 4]))
        .row("8k", row([4, 3, 2, 4, 4, 3]))
        .row("32k", row([2, 1, 0, 1, 3, 1]))
        .row("128k", refused)
        .to_svg()
}

#[test]
fn a_heat_map_fills_every_cell_in_its_colour_with_its_label() {
    let svg = heat_map();
    let image = rendered("heat map", &svg);
    let cells = check::cells(&svg);
    assert_eq!(cells.len(), 24);
    for cell in &cells {
        // A corner of the cell, clear of its label and its white edge.
        assert!(
            image.shows(cell.x + 4.0, cell.y + 4.0, cell.rgb),
            "the cell at ({}, {}) shows {:?}, not {:?}",
            cell.x,
            cell.y,
            image.colour_at(cell.x + 4.0, cell.y + 4.0),
            cell.rgb
        );
    }
    assert_eq!(image.find("exceeded").len(), 5);
    assert_eq!(image.find("0/4").len(), 1);
    // Each column's label centred under its cells.
    for (column, label) in ["0%", "25%", "50%", "75%", "100%", "all"]
        .iter()
        .enumerate()
    {
        let found = image.find(label);
        let centre = cells[column].centre().0;
        assert!(
            found
                .iter()
                .any(|b| (f32::midpoint(b.left, b.right) - centre).abs() < 1.0),
            "{label}: {found:?}"
        );
    }
    for row in ["1k", "8k", "32k", "128k"] {
        assert_eq!(image.find(row).len(), 1, "{row}");
    }
    legend_right_of_plot(
        "heat map",
        &svg,
        &image,
        &["found 0%", "refused: context exceeded", "not run"],
    );
    assert_eq!(svg, heat_map());
}
