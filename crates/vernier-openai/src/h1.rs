//! HTTP/1.1 over cleartext TCP, read in the caller's own task: the request written in one
//! write, the response head parsed with `httparse`, and the body taken straight from the
//! stamped socket and de-chunked in place, without a connection task between the socket and
//! the stream (the task, its channel and its wake-up cost more per event than the rest of
//! the transport). TLS connections go through hyper.
//!
//! The body framing follows RFC 9112 §6.3: no body after 1xx, 204 and 304; chunked when the
//! last transfer coding is `chunked`; else `Content-Length`; else until the server closes.

use std::io;
use std::time::Instant;

use bytes::{Buf as _, Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::kernel_stamps::StampedTcp;

/// The longest response head taken (status line and headers).
const MAX_HEAD: usize = 64 * 1024;
/// The most headers a response may have.
const MAX_HEADERS: usize = 128;
/// The longest chunk-size line (with extensions) or trailer line taken.
const MAX_LINE: usize = 4 * 1024;
/// Room made in the buffer before each read: a streamed event is a few hundred bytes.
const READ_ROOM: usize = 16 * 1024;

/// Why a response could not be read as HTTP/1.1.
#[derive(Debug, thiserror::Error)]
pub(crate) enum H1Error {
    /// The socket failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server closed the connection before the response head was complete.
    #[error("the server closed the connection before the response headers were complete")]
    ClosedBeforeHead,
    /// The bytes are not an HTTP/1.1 response.
    #[error("{0}")]
    Malformed(String),
}

impl H1Error {
    fn malformed(detail: impl Into<String>) -> Self {
        Self::Malformed(detail.into())
    }

    /// The client's error for a failure of request `what` (method and path) before its
    /// response headers were read.
    pub(crate) fn before_headers(self, what: &str) -> crate::ClientError {
        match self {
            Self::Io(source) => crate::ClientError::Io {
                what: format!("send {what} and read the response headers"),
                source,
            },
            Self::ClosedBeforeHead | Self::Malformed(_) => crate::ClientError::Response {
                what: what.to_owned(),
                detail: self.to_string(),
            },
        }
    }
}

/// Writes one request: method, path, the headers given (names and values already checked)
/// and `content-length` with the body when there is one, in a single write. Returns the
/// instant before the write, which put the request's first byte on the socket.
pub(crate) async fn write_request(
    tcp: &mut StampedTcp,
    method: &str,
    path: &str,
    headers: &[(HeaderName, HeaderValue)],
    body: Option<&[u8]>,
) -> io::Result<Instant> {
    let mut bytes = Vec::with_capacity(256 + body.map_or(0, <[u8]>::len));
    bytes.extend_from_slice(method.as_bytes());
    bytes.push(b' ');
    bytes.extend_from_slice(path.as_bytes());
    bytes.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in headers {
        bytes.extend_from_slice(name.as_str().as_bytes());
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(value.as_bytes());
        bytes.extend_from_slice(b"\r\n");
    }
    if let Some(body) = body {
        bytes.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        bytes.extend_from_slice(body);
    } else {
        bytes.extend_from_slice(b"\r\n");
    }
    let before = Instant::now();
    tcp.write_all(&bytes).await?;
    tcp.flush().await?;
    Ok(before)
}

/// A response head.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
}

/// Reads the response head (skipping 1xx interim responses) and returns it with the body
/// reader, which starts with whatever the head's last read brought beyond it.
pub(crate) async fn read_head(mut tcp: StampedTcp) -> Result<(Head, DirectBody), H1Error> {
    let mut buf = BytesMut::with_capacity(READ_ROOM);
    loop {
        let parsed = parse_head(&buf)?;
        if let Some((length, head)) = parsed {
            buf.advance(length);
            if head.status.is_informational() && head.status != StatusCode::SWITCHING_PROTOCOLS {
                continue;
            }
            let framing = framing(&head)?;
            let body = DirectBody {
                tcp,
                decoder: BodyDecoder {
                    buf,
                    framing,
                    done: false,
                },
            };
            return Ok((head, body));
        }
        if buf.len() > MAX_HEAD {
            return Err(H1Error::malformed(format!(
                "the response head exceeds {} KiB",
                MAX_HEAD / 1024
            )));
        }
        buf.reserve(READ_ROOM);
        if tcp.read_buf(&mut buf).await? == 0 {
            return Err(H1Error::ClosedBeforeHead);
        }
    }
}

