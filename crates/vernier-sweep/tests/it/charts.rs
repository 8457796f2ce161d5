//! The sweep's charts rendered to PNG, as a reader sees them, and checked in the image: every
//! cell's point drawn and visible in its series' colour, no two labels overlapping, nothing
//! outside the canvas. (Before, a `--concurrency 1,4,16` sweep drew only the c=1 values, its x
//! labels came from measured token counts and printed over each other, and one series could
//! hide exactly under another.)

use std::path::Path;
use std::time::Duration;

use resvg::{tiny_skia, usvg};
use vernier_sim::SimConfig;
use vernier_sweep::Workload;

use crate::support::{config, read_run_file, run, start_sim};

/// Text boxes in canvas pixels: (left, top, right, bottom) and the text's first characters.
type TextBox = (f32, f32, f32, f32, String);

fn fonts() -> usvg::Options<'static> {
    let mut options = usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    // `sans-serif` is Arial to the font database unless told otherwise.
    options.fontdb_mut().set_sans_serif_family("DejaVu Sans");
    assert!(
        !options.fontdb.is_empty(),
        "no system fonts to lay out the charts' text: install Debian's fonts-dejavu-core (scripts/test.sh does)"
    );
    options
}

fn text_boxes(group: &usvg::Group, out: &mut Vec<TextBox>) {
    for node in group.children() {
        match node {
            usvg::Node::Group(inner) => text_boxes(inner, out),
            usvg::Node::Text(text) => {
                let b = text.abs_bounding_box();
                let words: String = text
                    .chunks()
                    .iter()
                    .map(usvg::TextChunk::text)
                    .collect::<String>();
                out.push((b.left(), b.top(), b.right(), b.bottom(), words));
            }
            _ => {}
        }
    }
}

/// `(cx, cy, fill)` of every point marker in the SVG text.
fn points(svg: &str) -> Vec<(f32, f32, [u8; 3])> {
    let number = |tag: &str, name: &str| -> f32 {
        let start = tag.find(&format!(" {name}=\"")).expect("attribute") + name.len() + 3;
        let end = start + tag[start..].find('"').expect("closing quote");
        tag[start..end].parse().expect("a number")
    };
    svg.split("<circle ")
        .skip(1)
        .map(|tag| {
            let tag = &format!(" {tag}");
            let start = tag.find("fill=\"#").expect("a fill") + 7;
            let hex = &tag[start..start + 6];
            let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex colour");
            (
                number(tag, "cx"),
                number(tag, "cy"),
                [channel(0), channel(2), channel(4)],
            )
        })
        .collect()
}

fn render(svg: &str, options: &usvg::Options<'_>, png: &Path) -> (tiny_skia::Pixmap, Vec<TextBox>) {
    let tree = usvg::Tree::from_str(svg, options).expect("the chart is valid SVG");
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).expect("a canvas");
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.save_png(png).expect("write the PNG");
    let mut boxes = Vec::new();
    text_boxes(tree.root(), &mut boxes);
    (pixmap, boxes)
}

fn overlap(a: &TextBox, b: &TextBox) -> bool {
    // Half a pixel of slack for glyphs whose boxes touch.
    a.0 < b.2 - 0.5 && b.0 < a.2 - 0.5 && a.1 < b.3 - 0.5 && b.1 < a.3 - 0.5
}

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
    let options = fonts();
    for name in ["decode", "ttft", "prefill", "tokens_per_event"] {
        let svg = std::fs::read_to_string(out.path().join(format!("{name}.svg"))).expect("chart");
        // VERNIER_KEEP_CHARTS=FOLDER keeps the PNGs for a person to look at.
        let png_folder = std::env::var_os("VERNIER_KEEP_CHARTS")
            .map_or_else(|| out.path().to_owned(), std::path::PathBuf::from);
        let (pixmap, boxes) = render(&svg, &options, &png_folder.join(format!("{name}.png")));
        // Every cell is a point: 3 loads x 2 prompt lengths per workload, 2 workloads, in six
        // series of two points each.
        let drawn = points(&svg);
        assert_eq!(drawn.len(), 3 * prompts.len() * 2, "{name}: {svg}");
        let mut colours: Vec<[u8; 3]> = drawn.iter().map(|p| p.2).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), 6, "{name}: one colour per workload and load");
        // Each point shows in its own colour in the image: none hidden under another series.
        for (x, y, rgb) in &drawn {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a point's centre on the canvas: small and positive"
            )]
            let (px, py) = (x.round() as u32, y.round() as u32);
            let pixel = pixmap.pixel(px, py).expect("the point is on the canvas");
            let seen = [pixel.red(), pixel.green(), pixel.blue()];
            let close = seen.iter().zip(rgb).all(|(a, b)| a.abs_diff(*b) <= 40);
            assert!(
                close,
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
                boxes.iter().any(|b| b.4 == series),
                "{name}: no legend entry {series}"
            );
        }
        for prompt in prompts {
            assert!(
                boxes.iter().any(|b| b.4 == prompt.to_string()),
                "{name}: no x label {prompt}"
            );
        }
        // The subtitle names the model and the server.
        assert!(
            boxes
                .iter()
                .any(|b| b.4.starts_with(&format!("{model} on "))),
            "{name}: no subtitle with the model and server: {boxes:?}"
        );
        // Nothing outside the canvas, no two labels on each other.
        let (width, height) = (pixmap.width() as f32, pixmap.height() as f32);
        for b in &boxes {
            assert!(
                b.0 >= 0.0 && b.1 >= 0.0 && b.2 <= width && b.3 <= height,
                "{name}: {:?} is clipped at the canvas edge",
                b.4
            );
        }
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(!overlap(a, b), "{name}: {:?} overlaps {:?}", a.4, b.4);
            }
        }
    }
}
