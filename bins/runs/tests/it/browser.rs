//! A page of `runs` in headless Chromium: it renders every name it must show, and loading it
//! asks for nothing but the page.

use vernier_test_support::browser::{assert_fetches_only_itself, chromium, serve};

/// Serves `html` over loopback, checks the DOM Chromium builds holds each of `names`, and
/// that neither Chromium's network log nor the server saw any request but the page's own
/// (its control seen by both).
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
    assert_fetches_only_itself(dir.path(), port, &requests);
}
