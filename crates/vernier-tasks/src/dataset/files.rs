//! The records of a dataset file, each an object with the line (or number) it starts on: JSON
//! Lines or a JSON array, a CSV file with a header line, or Parquet.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::DatasetError;
use super::question::DatasetKind;

/// Records with their line numbers.
pub(super) type Records = Vec<(usize, Map<String, Value>)>;

/// Every record with its line (or number, for a JSON array).
pub(super) fn records(path: &Path, text: &str) -> Result<Records, DatasetError> {
    let not_object = |line: usize, what: String| DatasetError::Record {
        path: path.to_owned(),
        kind: DatasetKind::Custom,
        line,
        field: "(record)".to_owned(),
        reason: what,
    };
    if text.trim_start().starts_with('[') {
        let array: Vec<Value> = serde_json::from_str(text).map_err(|error| {
            not_object(
                error.line(),
                format!("not a JSON array of objects: {error}"),
            )
        })?;
        return array
            .into_iter()
            .enumerate()
            .map(|(index, value)| match value {
                Value::Object(fields) => Ok((index + 1, fields)),
                _ => Err(not_object(index + 1, "not a JSON object".to_owned())),
            })
            .collect();
    }
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(fields)) => out.push((index + 1, fields)),
            Ok(_) => return Err(not_object(index + 1, "not a JSON object".to_owned())),
            Err(error) => {
                return Err(not_object(
                    index + 1,
                    format!("not JSON ({error}); a JSON Lines file holds one object per line"),
                ));
            }
        }
    }
    Ok(out)
}

/// The rows of a Parquet file (the hub's shards: snappy- or gzip-compressed pages), each as
/// an object, numbered from 1.
pub(super) fn parquet_records(path: &Path, bytes: &[u8]) -> Result<Records, DatasetError> {
    use parquet::file::reader::{FileReader as _, SerializedFileReader};
    let refused = |error: parquet::errors::ParquetError| DatasetError::Format {
        path: path.to_owned(),
        reason: format!(
            "a Parquet file this build cannot read ({error}); it reads snappy- and \
             gzip-compressed pages: convert other files to JSON Lines"
        ),
    };
    let reader =
        SerializedFileReader::new(bytes::Bytes::copy_from_slice(bytes)).map_err(refused)?;
    let mut out = Vec::new();
    for (index, row) in reader.get_row_iter(None).map_err(refused)?.enumerate() {
        match row.map_err(refused)?.to_json_value() {
            Value::Object(fields) => out.push((index + 1, fields)),
            _ => {
                return Err(DatasetError::Format {
                    path: path.to_owned(),
                    reason: format!("row {} is not a record", index + 1),
                });
            }
        }
    }
    Ok(out)
}

/// The rows of a CSV file with a header line, each as an object of text fields, with the line
/// it starts on.
pub(super) fn csv_records(path: &Path, text: &str) -> Result<Records, DatasetError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|error| DatasetError::Format {
            path: path.to_owned(),
            reason: format!("not CSV with a header line: {error}"),
        })?
        .clone();
    let mut out = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|error| DatasetError::Record {
            path: path.to_owned(),
            kind: DatasetKind::Gpqa,
            line: error
                .position()
                .map_or(0, |p| usize::try_from(p.line()).unwrap_or(0)),
            field: "(row)".to_owned(),
            reason: format!(
                "not a CSV row of the header's {} columns: {error}",
                headers.len()
            ),
        })?;
        let line = row
            .position()
            .map_or(out.len() + 2, |p| usize::try_from(p.line()).unwrap_or(0));
        let fields = headers
            .iter()
            .zip(row.iter())
            .map(|(key, value)| (key.to_owned(), Value::String(value.to_owned())))
            .collect();
        out.push((line, fields));
    }
    Ok(out)
}
