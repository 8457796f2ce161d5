//! Request traces to replay: when each request arrives and how long its prompt and reply are.
//!
//! Three formats are read ([`TraceFormat`]): Vernier's own JSON lines, the Mooncake traces
//! published by kvcache-ai (`{"timestamp", "input_length", "output_length", "hash_ids"}`) and
//! Azure's LLM inference trace CSV (`TIMESTAMP,ContextTokens,GeneratedTokens`). All become a
//! [`Trace`]: records sorted by arrival (stable), offsets in milliseconds after the first
//! record, which arrives at 0. The schema and the prompt rules are in `docs/trace-format.md`.
//!
//! Traces carry lengths, never text: [`synthesize`] writes each prompt from a fixed word list,
//! so that records sharing leading hash ids share the same leading text (a prefix cache can
//! hit), and a run nonce on the first line keeps two runs from sharing anything.

mod azure;
mod json;
mod record;
mod synth;

use std::path::Path;
use std::str::FromStr;

pub use record::{DEFAULT_BLOCK_TOKENS, MAX_RECORD_TOKENS, TraceError, TraceRecord};
pub use synth::{Synthesis, synthesize};

/// The names [`bundled_trace`] knows.
pub const BUNDLED_TRACE_NAMES: [&str; 2] = ["mini-mooncake", "mini-azure"];

const MINI_MOONCAKE: &str = include_str!("../data/traces/mini-mooncake.jsonl");
const MINI_AZURE: &str = include_str!("../data/traces/mini-azure.csv");

/// The file formats a trace can come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// Vernier's own JSON lines: `offset_ms`, `session`, `input_tokens`, `output_tokens`,
    /// `hash_ids`, with an optional header line setting the block size.
    Jsonl,
    /// kvcache-ai's Mooncake traces: `timestamp` (ms), `input_length`, `output_length`,
    /// `hash_ids` (one id per 512-token block).
    Mooncake,
    /// Azure's LLM inference trace CSV: `TIMESTAMP,ContextTokens,GeneratedTokens`.
    Azure,
}

impl TraceFormat {
    /// The name used on the command line and in messages: `jsonl`, `mooncake` or `azure`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Jsonl => "jsonl",
            Self::Mooncake => "mooncake",
            Self::Azure => "azure",
        }
    }
}

impl std::fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    /// `jsonl`, `mooncake` or `azure`, in any case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "jsonl" => Ok(Self::Jsonl),
            "mooncake" => Ok(Self::Mooncake),
            "azure" => Ok(Self::Azure),
            _ => Err(TraceError::UnknownFormat {
                name: text.to_owned(),
            }),
        }
    }
}

/// A trace read from a file or a bundled text.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The format it was read from.
    pub format: TraceFormat,
    /// Tokens per hash id block (512 unless a Vernier JSONL header says otherwise).
    pub block_tokens: u32,
    /// The requests, sorted by offset (ties keep file order); the first has offset 0.
    pub records: Vec<TraceRecord>,
}

/// Reads a trace file. With `format` `None` the format is detected: a `.csv` file is Azure;
/// otherwise the first line decides (`TIMESTAMP,...` is Azure, a JSON object with
/// `input_length` is Mooncake, one with `input_tokens` or `vernier_trace` is Vernier's JSONL).
pub fn read_trace(path: &Path, format: Option<TraceFormat>) -> Result<Trace, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Read {
        path: path.to_owned(),
        source,
    })?;
    let format = match format {
        Some(format) => Some(format),
        None if has_csv_extension(path) => Some(TraceFormat::Azure),
        None => None,
    };
    parse_trace(&text, format, &path.display().to_string())
}

/// Parses a trace from text. `origin` names it in error messages (a file name, or a bundled
/// trace's name); with `format` `None` the format is detected as in [`read_trace`], an
/// `origin` ending in `.csv` counting as the extension.
pub fn parse_trace(
    text: &str,
    format: Option<TraceFormat>,
    origin: &str,
) -> Result<Trace, TraceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let format = match format {
        Some(format) => format,
        None if has_csv_extension(Path::new(origin)) => TraceFormat::Azure,
        None => detect(text, origin)?,
    };
    let (block_tokens, records) = match format {
        TraceFormat::Jsonl => json::parse_jsonl(text, origin)?,
        TraceFormat::Mooncake => (DEFAULT_BLOCK_TOKENS, json::parse_mooncake(text, origin)?),
        TraceFormat::Azure => (DEFAULT_BLOCK_TOKENS, azure::parse_azure(text, origin)?),
    };
    finish(format, block_tokens, records, origin)
}

