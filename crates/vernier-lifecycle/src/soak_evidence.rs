//! What a death leaves to read: the tail of a launched server's log with lines that look like
//! known fatal markers picked out, and the figures of the last `/metrics` scrape.

use std::collections::BTreeMap;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

use vernier_openai::{generation_counter, server_load};

use crate::soak_journal::{LogEvidence, LogMarker};

/// Substrings (matched without regard to case) of log lines that engines and drivers write
/// when they die: NVIDIA's `Xid` driver events, CUDA's errors, memory exhaustion, crashes of
/// the process itself.
pub const FATAL_MARKERS: [&str; 11] = [
    "Xid",
    "illegal memory access",
    "CUDA error",
    "out of memory",
    "Segmentation fault",
    "SIGSEGV",
    "core dumped",
    "Fatal Python error",
    "terminate called",
    "device-side assert",
    "NCCL error",
];

/// How much of the log's end is read (a log can be gigabytes).
const READ_AT_MOST: u64 = 8 * 1024 * 1024;

/// The last `tail_lines` lines of `log` and every marker line in its last 8 MiB; `None` when
/// the log cannot be read.
pub fn log_evidence(log: &Path, tail_lines: usize) -> Option<LogEvidence> {
    let mut file = std::fs::File::open(log).ok()?;
    let length = file.metadata().ok()?.len();
    let start = length.saturating_sub(READ_AT_MOST);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    // Line numbers count from the file's start only when it was read whole.
    let first_line = if start == 0 {
        1
    } else {
        let mut before = vec![0; usize::try_from(start).unwrap_or(0).min(64 * 1024 * 1024)];
        file.seek(SeekFrom::Start(0)).ok()?;
        file.read_exact(&mut before).ok()?;
        before.split(|byte| *byte == b'\n').count()
    };
    let lines: Vec<&str> = text.lines().collect();
    let markers = lines
        .iter()
        .enumerate()
        .filter_map(|(index, line)| {
            let lower = line.to_lowercase();
            FATAL_MARKERS
                .iter()
                .find(|marker| lower.contains(&marker.to_lowercase()))
                .map(|marker| LogMarker {
                    line: first_line + index,
                    marker: (*marker).to_owned(),
                    text: clip(line),
                })
        })
        .collect();
    let tail = lines
        .iter()
        .skip(lines.len().saturating_sub(tail_lines))
        .map(|line| clip(line))
        .collect();
    Some(LogEvidence {
        path: log.display().to_string(),
        tail,
        markers,
    })
}

/// A log line, cut at 2,000 characters.
fn clip(line: &str) -> String {
    if line.chars().count() <= 2000 {
        return line.to_owned();
    }
    let mut clipped: String = line.chars().take(2000).collect();
    clipped.push_str(" [cut]");
    clipped
}

/// KV-cache use names: vLLM (newer, then older), `SGLang`, llama.cpp (older builds).
const KV_CACHE_USAGE: [&str; 4] = [
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
    "llamacpp:kv_cache_usage_ratio",
];

/// Running, waiting, KV-cache use (0 to 1) and the generation counter of a scrape's sums.
pub(crate) fn scrape_figures(
    sums: &BTreeMap<String, f64>,
) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    let load = server_load(sums);
    let kv = KV_CACHE_USAGE
        .iter()
        .find_map(|name| sums.get(*name).copied());
    let generated = generation_counter(sums).and_then(|name| sums.get(name).copied());
    (
        load.map(|l| l.running),
        load.map(|l| l.waiting),
        kv,
        generated,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_picked_out_with_their_line_numbers() {
        let folder = tempfile::tempdir().expect("tempdir");
        let log = folder.path().join("server.log");
        let mut text = "INFO step\n".repeat(300);
        text.push_str("[  123.4] NVRM: Xid (PCI:0000:01:00): 31, pid=42, MMU Fault\n");
        text.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n");
        text.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
        std::fs::write(&log, text).expect("write");
        let evidence = log_evidence(&log, 5).expect("readable");
        assert_eq!(evidence.tail.len(), 5);
        assert!(evidence.tail[4].contains("OutOfMemoryError"));
        let found: Vec<(usize, &str)> = evidence
            .markers
            .iter()
            .map(|m| (m.line, m.marker.as_str()))
            .collect();
        // The second line holds both "CUDA error" and "illegal memory access": the first
        // marker in the list's order names it.
        assert_eq!(
            found,
            [
                (301, "Xid"),
                (302, "illegal memory access"),
                (303, "out of memory")
            ]
        );
        assert!(log_evidence(&folder.path().join("missing.log"), 5).is_none());
    }
}
