//! The two JSON-lines formats: Vernier's own and Mooncake's.

use serde_json::{Map, Value};

use super::{
    DEFAULT_BLOCK_TOKENS, TraceError, TraceRecord, max_blocks, too_many_blocks, zero_input,
};

/// The fields a Vernier record may have.
const RECORD_FIELDS: &str = "offset_ms, session, input_tokens, output_tokens and hash_ids";
/// The fields every Vernier record needs.
const RECORD_NEEDS: &str = "every record needs offset_ms, input_tokens and output_tokens";
/// The fields every Mooncake record needs.
const MOONCAKE_NEEDS: &str =
    "every Mooncake record needs timestamp, input_length and output_length";

/// Vernier's JSONL: an optional header line, then one record per line. Returns the block size
/// and the records in file order.
pub(super) fn parse_jsonl(text: &str, origin: &str) -> Result<(u32, Vec<TraceRecord>), TraceError> {
    let mut block_tokens = DEFAULT_BLOCK_TOKENS;
    let mut records = Vec::new();
    let mut seen_line = false;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let at = |detail: String| TraceError::Line {
            origin: origin.to_owned(),
            line: number,
            detail,
        };
        let object = json_object(line).map_err(at)?;
        if object.contains_key("vernier_trace") {
            if seen_line {
                return Err(at(
                    "the header line ({\"vernier_trace\": 1, ...}) must be the first line"
                        .to_owned(),
                ));
            }
            block_tokens = header_block_tokens(&object).map_err(at)?;
        } else {
            records.push(vernier_record(&object, block_tokens).map_err(at)?);
        }
        seen_line = true;
    }
    Ok((block_tokens, records))
}

/// Mooncake's JSONL: `timestamp` (ms), `input_length`, `output_length`, `hash_ids` (512-token
/// blocks); other fields are ignored. Records in file order.
pub(super) fn parse_mooncake(text: &str, origin: &str) -> Result<Vec<TraceRecord>, TraceError> {
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |detail: String| TraceError::Line {
            origin: origin.to_owned(),
            line: index + 1,
            detail,
        };
        let object = json_object(line).map_err(at)?;
        records.push(mooncake_record(&object).map_err(at)?);
    }
    Ok(records)
}

fn json_object(line: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err("expected a JSON object ({...}); write one record per line".to_owned()),
        Err(error) => {
            let message = error.to_string();
            let reason = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(reason, _)| reason);
            Err(format!(
                "not valid JSON ({reason} at column {}); write one JSON object per line",
                error.column()
            ))
        }
    }
}

fn header_block_tokens(object: &Map<String, Value>) -> Result<u32, String> {
    if let Some(field) = object
        .keys()
        .find(|key| !matches!(key.as_str(), "vernier_trace" | "block_tokens"))
    {
        return Err(format!(
            "unknown field \"{field}\" in the header line; it has vernier_trace and block_tokens"
        ));
    }
    let version = object.get("vernier_trace");
    if version.and_then(Value::as_u64) != Some(1) {
        return Err(format!(
            "\"vernier_trace\" is {}; this Vernier reads version 1",
            shown(version)
        ));
    }
    match object.get("block_tokens") {
        None => Ok(DEFAULT_BLOCK_TOKENS),
        Some(value) => match token_count(value) {
            Some(0) | None => Err(format!(
                "\"block_tokens\" must be a whole number of tokens from 1 up, not {value}"
            )),
            Some(tokens) => Ok(tokens),
        },
    }
}

fn vernier_record(object: &Map<String, Value>, block_tokens: u32) -> Result<TraceRecord, String> {
    if let Some(field) = object.keys().find(|key| {
        !matches!(
            key.as_str(),
            "offset_ms" | "session" | "input_tokens" | "output_tokens" | "hash_ids"
        )
    }) {
        return Err(format!(
            "unknown field \"{field}\"; a record has {RECORD_FIELDS}"
        ));
    }
    let offset_ms = offset(object, "offset_ms", RECORD_NEEDS)?;
    let input_tokens = tokens(object, "input_tokens", RECORD_NEEDS)?;
    let output_tokens = tokens(object, "output_tokens", RECORD_NEEDS)?;
    let session = match object.get("session") {
        None | Some(Value::Null) => None,
        Some(Value::String(session)) => Some(session.clone()),
        Some(other) => return Err(format!("\"session\" must be a string, not {other}")),
    };
    let hash_ids = hash_ids(object, "input_tokens", input_tokens, block_tokens)?;
    Ok(TraceRecord {
        offset_ms,
        session,
        input_tokens,
        output_tokens,
        hash_ids,
    })
}

