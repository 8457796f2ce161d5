//! `sweep show`: one measured request of a run, from its journal and, with `--capture`, its
//! response replayed event by event with the arrival time and tokens of each.

use std::fmt::Write as _;
use std::path::Path;

use vernier_openai::{ChatChunk, SseDecoder};

use crate::config::CellKey;
use crate::error::SweepError;
use crate::journal::{
    Attempt, RepPhase, Status, StreamCapture, SweepJournalLine, read_sweep_journal,
};

/// The cells of a journal in run order: the configured ones, then any a search chose.
fn cells_of(lines: &[SweepJournalLine], configured: Vec<CellKey>) -> Vec<CellKey> {
    let mut cells = configured;
    for line in lines {
        if let SweepJournalLine::Attempt(attempt) = line
            && !cells.contains(&attempt.cell)
        {
            cells.push(attempt.cell);
        }
    }
    cells
}

/// Prints the measured request `rep`/`stream` of cell `cell` (its place in the run file, or its
/// name as the reports write it, e.g. `prose prompt 111 out 512 c1`) in the run in `out`.
/// Cells, repetitions, streams and tries are numbered from 1, as people count them (the
/// journal's `rep`, `stream` and `attempt` count from 0).
pub fn render_show(out: &Path, cell: &str, rep: u32, stream: u32) -> Result<String, SweepError> {
    let from_one = |what: &str, n: u32| {
        n.checked_sub(1).ok_or_else(|| {
            SweepError::invalid(what, format!("{what} is counted from 1; 0 names nothing"))
        })
    };
    let (rep_index, stream_index) = (from_one("REP", rep)?, from_one("--stream", stream)?);
    let journal_path = crate::journal::journal_path(out);
    let journal = read_sweep_journal(&journal_path)?;
    let configured = journal
        .header()
        .map(|header| header.config.cells())
        .unwrap_or_default();
    let cells = cells_of(&journal.lines, configured);
    let key = cell
        .parse::<usize>()
        .ok()
        .and_then(|place| cells.get(place.checked_sub(1)?).copied())
        .or_else(|| cells.iter().copied().find(|key| key.to_string() == cell))
        .ok_or_else(|| {
            SweepError::invalid(
                "CELL",
                format!(
                    "the run has no cell {cell:?}; give its place from 1 to {} or one of: {}",
                    cells.len(),
                    cells
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            )
        })?;
    let attempts: Vec<&Attempt> = journal
        .lines
        .iter()
        .filter_map(|line| match line {
            SweepJournalLine::Attempt(a)
                if a.cell == key
                    && a.phase == RepPhase::Measured
                    && a.rep == rep_index
                    && a.stream == stream_index =>
            {
                Some(a.as_ref())
            }
            _ => None,
        })
        .collect();
    if attempts.is_empty() {
        return Err(SweepError::invalid(
            "REP",
            format!("cell {key} has no measured repetition {rep} with stream {stream}"),
        ));
    }
    let mut text = String::new();
    let _ = writeln!(text, "{key}, repetition {rep}, stream {stream}");
    for attempt in attempts {
        let _ = writeln!(
            text,
            "try {}: {}{}",
            attempt.attempt + 1,
            match attempt.status {
                Status::Ok => "ok",
                _ => "infra",
            },
            attempt
                .error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        );
        if let Some(m) = &attempt.measurement {
            let _ = writeln!(
                text,
                "  ttft {}, decode {}, {} completion tokens ({}), {} events of which {} carried tokens",
                m.ttft_ms.map_or_else(
                    || "none (no token arrived)".to_owned(),
                    |ms| format!("{ms:.1} ms")
                ),
                m.decode_tokens_per_s.map_or_else(
                    || "none (fewer than two token-bearing events)".to_owned(),
                    |rate| format!("{rate:.1} tok/s")
                ),
                m.completion_tokens,
                m.token_source.as_str(),
                m.n_events,
                m.n_token_events
            );
        }
        match &attempt.capture {
            Some(file) => write_capture(&mut text, &out.join(file))?,
            None if attempt.status == Status::Ok => {
                let _ = writeln!(
                    text,
                    "  (no capture: run with --capture N to keep responses byte for byte)"
                );
            }
            None => {}
        }
    }
    Ok(text)
}

/// Replays a capture through the client's SSE decoder: one line per event.
fn write_capture(text: &mut String, path: &Path) -> Result<(), SweepError> {
    let raw = std::fs::read_to_string(path).map_err(|source| SweepError::Journal {
        what: "read the capture",
        path: path.to_owned(),
        source,
    })?;
    let capture: StreamCapture =
        serde_json::from_str(&raw).map_err(|error| SweepError::JournalParse {
            path: path.to_owned(),
            line: error.line(),
            detail: error.to_string(),
        })?;
    let _ = writeln!(
        text,
        "  capture {} (status {}, {} frames):",
        path.display(),
        capture.status,
        capture.frames.len()
    );
    let _ = writeln!(
        text,
        "  {:>10}  {:>6}  {:>6}  content",
        "ms", "bytes", "tokens"
    );
    let mut decoder = SseDecoder::new(vernier_openai::DEFAULT_MAX_LINE_BYTES);
    let mut events = Vec::new();
    for frame in &capture.frames {
        let bytes = frame.bytes();
        events.clear();
        if decoder.decode(&bytes, &mut events).is_err() {
            let _ = writeln!(
                text,
                "  (the capture does not decode as server-sent events)"
            );
            return Ok(());
        }
        for event in &events {
            let ms = frame.offset_ns as f64 / 1e6;
            let (tokens, content) = match serde_json::from_str::<ChatChunk>(&event.data) {
                Ok(chunk) => (
                    chunk
                        .token_id_count()
                        .map_or_else(|| "-".to_owned(), |n| n.to_string()),
                    chunk
                        .choices
                        .iter()
                        .filter_map(|c| c.delta.content.as_deref())
                        .collect::<String>(),
                ),
                Err(_) => ("-".to_owned(), event.data.chars().take(60).collect()),
            };
            let _ = writeln!(
                text,
                "  {ms:>10.3}  {:>6}  {tokens:>6}  {content:?}",
                bytes.len()
            );
        }
    }
    Ok(())
}
