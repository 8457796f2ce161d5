//! A page of `runs` in headless Chromium: it renders every name it must show, and loading it
//! asks for nothing but the page.

use vernier_test_support::browser::{chromium, load_logged, serve};

/// Serves `html` over loopback, checks the DOM Chromium builds holds each of `names`, and
/// that neither Chromium's network log nor the server saw any request but the page's own.
pub(crate) fn renders_every_name_and_fetches_nothing(html: &str, names: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (port, requests) = serve(html.to_owned());
    let url = format!("http://127.0.0.1:{port}/page.html");
    let dom = chromium(
        &dir.path().join("profile-dom"),
        &url,
        &["--dump-dom".to_owned()],
    );
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    for name in names {
        assert!(dom.contains(name), "the rendered page shows {name}");
    }
    assert!(dom.contains("<svg"), "the front is drawn inline");
    let origin = format!("http://127.0.0.1:{port}");
    let fetched = load_logged(dir.path(), "page", &url, &origin);
    assert!(fetched.is_empty(), "the page fetched {fetched:?}");
    let seen = requests.lock().expect("requests").clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|line| line.starts_with("GET /page.html ")),
        "the page asked for more than itself: {seen:?}"
    );
}