/// The head at the start of `bytes` with its length, `None` while it is incomplete.
fn parse_head(bytes: &[u8]) -> Result<Option<(usize, Head)>, H1Error> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut slots);
    let length = match response.parse(bytes) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => {
            return Err(H1Error::malformed(format!(
                "the response head is not HTTP/1.1 ({error})"
            )));
        }
    };
    let code = response.code.unwrap_or_default();
    let status = StatusCode::from_u16(code)
        .map_err(|_| H1Error::malformed(format!("the status code {code} is not valid")))?;
    let mut headers = HeaderMap::with_capacity(response.headers.len());
    for header in response.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes())
            .map_err(|_| H1Error::malformed(format!("the header name {:?}", header.name)))?;
        let value = HeaderValue::from_bytes(header.value)
            .map_err(|_| H1Error::malformed(format!("the value of header {:?}", header.name)))?;
        headers.append(name, value);
    }
    Ok(Some((length, Head { status, headers })))
}

/// How the body after `head` ends.
fn framing(head: &Head) -> Result<Framing, H1Error> {
    let status = head.status.as_u16();
    if head.status.is_informational() || status == 204 || status == 304 {
        return Ok(Framing::Length(0));
    }
    let codings: Vec<&[u8]> = head
        .headers
        .get_all(http::header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|coding| !coding.is_empty())
        .collect();
    if let Some(last) = codings.last() {
        return Ok(if last.eq_ignore_ascii_case(b"chunked") {
            Framing::Chunked(Chunk::Size)
        } else {
            Framing::Close
        });
    }
    let mut length = None;
    for value in head.headers.get_all(http::header::CONTENT_LENGTH) {
        for part in value.as_bytes().split(|&b| b == b',') {
            let part = part.trim_ascii();
            let parsed = std::str::from_utf8(part)
                .ok()
                .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|text| text.parse::<u64>().ok())
                .ok_or_else(|| {
                    H1Error::malformed(format!(
                        "the content-length {:?} is not a number",
                        String::from_utf8_lossy(part)
                    ))
                })?;
            if length.is_some_and(|earlier| earlier != parsed) {
                return Err(H1Error::malformed("two different content-length values"));
            }
            length = Some(parsed);
        }
    }
    Ok(length.map_or(Framing::Close, Framing::Length))
}

/// Where a chunked body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Before a chunk-size line.
    Size,
    /// Inside a chunk's data, with this many bytes left.
    Data(u64),
    /// After a chunk's data, before its CRLF.
    DataEnd,
    /// After the last (zero-size) chunk, in the trailer section.
    Trailers,
}

/// How the body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Chunked(Chunk),
    /// This many bytes are left.
    Length(u64),
    /// When the server closes the connection.
    Close,
}

/// A response body read from the socket by the task that consumes it.
#[derive(Debug)]
pub(crate) struct DirectBody {
    tcp: StampedTcp,
    decoder: BodyDecoder,
}

impl DirectBody {
    /// The next piece of body data, `None` at the body's end. A piece never spans two socket
    /// reads, so the instant the caller takes when it gets one is the instant of the read
    /// that completed it. Cancel-safe: a dropped call loses no bytes.
    pub(crate) async fn next_data(&mut self) -> Result<Option<Bytes>, H1Error> {
        loop {
            if let Some(data) = self.decoder.decode()? {
                return Ok(Some(data));
            }
            if self.decoder.done {
                return Ok(None);
            }
            self.decoder.buf.reserve(READ_ROOM);
            if self.tcp.read_buf(&mut self.decoder.buf).await? == 0 {
                self.decoder.closed()?;
                return Ok(None);
            }
        }
    }
}

