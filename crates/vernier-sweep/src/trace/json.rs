//! The two JSON-lines formats: Vernier's own and Mooncake's.

use serde_json::{Map, Value};

use super::record::{DEFAULT_BLOCK_TOKENS, TraceError, TraceRecord, zero_input};

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
    if count > super::record::MAX_RECORD_TOKENS {
        return Err(super::record::over_bound(field, count));
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

/// The most hash id blocks a prompt of `input_tokens` can fill: `ceil(input / block)`.
fn max_blocks(input_tokens: u32, block_tokens: u32) -> u64 {
    u64::from(input_tokens).div_ceil(u64::from(block_tokens.max(1)))
}

/// The message for a record whose hash ids need more blocks than its prompt fills.
fn too_many_blocks(n_ids: usize, input_field: &str, input: u32, block_tokens: u32) -> String {
    let allowed = max_blocks(input, block_tokens);
    format!(
        "\"hash_ids\" has {n_ids} ids but {input_field} {input} fills only {allowed} \
         block(s) of {block_tokens} tokens; each hash id stands for one block, so list at \
         most {allowed}"
    )
}

#[cfg(test)]
mod tests;