/// The text and format of a trace bundled with Vernier: `mini-mooncake` (120 requests over
/// about a minute, with shared prefixes) or `mini-azure` (40 requests over about 28 s). See
/// `data/traces/README.md` for how they were made; neither holds recorded traffic.
pub fn bundled_trace(name: &str) -> Option<(&'static str, TraceFormat)> {
    match name {
        "mini-mooncake" => Some((MINI_MOONCAKE, TraceFormat::Mooncake)),
        "mini-azure" => Some((MINI_AZURE, TraceFormat::Azure)),
        _ => None,
    }
}

fn has_csv_extension(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("csv"))
}

/// The format the first non-blank line shows.
fn detect(text: &str, origin: &str) -> Result<TraceFormat, TraceError> {
    let Some(first) = text.lines().map(str::trim).find(|line| !line.is_empty()) else {
        return Err(TraceError::Empty {
            origin: origin.to_owned(),
        });
    };
    let undetected = |detail: String| TraceError::Undetected {
        origin: origin.to_owned(),
        detail,
    };
    if first.to_ascii_lowercase().starts_with("timestamp,") {
        return Ok(TraceFormat::Azure);
    }
    let value: serde_json::Value = serde_json::from_str(first).map_err(|_| {
        undetected("the first line is neither JSON nor an Azure CSV header".to_owned())
    })?;
    let Some(object) = value.as_object() else {
        return Err(undetected(
            "the first line is JSON but not an object".to_owned(),
        ));
    };
    if object.contains_key("vernier_trace") || object.contains_key("input_tokens") {
        Ok(TraceFormat::Jsonl)
    } else if object.contains_key("input_length") {
        Ok(TraceFormat::Mooncake)
    } else {
        Err(undetected(
            "the first record has neither \"input_tokens\" nor \"input_length\"".to_owned(),
        ))
    }
}