fn mooncake_record(object: &Map<String, Value>) -> Result<TraceRecord, String> {
    let offset_ms = offset(object, "timestamp", MOONCAKE_NEEDS)?;
    let input_tokens = tokens(object, "input_length", MOONCAKE_NEEDS)?;
    let output_tokens = tokens(object, "output_length", MOONCAKE_NEEDS)?;
    let hash_ids = hash_ids(object, "input_length", input_tokens, DEFAULT_BLOCK_TOKENS)?;
    Ok(TraceRecord {
        offset_ms,
        session: None,
        input_tokens,
        output_tokens,
        hash_ids,
    })
}

/// A required arrival time in milliseconds: a finite number, not negative.
fn offset(object: &Map<String, Value>, field: &str, needs: &str) -> Result<f64, String> {
    let value = object
        .get(field)
        .ok_or_else(|| format!("\"{field}\" is missing; {needs}"))?;
    let Some(ms) = value.as_f64() else {
        return Err(format!(
            "\"{field}\" must be a number of milliseconds, not {value}"
        ));
    };
    if !ms.is_finite() {
        return Err(format!(
            "\"{field}\" is not a finite number of milliseconds"
        ));
    }
    if ms < 0.0 {
        return Err(format!(
            "\"{field}\" is {value}; arrival times are milliseconds from the trace's start \
             and cannot be negative"
        ));
    }
    Ok(ms)
}

/// A required token count; a prompt (`input_*`) needs at least one token.
fn tokens(object: &Map<String, Value>, field: &str, needs: &str) -> Result<u32, String> {
    let value = object
        .get(field)
        .ok_or_else(|| format!("\"{field}\" is missing; {needs}"))?;
    let Some(count) = token_count(value) else {
        return Err(format!(
            "\"{field}\" must be a whole number of tokens (0 to {}), not {value}",
            u32::MAX
        ));
    };
    if count == 0 && field.starts_with("input") {
        return Err(zero_input(field));
    }
    Ok(count)
}

fn token_count(value: &Value) -> Option<u32> {
    value.as_u64().and_then(|count| u32::try_from(count).ok())
}

/// Optional `hash_ids`: whole numbers, at most `ceil(input / block)` of them.
fn hash_ids(
    object: &Map<String, Value>,
    input_field: &str,
    input_tokens: u32,
    block_tokens: u32,
) -> Result<Vec<u64>, String> {
    let ids = match object.get("hash_ids") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(Value::as_u64).collect::<Option<Vec<_>>>(),
        Some(_) => None,
    };
    let Some(ids) = ids else {
        return Err(
            "\"hash_ids\" must be a list of whole numbers, one per block, e.g. [0, 1, 2]"
                .to_owned(),
        );
    };
    if u64::try_from(ids.len()).unwrap_or(u64::MAX) > max_blocks(input_tokens, block_tokens) {
        return Err(too_many_blocks(
            ids.len(),
            input_field,
            input_tokens,
            block_tokens,
        ));
    }
    Ok(ids)
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "missing".to_owned(), Value::to_string)
}

#[cfg(test)]
mod tests {
    use super::super::{Trace, TraceFormat, parse_trace};
    use super::*;

    fn parse(text: &str, format: TraceFormat) -> Result<Trace, TraceError> {
        parse_trace(text, Some(format), "trace.jsonl")
    }

    /// The full message of a refused trace.
    fn refused(text: &str, format: TraceFormat) -> String {
        match parse(text, format) {
            Err(error) => error.to_string(),
            Ok(trace) => panic!("expected an error, got {trace:?}"),
        }
    }

