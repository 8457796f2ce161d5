//! A page in a real headless browser (Debian's Chromium, which `scripts/test.sh` installs):
//! served over loopback by a server that records every request, loaded with Chromium's
//! network log on, so a test sees what the page asked for.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A page that does fetch something (an image of its own origin): the control that shows the
/// checks below can see a fetch.
pub const CONTROL: &str = "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body><img src=\"/pixel.png\" alt=\"x\"></body></html>";

/// Serves `page` at `/page.html` and [`CONTROL`] at `/control.html` on a loopback port,
/// recording each request line.
pub fn serve(page: String) -> (u16, Arc<Mutex<Vec<String>>>) {
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
            let (status, body) = if request_line.starts_with("GET /page.html ") {
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
pub fn chromium(profile: &Path, url: &str, extra: &[String]) -> std::process::Output {
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
pub fn net_log(path: &Path) -> serde_json::Value {
    let raw = std::fs::read_to_string(path).expect("Chromium's network log");
    let raw = raw.trim_end().trim_end_matches(',');
    serde_json::from_str(raw)
        .or_else(|_| serde_json::from_str(&format!("{raw}]}}")))
        .expect("the network log is JSON")
}

/// The addresses of the requests a page of `origin` made itself: every request job whose
/// initiator is that origin (a navigation and Chromium's own background requests have none).
pub fn page_requests(log: &serde_json::Value, origin: &str) -> Vec<String> {
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
pub fn load_logged(dir: &Path, name: &str, url: &str, origin: &str) -> Vec<String> {
    let log_path = dir.join(format!("{name}-net-log.json"));
    let run = chromium(
        &dir.join(format!("profile-{name}")),
        url,
        &[
            format!("--log-net-log={}", log_path.display()),
            "--dump-dom".to_owned(),
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    page_requests(&net_log(&log_path), origin)
}

/// Asserts that the page [`serve`] serves on `port` asks for nothing but itself: Chromium's
/// log holds no request the page initiated and the loopback server (its `requests`) saw only
/// the page. The control page, which does load an image, is seen by both, so the checks can
/// see a fetch.
pub fn assert_fetches_only_itself(dir: &Path, port: u16, requests: &Arc<Mutex<Vec<String>>>) {
    let origin = format!("http://127.0.0.1:{port}");
    let fetched = load_logged(dir, "page", &format!("{origin}/page.html"), &origin);
    assert!(fetched.is_empty(), "the page fetched {fetched:?}");
    let seen = requests.lock().expect("requests").clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|line| line.starts_with("GET /page.html ")),
        "the page asked the server for more than itself: {seen:?}"
    );
    let control = load_logged(dir, "control", &format!("{origin}/control.html"), &origin);
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
