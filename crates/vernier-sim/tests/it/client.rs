//! A deliberately small HTTP/1.1 client over a plain `TcpStream`: it shares no code with the
//! project's real client, so a misunderstanding cannot hide on both sides.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// One SSE item as received.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// When the read that completed this event returned.
    pub(crate) at: Instant,
    /// The text after `data: `, or the comment text for a comment.
    pub(crate) data: String,
    pub(crate) comment: bool,
}

impl Event {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.data).expect("event data is JSON")
    }
}

#[derive(Debug)]
pub(crate) struct RawResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) events: Vec<Event>,
    pub(crate) sent_at: Instant,
    /// The connection ended before the final chunk of a chunked body.
    pub(crate) truncated: bool,
}

impl RawResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("body is JSON")
    }

    /// `data:` events other than `[DONE]`, parsed.
    pub(crate) fn chunks(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|e| !e.comment && e.data != "[DONE]")
            .map(Event::json)
            .collect()
    }

    pub(crate) fn data_events(&self) -> Vec<&Event> {
        self.events.iter().filter(|e| !e.comment).collect()
    }
}

/// Status, headers, and where the body starts in the raw bytes.
type Head = (u16, Vec<(String, String)>, usize);

pub(crate) async fn post(addr: SocketAddr, path: &str, body: &Value) -> RawResponse {
    request(addr, "POST", path, Some(&body.to_string())).await
}

pub(crate) async fn get(addr: SocketAddr, path: &str) -> RawResponse {
    request(addr, "GET", path, None).await
}

pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> RawResponse {
    tokio::time::timeout(
        Duration::from_secs(30),
        request_inner(addr, method, path, body),
    )
    .await
    .expect("request finished within 30 s")
}

#[expect(
    clippy::too_many_lines,
    reason = "one read loop: head, chunk framing, SSE events, each stamped on arrival"
)]
async fn request_inner(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> RawResponse {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("connect to the simulator");
    stream.set_nodelay(true).expect("nodelay");
    let body = body.unwrap_or("");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let sent_at = Instant::now();
    stream
        .write_all(request.as_bytes())
        .await
        .expect("send request");

    let mut raw = Vec::new();
    let mut buffer = vec![0_u8; 1 << 16];
    let mut head: Option<Head> = None;
    let mut decoded = Vec::new();
    let mut chunk_position = 0;
    let mut finished = false;
    let mut sse_scan = 0;
    let mut events = Vec::new();
    loop {
        let read = stream.read(&mut buffer).await.unwrap_or(0);
        let now = Instant::now();
        if read == 0 {
            break;
        }
        raw.extend_from_slice(&buffer[..read]);
        if head.is_none() {
            let Some(end) = find(&raw, b"\r\n\r\n") else {
                continue;
            };
            let text = String::from_utf8_lossy(&raw[..end]).into_owned();
            let mut lines = text.split("\r\n");
            let status = lines
                .next()
                .and_then(|l| l.split(' ').nth(1))
                .and_then(|s| s.parse().ok())
                .expect("status line");
            let headers = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
                .collect();
            head = Some((status, headers, end + 4));
            chunk_position = end + 4;
        }
        let Some((_, headers, body_start)) = &head else {
            continue;
        };
        let decoded_before = decoded.len();
        let chunked = headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
        if chunked {
            // Decode every complete chunk now in the buffer.
            while let Some(line_end) = find(&raw[chunk_position..], b"\r\n") {
                let size_text =
                    String::from_utf8_lossy(&raw[chunk_position..chunk_position + line_end])
                        .into_owned();
                let size = usize::from_str_radix(size_text.trim(), 16).expect("chunk size");
                let data_start = chunk_position + line_end + 2;
                if raw.len() < data_start + size + 2 {
                    break;
                }
                if size == 0 {
                    finished = true;
                    break;
                }
                decoded.extend_from_slice(&raw[data_start..data_start + size]);
                chunk_position = data_start + size + 2;
            }
        } else {
            decoded = raw[*body_start..].to_vec();
        }
        // Stamp every SSE event completed by this read.
        let mut search_from = sse_scan.max(decoded_before.saturating_sub(1));
        while let Some(found) = find(&decoded[search_from..], b"\n\n") {
            let end = search_from + found;
            let block =
                String::from_utf8(decoded[sse_scan..end].to_vec()).expect("events are UTF-8");
            sse_scan = end + 2;
            search_from = sse_scan;
            for line in block.lines() {
                if let Some(data) = line.strip_prefix("data: ") {
                    events.push(Event {
                        at: now,
                        data: data.to_owned(),
                        comment: false,
                    });
                } else if let Some(comment) = line.strip_prefix(':') {
                    events.push(Event {
                        at: now,
                        data: comment.trim().to_owned(),
                        comment: true,
                    });
                }
            }
        }
        if finished {
            break;
        }
    }
    let (status, headers, _) = head.expect("a response head arrived");
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let is_stream = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("content-type") && v.starts_with("text/event-stream"));
    RawResponse {
        status,
        headers,
        body: decoded,
        events: if is_stream { events } else { Vec::new() },
        sent_at,
        truncated: chunked && !finished,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
