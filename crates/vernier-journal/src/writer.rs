//! Appending lines, each flushed before `append` returns.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::Serialize;

use crate::JournalError;

/// An open journal. Each line is written with its newline in one `write` call and flushed to
/// the kernel before [`append`](Self::append) returns, so it survives a crash of this process.
/// Appends from several threads never interleave.
#[derive(Debug)]
pub struct JournalWriter {
    path: PathBuf,
    file: Mutex<File>,
}

impl JournalWriter {
    /// Creates a new journal; fails when `path` already exists.
    pub fn create_new(path: &Path) -> Result<Self, JournalError> {
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(path)
            .map_err(|source| JournalError::io("create", path, source))?;
        Ok(Self::new(path, file))
    }

    /// Creates a journal, emptying the file when `path` already exists.
    pub fn create(path: &Path) -> Result<Self, JournalError> {
        let file = File::create(path).map_err(|source| JournalError::io("open", path, source))?;
        Ok(Self::new(path, file))
    }

    /// Opens an existing journal for appending, first cutting off everything after its last
    /// newline: a torn line a crash left (see [`TornTail`](crate::TornTail)) was never
    /// finished, and the next line must start on a line of its own.
    pub fn open_append(path: &Path) -> Result<Self, JournalError> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(|source| JournalError::io("open", path, source))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|source| JournalError::io("read", path, source))?;
        if bytes.last().is_some_and(|byte| *byte != b'\n') {
            let keep = bytes
                .iter()
                .rposition(|byte| *byte == b'\n')
                .map_or(0, |index| index + 1);
            file.set_len(keep as u64).map_err(|source| {
                JournalError::io("truncate the torn last line of", path, source)
            })?;
        }
        Ok(Self::new(path, file))
    }

    fn new(path: &Path, file: File) -> Self {
        Self {
            path: path.to_owned(),
            file: Mutex::new(file),
        }
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` as one line of JSON and flushes it.
    pub fn append<T: Serialize + ?Sized>(&self, line: &T) -> Result<(), JournalError> {
        let mut text = serde_json::to_string(line).map_err(|error| {
            JournalError::io(
                "serialise a line for",
                &self.path,
                std::io::Error::other(error),
            )
        })?;
        text.push('\n');
        let mut file = self.lock();
        file.write_all(text.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|source| JournalError::io("append to", &self.path, source))
    }

    /// Forces the lines written so far to the disk.
    pub fn sync(&self) -> Result<(), JournalError> {
        self.lock()
            .sync_data()
            .map_err(|source| JournalError::io("sync", &self.path, source))
    }

    fn lock(&self) -> MutexGuard<'_, File> {
        // A panic mid-append leaves at worst a torn line, which readers tolerate.
        self.file.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Event {
        rep: u32,
        note: String,
    }

    fn event(rep: u32) -> Event {
        Event {
            rep,
            note: format!("line {rep}\nwith a newline inside"),
        }
    }

    #[test]
    fn appended_lines_are_on_disk_when_append_returns() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("journal.jsonl");
        let writer = JournalWriter::create_new(&path).expect("create");
        writer.append(&event(0)).expect("append");
        writer.append(&event(1)).expect("append");
        writer.sync().expect("sync");
        // Read while the writer is still open: nothing is left in a buffer.
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.ends_with('\n'));
        let journal = read::<Event>(&path).expect("read back");
        assert_eq!(journal.into_values(), [event(0), event(1)]);
        assert_eq!(writer.path(), path);
    }

    #[test]
    fn create_new_refuses_an_existing_file_and_create_empties_it() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("journal.jsonl");
        std::fs::write(&path, "{\"old\":true}\n").expect("write");
        let error = JournalWriter::create_new(&path).expect_err("the file exists");
        assert!(
            matches!(error, JournalError::Io { what: "create", .. }),
            "{error:?}"
        );
        JournalWriter::create(&path)
            .expect("create")
            .append(&event(7))
            .expect("append");
        assert_eq!(
            read::<Event>(&path).expect("read").into_values(),
            [event(7)]
        );
    }

    #[test]
    fn open_append_cuts_a_torn_tail_before_appending() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("journal.jsonl");
        let first = serde_json::to_string(&event(0)).expect("serialise");
        std::fs::write(&path, format!("{first}\n{{\"rep\":1,\"no")).expect("write");
        let torn = read::<Event>(&path).expect("torn tail tolerated");
        let offset = torn.torn_tail.expect("a torn tail").offset;
        assert_eq!(offset, torn.valid_len);

        JournalWriter::open_append(&path)
            .expect("open")
            .append(&event(2))
            .expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.starts_with(&format!("{first}\n{{\"rep\":2,")),
            "{text}"
        );
        let journal = read::<Event>(&path).expect("read back");
        assert_eq!(journal.torn_tail, None);
        assert_eq!(journal.into_values(), [event(0), event(2)]);
    }

    #[test]
    fn open_append_keeps_a_whole_journal_and_needs_the_file() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("journal.jsonl");
        let error = JournalWriter::open_append(&path).expect_err("no file yet");
        assert!(
            matches!(error, JournalError::Io { what: "open", .. }),
            "{error:?}"
        );
        JournalWriter::create(&path)
            .expect("create")
            .append(&event(0))
            .expect("append");
        JournalWriter::open_append(&path)
            .expect("open")
            .append(&event(1))
            .expect("append");
        assert_eq!(
            read::<Event>(&path).expect("read").into_values(),
            [event(0), event(1)]
        );
    }
}
