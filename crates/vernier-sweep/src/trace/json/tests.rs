//! Tests of the two JSON-lines readers, read whole through
//! [`parse_trace`](super::super::parse_trace): fields, header, refusals.

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
    let text = "{\"offset_ms\": 0, \"input_tokens\": 5, \"output_tokens\": 1, \"hash_id\": [1]}";
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
