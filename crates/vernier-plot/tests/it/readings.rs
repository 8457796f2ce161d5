//! The image checks' own readings: what the SVG drew, and when two boxes overlap.

use vernier_plot::check::{Marker, TextBox, cells, circles, hex, overlap, polylines};

#[test]
fn the_svg_is_read_for_what_it_drew() {
    let svg = r##"<svg><circle cx="1.5" cy="2.0" r="3" fill="#1f77b4"><title>t</title></circle><circle cx="1" cy="1" r="1" fill="none"/><rect class="cell" x="1" y="2" width="3" height="4" fill="#00ff5a"/><rect x="0" y="0" width="1" height="1" fill="#000000"/><polyline class="series" stroke="#ff7f0e" points="1.0,2.0 3.0,4.0"/></svg>"##;
    assert_eq!(
        circles(svg),
        [Marker {
            x: 1.5,
            y: 2.0,
            rgb: [0x1f, 0x77, 0xb4]
        }]
    );
    let cells = cells(svg);
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].centre(), (2.5, 4.0));
    assert_eq!(polylines(svg, "series")[0].points, [(1.0, 2.0), (3.0, 4.0)]);
    assert_eq!(hex("#fff"), None);
}

#[test]
fn boxes_that_touch_do_not_overlap() {
    let at = |left: f32, right: f32| TextBox {
        text: String::new(),
        left,
        top: 0.0,
        right,
        bottom: 10.0,
    };
    assert!(!overlap(&at(0.0, 10.0), &at(10.0, 20.0)));
    assert!(!overlap(&at(0.0, 10.3), &at(10.0, 20.0)));
    assert!(overlap(&at(0.0, 11.0), &at(10.0, 20.0)));
}