    #[test]
    fn vernier_jsonl_reads_every_field_and_the_header() {
        let text = "{\"vernier_trace\": 1, \"block_tokens\": 256}\n\
                    \n\
                    {\"offset_ms\": 1250.5, \"session\": \"s1\", \"input_tokens\": 900, \"output_tokens\": 64, \"hash_ids\": [1, 2]}\n\
                    {\"offset_ms\": 2000, \"input_tokens\": 40, \"output_tokens\": 0}\n";
        let trace = parse(text, TraceFormat::Jsonl).ok();
        let expected = Trace {
            format: TraceFormat::Jsonl,
            block_tokens: 256,
            records: vec![
                TraceRecord {
                    offset_ms: 0.0,
                    session: Some("s1".to_owned()),
                    input_tokens: 900,
                    output_tokens: 64,
                    hash_ids: vec![1, 2],
                },
                TraceRecord {
                    offset_ms: 749.5,
                    session: None,
                    input_tokens: 40,
                    output_tokens: 0,
                    hash_ids: Vec::new(),
                },
            ],
        };
        assert_eq!(trace, Some(expected));
        let no_header = "{\"offset_ms\": 0, \"input_tokens\": 1, \"output_tokens\": 1}";
        assert_eq!(
            parse(no_header, TraceFormat::Jsonl)
                .ok()
                .map(|t| t.block_tokens),
            Some(512)
        );
    }

