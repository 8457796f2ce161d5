//! Reports rendered from a fixed journal.

use std::path::Path;

fn fixture() -> sweep::RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    let journal = sweep::read_journal(&path).expect("read the fixed journal");
    sweep::summarise(&journal).expect("the journal has a header")
}

#[test]
fn markdown_report_from_a_fixed_journal() {
    insta::assert_snapshot!(sweep::render_markdown(&fixture()));
}

#[test]
fn terminal_table_from_a_fixed_journal() {
    insta::assert_snapshot!(sweep::render_table(&fixture()));
}

#[test]
fn csv_has_one_row_per_cell_with_fixed_columns() {
    let run = fixture();
    let csv = sweep::render_csv(&run);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), run.cells.len() + 1);
    let columns = lines[0].split(',').count();
    assert!(lines.iter().all(|line| line.split(',').count() == columns));
    assert!(lines[0].starts_with("workload,prompt_tokens_target,output_tokens,concurrency,"));
}

#[test]
fn reports_are_written_to_the_output_folder() {
    let out = tempfile::tempdir().expect("temporary folder");
    let files = sweep::write_reports(&fixture(), out.path()).expect("write reports");
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
