//! Line charts and histories: categorical x axes.

use vernier_plot::{Format, HistoryChart, LineChart, Mark, Point, Series, check};

use crate::{evenly_spaced, legend_right_of_plot, plot, points_visible, rendered, round_y_ticks};

const SUBTITLE: &str = "llama-3.1-8b-instruct on vllm 0.6.3, 2026-01-02 10:00";

fn cells_chart() -> String {
    let lengths = [64.0, 256.0, 1024.0, 4096.0];
    let series = ["prose c1", "prose c4", "code c1"]
        .iter()
        .enumerate()
        .map(|(index, name)| {
            Series::new(
                *name,
                lengths
                    .iter()
                    .map(|x| {
                        let y = 100.0 + 50.0 * index as f64 + x / 40.0;
                        Point::at(*x, y).with_interval(y * 0.9, y * 1.1)
                    })
                    .collect(),
            )
        });
    LineChart::new("Time to first token, median and 95% interval", SUBTITLE)
        .x_title("prompt tokens asked for (even spacing)")
        .y_title("TTFT ms")
        .series(series)
        .marks([
            Mark::Level(180.0, "target 180 ms".to_owned()),
            Mark::At(1024.0, "capacity 1024".to_owned()),
        ])
        .to_svg()
}

#[test]
fn a_line_chart_draws_every_point_in_its_colour_at_the_values_asked_for() {
    let svg = cells_chart();
    assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="860" height="460""#));
    assert!(svg.ends_with("</svg>\n"));
    let image = rendered("line", &svg);
    assert_eq!(points_visible("line", &svg, &image), 12);
    let mut colours: Vec<[u8; 3]> = check::circles(&svg).iter().map(|p| p.rgb).collect();
    colours.sort_unstable();
    colours.dedup();
    assert_eq!(colours.len(), 3, "one colour per series");
    evenly_spaced("line", &image, &["64", "256", "1024", "4096"]);
    legend_right_of_plot("line", &svg, &image, &["prose c1", "prose c4", "code c1"]);
    round_y_ticks("line", &svg, &image, "");
    for text in [SUBTITLE, "target 180 ms", "capacity 1024"] {
        assert_eq!(image.find(text).len(), 1, "{text}: {:?}", image.texts);
    }
    // Lines and error bars are there, each series in its colour.
    assert_eq!(check::polylines(&svg, "series").len(), 3);
    assert_eq!(
        svg.matches("stroke-width=\"1.2\"").count(),
        12,
        "an error bar per point"
    );
    // The same input, the same bytes.
    assert_eq!(svg, cells_chart());
}

#[test]
fn a_ladder_labels_levels_as_asked_with_notes_and_values_beside_the_points() {
    let rates = [
        16.0 / 18.0,
        14.0 / 18.0,
        12.0 / 18.0,
        10.0 / 18.0,
        8.0 / 18.0,
    ];
    let mut chart = LineChart::new("Pass rate per level, with its 95% interval", SUBTITLE)
        .y_title("share of tasks passed")
        .y_format(Format::Percent)
        .y_range(0.0, 1.0);
    for index in 0..rates.len() {
        let level = index as f64 + 1.0;
        chart = chart
            .x_label(level, format!("level {}", index + 1))
            .x_note(level, format!("{} tok/solved", 1234 * (index + 1)));
    }
    let svg = chart
        .series([Series::new(
            "pass rate",
            rates
                .iter()
                .enumerate()
                .map(|(index, rate)| {
                    Point::at(index as f64 + 1.0, *rate)
                        .with_interval((rate - 0.2).max(0.0), (rate + 0.2).min(1.0))
                        .labelled(format!("{:.1}%", rate * 100.0))
                })
                .collect(),
        )])
        .to_svg();
    let image = rendered("ladder", &svg);
    assert_eq!(points_visible("ladder", &svg, &image), 5);
    let levels: Vec<String> = (1..=5).map(|l| format!("level {l}")).collect();
    let levels: Vec<&str> = levels.iter().map(String::as_str).collect();
    let centres = evenly_spaced("ladder", &image, &levels);
    for (index, text) in ["88.9%", "44.4%", "1234 tok/solved", "6170 tok/solved"]
        .iter()
        .enumerate()
    {
        assert_eq!(image.find(text).len(), 1, "{text}: {index}");
    }
    // Notes sit under their labels.
    let note = &image.find("1234 tok/solved")[0];
    assert!((f32::midpoint(note.left, note.right) - centres[0]).abs() < 1.0);
    let ticks = round_y_ticks("ladder", &svg, &image, "%");
    assert_eq!(ticks.first().copied(), Some(100.0));
    assert_eq!(ticks.last().copied(), Some(0.0));
    legend_right_of_plot("ladder", &svg, &image, &["pass rate"]);
}

