//! The hard suite's charts as a browser lays them out (`DejaVu Sans`): every text inside the
//! canvas, no two labels on top of each other, the run named under the title.

use vernier_plot::check;

/// Each text of `svg` as laid out in `DejaVu Sans`, asserting that it lies inside the canvas.
pub(crate) fn rendered_text(svg: &str) -> Vec<(String, [f32; 4])> {
    let image = check::render(svg);
    let (width, height) = (image.width(), image.height());
    let out: Vec<(String, [f32; 4])> = image
        .texts
        .iter()
        .map(|b| (b.text.clone(), b.edges()))
        .collect();
    for (text, [left, top, right, bottom]) in &out {
        assert!(
            *left >= 0.0 && *top >= 0.0 && *right <= width && *bottom <= height,
            "{text:?} is clipped: [{left}, {top}, {right}, {bottom}] in {width}x{height}"
        );
    }
    out
}

#[test]
fn the_ladder_names_its_run_and_no_label_is_clipped_or_overprinted() {
    // Before: the title held the model, and a long name ran off a 560 px canvas; there was
    // no server or date.
    let model = "meta-llama/Llama-3.1-8B-Instruct-Q4_K_M-with-a-long-quantisation-suffix";
    let rung = |level: u8, pass: u64| {
        serde_json::json!({
            "level": level, "seed": 0, "results": format!("level-{level}/results.json"),
            "n_scored": 18, "n_pass": pass, "pass_rate": pass as f64 / 18.0,
            "interval": {"low": (pass as f64 / 18.0 - 0.2).max(0.0), "high": (pass as f64 / 18.0 + 0.2).min(1.0), "confidence": 0.95},
            "median_tokens_solved": 1234.0 * f64::from(level)
        })
    };
    let ladder: vernier_hardsuite::Ladder = serde_json::from_value(serde_json::json!({
        "model": model,
        "simulated": false,
        "base_url": "http://127.0.0.1:8000",
        "started_unix_ms": 1_796_380_000_000_u64,
        "rungs": [rung(1, 16), rung(2, 14), rung(3, 12), rung(4, 10), rung(5, 8)],
    }))
    .expect("a ladder");
    let svg = vernier_hardsuite::render_ladder_svg(&ladder);
    let labels = rendered_text(&svg);
    let subtitle = format!("{model} on http://127.0.0.1:8000, 2026-");
    assert!(
        labels.iter().any(|(text, _)| text.starts_with(&subtitle)),
        "{labels:?}"
    );
    for level in 1..=5 {
        assert!(
            labels
                .iter()
                .any(|(text, _)| *text == format!("level {level}")),
            "{labels:?}"
        );
    }
    assert_eq!(svg.matches("<circle").count(), 5, "a point per level");
    for (i, (a, box_a)) in labels.iter().enumerate() {
        for (b, box_b) in labels.iter().skip(i + 1) {
            assert!(
                !check::edges_overlap(*box_a, *box_b),
                "{a:?} {box_a:?} overprints {b:?} {box_b:?}"
            );
        }
    }
}
