//! Reports rendered from a fixed journal.

use std::path::Path;
use vernier_run::VerdictLevel;

fn fixture() -> vernier_sweep::RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    let journal = vernier_sweep::read_sweep_journal(&path).expect("read the fixed journal");
    vernier_sweep::summarise(&journal).expect("the journal has a header")
}

#[test]
fn markdown_report_from_a_fixed_journal() {
    insta::assert_snapshot!(vernier_sweep::markdown_report(&fixture()));
}

#[test]
fn terminal_table_from_a_fixed_journal() {
    insta::assert_snapshot!(vernier_sweep::terminal_table(&fixture()));
}

#[test]
fn the_terminal_fits_100_columns_and_ends_with_a_summary_and_the_verdict() {
    let text = vernier_sweep::terminal_table(&fixture());
    for line in text.lines() {
        // Before, one row of 16 columns ran past 150 characters.
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(text.contains("TTFT ms p50/p90/p99"), "{text}");
    assert!(text.contains("out tok/s all"), "{text}");
    let last: Vec<&str> = text.lines().rev().take(2).collect();
    assert!(
        last[0] == "verdict: questionable: the figures describe the bundled simulator (simulated)",
        "{text}"
    );
    assert!(last[1].contains(" cells measured, "), "{text}");
}

#[test]
fn the_verdict_names_what_a_reader_must_know() {
    let mut run = fixture();
    run.environment.server.simulator = false;
    let clean = vernier_sweep::validity(&run);
    assert!(clean.is_valid(), "{clean:?}");
    assert_eq!(clean.line(), "verdict: valid");
    run.cells[1].n_ok = 0;
    let verdict = vernier_sweep::validity(&run);
    assert_eq!(verdict.verdict, VerdictLevel::Questionable, "{verdict:?}");
    assert!(verdict.line().contains("1 of "), "{}", verdict.line());
    // A cache hit, a shortened output and a changed server each say so by name.
    run.cells[0].n_cache_hits = 2;
    run.cells[0].n_length_mismatch = 1;
    run.identity_changes = vec!["server /version: at the start 1, at the end 2".to_owned()];
    let verdict = vernier_sweep::validity(&run);
    assert_eq!(verdict.verdict, VerdictLevel::Invalid);
    let codes: Vec<&str> = verdict.reasons.iter().map(|r| r.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "server_changed",
            "prefix_cache_hit",
            "not_measured",
            "short_output"
        ]
    );
    let line = verdict.line();
    assert!(line.contains("2 requests hit the prefix cache"), "{line}");
    assert!(
        line.starts_with("verdict: invalid: the server changed during the run: server /version"),
        "{line}"
    );
    // Above a tenth of the requests failing is invalid; below it, questionable.
    let mut failing = fixture();
    failing.environment.server.simulator = false;
    failing.cells[0].n_failed = 1;
    let few = vernier_sweep::validity(&failing);
    let ok: u32 = failing.cells.iter().map(|c| c.n_ok).sum();
    let expected = if f64::from(1_u32) / f64::from(ok + 1) > vernier_run::INFRA_INVALID_SHARE {
        VerdictLevel::Invalid
    } else {
        VerdictLevel::Questionable
    };
    assert_eq!(few.verdict, expected, "{few:?} with {ok} measured");
    failing.cells[0].n_failed = ok;
    assert_eq!(
        vernier_sweep::validity(&failing).verdict,
        VerdictLevel::Invalid
    );
}

#[test]
fn csv_has_one_row_per_cell_with_fixed_columns() {
    let run = fixture();
    let csv = vernier_sweep::csv_report(&run).expect("the CSV");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), run.cells.len() + 1);
    let columns = lines[0].split(',').count();
    assert!(lines.iter().all(|line| line.split(',').count() == columns));
    assert!(lines[0].starts_with("workload,prompt_tokens_target,output_tokens,concurrency,"));
    // Read back by Python's csv module (the independent reader a user's notebook uses): every
    // row has the header's columns and the cells' figures come back as written.
    let read = std::process::Command::new("python3")
        .args([
            "-c",
            "import csv, sys; rows = list(csv.DictReader(sys.stdin)); \
             print(len(rows), len(rows[0]), rows[0]['workload'], rows[0]['concurrency'])",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(csv.as_bytes())?;
            child.wait_with_output()
        })
        .expect("python3 reads the CSV");
    let printed = String::from_utf8_lossy(&read.stdout);
    let first = &run.cells[0];
    assert_eq!(
        printed.trim(),
        format!(
            "{} {columns} {} {}",
            run.cells.len(),
            first.workload,
            first.concurrency
        )
    );
}

#[test]
fn reports_are_written_to_the_output_folder() {
    let out = tempfile::tempdir().expect("temporary folder");
    let files = vernier_sweep::write_reports(&fixture(), out.path()).expect("write reports");
    for name in [
        "run.json",
        "report.md",
        "report.csv",
        "prefill.svg",
        "ttft.svg",
        "decode.svg",
        "tokens_per_event.svg",
    ] {
        assert!(out.path().join(name).exists(), "{name} missing");
    }
    assert_eq!(files.charts.len(), 4);
}

