//! Reading a journal back, tolerating a torn last line.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::JournalError;

/// A journal read back by [`read`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Journal<T> {
    /// Every complete, non-blank line, in file order.
    pub lines: Vec<Line<T>>,
    /// Bytes up to the end of the last complete line (blank lines included): where the next
    /// line goes once a torn tail is cut off.
    pub valid_len: u64,
    /// The torn last line, when a crash cut a write short.
    pub torn_tail: Option<TornTail>,
}

impl<T> Journal<T> {
    /// The parsed values, in file order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.lines.iter().map(|line| &line.value)
    }

    /// The parsed values, in file order, without their line numbers.
    pub fn into_values(self) -> Vec<T> {
        self.lines.into_iter().map(|line| line.value).collect()
    }
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Line<T> {
    /// 1-based line number in the file.
    pub number: usize,
    /// The parsed value.
    pub value: T,
}

/// A last line without its newline: what a crash during an append leaves. It was not parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TornTail {
    /// Byte offset where the torn line starts (equal to [`Journal::valid_len`]).
    pub offset: u64,
    /// 1-based line number of the torn line.
    pub number: usize,
    /// The torn line's text.
    pub text: String,
}

/// Reads the journal at `path`, parsing each complete line as a `T`. Blank lines are
/// skipped; a last line without its newline is returned as [`Journal::torn_tail`]; any other
/// line that does not parse is a [`JournalError::Parse`] naming it.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Journal<T>, JournalError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| JournalError::io("read", path, source))?;
    let mut lines = Vec::new();
    let mut offset = 0usize;
    let mut torn_tail = None;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let body = raw.trim_end();
        if body.is_empty() {
            offset += raw.len();
            continue;
        }
        if !raw.ends_with('\n') {
            // Lines are written with their newline in one call: no newline means a torn write.
            torn_tail = Some(TornTail {
                offset: offset as u64,
                number: index + 1,
                text: raw.to_owned(),
            });
            break;
        }
        let value = serde_json::from_str(body).map_err(|error| JournalError::Parse {
            path: path.to_owned(),
            line: index + 1,
            detail: error.to_string(),
        })?;
        lines.push(Line {
            number: index + 1,
            value,
        });
        offset += raw.len();
    }
    Ok(Journal {
        lines,
        valid_len: offset as u64,
        torn_tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal_with(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("journal.jsonl");
        std::fs::write(&path, text).expect("write the journal");
        (dir, path)
    }

    #[test]
    fn complete_lines_are_parsed_with_their_numbers_and_blank_lines_skipped() {
        let (_dir, path) = journal_with("1\n\n  \n2\n");
        let journal = read::<u32>(&path).expect("a well-formed journal");
        let numbers: Vec<(usize, u32)> = journal
            .lines
            .iter()
            .map(|line| (line.number, line.value))
            .collect();
        assert_eq!(numbers, [(1, 1), (4, 2)]);
        assert_eq!(journal.valid_len, 8);
        assert_eq!(journal.torn_tail, None);
    }

    #[test]
    fn a_torn_last_line_is_reported_with_its_offset_not_parsed() {
        let (_dir, path) = journal_with("1\n22\n{\"broken");
        let mut journal = read::<u32>(&path).expect("a torn tail is tolerated");
        let tail = journal.torn_tail.take().expect("the torn tail");
        assert_eq!(journal.into_values(), [1, 22]);
        assert_eq!(tail.offset, 5);
        assert_eq!(tail.number, 3);
        assert_eq!(tail.text, "{\"broken");
    }

    #[test]
    fn a_last_line_without_its_newline_is_torn_even_when_it_parses() {
        let (_dir, path) = journal_with("1\n2");
        let journal = read::<u32>(&path).expect("a torn tail is tolerated");
        assert_eq!(journal.values().copied().collect::<Vec<_>>(), [1]);
        assert_eq!(journal.valid_len, 2);
        assert_eq!(
            journal.torn_tail.map(|tail| tail.text),
            Some("2".to_owned())
        );
    }

    #[test]
    fn a_bad_complete_line_is_an_error_naming_it() {
        let (_dir, path) = journal_with("1\nnot json\n3\n");
        let error = read::<u32>(&path).expect_err("a broken middle line");
        assert!(
            matches!(error, JournalError::Parse { line: 2, .. }),
            "{error:?}"
        );
        assert!(
            error.to_string().starts_with("parse line 2 of journal "),
            "{error}"
        );
    }

    #[test]
    fn a_missing_file_is_a_read_error() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("absent.jsonl");
        let error = read::<u32>(&path).expect_err("no file");
        assert!(
            matches!(error, JournalError::Io { what: "read", .. }),
            "{error:?}"
        );
    }
}
