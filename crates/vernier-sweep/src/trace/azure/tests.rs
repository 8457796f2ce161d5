//! Tests of the Azure CSV reader: rows read whole through
//! [`parse_trace`](super::super::parse_trace), timestamps, refusals.

use super::super::{Trace, TraceFormat, parse_trace};
use super::*;

fn parse(text: &str) -> Result<Trace, TraceError> {
    parse_trace(text, Some(TraceFormat::Azure), "conv.csv")
}

fn offsets(text: &str) -> Vec<f64> {
    parse(text)
        .map(|trace| trace.records.iter().map(|r| r.offset_ms).collect())
        .unwrap_or_default()
}

fn refused(text: &str) -> String {
    parse(text)
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default()
}

#[test]
fn azure_rows_become_millisecond_offsets() {
    let text = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n\
                2023-11-16 18:15:46.6805900,374,44\r\n\
                2023-11-16 18:15:47.0000000,396,109\r\n\
                2023-11-16 18:15:50.12,879,18\r\n\
                2023-11-16 18:16:00,91,0\r\n";
    let trace = parse(text).ok();
    let Some(trace) = trace else {
        panic!("the Azure rows parse");
    };
    // 46.6805900 -> 47.0000000 is 0.3194100 s = 319.41 ms;
    // 46.6805900 -> 50.12      is 3.4394100 s = 3439.41 ms;
    // 46.6805900 -> 16:00      is 13.3194100 s = 13319.41 ms.
    let summary: Vec<(f64, u32, u32)> = trace
        .records
        .iter()
        .map(|r| (r.offset_ms, r.input_tokens, r.output_tokens))
        .collect();
    assert_eq!(
        summary,
        vec![
            (0.0, 374, 44),
            (319.41, 396, 109),
            (3439.41, 879, 18),
            (13_319.41, 91, 0)
        ]
    );
    assert_eq!(
        (trace.format, trace.block_tokens),
        (TraceFormat::Azure, 512)
    );
    assert!(
        trace
            .records
            .iter()
            .all(|r| r.session.is_none() && r.hash_ids.is_empty())
    );
}

#[test]
fn azure_offsets_cross_days_months_and_leap_days_and_sort() {
    // 23:59:59.5 on 31 December -> midnight on 1 January is 500 ms.
    let text = "TIMESTAMP,ContextTokens,GeneratedTokens\n\
                2024-01-01 00:00:00,2,1\n\
                2023-12-31 23:59:59.5,1,1\n";
    assert_eq!(offsets(text), vec![0.0, 500.0]);
    // 2024 is a leap year: 28 February 23:59:59 -> 1 March 00:00:00 is 1 day + 1 s.
    let text = "TIMESTAMP,ContextTokens,GeneratedTokens\n\
                2024-02-28 23:59:59,1,1\n\
                2024-03-01 00:00:00,1,1\n";
    assert_eq!(offsets(text), vec![0.0, 86_401_000.0]);
    // A UTC offset is applied: 19:00+01:00 is 18:00Z.
    let text = "TIMESTAMP,ContextTokens,GeneratedTokens,Extra\n\
                2024-05-10T18:00:00.25Z,1,1,x\n\
                2024-05-10 19:00:01+01:00,1,1,y\n";
    assert_eq!(offsets(text), vec![0.0, 750.0]);
}

#[test]
fn days_from_civil_matches_known_dates() {
    assert_eq!(days_from_civil(1970, 1, 1), 0);
    assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    assert_eq!(days_from_civil(2023, 11, 16), 19_677);
    assert_eq!(days_from_civil(1969, 12, 31), -1);
    assert_eq!(
        parse_timestamp("1970-01-01 00:00:01.5"),
        Some(1_500_000_000)
    );
}

#[test]
fn bad_timestamps_are_refused_with_the_expected_shape() {
    for stamp in [
        "2023-11-16",
        "2023-13-01 00:00:00",
        "2023-02-29 00:00:00",
        "2023-11-16 24:00:00",
        "2023-11-16 18:15:46.",
        "2023-11-16 18:15:46.1234567890",
        "2023-11-16 18:15:46 UTC",
        "16/11/2023 18:15:46",
    ] {
        let text = format!("TIMESTAMP,ContextTokens,GeneratedTokens\n{stamp},5,1\n");
        assert_eq!(
            refused(&text),
            format!("read trace conv.csv line 2: \"TIMESTAMP\" is \"{stamp}\"; {TIMESTAMP_HELP}"),
        );
    }
}

#[test]
fn bad_azure_rows_and_headers_are_refused() {
    let zero = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,0,4\n";
    assert_eq!(
        refused(zero),
        "read trace conv.csv line 2: \"ContextTokens\" is 0; every request needs at least one \
         prompt token"
    );
    let word = "TIMESTAMP,ContextTokens,GeneratedTokens\n\n2023-11-16 18:15:46,12,many\n";
    assert_eq!(
        refused(word),
        "read trace conv.csv line 3: \"GeneratedTokens\" must be a whole number of tokens \
         (0 to 4294967295), not \"many\""
    );
    let short = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,12\n";
    assert_eq!(
        refused(short),
        "read trace conv.csv line 2: has 2 fields but the header has 3; write \
         TIMESTAMP,ContextTokens,GeneratedTokens"
    );
    let header = "time,prompt,reply\n2023-11-16 18:15:46,12,3\n";
    assert_eq!(
        refused(header),
        "read trace conv.csv line 1: the header must name TIMESTAMP, ContextTokens and \
         GeneratedTokens (Azure's LLM inference trace), not \"time,prompt,reply\""
    );
}