/// Sorts records by offset (stable) and rebases the offsets so the first is 0.
fn finish(
    format: TraceFormat,
    block_tokens: u32,
    mut records: Vec<TraceRecord>,
    origin: &str,
) -> Result<Trace, TraceError> {
    records.sort_by(|a, b| a.offset_ms.total_cmp(&b.offset_ms));
    let Some(first) = records.first().map(|record| record.offset_ms) else {
        return Err(TraceError::Empty {
            origin: origin.to_owned(),
        });
    };
    for record in &mut records {
        record.offset_ms -= first;
    }
    Ok(Trace {
        format,
        block_tokens,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_error(result: Result<Trace, TraceError>) -> (usize, String) {
        match result {
            Err(TraceError::Line { line, detail, .. }) => (line, detail),
            other => panic!("expected a line error, got {other:?}"),
        }
    }

    #[test]
    fn format_names_round_trip_and_unknown_names_are_refused() {
        for format in [
            TraceFormat::Jsonl,
            TraceFormat::Mooncake,
            TraceFormat::Azure,
        ] {
            assert_eq!(format.name().parse::<TraceFormat>().ok(), Some(format));
            assert_eq!(format.to_string(), format.name());
        }
        assert_eq!(
            "Mooncake".parse::<TraceFormat>().ok(),
            Some(TraceFormat::Mooncake)
        );
        let error = "sharegpt"
            .parse::<TraceFormat>()
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("choose a trace format: \"sharegpt\" is not one; use jsonl, mooncake or azure")
        );
    }

    #[test]
    fn detection_reads_the_extension_then_the_first_line() {
        let detected = |text: &str, origin: &str| parse_trace(text, None, origin).map(|t| t.format);
        let azure = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,10,2\n";
        assert_eq!(detected(azure, "a.txt").ok(), Some(TraceFormat::Azure));
        assert_eq!(detected(azure, "a.CSV").ok(), Some(TraceFormat::Azure));
        let mooncake = "\n{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n";
        assert_eq!(
            detected(mooncake, "m.jsonl").ok(),
            Some(TraceFormat::Mooncake)
        );
        let jsonl = "{\"offset_ms\": 0, \"input_tokens\": 5, \"output_tokens\": 1}\n";
        assert_eq!(detected(jsonl, "v.jsonl").ok(), Some(TraceFormat::Jsonl));
        let header = "{\"vernier_trace\": 1, \"block_tokens\": 16}\n".to_owned() + jsonl;
        assert_eq!(detected(&header, "v.jsonl").ok(), Some(TraceFormat::Jsonl));
        // A .csv name wins over JSON content (which then fails as Azure).
        assert!(matches!(
            detected(jsonl, "v.csv"),
            Err(TraceError::Line { line: 1, .. })
        ));
        let unknown = detected("{\"prompt\": \"hi\"}\n", "x.jsonl")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            unknown.as_deref(),
            Some(
                "read trace x.jsonl: cannot tell its format (the first record has neither \
                 \"input_tokens\" nor \"input_length\"); name the format: jsonl, mooncake or azure"
            )
        );
        assert!(matches!(
            detected("hello\n", "x"),
            Err(TraceError::Undetected { .. })
        ));
    }

    #[test]
    fn read_trace_detects_from_a_file_and_names_a_missing_file() {
        let dir = tempfile::tempdir().ok();
        let dir = dir.as_ref().map(tempfile::TempDir::path);
        let Some(dir) = dir else {
            panic!("no temporary folder");
        };
        let path = dir.join("trace.csv");
        let written = std::fs::write(
            &path,
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,7,3\n",
        );
        assert!(written.is_ok());
        let trace = read_trace(&path, None).ok();
        assert_eq!(
            trace.map(|t| (t.format, t.records.len())),
            Some((TraceFormat::Azure, 1))
        );
        let missing = read_trace(&dir.join("none.jsonl"), None);
        assert!(matches!(missing, Err(TraceError::Read { .. })));
    }

    #[test]
    fn empty_traces_are_refused() {
        for (text, format) in [
            ("", None),
            ("\n\n", Some(TraceFormat::Jsonl)),
            ("{\"vernier_trace\": 1}\n", None),
            ("TIMESTAMP,ContextTokens,GeneratedTokens\n", None),
        ] {
            let error = parse_trace(text, format, "t.jsonl")
                .err()
                .map(|e| e.to_string());
            assert_eq!(
                error.as_deref(),
                Some("read trace t.jsonl: it has no records; a trace needs at least one request"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn records_are_sorted_stably_and_rebased_to_zero() {
        let text = "{\"offset_ms\": 300, \"input_tokens\": 1, \"output_tokens\": 1}\n\
                    {\"offset_ms\": 100, \"input_tokens\": 2, \"output_tokens\": 1}\n\
                    {\"offset_ms\": 300, \"input_tokens\": 3, \"output_tokens\": 1}\n\
                    {\"offset_ms\": 100.5, \"input_tokens\": 4, \"output_tokens\": 1}\n";
        let trace = parse_trace(text, None, "t.jsonl").ok();
        let order: Vec<(f64, u32)> = trace
            .map(|t| {
                t.records
                    .iter()
                    .map(|r| (r.offset_ms, r.input_tokens))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(order, vec![(0.0, 2), (0.5, 4), (200.0, 1), (200.0, 3)]);
    }

    #[test]
    fn too_many_hash_ids_are_refused_in_both_json_formats() {
        let mooncake = "{\"timestamp\": 0, \"input_length\": 513, \"output_length\": 4, \"hash_ids\": [0, 1, 2]}\n";
        let (line, detail) = line_error(parse_trace(mooncake, None, "m.jsonl"));
        assert_eq!(line, 1);
        assert_eq!(
            detail,
            "\"hash_ids\" has 3 ids but input_length 513 fills only 2 block(s) of 512 tokens; \
             each hash id stands for one block, so list at most 2"
        );
        let jsonl = "{\"vernier_trace\": 1, \"block_tokens\": 4}\n\
                     {\"offset_ms\": 0, \"input_tokens\": 8, \"output_tokens\": 1, \"hash_ids\": [1, 2, 3]}\n";
        let (line, detail) = line_error(parse_trace(jsonl, None, "v.jsonl"));
        assert_eq!(line, 2);
        assert!(detail.starts_with("\"hash_ids\" has 3 ids but input_tokens 8 fills only 2"));
    }

    #[test]
    fn the_examples_in_docs_trace_format_parse() {
        let doc = include_str!("../../../docs/trace-format.md");
        let blocks: Vec<&str> = doc
            .split("```")
            .skip(1)
            .step_by(2)
            .filter_map(|block| block.split_once('\n').map(|(_, body)| body))
            .collect();
        let parsed = |needle: &str| {
            let block = blocks
                .iter()
                .find(|b| b.contains(needle) && b.lines().count() > 1);
            block.and_then(|b| parse_trace(b, None, "doc").ok())
        };
        let jsonl = parsed("\"offset_ms\"").map(|t| (t.format, t.block_tokens, t.records.len()));
        assert_eq!(jsonl, Some((TraceFormat::Jsonl, 512, 3)));
        let azure = parsed("TIMESTAMP,").map(|t| t.records.iter().map(|r| r.offset_ms).collect());
        assert_eq!(azure, Some(vec![0.0, 319.41]));
        let mooncake = blocks.iter().find(|b| b.contains("\"input_length\""));
        let mooncake = mooncake.and_then(|b| parse_trace(b, None, "doc").ok());
        assert_eq!(mooncake.map(|t| t.records[0].hash_ids.len()), Some(14));
    }

    #[test]
    fn bundled_traces_parse_and_repeat_hash_prefixes() {
        assert!(bundled_trace("sharegpt").is_none());
        for name in BUNDLED_TRACE_NAMES {
            assert!(bundled_trace(name).is_some(), "{name}");
        }
        let Some((text, format)) = bundled_trace("mini-mooncake") else {
            panic!("mini-mooncake is bundled");
        };
        let trace = parse_trace(text, Some(format), "mini-mooncake").ok();
        let Some(trace) = trace else {
            panic!("mini-mooncake parses");
        };
        assert_eq!(
            (trace.format, trace.block_tokens, trace.records.len()),
            (TraceFormat::Mooncake, 512, 120)
        );
        let last = trace.records.last().map_or(0.0, |r| r.offset_ms);
        assert!((55_000.0..=60_000.0).contains(&last), "{last}");
        assert!(
            trace
                .records
                .iter()
                .all(|r| (100..=1600).contains(&r.input_tokens))
        );
        assert!(
            trace
                .records
                .iter()
                .all(|r| (4..=24).contains(&r.output_tokens))
        );
        let first_block_zero = trace
            .records
            .iter()
            .filter(|r| r.hash_ids.first() == Some(&0))
            .count();
        assert!(first_block_zero > 60, "{first_block_zero}");
        // Some records reuse two or three earlier blocks beyond the shared block 0.
        let mut seen = std::collections::HashSet::new();
        let mut repeats = 0;
        for record in &trace.records {
            if record.hash_ids.len() >= 3 && !seen.insert(record.hash_ids[..2].to_vec()) {
                repeats += 1;
            }
        }
        assert!(repeats >= 10, "{repeats}");
        let shared_three = trace
            .records
            .iter()
            .filter(|r| r.hash_ids.len() >= 3 && r.input_tokens >= 3 * 512)
            .map(|r| r.hash_ids[..3].to_vec())
            .collect::<Vec<_>>();
        let distinct: std::collections::HashSet<_> = shared_three.iter().collect();
        assert!(
            distinct.len() < shared_three.len(),
            "some 3-block prefix repeats"
        );

        let Some((text, format)) = bundled_trace("mini-azure") else {
            panic!("mini-azure is bundled");
        };
        let trace = parse_trace(text, Some(format), "mini-azure").ok();
        let Some(trace) = trace else {
            panic!("mini-azure parses");
        };
        assert_eq!(
            (trace.format, trace.records.len()),
            (TraceFormat::Azure, 40)
        );
        let last = trace.records.last().map_or(0.0, |r| r.offset_ms);
        assert!((25_000.0..=35_000.0).contains(&last), "{last}");
        assert!(
            trace
                .records
                .iter()
                .all(|r| r.hash_ids.is_empty() && r.session.is_none())
        );
    }
}
