//! A journal edited by hand: a try that appears twice is named, never counted twice or let
//! replace the other.

use std::path::PathBuf;

use vernier_hardsuite::{HardsuiteError, read_hardsuite_journal};

fn fixture_lines() -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/journal.jsonl");
    std::fs::read_to_string(path)
        .expect("fixture journal")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write(lines: &[String]) -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().expect("temporary folder");
    let path = folder.path().join("journal.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write the journal");
    (folder, path)
}

#[test]
fn a_try_copied_within_a_run_is_refused_naming_both_lines() {
    let mut lines = fixture_lines();
    // The fixture's second line is its first attempt; a copy of it goes last.
    assert!(lines[1].contains("\"type\": \"attempt\""), "{}", lines[1]);
    lines.push(lines[1].clone());
    let (_folder, path) = write(&lines);
    match read_hardsuite_journal(&path) {
        Err(HardsuiteError::Parse { line, message, .. }) => {
            assert_eq!(line, lines.len());
            assert!(message.contains("is already on line 2"), "{message}");
            assert!(message.contains("copied or edited by hand"), "{message}");
        }
        other => panic!("a repeated try is refused, got {other:?}"),
    }
}

#[test]
fn the_same_try_number_after_a_resume_is_another_try() {
    // Journals written before resumes numbered their tries on began again at 1 after a
    // `resumed` line: those still read.
    let mut lines = fixture_lines();
    lines.push(r#"{"type":"resumed","kept_attempts":1,"at_unix_ms":1}"#.to_owned());
    lines.push(lines[1].clone());
    let (_folder, path) = write(&lines);
    let journal = read_hardsuite_journal(&path).expect("reads");
    assert_eq!(journal.n_resumes, 1);
}
