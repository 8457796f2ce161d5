//! The runner protocol: files uploaded to the container, the nonce, and the bounded
//! capture of the container's output that picks out the runner's result records.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::Submission;

/// The runner uploaded with every submission.
pub(crate) const RUNNER_SOURCE: &str = include_str!("runner.py");
/// Where the volume is mounted and the files are uploaded.
pub(crate) const WORK_DIR: &str = "/work";
/// Starts every record line, followed by a space and the nonce.
const RECORD_MARK: &[u8] = b"\x1evernier-result ";
/// Room for the mark, the nonce and the index around a record's JSON.
const RECORD_OVERHEAD: usize = 128;

/// A fresh random nonce: 128 bits from the operating system, as hex.
pub(crate) fn random_hex(n_bytes: usize) -> Result<String, getrandom::Error> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut bytes = vec![0u8; n_bytes];
    getrandom::fill(&mut bytes)?;
    Ok(bytes
        .iter()
        .flat_map(|b| {
            [
                char::from(HEX[usize::from(b >> 4)]),
                char::from(HEX[usize::from(b & 15)]),
            ]
        })
        .collect())
}

/// The tar archive extracted into the work volume: every file owned by root, mode 0444,
/// so the sandbox user (65534) can read but not change them.
pub(crate) fn work_archive(submission: &Submission) -> std::io::Result<Vec<u8>> {
    let inputs: Vec<&Value> = submission.cases.iter().map(|case| &case.input).collect();
    let inputs = serde_json::to_vec(&inputs).map_err(std::io::Error::other)?;
    let files: [(&str, &[u8]); 4] = [
        ("runner.py", RUNNER_SOURCE.as_bytes()),
        ("harness.py", submission.harness.as_bytes()),
        ("solution.py", submission.code.as_bytes()),
        ("inputs.json", &inputs),
    ];
    let mut builder = tar::Builder::new(Vec::new());
    for (name, content) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o444);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, name, content)?;
    }
    builder.into_inner()
}

/// Where a record belongs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RecordKey {
    /// The runner could not start the cases (inputs, harness or solution import).
    Setup,
    /// The result of case `n`.
    Case(usize),
}

/// Bounded capture of one stream; on stdout it also separates result records.
#[derive(Debug)]
struct Stream {
    excerpt: Vec<u8>,
    truncated: bool,
}

impl Stream {
    fn keep(&mut self, bytes: &[u8], limit: usize) {
        let room = limit.saturating_sub(self.excerpt.len());
        if bytes.len() > room {
            self.truncated = true;
        }
        self.excerpt
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// Where the stdout line scanner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineState {
    /// At the start of a line; `line` holds a prefix of the record mark.
    Start,
    /// Inside ordinary output: pass bytes through until a newline.
    Plain,
    /// Inside a line that began with the mark and the nonce: collect it.
    Record,
    /// Inside an over-long record line: drop bytes until a newline.
    Skip,
}

/// The container's output, bounded, with the runner's records taken out of stdout.
#[derive(Debug)]
pub(crate) struct OutputCapture {
    prefix: Vec<u8>,
    limit: usize,
    max_record: usize,
    max_records: usize,
    stdout: Stream,
    stderr: Stream,
    state: LineState,
    line: Vec<u8>,
    pending_newline: bool,
    records: BTreeMap<RecordKey, Vec<Value>>,
    n_records: usize,
    n_malformed: usize,
}

impl OutputCapture {
    /// `limit` bounds each stream's excerpt and each record's JSON; `n_cases` bounds how
    /// many records are kept.
    pub(crate) fn new(nonce: &str, limit: usize, n_cases: usize) -> Self {
        let mut prefix = RECORD_MARK.to_vec();
        prefix.extend_from_slice(nonce.as_bytes());
        prefix.push(b' ');
        Self {
            prefix,
            limit,
            max_record: limit.saturating_add(RECORD_OVERHEAD),
            max_records: n_cases.saturating_add(8),
            stdout: Stream {
                excerpt: Vec::new(),
                truncated: false,
            },
            stderr: Stream {
                excerpt: Vec::new(),
                truncated: false,
            },
            state: LineState::Start,
            line: Vec::new(),
            pending_newline: false,
            records: BTreeMap::new(),
            n_records: 0,
            n_malformed: 0,
        }
    }

    /// Takes bytes from the container's stderr.
    pub(crate) fn push_stderr(&mut self, bytes: &[u8]) {
        self.stderr.keep(bytes, self.limit);
    }

