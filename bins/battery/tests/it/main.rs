//! The `battery` binary end to end: against the simulator, in a real headless browser, and
//! against a real `llama-server`.

mod browser;
mod fault_matrix;
mod launch;
mod llama;
mod resume;
mod run;
mod study;
mod tune;
mod vllm;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `battery` binary with `args`.
pub(crate) fn battery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_battery"))
        .args(args)
        .output()
        .expect("run battery")
}

/// A quick battery against the bundled simulator into `out`.
pub(crate) fn quick_battery(out: &Path) -> Output {
    let out = out.to_str().expect("a UTF-8 path");
    battery(&[
        "run",
        "--preset",
        "quick",
        "--prompt-tokens",
        "64,256",
        "--reps",
        "2",
        "--quiet",
        "--out",
        out,
    ])
}

/// Two quick batteries of the simulator in `dir` (`a`, `b`), each finished with exit 0, and the
/// folder their head-to-head goes to (`v`).
pub(crate) fn two_quick_batteries(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (a, b) = (dir.join("a"), dir.join("b"));
    for folder in [&a, &b] {
        let run = quick_battery(folder);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    }
    (a, b, dir.join("v"))
}

/// `battery versus A B --out OUT`.
pub(crate) fn versus(a: &Path, b: &Path, out: &Path) -> Output {
    battery(&[
        "versus",
        a.to_str().expect("UTF-8"),
        b.to_str().expect("UTF-8"),
        "--out",
        out.to_str().expect("UTF-8"),
    ])
}

/// A JSON file read back.
pub(crate) fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("{} is JSON: {error}", path.display()))
}

/// The text of an output stream.
/// The stdout of a command that must have exited 0 (its output shown when it did not).
pub(crate) fn succeeded(output: &Output) -> String {
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    stdout
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `battery.json` of the battery in `folder`.
pub(crate) fn battery_json(folder: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(folder.join("battery.json")).expect("battery.json"),
    )
    .expect("battery.json is JSON")
}
