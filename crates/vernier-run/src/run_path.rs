//! One convention for naming a run on a command line: its folder or any file in it.

use std::path::{Path, PathBuf};

/// The run folder `path` names: the path itself when it is a folder, else the folder its file
/// is in (`out/run.json`, `out/journal.jsonl` and `out` all name `out`).
pub fn run_folder(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_owned();
    }
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// The file `name` of the run `path` names: `path` itself when it is a file, else `name` in the
/// folder (`--resume out` is `--resume out/journal.jsonl`).
pub fn run_file_in(path: &Path, name: &str) -> PathBuf {
    if path.is_dir() {
        path.join(name)
    } else {
        path.to_owned()
    }
}

/// Writes a derived file (run file, results, report) whole or not at all: to a hidden
/// temporary name beside it, then renamed over it. A full disk leaves the previous file (or
/// none), never a truncated one; the temporary file is removed on failure.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let temporary = path.with_file_name(format!(".{name}.partial"));
    let written = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("run.json");
        write_atomically(&path, b"first").expect("written");
        write_atomically(&path, b"second").expect("replaced");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert_eq!(names.len(), 1, "no temporary file left");
        // A folder that does not exist: an error, and nothing written.
        let missing = dir.path().join("no-such-folder").join("run.json");
        assert!(write_atomically(&missing, b"x").is_err());
    }

    #[test]
    fn a_folder_or_any_file_in_it_names_the_run() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let journal = dir.path().join("journal.jsonl");
        std::fs::write(&journal, "{}\n").expect("a journal");
        assert_eq!(run_folder(dir.path()), dir.path());
        assert_eq!(run_folder(&journal), dir.path());
        assert_eq!(run_file_in(dir.path(), "journal.jsonl"), journal);
        assert_eq!(run_file_in(&journal, "journal.jsonl"), journal);
        assert_eq!(run_folder(Path::new("run.json")), Path::new("."));
    }
}