    /// Takes bytes from the container's stdout.
    pub(crate) fn push_stdout(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match self.state {
                LineState::Start => {
                    let byte = bytes[0];
                    bytes = &bytes[1..];
                    if byte == b'\n' && self.line.is_empty() {
                        // Hold one empty line back: the runner writes one before each record.
                        if self.pending_newline {
                            self.stdout.keep(b"\n", self.limit);
                        }
                        self.pending_newline = true;
                        continue;
                    }
                    self.line.push(byte);
                    if self.prefix.starts_with(&self.line) {
                        if self.line.len() == self.prefix.len() {
                            self.line.clear();
                            self.pending_newline = false;
                            self.state = LineState::Record;
                        }
                    } else {
                        self.flush_pending();
                        let line = std::mem::take(&mut self.line);
                        self.stdout.keep(&line, self.limit);
                        self.state = if byte == b'\n' {
                            LineState::Start
                        } else {
                            LineState::Plain
                        };
                    }
                }
                LineState::Plain => {
                    let end = bytes
                        .iter()
                        .position(|b| *b == b'\n')
                        .map_or(bytes.len(), |i| i + 1);
                    self.stdout.keep(&bytes[..end], self.limit);
                    if bytes[end - 1] == b'\n' {
                        self.state = LineState::Start;
                    }
                    bytes = &bytes[end..];
                }
                LineState::Record => {
                    let end = bytes.iter().position(|b| *b == b'\n');
                    let take = end.unwrap_or(bytes.len());
                    if self.line.len() + take > self.max_record {
                        self.n_malformed += 1;
                        self.line.clear();
                        self.state = LineState::Skip;
                        continue;
                    }
                    self.line.extend_from_slice(&bytes[..take]);
                    if let Some(end) = end {
                        let line = std::mem::take(&mut self.line);
                        self.take_record(&line);
                        self.state = LineState::Start;
                        bytes = &bytes[end + 1..];
                    } else {
                        bytes = &[];
                    }
                }
                LineState::Skip => match bytes.iter().position(|b| *b == b'\n') {
                    Some(end) => {
                        self.state = LineState::Start;
                        bytes = &bytes[end + 1..];
                    }
                    None => bytes = &[],
                },
            }
        }
    }

    fn flush_pending(&mut self) {
        if self.pending_newline {
            self.pending_newline = false;
            self.stdout.keep(b"\n", self.limit);
        }
    }

    /// Parses `<index> <json>` after the mark and nonce.
    fn take_record(&mut self, line: &[u8]) {
        let parsed = std::str::from_utf8(line).ok().and_then(|text| {
            let (index, json) = text.split_once(' ')?;
            let key = if index == "setup" {
                RecordKey::Setup
            } else {
                RecordKey::Case(index.parse().ok()?)
            };
            let value: Value = serde_json::from_str(json).ok()?;
            value.is_object().then_some((key, value))
        });
        match parsed {
            Some((key, value)) if self.n_records < self.max_records => {
                self.n_records += 1;
                self.records.entry(key).or_default().push(value);
            }
            Some(_) => {}
            None => self.n_malformed += 1,
        }
    }

    /// Ends the capture: a partial line left at the end is plain output.
    pub(crate) fn finish(mut self) -> CapturedOutput {
        if self.state == LineState::Start && !self.line.is_empty() {
            self.flush_pending();
            let line = std::mem::take(&mut self.line);
            self.stdout.keep(&line, self.limit);
        }
        CapturedOutput {
            stdout: String::from_utf8_lossy(&self.stdout.excerpt).into_owned(),
            stderr: String::from_utf8_lossy(&self.stderr.excerpt).into_owned(),
            truncated: self.stdout.truncated || self.stderr.truncated,
            records: self.records,
            n_malformed: self.n_malformed,
        }
    }
}

