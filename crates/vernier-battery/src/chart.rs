//! The head-to-head's charts, drawn by `vernier-plot` as standalone SVG (no script, no font
//! fetched): pass rate against budget for both sides as step curves with the crossovers
//! marked, and the ratio of each speed figure by cell with its interval around the line of
//! parity.

use vernier_cli::figure;
use vernier_plot::{Format, Mark, Point, RatioChart, RatioRow, Series, StepChart};

use crate::budget::{Crossover, Curve};
use crate::speed::{CellRatio, Metric};

/// Pass rate (0–100%) against the budget, both sides as step curves from 0 at no budget,
/// crossovers marked. `subtitle` names both sides (model and server).
pub fn curve_chart(
    title: &str,
    subtitle: &str,
    x_label: &str,
    names: (&str, &str),
    curves: (&Curve, &Curve),
    crossovers: &[Crossover],
) -> String {
    let x_max = curves.0.limit.max(curves.1.limit).max(1.0);
    let steps = |name: &str, curve: &Curve| {
        Series::new(
            name,
            std::iter::once(Point::at(0.0, 0.0))
                .chain(
                    curve
                        .points
                        .iter()
                        .map(|point| Point::at(point.x, point.pass_rate.clamp(0.0, 1.0))),
                )
                .collect(),
        )
    };
    StepChart::new(title, subtitle)
        .x_title(x_label)
        .y_title("pass rate")
        .x_range(0.0, x_max)
        .y_format(Format::Percent)
        .y_range(0.0, 1.0)
        .series([steps(names.0, curves.0), steps(names.1, curves.1)])
        .marks(
            crossovers.iter().map(|crossover| {
                Mark::At(crossover.at, format!("crossover {}", figure(crossover.at)))
            }),
        )
        .to_svg()
}

/// The ratio A/B of one figure in every cell, a dot with its interval, around the line of
/// parity (1×), on a log scale. `subtitle` names both sides (model and server).
pub fn ratio_chart(metric: Metric, rows: &[CellRatio], subtitle: &str) -> String {
    let rows = rows.iter().filter(|row| row.metric == metric).map(|row| {
        let line = RatioRow::new(
            format!(
                "{} {} tok, {} stream{}",
                row.workload,
                row.prompt_tokens,
                row.concurrency,
                if row.concurrency == 1 { "" } else { "s" }
            ),
            row.ratio,
        );
        match row.interval {
            Some(interval) => line.with_interval(interval.low, interval.high),
            None => line,
        }
    });
    RatioChart::new(format!("{}: A / B by cell", metric.label()), subtitle)
        .x_title("A / B, ratio of medians (log scale)")
        .legend("A / B", "95% interval")
        .rows(rows)
        .to_svg()
}

#[cfg(test)]
mod tests {
    use vernier_plot::check;

    use super::*;
    use crate::budget::{CurvePoint, Leader};

    fn curve(points: &[(f64, f64)], limit: f64) -> Curve {
        Curve {
            points: points
                .iter()
                .map(|(x, pass_rate)| CurvePoint {
                    x: *x,
                    pass_rate: *pass_rate,
                })
                .collect(),
            limit,
            n_scored: 10,
        }
    }

    fn readable(svg: &str) -> check::Rendered {
        let image = check::render(svg);
        assert!(image.outside().is_empty(), "{:?}", image.outside());
        assert!(image.overlapping().is_empty(), "{:?}", image.overlapping());
        image
    }

    #[test]
    fn budget_curves_show_both_sides_and_their_crossover() {
        let a = curve(&[(800.0, 0.3), (2400.0, 0.5), (6000.0, 0.5)], 6000.0);
        let b = curve(&[(1600.0, 0.2), (3200.0, 0.7), (6000.0, 0.7)], 6000.0);
        let crossover = Crossover {
            at: 3200.0,
            before: Leader::A,
            after: Leader::B,
        };
        let svg = curve_chart(
            "suite: pass rate against token budget",
            "A: qwen on vllm; B: qwen on sglang",
            "token budget",
            ("A qwen", "B qwen"),
            (&a, &b),
            &[crossover],
        );
        let image = readable(&svg);
        let curves = check::polylines(&svg, "series");
        assert_eq!(curves.len(), 2);
        for curve in &curves {
            // Both curves run at 0% from no budget: each still shows there.
            assert!(image.shows_along(curve.points[0], curve.points[1], curve.rgb));
        }
        assert_eq!(image.find("crossover 3200").len(), 1);
        let [_, _, right, _] = check::plot_area(&svg).expect("a plot area");
        for name in ["A qwen", "B qwen"] {
            assert!(image.find(name).iter().all(|b| b.left > right), "{name}");
        }
    }

    #[test]
    fn ratios_are_dots_in_the_palette_around_parity() {
        let row = |prompt_tokens: u32, ratio: f64| CellRatio {
            workload: vernier_sweep::Workload::Prose,
            prompt_tokens,
            output_tokens: 64,
            concurrency: 1,
            metric: Metric::Decode,
            a: ratio,
            b: 1.0,
            ratio,
            interval: Some(vernier_stats::Interval::new(ratio * 0.9, ratio * 1.1, 0.95)),
            n_a: 5,
            n_b: 5,
        };
        let rows = [row(512, 1.3), row(4096, 0.8), row(16384, 1.02)];
        let svg = ratio_chart(Metric::Decode, &rows, "A: qwen on vllm; B: qwen on sglang");
        let image = readable(&svg);
        let dots = check::circles(&svg);
        assert_eq!(dots.len(), 3);
        for dot in dots {
            assert!(image.shows(dot.x, dot.y, dot.rgb));
        }
        assert_eq!(image.find("prose 4096 tok, 1 stream").len(), 1);
        assert!(!image.find("1× (parity)").is_empty());
    }
}
