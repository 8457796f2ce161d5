//! The sweep's charts rendered to PNG, as a reader sees them, and checked in the image: every
//! cell's point drawn and visible in its series' colour, no two labels overlapping, nothing
//! outside the canvas. (Before, a `--concurrency 1,4,16` sweep drew only the c=1 values, its x
//! labels came from measured token counts and printed over each other, and one series could
//! hide exactly under another.)

use std::time::Duration;

use vernier_plot::check;
use vernier_sim::SimConfig;
use vernier_sweep::Workload;

use crate::support::{config, read_run_file, run, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_at_1_4_and_16_draws_every_cell_and_no_label_meets_another() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(1))
            .slowdown_per_running_request(0.05)
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let prompts = [64, 256];
    let mut config = config(&[Workload::Prose, Workload::Code], &prompts, &[16], 2);
    config.concurrency = vec![1, 4, 16];
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("the sweep runs");
    let model = read_run_file(&outcome)["environment"]["model"]["id"]
        .as_str()
        .expect("the model id")
        .to_owned();
    sim.shutdown().await;
    let options = check::fonts();
    for name in ["decode", "ttft", "prefill", "tokens_per_event"] {
        let svg = std::fs::read_to_string(out.path().join(format!("{name}.svg"))).expect("chart");
        // VERNIER_KEEP_CHARTS=FOLDER keeps the PNGs for a person to look at.
        let png_folder = std::env::var_os("VERNIER_KEEP_CHARTS")
            .map_or_else(|| out.path().to_owned(), std::path::PathBuf::from);
        let image = check::render_with(&svg, &options);
        image
            .save_png(&png_folder.join(format!("{name}.png")))
            .expect("write the PNG");
        let boxes = &image.texts;
        // Every cell is a point: 3 loads x 2 prompt lengths per workload, 2 workloads, in six
        // series of two points each.
        let drawn = check::circles(&svg);
        assert_eq!(drawn.len(), 3 * prompts.len() * 2, "{name}: {svg}");
        let mut colours: Vec<[u8; 3]> = drawn.iter().map(|p| p.rgb).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), 6, "{name}: one colour per workload and load");
        // Each point shows in its own colour in the image: none hidden under another series.
        for check::Marker { x, y, rgb } in &drawn {
            let seen = image.colour_at(*x, *y).expect("the point is on the canvas");
            assert!(
                check::close(seen, *rgb),
                "{name}: the point at ({x}, {y}) shows {seen:?}, not {rgb:?}"
            );
        }
        // The legend names every series; x labels are the lengths asked for.
        for series in [
            "prose c1",
            "prose c4",
            "prose c16",
            "code c1",
            "code c4",
            "code c16",
        ] {
            assert!(
                boxes.iter().any(|b| b.text == series),
                "{name}: no legend entry {series}"
            );
        }
        for prompt in prompts {
            assert!(
                boxes.iter().any(|b| b.text == prompt.to_string()),
                "{name}: no x label {prompt}"
            );
        }
        // The subtitle names the model and the server.
        assert!(
            boxes
                .iter()
                .any(|b| b.text.starts_with(&format!("{model} on "))),
            "{name}: no subtitle with the model and server: {boxes:?}"
        );
        // Nothing outside the canvas, no two labels on each other.
        let (width, height) = (image.width(), image.height());
        for b in boxes {
            assert!(
                b.left >= 0.0 && b.top >= 0.0 && b.right <= width && b.bottom <= height,
                "{name}: {:?} is clipped at the canvas edge",
                b.text
            );
        }
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(
                    !check::overlap(a, b),
                    "{name}: {:?} overlaps {:?}",
                    a.text,
                    b.text
                );
            }
        }
    }
}
