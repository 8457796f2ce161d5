//! `versus.html` in a real headless browser (Debian's Chromium): it renders the at-a-glance
//! table, and loading it fetches nothing but the page itself. The page is served over
//! loopback by a server that records every request, and Chromium's own network log is read for
//! any other address.

use vernier_test_support::browser::{assert_fetches_only_itself, chromium, serve};

use crate::{succeeded, text, two_quick_batteries, versus};

#[test]
fn the_versus_page_renders_its_table_in_chromium_and_fetches_nothing() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (a, b, out) = two_quick_batteries(dir.path());
    let compared = versus(&a, &b, &out);
    succeeded(&compared);
    let page = std::fs::read_to_string(out.join("versus.html")).expect("versus.html");
    let (port, requests) = serve(page);
    let url = format!("http://127.0.0.1:{port}/page.html");

    // The DOM as Chromium built it holds the table with its rows.
    let dom = chromium(
        &dir.path().join("profile-dom"),
        &url,
        &["--dump-dom".to_owned()],
    );
    let dom_text = text(&dom.stdout);
    assert!(dom.status.success(), "{}", text(&dom.stderr));
    assert!(dom_text.contains("id=\"glance-table\""), "{dom_text}");
    for dimension in ["decode tok/s, prose, one stream", "pass rate, suite: all"] {
        assert!(dom_text.contains(dimension), "{dimension}");
    }
    assert!(
        dom_text.matches("<svg").count() >= 5,
        "the charts are inline"
    );

    // The page holds no reference to anything outside itself: no script, no external style,
    // font or image, only inline SVG.
    let lower = std::fs::read_to_string(out.join("versus.html"))
        .expect("page")
        .to_lowercase();
    for reference in [
        "<script",
        "src=",
        "@import",
        "url(",
        "<link rel=\"stylesheet",
    ] {
        assert!(!lower.contains(reference), "the page holds {reference}");
    }

    // A screenshot: the table is drawn (rows of dark text pixels in the top of the page).
    let shot = dir.path().join("shot.png");
    let screenshot = chromium(
        &dir.path().join("profile-shot"),
        &url,
        &[format!("--screenshot={}", shot.display())],
    );
    assert!(screenshot.status.success(), "{}", text(&screenshot.stderr));
    let pixmap = resvg::tiny_skia::Pixmap::load_png(&shot).expect("a PNG screenshot");
    assert_eq!((pixmap.width(), pixmap.height()), (1200, 1600));
    let rows_with_text = (0..600)
        .filter(|y| {
            (0..pixmap.width()).any(|x| {
                pixmap
                    .pixel(x, *y)
                    .is_some_and(|p| p.red() < 90 && p.green() < 90 && p.blue() < 90)
            })
        })
        .count();
    assert!(
        rows_with_text > 120,
        "{rows_with_text} rows of the top 600 hold dark pixels"
    );

    // Loading the page asks for nothing but the page: Chromium's log holds no request the
    // page initiated, and the loopback server saw only the page. The control page, which
    // does load an image, is seen by both.
    assert_fetches_only_itself(dir.path(), port, &requests);
}