/// The fixed journal rewritten as if the server were llama.cpp without speculative decoding
/// counters in `/metrics` and its set-up checks had warned; summarised.
fn without_spec_counters_and_with_warnings() -> vernier_sweep::RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    let mut lines = vernier_test_support::journal_values(&path);
    for line in &mut lines {
        if line["type"] == "header" {
            line["warnings"] = serde_json::json!(["busy check unavailable: test warning"]);
        }
        if line["type"] == "cell_window" {
            for side in ["metrics_before", "metrics_after"] {
                let metrics = line[side].as_object_mut().expect("a metrics map");
                metrics.retain(|name, _| !name.contains("spec_decode"));
            }
        }
    }
    let out = tempfile::tempdir().expect("temporary folder");
    let rewritten = out.path().join("journal.jsonl");
    let mut text = lines
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    text.push('\n');
    std::fs::write(&rewritten, text).expect("write the journal");
    let journal =
        vernier_sweep::read_sweep_journal(&rewritten).expect("read the rewritten journal");
    vernier_sweep::summarise(&journal).expect("the journal has a header")
}

#[test]
fn absent_spec_decode_counters_are_said_to_be_not_reported() {
    let run = fixture();
    assert!(
        run.cells
            .iter()
            .all(|c| c.spec_decode_reported == Some(true))
    );
    let run = without_spec_counters_and_with_warnings();
    assert!(run.cells.iter().all(|c| c.spec_decode.is_none()));
    assert!(
        run.cells
            .iter()
            .all(|c| c.spec_decode_reported == Some(false))
    );
    let markdown = vernier_sweep::markdown_report(&run);
    assert!(
        markdown
            .contains("## Speculative decoding (server counters)\n\nNot reported by this server"),
        "{markdown}"
    );
}

#[test]
fn set_up_warnings_reach_the_run_file_and_the_report() {
    let run = without_spec_counters_and_with_warnings();
    assert!(
        run.warnings
            .contains(&"busy check unavailable: test warning".to_owned()),
        "{:?}",
        run.warnings
    );
    let markdown = vernier_sweep::markdown_report(&run);
    assert!(
        markdown.contains("## Notes\n\n- busy check unavailable: test warning"),
        "{markdown}"
    );
}

#[test]
fn the_servers_own_timings_are_shown_beside_ours_with_the_ratio() {
    // The fixed journal, with each measured request's response carrying llama.cpp-style
    // `timings` whose decode rate is ours / 1.02 and whose prompt rate is twice ours.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    let mut lines = vernier_test_support::journal_values(&path);
    for line in &mut lines {
        if line["type"] == "attempt" && line["status"] == "ok" {
            let decode = line["measurement"]["decode_tokens_per_s"]
                .as_f64()
                .expect("decode");
            let prefill = line["measurement"]["prefill_tokens_per_s"]
                .as_f64()
                .expect("prefill");
            line["server_timings"] = serde_json::json!({
                "prompt_n": 100, "prompt_ms": 10.0, "predicted_n": 64, "predicted_ms": 500.0,
                "predicted_per_second": decode / 1.02, "prompt_per_second": prefill * 2.0,
            });
        }
    }
    let out = tempfile::tempdir().expect("temporary folder");
    let rewritten = out.path().join("journal.jsonl");
    let mut text = lines
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    text.push('\n');
    std::fs::write(&rewritten, text).expect("write the journal");
    let journal = vernier_sweep::read_sweep_journal(&rewritten).expect("read");
    let run = vernier_sweep::summarise(&journal).expect("a header");
    for cell in &run.cells {
        let clock = cell.server_clock.expect("server timings were recorded");
        assert!(
            (clock.decode_ratio.expect("a ratio") - 1.02).abs() < 1e-9,
            "{clock:?}"
        );
        assert!(
            (clock.prefill_ratio.expect("a ratio") - 0.5).abs() < 1e-9,
            "{clock:?}"
        );
    }
    let markdown = vernier_sweep::markdown_report(&run);
    assert!(markdown.contains("## The server's own clock"), "{markdown}");
    assert!(markdown.contains("| 1.020 |"), "{markdown}");
    // Without timings, no such section (the fixed journal's own report).
    assert!(!vernier_sweep::markdown_report(&fixture()).contains("server's own clock"));
}

#[test]
fn a_journal_line_repeated_by_hand_is_counted_once_and_named() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    let text = std::fs::read_to_string(&path).expect("the fixed journal");
    let repeated = text
        .lines()
        .find(|line| {
            line.contains("\"type\":\"attempt\"") && line.contains("\"phase\":\"measured\"")
        })
        .expect("a measured attempt");
    let out = tempfile::tempdir().expect("temporary folder");
    let edited = out.path().join("journal.jsonl");
    std::fs::write(&edited, format!("{text}{repeated}\n")).expect("write");
    let journal = vernier_sweep::read_sweep_journal(&edited).expect("read");
    let run = vernier_sweep::summarise(&journal).expect("a header");
    let original = fixture();
    // Before, the repeated request was counted twice.
    let n_ok: Vec<u32> = run.cells.iter().map(|c| c.n_ok).collect();
    let want: Vec<u32> = original.cells.iter().map(|c| c.n_ok).collect();
    assert_eq!(n_ok, want);
    assert!(
        run.warnings.iter().any(|w| w.contains("more than once")),
        "{:?}",
        run.warnings
    );
}