    #[test]
    fn mooncake_reads_its_published_shape_and_ignores_extra_fields() {
        let text = "{\"timestamp\": 3000, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}\n\
                    {\"timestamp\": 3000, \"input_length\": 300, \"output_length\": 5, \"hash_ids\": [14], \"note\": \"x\"}\n\
                    {\"timestamp\": 6052, \"input_length\": 1025, \"output_length\": 7, \"hash_ids\": [0, 15, 16]}\n";
        let trace = parse(text, TraceFormat::Mooncake).ok();
        let Some(trace) = trace else {
            panic!("the Mooncake trace parses");
        };
        assert_eq!(
            (trace.format, trace.block_tokens),
            (TraceFormat::Mooncake, 512)
        );
        let summary: Vec<(f64, u32, u32, usize)> = trace
            .records
            .iter()
            .map(|r| {
                (
                    r.offset_ms,
                    r.input_tokens,
                    r.output_tokens,
                    r.hash_ids.len(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![(0.0, 6758, 500, 14), (0.0, 300, 5, 1), (3052.0, 1025, 7, 3)]
        );
        assert_eq!(trace.records[2].hash_ids, vec![0, 15, 16]);
        assert!(trace.records.iter().all(|r| r.session.is_none()));
    }

    #[test]
    fn missing_fields_are_named_with_the_fix() {
        let text = "{\"offset_ms\": 0, \"input_tokens\": 5, \"output_tokens\": 1}\n\
                    {\"offset_ms\": 1, \"output_tokens\": 1}\n";
        assert_eq!(
            refused(text, TraceFormat::Jsonl),
            "read trace trace.jsonl line 2: \"input_tokens\" is missing; every record needs \
             offset_ms, input_tokens and output_tokens"
        );
        let mooncake = "{\"timestamp\": 0, \"input_length\": 5}";
        assert_eq!(
            refused(mooncake, TraceFormat::Mooncake),
            "read trace trace.jsonl line 1: \"output_length\" is missing; every Mooncake \
             record needs timestamp, input_length and output_length"
        );
    }

    #[test]
    fn unknown_fields_are_refused_in_vernier_jsonl() {
        let text =
            "{\"offset_ms\": 0, \"input_tokens\": 5, \"output_tokens\": 1, \"hash_id\": [1]}";
        assert_eq!(
            refused(text, TraceFormat::Jsonl),
            "read trace trace.jsonl line 1: unknown field \"hash_id\"; a record has offset_ms, \
             session, input_tokens, output_tokens and hash_ids"
        );
        let header = "{\"vernier_trace\": 1, \"block_size\": 16}";
        assert_eq!(
            refused(header, TraceFormat::Jsonl),
            "read trace trace.jsonl line 1: unknown field \"block_size\" in the header line; \
             it has vernier_trace and block_tokens"
        );
    }

    #[test]
    fn the_header_must_come_first_and_be_version_one() {
        let late = "{\"offset_ms\": 0, \"input_tokens\": 5, \"output_tokens\": 1}\n\
                    {\"vernier_trace\": 1}";
        assert_eq!(
            refused(late, TraceFormat::Jsonl),
            "read trace trace.jsonl line 2: the header line ({\"vernier_trace\": 1, ...}) must \
             be the first line"
        );
        assert_eq!(
            refused("{\"vernier_trace\": 2}", TraceFormat::Jsonl),
            "read trace trace.jsonl line 1: \"vernier_trace\" is 2; this Vernier reads version 1"
        );
        assert_eq!(
            refused(
                "{\"vernier_trace\": 1, \"block_tokens\": 0}",
                TraceFormat::Jsonl
            ),
            "read trace trace.jsonl line 1: \"block_tokens\" must be a whole number of tokens \
             from 1 up, not 0"
        );
    }

    #[test]
    fn zero_input_tokens_are_refused() {
        let text = "{\"offset_ms\": 0, \"input_tokens\": 0, \"output_tokens\": 1}";
        assert_eq!(
            refused(text, TraceFormat::Jsonl),
            "read trace trace.jsonl line 1: \"input_tokens\" is 0; every request needs at \
             least one prompt token"
        );
        let mooncake =
            "{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 1, \"hash_ids\": []}";
        assert!(
            refused(mooncake, TraceFormat::Mooncake)
                .ends_with("\"input_length\" is 0; every request needs at least one prompt token")
        );
    }

    #[test]
    fn negative_and_non_finite_offsets_are_refused() {
        let text = "{\"offset_ms\": -5, \"input_tokens\": 3, \"output_tokens\": 1}";
        assert_eq!(
            refused(text, TraceFormat::Jsonl),
            "read trace trace.jsonl line 1: \"offset_ms\" is -5; arrival times are milliseconds \
             from the trace's start and cannot be negative"
        );
        let mooncake = "{\"timestamp\": -1, \"input_length\": 3, \"output_length\": 1}";
        assert!(refused(mooncake, TraceFormat::Mooncake).contains("\"timestamp\" is -1;"));
        // JSON has no NaN or infinity: an out-of-range number is refused by the JSON reader.
        let huge = "{\"offset_ms\": 1e400, \"input_tokens\": 3, \"output_tokens\": 1}";
        let message = refused(huge, TraceFormat::Jsonl);
        // The reason is serde_json's own wording.
        assert!(
            message.starts_with("read trace trace.jsonl line 1: not valid JSON ("),
            "{message}"
        );
        assert!(message.contains("out of range"), "{message}");
        assert!(
            message.ends_with("); write one JSON object per line"),
            "{message}"
        );
        let text = "{\"offset_ms\": \"soon\", \"input_tokens\": 3, \"output_tokens\": 1}";
        assert!(
            refused(text, TraceFormat::Jsonl)
                .ends_with("\"offset_ms\" must be a number of milliseconds, not \"soon\"")
        );
    }

    #[test]
    fn wrong_types_and_bad_lines_are_explained() {
        let cases = [
            (
                "{\"offset_ms\": 0, \"input_tokens\": 2.5, \"output_tokens\": 1}",
                "\"input_tokens\" must be a whole number of tokens (0 to 4294967295), not 2.5",
            ),
            (
                "{\"offset_ms\": 0, \"input_tokens\": 3, \"output_tokens\": 1, \"hash_ids\": [1, -2]}",
                "\"hash_ids\" must be a list of whole numbers, one per block, e.g. [0, 1, 2]",
            ),
            (
                "{\"offset_ms\": 0, \"input_tokens\": 3, \"output_tokens\": 1, \"session\": 7}",
                "\"session\" must be a string, not 7",
            ),
            (
                "[1, 2]",
                "expected a JSON object ({...}); write one record per line",
            ),
        ];
        for (text, detail) in cases {
            assert_eq!(
                refused(text, TraceFormat::Jsonl),
                format!("read trace trace.jsonl line 1: {detail}")
            );
        }
        let cut = refused("{\"offset_ms\": 0,", TraceFormat::Jsonl);
        assert!(
            cut.starts_with("read trace trace.jsonl line 1: not valid JSON (EOF while parsing"),
            "{cut}"
        );
        assert!(
            cut.ends_with(" at column 16); write one JSON object per line"),
            "{cut}"
        );
    }
}
