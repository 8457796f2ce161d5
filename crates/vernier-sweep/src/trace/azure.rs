//! Azure's LLM inference trace CSV (`AzureLLMInferenceTrace_conv.csv`, `_code.csv`).
//!
//! A header `TIMESTAMP,ContextTokens,GeneratedTokens` (extra columns are ignored), then one
//! row per request. `TIMESTAMP` is a UTC wall-clock time such as `2023-11-16 18:15:46.6805900`
//! (100 ns ticks); fewer fractional digits, none, a `T` between date and time, and a trailing
//! `Z` or `±HH:MM` offset are accepted too. The date is turned into days by the days-from-civil
//! rule (Howard Hinnant's `chrono`-compatible algorithm), so no date library is needed.

use super::record::{TraceError, TraceRecord, zero_input};

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const TIMESTAMP_HELP: &str = "write it as YYYY-MM-DD HH:MM:SS with up to 9 fractional digits, e.g. 2023-11-16 18:15:46.6805900";

/// The records in file order, offsets in milliseconds after the earliest row.
pub(super) fn parse_azure(text: &str, origin: &str) -> Result<Vec<TraceRecord>, TraceError> {
    let mut rows = Vec::new();
    let mut columns: Option<Columns> = None;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |detail: String| TraceError::Line {
            origin: origin.to_owned(),
            line: index + 1,
            detail,
        };
        let fields: Vec<&str> = line.split(',').map(clean).collect();
        match &columns {
            None => columns = Some(Columns::from_header(&fields).map_err(at)?),
            Some(columns) => rows.push(columns.row(&fields).map_err(at)?),
        }
    }
    let start = rows.iter().map(|row| row.0).min().unwrap_or(0);
    Ok(rows
        .into_iter()
        .map(|(nanos, input_tokens, output_tokens)| TraceRecord {
            // Exact: the difference is a whole number of nanoseconds far below 2^53.
            offset_ms: (nanos - start) as f64 / 1e6,
            session: None,
            input_tokens,
            output_tokens,
            hash_ids: Vec::new(),
        })
        .collect())
}

/// A field without surrounding spaces or double quotes.
fn clean(field: &str) -> &str {
    let field = field.trim();
    field
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .unwrap_or(field)
}

/// Where the three columns are.
struct Columns {
    timestamp: usize,
    context: usize,
    generated: usize,
    width: usize,
}

impl Columns {
    fn from_header(fields: &[&str]) -> Result<Self, String> {
        let find = |name: &str| {
            fields
                .iter()
                .position(|field| field.eq_ignore_ascii_case(name))
        };
        match (
            find("TIMESTAMP"),
            find("ContextTokens"),
            find("GeneratedTokens"),
        ) {
            (Some(timestamp), Some(context), Some(generated)) => Ok(Self {
                timestamp,
                context,
                generated,
                width: fields.len(),
            }),
            _ => Err(format!(
                "the header must name TIMESTAMP, ContextTokens and GeneratedTokens (Azure's LLM \
                 inference trace), not \"{}\"",
                fields.join(",")
            )),
        }
    }

    /// (nanoseconds since the Unix epoch, input tokens, output tokens).
    fn row(&self, fields: &[&str]) -> Result<(i128, u32, u32), String> {
        if fields.len() != self.width {
            return Err(format!(
                "has {} fields but the header has {}; write TIMESTAMP,ContextTokens,GeneratedTokens",
                fields.len(),
                self.width
            ));
        }
        let stamp = fields[self.timestamp];
        let nanos = parse_timestamp(stamp)
            .ok_or_else(|| format!("\"TIMESTAMP\" is \"{stamp}\"; {TIMESTAMP_HELP}"))?;
        let input = count(fields[self.context], "ContextTokens")?;
        if input == 0 {
            return Err(zero_input("ContextTokens"));
        }
        let output = count(fields[self.generated], "GeneratedTokens")?;
        Ok((nanos, input, output))
    }
}

fn count(field: &str, name: &str) -> Result<u32, String> {
    let count = field.parse::<u32>().map_err(|_| {
        format!(
            "\"{name}\" must be a whole number of tokens (0 to {}), not \"{field}\"",
            u32::MAX
        )
    })?;
    if count > super::record::MAX_RECORD_TOKENS {
        return Err(super::record::over_bound(name, count));
    }
    Ok(count)
}

/// Nanoseconds since the Unix epoch of `YYYY-MM-DD HH:MM:SS[.fraction][Z|±HH:MM]` (UTC unless
/// an offset says otherwise); `None` when the text is not such a time or names no real date.
fn parse_timestamp(text: &str) -> Option<i128> {
    let head = text.get(..19)?;
    let bytes = head.as_bytes();
    if bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b' ' | b'T')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let year = digits(&head[..4])?;
    let month = digits(&head[5..7])?;
    let day = digits(&head[8..10])?;
    let hour = digits(&head[11..13])?;
    let minute = digits(&head[14..16])?;
    let second = digits(&head[17..19])?;
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction_nanos = 0;
    if let Some(after_dot) = rest.strip_prefix('.') {
        let n_digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        if !(1..=9).contains(&n_digits) {
            return None;
        }
        let scale = 10_i128.pow(u32::try_from(9 - n_digits).ok()?);
        fraction_nanos = i128::from(digits(&after_dot[..n_digits])?) * scale;
        rest = &after_dot[n_digits..];
    }
    let offset_seconds = utc_offset_seconds(rest)?;
    let seconds = days_from_civil(year, month, day) * 86_400
        + i64::from(hour * 3600 + minute * 60 + second)
        - offset_seconds;
    Some(i128::from(seconds) * NANOS_PER_SECOND + fraction_nanos)
}

/// Seconds east of UTC of a zone suffix: none or `Z` is 0, else `+HH:MM` or `-HH:MM`.
fn utc_offset_seconds(suffix: &str) -> Option<i64> {
    if suffix.is_empty() || suffix == "Z" {
        return Some(0);
    }
    let sign = match suffix.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = suffix.get(1..)?.split_once(':')?;
    if hours.len() != 2 || minutes.len() != 2 {
        return None;
    }
    let (hours, minutes) = (digits(hours)?, digits(minutes)?);
    (hours <= 23 && minutes <= 59).then(|| sign * i64::from(hours * 3600 + minutes * 60))
}

/// A non-empty run of ASCII digits as a number.
fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Hinnant's `days_from_civil`:
/// years counted from March, in 400-year eras of 146,097 days).
fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (i64::from(month) + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests;