/// The body's framing over the bytes read so far.
#[derive(Debug)]
struct BodyDecoder {
    /// Bytes read and not yet decoded.
    buf: BytesMut,
    framing: Framing,
    done: bool,
}

impl BodyDecoder {
    /// The server closed the connection: the end of a body read until close, else a body
    /// cut short.
    fn closed(&mut self) -> Result<(), H1Error> {
        if self.done || self.framing == Framing::Close {
            self.done = true;
            return Ok(());
        }
        Err(H1Error::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection in the middle of the response body",
        )))
    }

    /// Decodes what the buffer holds: a piece of data, or `None` when more bytes are needed
    /// (or the body is done).
    fn decode(&mut self) -> Result<Option<Bytes>, H1Error> {
        loop {
            if self.done {
                return Ok(None);
            }
            match self.framing {
                Framing::Close => {
                    return Ok((!self.buf.is_empty()).then(|| self.buf.split().freeze()));
                }
                Framing::Length(0) => {
                    self.done = true;
                    return Ok(None);
                }
                Framing::Length(left) => {
                    let Some((data, left)) = self.take(left) else {
                        return Ok(None);
                    };
                    self.framing = Framing::Length(left);
                    return Ok(Some(data));
                }
                Framing::Chunked(Chunk::Data(left)) => {
                    let Some((data, left)) = self.take(left) else {
                        return Ok(None);
                    };
                    self.framing = Framing::Chunked(if left == 0 {
                        Chunk::DataEnd
                    } else {
                        Chunk::Data(left)
                    });
                    return Ok(Some(data));
                }
                Framing::Chunked(Chunk::DataEnd) => {
                    let Some(line) = self.line()? else {
                        return Ok(None);
                    };
                    if !line.is_empty() {
                        return Err(H1Error::malformed(
                            "a chunk's data is longer than its size line says",
                        ));
                    }
                    self.framing = Framing::Chunked(Chunk::Size);
                }
                Framing::Chunked(Chunk::Size) => {
                    let Some(line) = self.line()? else {
                        return Ok(None);
                    };
                    let size = chunk_size(&line)?;
                    self.framing = Framing::Chunked(if size == 0 {
                        Chunk::Trailers
                    } else {
                        Chunk::Data(size)
                    });
                }
                Framing::Chunked(Chunk::Trailers) => {
                    let Some(line) = self.line()? else {
                        return Ok(None);
                    };
                    if line.is_empty() {
                        self.done = true;
                    }
                }
            }
        }
    }

    /// Up to `left` buffered bytes and what is left after them; `None` when none are buffered.
    fn take(&mut self, left: u64) -> Option<(Bytes, u64)> {
        if self.buf.is_empty() {
            return None;
        }
        let n = usize::try_from(left).map_or(self.buf.len(), |left| left.min(self.buf.len()));
        let data = self.buf.split_to(n).freeze();
        Some((data, left - n as u64))
    }

    /// The next line (without its CRLF, or a bare LF) taken from the buffer, `None` while it
    /// is incomplete.
    fn line(&mut self) -> Result<Option<Bytes>, H1Error> {
        let Some(end) = memchr::memchr(b'\n', &self.buf) else {
            if self.buf.len() > MAX_LINE {
                return Err(H1Error::malformed(format!(
                    "a chunk-size or trailer line exceeds {} KiB",
                    MAX_LINE / 1024
                )));
            }
            return Ok(None);
        };
        let mut line = self.buf.split_to(end + 1);
        line.truncate(end);
        if line.last() == Some(&b'\r') {
            line.truncate(end - 1);
        }
        Ok(Some(line.freeze()))
    }
}