#[test]
fn a_full_legend_says_how_many_more_and_long_names_are_cut() {
    let long = "a workload whose name is far too long for the legend's column";
    let series = (0..30).map(|index| {
        let name = if index == 0 {
            long.to_owned()
        } else {
            format!("series {index}")
        };
        Series::new(name, vec![Point::at(1.0, f64::from(index))])
    });
    let svg = LineChart::new("Thirty series", SUBTITLE)
        .series(series)
        .legend_hint("see report.csv")
        .to_svg();
    let image = rendered("legend", &svg);
    assert_eq!(points_visible("legend", &svg, &image), 30);
    let more: Vec<&check::TextBox> = image
        .texts
        .iter()
        .filter(|b| b.text.starts_with("and ") && b.text.ends_with(" more (see report.csv)"))
        .collect();
    assert_eq!(more.len(), 1, "{:?}", image.texts);
    let [_, _, right, bottom] = plot(&svg);
    assert!(more[0].left > right && more[0].top < bottom);
    let cut: Vec<&check::TextBox> = image
        .texts
        .iter()
        .filter(|b| b.text.starts_with("a workload") && b.text.ends_with('…'))
        .collect();
    assert_eq!(cut.len(), 1, "{:?}", image.texts);
}

#[test]
fn many_categories_are_thinned_and_long_subtitles_widen_the_canvas() {
    let subtitle = format!(
        "{} on http://127.0.0.1:8000, 2026-01-02 10:00",
        "m".repeat(90)
    );
    let points = (1..=40)
        .map(|k| Point::at(f64::from(k) * 1000.0, f64::from(k)))
        .collect();
    let svg = LineChart::new("Forty values", &subtitle)
        .series([Series::new("one", points)])
        .to_svg();
    let image = rendered("thinned", &svg);
    assert!(image.width() > 860.0, "{}", image.width());
    assert_eq!(image.find(&subtitle).len(), 1, "the subtitle whole");
    let shown = (1..=40)
        .filter(|k| !image.find(&(k * 1000).to_string()).is_empty())
        .count();
    assert!((5..40).contains(&shown), "{shown} of 40 labels");
    assert!(
        !image.find("1000").is_empty(),
        "the first value is labelled"
    );
    // Far too long: cut at the widest canvas.
    let svg = LineChart::new("t", "s".repeat(400))
        .series([Series::new("one", vec![Point::at(1.0, 1.0)])])
        .to_svg();
    let image = rendered("cut subtitle", &svg);
    assert!((image.width() - 1600.0).abs() < 1.0);
    assert!(image.texts.iter().any(|b| b.text.ends_with('…')));
}

#[test]
fn an_empty_chart_says_so_and_text_is_escaped() {
    let svg = LineChart::new("a <b> & \"c\"", "model on server, 2026-01-02")
        .empty("no measured cell")
        .to_svg();
    let image = rendered("empty", &svg);
    assert_eq!(image.find("no measured cell").len(), 1);
    assert_eq!(image.find("a <b> & \"c\"").len(), 1);
    assert!(check::circles(&svg).is_empty());
}

fn history() -> String {
    let mut chart = HistoryChart::new("Decode tok/s, one stream, by run", SUBTITLE)
        .y_title("decode tokens/s")
        .legend("median decode", "95% interval");
    for day in 1..=12 {
        let value = if day == 9 {
            70.0
        } else {
            90.0 + f64::from(day % 3)
        };
        chart = chart.run(
            format!("2026-01-{day:02}"),
            value,
            Some((value - 4.0, value + 4.0)),
        );
    }
    chart.flag("2026-01-09", "regression: −22%").to_svg()
}

#[test]
fn a_history_draws_a_band_and_rings_the_flagged_run() {
    let svg = history();
    let image = rendered("history", &svg);
    assert_eq!(points_visible("history", &svg, &image), 12);
    assert_eq!(svg.matches("class=\"band\"").count(), 1);
    assert_eq!(svg.matches("class=\"flag\"").count(), 1);
    assert_eq!(image.find("regression: −22%").len(), 1);
    // The labels shown are the runs asked for, in order, evenly spaced.
    let shown: Vec<String> = (1..=12)
        .map(|day| format!("2026-01-{day:02}"))
        .filter(|label| !image.find(label).is_empty())
        .collect();
    assert!(shown.len() >= 4 && shown[0] == "2026-01-01", "{shown:?}");
    let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
    evenly_spaced("history", &image, &shown);
    legend_right_of_plot(
        "history",
        &svg,
        &image,
        &["median decode", "95% interval", "flagged"],
    );
    // The band is pale in the series' colour between a point's interval ends.
    let first = check::circles(&svg)[0];
    let seen = image
        .colour_at(first.x + 10.0, first.y - 8.0)
        .expect("on the canvas");
    assert!(seen[2] > seen[0] + 10 && seen[0] > 150, "{seen:?}");
    assert_eq!(svg, history());
}