/// What came out of the container.
#[derive(Debug, Default)]
pub(crate) struct CapturedOutput {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) truncated: bool,
    pub(crate) records: BTreeMap<RecordKey, Vec<Value>>,
    /// Lines that carried the nonce but could not be read (cut, not JSON, too long).
    pub(crate) n_malformed: usize,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NONCE: &str = "00ff";

    fn record(index: &str, json: &str) -> String {
        format!("\n\x1evernier-result {NONCE} {index} {json}\n")
    }

    #[test]
    fn separates_records_from_output_in_any_split() {
        let stream = format!(
            "hello\n{}partial{}",
            record("0", r#"{"value":1}"#),
            record("1", r#"{"value":[2]}"#)
        );
        for split in 0..stream.len() {
            let mut capture = OutputCapture::new(NONCE, 1 << 20, 2);
            capture.push_stdout(&stream.as_bytes()[..split]);
            capture.push_stdout(&stream.as_bytes()[split..]);
            let out = capture.finish();
            assert_eq!(out.stdout, "hello\npartial\n", "split at {split}");
            assert_eq!(out.records[&RecordKey::Case(0)], vec![json!({"value": 1})]);
            assert_eq!(
                out.records[&RecordKey::Case(1)],
                vec![json!({"value": [2]})]
            );
            assert_eq!(out.n_malformed, 0);
        }
    }

    #[test]
    fn lines_with_another_nonce_are_plain_output() {
        let mut capture = OutputCapture::new(NONCE, 1 << 20, 1);
        capture.push_stdout(b"\x1evernier-result 1234 0 {\"value\":1}\n");
        let out = capture.finish();
        assert!(out.records.is_empty());
        assert!(out.stdout.contains("1234 0"));
    }

    #[test]
    fn a_record_must_start_a_line() {
        let mut capture = OutputCapture::new(NONCE, 1 << 20, 1);
        capture.push_stdout(format!("x\x1evernier-result {NONCE} 0 {{\"value\":1}}\n").as_bytes());
        assert!(capture.finish().records.is_empty());
    }

    #[test]
    fn output_is_bounded_and_marked_truncated_but_records_survive() {
        let mut capture = OutputCapture::new(NONCE, 1000, 1);
        for _ in 0..100 {
            capture.push_stdout(&[b'x'; 997]);
        }
        capture.push_stdout(record("0", r#"{"value":"ok"}"#).as_bytes());
        capture.push_stderr(&[b'e'; 5000]);
        let out = capture.finish();
        assert_eq!(out.stdout.len(), 1000);
        assert_eq!(out.stderr.len(), 1000);
        assert!(out.truncated);
        assert_eq!(
            out.records[&RecordKey::Case(0)],
            vec![json!({"value": "ok"})]
        );
    }

    #[test]
    fn malformed_and_oversized_records_are_counted_not_kept() {
        let mut capture = OutputCapture::new(NONCE, 16, 3);
        capture.push_stdout(record("0", "not json").as_bytes());
        capture.push_stdout(record("x", "{}").as_bytes());
        capture
            .push_stdout(record("1", &format!(r#"{{"value":"{}"}}"#, "a".repeat(400))).as_bytes());
        capture.push_stdout(record("2", "[1]").as_bytes());
        let out = capture.finish();
        assert!(out.records.is_empty());
        assert_eq!(out.n_malformed, 4);
    }

    #[test]
    fn setup_records_and_duplicates_are_kept_apart() {
        let mut capture = OutputCapture::new(NONCE, 1 << 20, 1);
        capture.push_stdout(record("setup", r#"{"stage":"solution"}"#).as_bytes());
        capture.push_stdout(record("0", r#"{"value":1}"#).as_bytes());
        capture.push_stdout(record("0", r#"{"value":2}"#).as_bytes());
        let out = capture.finish();
        assert_eq!(out.records[&RecordKey::Setup].len(), 1);
        assert_eq!(out.records[&RecordKey::Case(0)].len(), 2);
    }

    #[test]
    fn the_archive_holds_read_only_root_files_without_expected_values() {
        let submission = Submission::new(
            "x = 1",
            "def run_case(s, i): return i",
            vec![crate::Case::new(
                "a",
                json!({"n": 1}),
                json!("SECRET-EXPECTED"),
            )],
        );
        let bytes = work_archive(&submission).expect("archive");
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut names = Vec::new();
        for entry in archive.entries().expect("entries") {
            let mut entry = entry.expect("entry");
            let header = entry.header();
            assert_eq!(header.mode().expect("mode"), 0o444);
            assert_eq!(header.uid().expect("uid"), 0);
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text).expect("read");
            assert!(!text.contains("SECRET-EXPECTED"));
            names.push(entry.path().expect("path").display().to_string());
        }
        assert_eq!(
            names,
            ["runner.py", "harness.py", "solution.py", "inputs.json"]
        );
    }

    #[test]
    fn nonces_are_random_hex() {
        let a = random_hex(16).expect("random");
        let b = random_hex(16).expect("random");
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
