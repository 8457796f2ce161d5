//! `versus.html` in a real headless browser (Debian's Chromium): it renders the at-a-glance
//! table, and loading it fetches nothing but the page itself. The page is served over
//! loopback by a server that records every request, and Chromium's own network log is read for
//! any other address.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use crate::{succeeded, text, two_quick_batteries, versus};

/// A page that does fetch something (an image of its own origin): the control that shows the
/// checks below can see a fetch.
const CONTROL: &str = "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body><img src=\"/pixel.png\" alt=\"x\"></body></html>";

/// Serves `page` at `/versus.html` and [`CONTROL`] at `/control.html` on a loopback port,
/// recording each request line.
fn serve(page: String) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            // The rest of the head.
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let request_line = request_line.trim().to_owned();
            if request_line.is_empty() {
                // A connection opened ahead of need and closed unused: no request.
                continue;
            }
            let (status, body) = if request_line.starts_with("GET /versus.html ") {
                ("200 OK", page.as_str())
            } else if request_line.starts_with("GET /control.html ") {
                ("200 OK", CONTROL)
            } else {
                ("404 Not Found", "")
            };
            seen.lock().expect("requests").push(request_line);
            let mut stream = &stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, requests)
}

/// Runs headless Chromium on `url` with `extra` flags and a fresh profile in `profile`.
fn chromium(profile: &Path, url: &str, extra: &[String]) -> std::process::Output {
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .unwrap_or_else(|error| {
            panic!("run chromium ({error}): install Debian's chromium (scripts/test.sh does)")
        })
}

/// Chromium's network log (`--log-net-log`), also when cut before its closing brackets.
fn net_log(path: &Path) -> serde_json::Value {
    let raw = std::fs::read_to_string(path).expect("Chromium's network log");
    let raw = raw.trim_end().trim_end_matches(',');
    serde_json::from_str(raw)
        .or_else(|_| serde_json::from_str(&format!("{raw}]}}")))
        .expect("the network log is JSON")
}

/// The addresses of the requests a page of `origin` made itself: every request job whose
/// initiator is that origin (a navigation and Chromium's own background requests have none).
fn page_requests(log: &serde_json::Value, origin: &str) -> Vec<String> {
    let start_job = &log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"];
    assert!(start_job.is_number(), "the log names its event types");
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|event| &event["type"] == start_job && event["params"]["initiator"] == origin)
        .filter_map(|event| event["params"]["url"].as_str().map(str::to_owned))
        .collect()
}

/// Loads `url` with the network log on and returns (the log, the requests the page made).
fn load_logged(dir: &Path, name: &str, url: &str, origin: &str) -> Vec<String> {
    let log_path = dir.join(format!("{name}-net-log.json"));
    let run = chromium(
        &dir.join(format!("profile-{name}")),
        url,
        &[
            format!("--log-net-log={}", log_path.display()),
            "--dump-dom".to_owned(),
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    page_requests(&net_log(&log_path), origin)
}

#[test]
fn the_versus_page_renders_its_table_in_chromium_and_fetches_nothing() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (a, b, out) = two_quick_batteries(dir.path());
    let compared = versus(&a, &b, &out);
    succeeded(&compared);
    let page = std::fs::read_to_string(out.join("versus.html")).expect("versus.html");
    let (port, requests) = serve(page);
    let url = format!("http://127.0.0.1:{port}/versus.html");

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
    let origin = format!("http://127.0.0.1:{port}");
    let fetched = load_logged(dir.path(), "page", &url, &origin);
    assert!(fetched.is_empty(), "the page fetched {fetched:?}");
    let seen = requests.lock().expect("requests").clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter()
            .all(|line| line.starts_with("GET /versus.html ")),
        "the page asked the server for more than itself: {seen:?}"
    );
    let control = load_logged(
        dir.path(),
        "control",
        &format!("{origin}/control.html"),
        &origin,
    );
    assert_eq!(
        control,
        [format!("{origin}/pixel.png")],
        "the control's image is seen"
    );
    assert!(
        requests
            .lock()
            .expect("requests")
            .iter()
            .any(|line| line.starts_with("GET /pixel.png ")),
        "the loopback server saw the control's image"
    );
}
