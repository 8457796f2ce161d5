//! A journal or any JSON Lines file read back as values, every line.

use std::path::Path;

/// Every line of the JSON Lines file at `path`, parsed (a line that is not JSON fails the
/// test, naming the file and the line).
pub fn journal_values(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
    text.lines()
        .enumerate()
        .map(|(index, line)| {
            serde_json::from_str(line).unwrap_or_else(|error| {
                panic!("{} line {}: {error}: {line}", path.display(), index + 1)
            })
        })
        .collect()
}

/// The lines of the journal at `path` whose `kind` (or `type`) field is `kind`.
pub fn journal_lines_of(path: &Path, kind: &str) -> Vec<serde_json::Value> {
    journal_values(path)
        .into_iter()
        .filter(|line| {
            line.get("kind")
                .or_else(|| line.get("type"))
                .and_then(|v| v.as_str())
                == Some(kind)
        })
        .collect()
}

/// Polls the journal at `journal` until it holds `n` `rep_done` lines; fails after two minutes,
/// or when `run` ends first.
pub async fn wait_for_rep_done<T>(journal: &Path, n: usize, run: &tokio::task::JoinHandle<T>) {
    tokio::time::timeout(std::time::Duration::from_secs(120), async {
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            let text = std::fs::read_to_string(journal).unwrap_or_default();
            if text.matches("\"type\":\"rep_done\"").count() >= n {
                break;
            }
            assert!(
                !run.is_finished(),
                "the run ended before {n} repetitions were journaled"
            );
        }
    })
    .await
    .expect("the repetitions are journaled within two minutes");
}
