//! Rate limits and refusals as servers state them: how long a `429` or `503` asks the client
//! to wait, and which optional field a `400` refuses. What a run does about them (the wait
//! budget, pacing, concurrency that gives way) is run policy, in `vernier-run`.

use std::time::{Duration, SystemTime};

use http::HeaderMap;

use crate::ClientError;

/// The longest wait a header may ask for that is taken at its word: a day. Longer values are
/// capped here (the caller's wait budget refuses them anyway).
const LONGEST_ASKED: Duration = Duration::from_secs(24 * 3600);

/// The wait a response's headers ask for, read in this order: `retry-after-ms` (milliseconds,
/// as some hosted APIs send), `Retry-After` (seconds, or an HTTP date measured from `now`),
/// then the largest of `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` (durations
/// such as `1s`, `6m0s`, `250ms`, `1h2m3.5s`). `None` when none is present and readable.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1e3).min(LONGEST_ASKED));
    }
    if let Some(value) = text("retry-after") {
        if let Ok(seconds) = value.parse::<f64>()
            && seconds.is_finite()
            && seconds >= 0.0
        {
            return Some(Duration::from_secs_f64(
                seconds.min(LONGEST_ASKED.as_secs_f64()),
            ));
        }
        if let Ok(at) = httpdate::parse_http_date(value) {
            return Some(
                at.duration_since(now)
                    .unwrap_or(Duration::ZERO)
                    .min(LONGEST_ASKED),
            );
        }
    }
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]
        .iter()
        .filter_map(|name| text(name).and_then(parse_reset))
        .max()
        .map(|wait| wait.min(LONGEST_ASKED))
}

/// `1h2m3.5s`, `6m0s`, `250ms`, `20s` or a bare number of seconds.
fn parse_reset(text: &str) -> Option<Duration> {
    if let Ok(seconds) = text.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let mut total = 0.0;
    let mut number = String::new();
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let value: f64 = number.parse().ok()?;
        number.clear();
        let scale = match c {
            'h' => 3600.0,
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                0.001
            }
            'm' => 60.0,
            's' => 1.0,
            _ => return None,
        };
        total += value * scale;
        any = true;
    }
    (any && number.is_empty() && total.is_finite()).then(|| Duration::from_secs_f64(total))
}

/// Whether `error` is the server saying "not now" (`429 Too Many Requests` or `503 Service
/// Unavailable`), as opposed to a failure.
pub fn is_rate_limited(error: &ClientError) -> bool {
    matches!(
        error,
        ClientError::Http {
            status: 429 | 503,
            ..
        }
    )
}

/// Optional request fields some servers refuse: the vendor extensions a measuring client sends
/// (`cache_salt`, `cache_prompt`, `ignore_eos`, `min_tokens`, `return_token_ids`,
/// `continuous_usage_stats`) and `max_tokens` (refused by models that take only
/// `max_completion_tokens`).
pub const REFUSABLE_FIELDS: [&str; 7] = [
    "cache_salt",
    "cache_prompt",
    "ignore_eos",
    "min_tokens",
    "return_token_ids",
    "continuous_usage_stats",
    "max_tokens",
];

/// Words servers use when they refuse a field they do not know.
const REFUSAL_WORDS: [&str; 8] = [
    "unknown",
    "unrecognized",
    "unsupported",
    "not supported",
    "extra",
    "not permitted",
    "not allowed",
    "use 'max_completion_tokens'",
];

/// The field of [`REFUSABLE_FIELDS`] a `400` body refuses, if it names one in words of refusal
/// (`OpenAI`'s "Unrecognized request argument", pydantic's "Extra inputs are not permitted",
/// "Unsupported parameter" for `max_tokens`). A length error that names `max_tokens` refuses no
/// field.
pub fn refused_field(body: &str) -> Option<&'static str> {
    let lower = body.to_ascii_lowercase();
    if !REFUSAL_WORDS.iter().any(|word| lower.contains(word)) {
        return None;
    }
    REFUSABLE_FIELDS.iter().copied().find(|field| {
        // `max_tokens` appears inside `max_completion_tokens`: look for the field on its own.
        lower
            .match_indices(field)
            .any(|(at, _)| !lower[..at].ends_with('_'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().expect("a header value"));
        }
        map
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_reset_headers() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "20")]), now),
            Some(Duration::from_secs(20))
        );
        // RFC 9110 §5.6.7's example date: `date -u -d "Sun, 06 Nov 1994 08:49:37 GMT" +%s`
        // prints 784111777, so 20 s before it is 784111757.
        let earlier = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_757);
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]),
                earlier
            ),
            Some(Duration::from_secs(20))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]),
                now + Duration::from_secs(5)
            ),
            Some(Duration::ZERO),
            "a date in the past asks for no wait"
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after-ms", "1500"), ("retry-after", "9")]),
                now
            ),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(
                &headers(&[
                    ("x-ratelimit-reset-requests", "1s"),
                    ("x-ratelimit-reset-tokens", "6m0s")
                ]),
                now
            ),
            Some(Duration::from_secs(360))
        );
        assert_eq!(parse_reset("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(
            parse_reset("1h2m3.5s"),
            Some(Duration::from_secs_f64(3723.5))
        );
        assert_eq!(parse_reset("soon"), None);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "later")]), now),
            None
        );
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }
}
