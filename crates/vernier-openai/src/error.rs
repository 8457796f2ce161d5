//! The crate's one error type.

use std::fmt;

/// A boxed error used as the cause of a dropped stream.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Which deadline ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeoutKind {
    /// Opening the TCP connection (and the TLS handshake).
    Connect,
    /// Waiting for the response headers and the first body bytes (for a stream, the first
    /// event) after the request was sent.
    FirstByte,
    /// The gap since the last stream event (SSE comments do not count), or between two body
    /// frames of a non-streamed response.
    Idle,
    /// The whole request, from connect to the end of the body.
    Total,
}

impl fmt::Display for TimeoutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "connect",
            Self::FirstByte => "first-byte",
            Self::Idle => "idle",
            Self::Total => "total",
        })
    }
}

/// Everything that can go wrong talking to an OpenAI-compatible server.
///
/// Messages read after "failed to ...". Streaming errors carry `events_received`: the caller
/// keeps the events it already got, and the stream's accumulator still holds their sum.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The base URL could not be used.
    #[error(
        "parse base url {url:?}: {reason} (expected e.g. http://127.0.0.1:8000 or https://host/v1)"
    )]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The API key or the user agent cannot be sent as an HTTP header value. The value itself
    /// is never part of the message.
    #[error(
        "build the request headers: {what} holds characters not allowed in an HTTP header (use visible ASCII, without line breaks)"
    )]
    InvalidHeader {
        /// `the API key` or `the user agent`.
        what: &'static str,
    },
    /// The API key variable was not set.
    #[error(
        "read the API key from environment variable {var}: it is not set or not unicode (export {var}=... or drop the key option)"
    )]
    MissingApiKey {
        /// The variable's name.
        var: String,
    },
    /// The API key variable is set but holds nothing (an `Authorization: Bearer ` header with
    /// no key would only be refused by the server, or pass unnoticed where none is needed).
    #[error(
        "read the API key from environment variable {var}: it is set but empty (export {var}=YOUR_KEY, or unset it for a server that takes no key)"
    )]
    EmptyApiKey {
        /// The variable's name.
        var: String,
    },
    /// The TCP connection could not be opened.
    #[error("connect to {address} (is the server running and the URL right?)")]
    Connect {
        /// host:port tried.
        address: String,
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
    /// The TLS handshake failed.
    #[error(
        "complete the TLS handshake with {host} (a self-signed certificate or a private CA needs its CA certificate added: `--ca-cert FILE` on the command line, `ClientBuilder::ca_cert_pem` in code; check the host name, or use http://)"
    )]
    Tls {
        /// The server name used for verification.
        host: String,
        /// The TLS error.
        #[source]
        source: std::io::Error,
    },
    /// A CA certificate file could not be used.
    #[error(
        "add the CA certificate {what}: {detail} (give a PEM file holding one or more `BEGIN CERTIFICATE` blocks)"
    )]
    CaCertificate {
        /// Where the certificate came from.
        what: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The HTTP exchange failed before any response headers arrived.
    #[error("send {what}")]
    Request {
        /// Method and path.
        what: String,
        /// hyper's error.
        #[source]
        source: hyper::Error,
    },
    /// The server's answer was not a readable HTTP/1.1 response, or it closed the connection
    /// before the response headers were complete.
    #[error("read the response to {what}: {detail} (is the URL that of an HTTP server?)")]
    Response {
        /// Method and path.
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// A deadline ran out.
    #[error(
        "finish the request within the {which} timeout after {events_received} events (raise the timeout or check the server)"
    )]
    Timeout {
        /// Which deadline.
        which: TimeoutKind,
        /// Stream events received before the deadline.
        events_received: usize,
    },
    /// The server answered with a non-success status. The body is kept (capped at 64 KiB).
    #[error("get a success status: the server answered {status}: {body}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The response body, lossily decoded and capped.
        body: String,
        /// How long the server asked the client to wait before trying again: `Retry-After`
        /// (seconds or an HTTP date), else `x-ratelimit-reset-requests` /
        /// `x-ratelimit-reset-tokens` (`1s`, `6m0s`, `250ms`); `None` when it said nothing.
        retry_after: Option<std::time::Duration>,
    },
    /// The server sent an `{"error": ...}` object (or an `error` event) in the middle of a stream.
    #[error(
        "complete the stream: the server sent an error after {events_received} events: {error}"
    )]
    ServerErrorEvent {
        /// The error object as sent (the value of the `error` key, or the whole payload).
        error: serde_json::Value,
        /// Events received before the error.
        events_received: usize,
    },
    /// The connection ended before `[DONE]` or a finish reason.
    #[error(
        "read the stream to its end: the connection ended after {events_received} events{}",
        clean_close_note(.source.as_ref())
    )]
    StreamDropped {
        /// Events received before the connection ended.
        events_received: usize,
        /// The transport error, if there was one (a clean close has none).
        #[source]
        source: Option<BoxError>,
    },
    /// A payload was not the JSON expected.
    #[error(
        "parse {what} as JSON at byte {offset} after {events_received} events: {message}; near {snippet:?}"
    )]
    Json {
        /// What was being parsed.
        what: String,
        /// Byte offset of the problem in the payload.
        offset: usize,
        /// The text around the offset.
        snippet: String,
        /// The parser's message.
        message: String,
        /// Stream events received before this one (0 outside streams).
        events_received: usize,
    },
    /// An SSE line (or event) exceeded the decoder's bound.
    #[error(
        "decode the event stream: a line exceeded {limit} bytes after {events_received} events (raise the limit with SseDecoder::new)"
    )]
    LineTooLong {
        /// The bound in bytes.
        limit: usize,
        /// Events decoded before the long line.
        events_received: usize,
    },
    /// A Prometheus metrics line could not be parsed.
    #[error("parse metrics line {line}: {reason}")]
    Metrics {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// Some other I/O failure.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Says so when the stream ended without a transport error; a transport error is left to the
/// cause chain.
fn clean_close_note(source: Option<&BoxError>) -> &'static str {
    if source.is_none() {
        " (clean close before [DONE])"
    } else {
        ""
    }
}