/// The size in a chunk-size line (hex digits, then optional whitespace and extensions).
fn chunk_size(line: &[u8]) -> Result<u64, H1Error> {
    let digits = line
        .iter()
        .position(|b| !b.is_ascii_hexdigit())
        .unwrap_or(line.len());
    let rest = line[digits..].trim_ascii_start();
    let bad = || {
        H1Error::malformed(format!(
            "the chunk-size line {:?} is not a hexadecimal size",
            String::from_utf8_lossy(line)
        ))
    };
    if digits == 0 || digits > 16 || !(rest.is_empty() || rest[0] == b';') {
        return Err(bad());
    }
    let text = std::str::from_utf8(&line[..digits]).map_err(|_| bad())?;
    u64::from_str_radix(text, 16).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(text: &str) -> Head {
        let (length, head) = parse_head(text.as_bytes())
            .expect("parses")
            .expect("complete");
        assert_eq!(length, text.len());
        head
    }

    /// Feeds `wire` to a decoder `step` bytes at a time (each step one "read"), and returns
    /// the data, the pieces it came in, and whether the body ended.
    fn decode_in_steps(
        framing: Framing,
        wire: &[u8],
        step: usize,
        close: bool,
    ) -> Result<(Vec<u8>, usize, bool), H1Error> {
        let mut decoder = BodyDecoder {
            buf: BytesMut::new(),
            framing,
            done: false,
        };
        let (mut out, mut pieces) = (Vec::new(), 0);
        for read in wire.chunks(step) {
            decoder.buf.extend_from_slice(read);
            while let Some(data) = decoder.decode()? {
                assert!(!data.is_empty(), "no empty pieces");
                out.extend_from_slice(&data);
                pieces += 1;
            }
        }
        if close && !decoder.done {
            decoder.closed()?;
        }
        Ok((out, pieces, decoder.done))
    }

    #[test]
    fn chunk_sizes_follow_rfc_9112() {
        // RFC 9112 §7.1: chunk-size = 1*HEXDIG, then chunk-ext = *( BWS ";" ... ).
        assert_eq!(chunk_size(b"1a").expect("hex"), 26);
        assert_eq!(
            chunk_size(b"FF;name=value").expect("with an extension"),
            255
        );
        assert_eq!(chunk_size(b"0 ;x").expect("whitespace before ;"), 0);
        for bad in [&b""[..], b"g", b"12 34", b"-1", b"11111111111111111"] {
            assert!(
                chunk_size(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn framing_follows_rfc_9112_section_6_3() {
        let chunked = head_of(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 5\r\n\r\n",
        );
        assert_eq!(
            framing(&chunked).expect("framing"),
            Framing::Chunked(Chunk::Size)
        );
        let close = head_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n");
        assert_eq!(framing(&close).expect("framing"), Framing::Close);
        let length = head_of("HTTP/1.1 200 OK\r\ncontent-length: 12, 12\r\n\r\n");
        assert_eq!(framing(&length).expect("framing"), Framing::Length(12));
        let none = head_of("HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n");
        assert_eq!(framing(&none).expect("framing"), Framing::Length(0));
        let open = head_of("HTTP/1.0 200 OK\r\n\r\n");
        assert_eq!(framing(&open).expect("framing"), Framing::Close);
        for bad in [
            "HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: -3\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: +3\r\n\r\n",
        ] {
            assert!(framing(&head_of(bad)).is_err(), "{bad}");
        }
    }

    /// The example of Wikipedia's "Chunked transfer encoding" article, whose last chunk
    /// holds CRLFs of its own: it decodes to "Wikipedia in \r\n\r\nchunks.".
    const WIKIPEDIA: &[u8] = b"4\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\n\r\n";

    #[test]
    fn a_chunked_body_decodes_the_same_however_it_is_split() {
        for step in 1..=WIKIPEDIA.len() {
            let (data, pieces, done) =
                decode_in_steps(Framing::Chunked(Chunk::Size), WIKIPEDIA, step, false)
                    .expect("decodes");
            assert_eq!(data, b"Wikipedia in \r\n\r\nchunks.", "step {step}");
            assert!(
                done,
                "the zero chunk and the empty trailer end it (step {step})"
            );
            if step == WIKIPEDIA.len() {
                assert_eq!(pieces, 3, "one piece per chunk in one read");
            }
        }
    }

    #[test]
    fn extensions_trailers_and_bare_line_feeds_are_taken() {
        let wire = b"5;name=value\r\nhello\r\n0\r\nExpires: never\r\n\r\n";
        let (data, _, done) =
            decode_in_steps(Framing::Chunked(Chunk::Size), wire, 3, false).expect("decodes");
        assert_eq!((data.as_slice(), done), (&b"hello"[..], true));
        let wire = b"2\nhi\n0\n\n";
        let (data, _, done) =
            decode_in_steps(Framing::Chunked(Chunk::Size), wire, 1, false).expect("decodes");
        assert_eq!((data.as_slice(), done), (&b"hi"[..], true));
    }

    #[test]
    fn length_and_close_framings_end_where_they_should() {
        let (data, _, done) =
            decode_in_steps(Framing::Length(5), b"hello world", 4, false).expect("decodes");
        assert_eq!((data.as_slice(), done), (&b"hello"[..], true));
        let (data, _, done) =
            decode_in_steps(Framing::Close, b"until the end", 4, true).expect("decodes");
        assert_eq!((data.as_slice(), done), (&b"until the end"[..], true));
    }

    #[test]
    fn a_body_cut_short_or_malformed_is_an_error() {
        let cut = &WIKIPEDIA[..12];
        let error = decode_in_steps(Framing::Chunked(Chunk::Size), cut, 5, true)
            .expect_err("closed inside a chunk");
        assert!(
            matches!(&error, H1Error::Io(io) if io.kind() == io::ErrorKind::UnexpectedEof),
            "{error}"
        );
        assert!(decode_in_steps(Framing::Length(20), b"short", 5, true).is_err());
        let long = decode_in_steps(Framing::Chunked(Chunk::Size), b"3\r\nabcd\r\n", 9, false)
            .expect_err("data past its size");
        assert!(long.to_string().contains("longer than"), "{long}");
        let line = vec![b'1'; MAX_LINE + 2];
        assert!(decode_in_steps(Framing::Chunked(Chunk::Size), &line, line.len(), false).is_err());
    }

    #[tokio::test]
    async fn an_interim_response_is_skipped_and_the_head_shares_its_read_with_the_body() {
        use tokio::io::AsyncWriteExt as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let (client, mut server) = crate::kernel_stamps::tests::connected(&listener).await;
        let log = std::sync::Arc::new(crate::kernel_stamps::RxLog::default());
        let mut tcp = StampedTcp::new(client, std::sync::Arc::clone(&log));
        let headers = [(http::header::HOST, HeaderValue::from_static("example"))];
        write_request(&mut tcp, "POST", "/v1/x", &headers, Some(b"{}"))
            .await
            .expect("write");
        let mut request = vec![0; 200];
        let n = tokio::io::AsyncReadExt::read(&mut server, &mut request)
            .await
            .expect("read");
        assert_eq!(
            &request[..n],
            b"POST /v1/x HTTP/1.1\r\nhost: example\r\ncontent-length: 2\r\n\r\n{}"
        );
        server
            .write_all(
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
            )
            .await
            .expect("write");
        let (head, mut body) = read_head(tcp).await.expect("head");
        assert_eq!(head.status, StatusCode::OK);
        let first = body.next_data().await.expect("data").expect("a piece");
        assert_eq!(&first[..], b"hello");
        server.write_all(b"0\r\n\r\n").await.expect("write");
        assert!(body.next_data().await.expect("end").is_none());
        drop(server);
        let garbage = {
            let (client, mut server) = crate::kernel_stamps::tests::connected(&listener).await;
            server
                .write_all(b"SSH-2.0-OpenSSH\r\n\r\n")
                .await
                .expect("write");
            read_head(StampedTcp::new(client, log)).await
        };
        assert!(matches!(garbage, Err(H1Error::Malformed(_))), "{garbage:?}");
    }
}
