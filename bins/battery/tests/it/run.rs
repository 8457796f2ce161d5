//! A battery against the simulator: one command, every part in its folder, a verdict line, a
//! resume that keeps what finished, and the head-to-head of two in three formats.

use crate::{
    battery, battery_json, quick_battery, read_json, succeeded, text, two_quick_batteries, versus,
};

#[test]
fn a_battery_against_the_simulator_finishes_with_one_command_and_a_verdict() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = dir.path().join("a");
    let run = quick_battery(&out);
    let stdout = succeeded(&run);
    let verdict = stdout
        .lines()
        .find(|line| line.starts_with("verdict: "))
        .expect("a verdict line");
    // The simulator is named as such, by part.
    assert!(verdict.starts_with("verdict: questionable: "), "{verdict}");
    assert!(
        verdict.contains("sweep: the figures describe the bundled simulator (simulated)"),
        "{verdict}"
    );
    let index = battery_json(&out);
    assert_eq!(index["schema_version"], 2);
    assert_eq!(index["simulated"], true);
    assert_eq!(index["validity"]["verdict"], "questionable");
    let parts = index["parts"].as_array().expect("parts");
    let names: Vec<&str> = parts.iter().filter_map(|p| p["part"].as_str()).collect();
    assert_eq!(names, ["sweep", "suite"]);
    for part in parts {
        assert_eq!(part["status"], "done", "{part}");
        // Each part's own files, in their own formats, where the index says.
        for file in part["files"].as_object().expect("files").values() {
            let path = out.join(file.as_str().expect("a path"));
            assert!(path.is_file(), "{}", path.display());
        }
        assert!(part["validity"]["verdict"].is_string(), "{part}");
    }
    assert!(out.join("sweep/run.json").is_file());
    assert!(out.join("suite/results.json").is_file());

    // A second run into the same folder is refused; a resume keeps the finished parts.
    let again = quick_battery(&out);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("already holds a battery"),
        "{}",
        text(&again.stderr)
    );
    let journal_before = std::fs::read(out.join("sweep/journal.jsonl")).expect("journal");
    let resumed = battery(&["run", "--resume", out.to_str().expect("UTF-8"), "--quiet"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_eq!(
        std::fs::read(out.join("sweep/journal.jsonl")).expect("journal"),
        journal_before,
        "a finished part is not run again"
    );
    // A simulated battery cannot be continued against a server.
    let wrong = battery(&[
        "run",
        "--resume",
        out.to_str().expect("UTF-8"),
        "--base-url",
        "http://127.0.0.1:9",
    ]);
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong.stderr));
}

#[test]
fn versus_of_two_batteries_writes_markdown_json_and_html() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (a, b, out) = two_quick_batteries(dir.path());
    let compared = versus(&a, &b, &out);
    let stdout = succeeded(&compared);
    for dimension in [
        "decode tok/s, prose, one stream",
        "TTFT ms, short prompt (64 tok)",
        "pass rate, suite: all",
        "seconds per solved task",
        // The simulator drafts and reports its acceptance in `/metrics`.
        "speculative decoding: draft tokens accepted",
    ] {
        assert!(stdout.contains(dimension), "{dimension}: {stdout}");
    }
    let json: serde_json::Value = read_json(&out.join("versus.json"));
    // The same simulator twice: every speed cell is paired, and no quality difference.
    assert_eq!(json["speed"].as_array().map(Vec::len), Some(2 * 2 * 2 * 3));
    let quality = &json["suites"][0]["quality"][0];
    assert_eq!(quality["category"], "all");
    assert_eq!(quality["difference"], 0.0);
    let markdown = std::fs::read_to_string(out.join("versus.md")).expect("markdown");
    assert!(markdown.contains("## At a glance"), "{markdown}");
    assert!(
        std::fs::read_to_string(out.join("versus.html"))
            .expect("html")
            .starts_with("<!DOCTYPE html>")
    );
    // A folder that holds no run is refused by name.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("folder");
    let refused = battery(&[
        "versus",
        a.to_str().expect("UTF-8"),
        empty.to_str().expect("UTF-8"),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("holds no battery.json"),
        "{}",
        text(&refused.stderr)
    );
}

/// An A/A comparison says nothing is different: two quick batteries of the same simulator name
/// no side ahead and no crossover on any row, and the terminal table has its header.
#[test]
fn two_batteries_of_one_server_name_no_side_ahead_and_no_crossover() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b, out) = crate::two_quick_batteries(dir.path());
    let run = crate::versus(&a, &b, &out);
    let stdout = succeeded(&run);
    let header = stdout
        .lines()
        .find(|line| line.starts_with("dimension"))
        .expect("a header row");
    assert!(
        header.contains("ahead") && header.contains("95% interval"),
        "{header}"
    );
    let versus = read_json(&out.join("versus.json"));
    for row in versus["glance"].as_array().expect("glance rows") {
        let dimension = row["dimension"].as_str().unwrap_or_default();
        let timed = ["decode", "TTFT", "prefill", "seconds per solved"]
            .iter()
            .any(|word| dimension.starts_with(word));
        if timed && row["ahead"] != "—" {
            // The two runs' own timing on a shared machine may drift apart; a side is named
            // only past the stated tie of 5%, never on a closer ratio.
            let ratio: f64 = row["comparison"]
                .as_str()
                .and_then(|text| text.trim_end_matches('×').parse().ok())
                .expect("a ratio");
            assert!((ratio - 1.0).abs() >= 0.05, "{row}");
        } else {
            assert_eq!(row["ahead"], "—", "no side ahead: {row}");
        }
    }
    for suite in versus["suites"].as_array().expect("suites") {
        assert_eq!(suite["token_crossovers"], serde_json::json!([]), "{suite}");
        assert_eq!(
            suite["seconds_crossovers"],
            serde_json::json!([]),
            "{suite}"
        );
    }
    let markdown = std::fs::read_to_string(out.join("versus.md")).expect("versus.md");
    assert!(!markdown.contains(" leads from "), "{markdown}");
}