impl ClientError {
    /// Stream events received before this error, for errors that end a stream.
    pub fn events_received(&self) -> Option<usize> {
        match self {
            Self::Timeout {
                events_received, ..
            }
            | Self::ServerErrorEvent {
                events_received, ..
            }
            | Self::StreamDropped {
                events_received, ..
            }
            | Self::Json {
                events_received, ..
            }
            | Self::LineTooLong {
                events_received, ..
            } => Some(*events_received),
            _ => None,
        }
    }

    /// A JSON error for `payload`, with the byte offset and a snippet around it.
    pub(crate) fn json(
        what: impl Into<String>,
        payload: &[u8],
        error: &serde_json::Error,
        events_received: usize,
    ) -> Self {
        let offset = byte_offset(payload, error.line(), error.column());
        Self::Json {
            what: what.into(),
            offset,
            snippet: snippet(payload, offset, 40),
            message: error.to_string(),
            events_received,
        }
    }
}

/// `serde_json` reports 1-based line and column (column counted in bytes); turn them into an offset.
fn byte_offset(payload: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    for _ in 1..line {
        match payload[offset..].iter().position(|&b| b == b'\n') {
            Some(at) => offset += at + 1,
            None => return payload.len(),
        }
    }
    (offset + column.saturating_sub(1)).min(payload.len())
}

/// Up to `radius` bytes either side of `offset`, lossily decoded.
fn snippet(payload: &[u8], offset: usize, radius: usize) -> String {
    let start = offset.saturating_sub(radius);
    let end = (offset + radius).min(payload.len());
    String::from_utf8_lossy(&payload[start..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_error_names_offset_and_snippet() {
        let payload = br#"{"choices":[{"delta":{"content":"hi"}},]}"#;
        let error =
            serde_json::from_slice::<serde_json::Value>(payload).expect_err("trailing comma");
        let ClientError::Json {
            offset, snippet, ..
        } = ClientError::json("chunk", payload, &error, 3)
        else {
            panic!("not a json error");
        };
        // The stray `]` after the trailing comma is at byte 39.
        assert_eq!(payload[offset], b']');
        assert!(snippet.contains("}},]"), "{snippet}");
    }

    #[test]
    fn byte_offset_counts_lines() {
        assert_eq!(byte_offset(b"ab\ncd\nef", 3, 2), 7);
        assert_eq!(byte_offset(b"ab", 9, 1), 2);
    }
}
