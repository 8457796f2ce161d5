//! Step curves and scatter plots: linear x axes.

use vernier_plot::{
    Better, Format, Mark, Point, ScatterChart, Series, StepChart, check, pareto_front,
};

use crate::{legend_right_of_plot, plot, points_visible, rendered, round_y_ticks};

const SUBTITLE: &str = "A: qwen-7b on vllm; B: qwen-7b on sglang";

fn budget_chart() -> String {
    let curve = |name: &str, steps: &[(f64, f64)]| {
        Series::new(
            name,
            std::iter::once(Point::at(0.0, 0.0))
                .chain(steps.iter().map(|(x, y)| Point::at(*x, *y)))
                .collect(),
        )
    };
    StepChart::new("suite: pass rate against token budget", SUBTITLE)
        .x_title("token budget")
        .y_title("pass rate")
        .x_range(0.0, 9000.0)
        .y_format(Format::Percent)
        .y_range(0.0, 1.0)
        .series([
            curve("A qwen-7b", &[(1000.0, 0.2), (3000.0, 0.5), (8000.0, 0.6)]),
            curve("B qwen-7b", &[(2000.0, 0.3), (5000.0, 0.7), (9000.0, 0.7)]),
        ])
        .marks([
            Mark::At(2000.0, "crossover 2000".to_owned()),
            Mark::At(3000.0, "crossover 3000".to_owned()),
            Mark::At(5000.0, "crossover 5000".to_owned()),
        ])
        .to_svg()
}

#[test]
fn step_curves_both_show_where_they_run_together_and_crossovers_are_labelled() {
    let svg = budget_chart();
    let image = rendered("steps", &svg);
    let curves = check::polylines(&svg, "series");
    assert_eq!(curves.len(), 2);
    assert_ne!(curves[0].rgb, curves[1].rgb);
    for curve in &curves {
        // Every step of every curve shows in its colour somewhere along it, also from 0 to
        // 1000 tokens, where both curves are at 0%.
        for segment in curve.points.windows(2) {
            let (a, b) = (segment[0], segment[1]);
            if (b.0 - a.0).abs() + (b.1 - a.1).abs() < 12.0 {
                continue;
            }
            assert!(
                image.shows_along(a, b, curve.rgb),
                "the segment {a:?} to {b:?} does not show {:?}",
                curve.rgb
            );
        }
    }
    for crossover in ["crossover 2000", "crossover 3000", "crossover 5000"] {
        assert_eq!(image.find(crossover).len(), 1, "{crossover}");
    }
    // Round x ticks under the plot, at their values.
    let [left, _, right, bottom] = plot(&svg);
    let ticks: Vec<(f32, f32)> = image
        .texts
        .iter()
        .filter(|b| b.top > bottom && b.top < bottom + 20.0)
        .filter_map(|b| Some((f32::midpoint(b.left, b.right), b.text.parse().ok()?)))
        .collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    for (x, value) in &ticks {
        let expected = left + (right - left) * (value / 10_000.0);
        assert!((x - expected).abs() < 1.0, "{value} at {x}, not {expected}");
    }
    round_y_ticks("steps", &svg, &image, "%");
    legend_right_of_plot("steps", &svg, &image, &["A qwen-7b", "B qwen-7b"]);
    assert!(check::circles(&svg).is_empty(), "a step curve has no dots");
    assert_eq!(svg, budget_chart());
}

fn configurations() -> Vec<(&'static str, f64, f64)> {
    // (name, p99 latency ms, throughput tok/s), two engines' tuning runs; several close
    // together so that their labels must find room.
    vec![
        ("tp1 b8", 120.0, 900.0),
        ("tp1 b16", 180.0, 1500.0),
        ("tp1 b32", 260.0, 2100.0),
        ("tp2 b16", 150.0, 1450.0),
        ("tp2 b32", 190.0, 2000.0),
        ("tp2 b64", 320.0, 2600.0),
        ("tp2 b48", 330.0, 2450.0),
        ("tp4 b64", 200.0, 1600.0),
    ]
}

fn scatter() -> String {
    let runs = configurations();
    let front = pareto_front(
        &runs.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>(),
        Better::Lower,
        Better::Higher,
    );
    let names: Vec<&str> = front.iter().map(|i| runs[*i].0).collect();
    let series = |engine: &str, which: &[usize]| {
        Series::new(
            engine,
            which
                .iter()
                .map(|i| {
                    let (name, x, y) = runs[*i];
                    Point::at(x, y)
                        .with_x_interval(x * 0.93, x * 1.07)
                        .with_interval(y * 0.95, y * 1.05)
                        .named(name)
                })
                .collect(),
        )
    };
    ScatterChart::new("Throughput against p99 latency, by configuration", SUBTITLE)
        .x_title("p99 latency ms")
        .y_title("output tok/s")
        .series([
            series("vllm", &[0, 1, 2, 3]),
            series("sglang", &[4, 5, 6, 7]),
        ])
        .front("Pareto front", names, Better::Lower, Better::Higher)
        .to_svg()
}

#[test]
fn a_scatter_plot_shows_every_point_its_intervals_and_its_front_without_overprint() {
    let svg = scatter();
    let image = rendered("scatter", &svg);
    assert_eq!(points_visible("scatter", &svg, &image), 8);
    assert_eq!(
        svg.matches("stroke-width=\"1.2\"").count(),
        16,
        "x and y bars per point"
    );
    // The front passes through each of its points, and each is labelled with its name.
    let runs = configurations();
    let on_front = pareto_front(
        &runs.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>(),
        Better::Lower,
        Better::Higher,
    );
    assert_eq!(on_front, [0, 1, 2, 3, 4, 5]);
    let front = check::polylines(&svg, "front");
    assert_eq!(front.len(), 1);
    let circles = check::circles(&svg);
    for index in &on_front {
        let (name, _, _) = runs[*index];
        assert_eq!(image.find(name).len(), 1, "{name} is labelled");
        // The circles are in series order: vllm's 0..4, then sglang's 4..8.
        let point = circles[*index];
        assert!(
            front
                .iter()
                .flat_map(|f| &f.points)
                .any(|v| (v.0 - point.x).abs() < 0.2 && (v.1 - point.y).abs() < 0.2),
            "the front misses {name}"
        );
    }
    round_y_ticks("scatter", &svg, &image, "");
    legend_right_of_plot("scatter", &svg, &image, &["vllm", "sglang", "Pareto front"]);
    assert_eq!(svg, scatter());
}
