//! An incremental Server-Sent Events decoder with a bounded line buffer.

use crate::ClientError;

/// The default bound on one line (and on one event's data): 4 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if one was given.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if one was given in this event.
    pub id: Option<String>,
}

impl SseEvent {
    /// Whether this is the end-of-stream marker `[DONE]`.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// Decodes a byte stream split at arbitrary points into [`SseEvent`]s.
///
/// Follows the WHATWG event-stream rules: LF, CRLF and lone CR end lines (a CR at the end of one
/// chunk followed by LF at the start of the next is one line end), a leading BOM is skipped,
/// lines starting with `:` are comments, a field without a colon has an empty value, one space
/// after the colon is stripped, `retry:` and unknown fields are ignored, and an event is
/// dispatched at a blank line when it has data. One extension: a line `error: VALUE` (sent by
/// some llama.cpp builds instead of `data:`) is reported as an event named `error` with data
/// `VALUE`.
///
/// Lines longer than the bound fail with [`ClientError::LineTooLong`] instead of growing memory.
#[derive(Debug)]
pub struct SseDecoder {
    max_line_bytes: usize,
    line: Vec<u8>,
    after_cr: bool,
    at_stream_start: bool,
    data: String,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    n_events: usize,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl SseDecoder {
    /// A decoder refusing lines (and events) longer than `max_line_bytes`.
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            max_line_bytes,
            line: Vec::new(),
            after_cr: false,
            at_stream_start: true,
            data: String::new(),
            has_data: false,
            event: None,
            id: None,
            n_events: 0,
        }
    }

    /// Events dispatched so far.
    pub fn n_events(&self) -> usize {
        self.n_events
    }

    /// Feeds `chunk`, appending every event it completes to `out`.
    ///
    /// On error the events completed before the bad line are already in `out`.
    pub fn decode(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), ClientError> {
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        while !chunk.is_empty() {
            let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) else {
                self.check_len(self.line.len() + chunk.len())?;
                self.line.extend_from_slice(chunk);
                return Ok(());
            };
            let terminator = chunk[end];
            let rest = &chunk[end + 1..];
            if self.line.is_empty() {
                self.check_len(end)?;
                self.process_line(&chunk[..end], out)?;
            } else {
                self.check_len(self.line.len() + end)?;
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&chunk[..end]);
                let result = self.process_line(&line, out);
                line.clear();
                self.line = line;
                result?;
            }
            chunk = rest;
            if terminator == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        Ok(())
    }

    /// Convenience form of [`decode`](Self::decode) returning a new vector.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, ClientError> {
        let mut out = Vec::new();
        self.decode(chunk, &mut out)?;
        Ok(out)
    }

    /// Ends the stream: a last line without its line end is processed, and a pending event with
    /// data is dispatched (lenient: the standard would drop it).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), ClientError> {
        self.after_cr = false;
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out)?;
        }
        self.dispatch(out);
        Ok(())
    }

    fn check_len(&self, len: usize) -> Result<(), ClientError> {
        if len > self.max_line_bytes {
            return Err(ClientError::LineTooLong {
                limit: self.max_line_bytes,
                events_received: self.n_events,
            });
        }
        Ok(())
    }

    fn process_line(
        &mut self,
        mut line: &[u8],
        out: &mut Vec<SseEvent>,
    ) -> Result<(), ClientError> {
        if self.at_stream_start {
            self.at_stream_start = false;
            if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
                line = rest;
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => self.push_data(value)?,
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"error" => {
                self.event = Some("error".to_owned());
                self.push_data(value)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn push_data(&mut self, value: &[u8]) -> Result<(), ClientError> {
        let separator = usize::from(self.has_data);
        self.check_len(self.data.len() + separator + value.len())?;
        if self.has_data {
            self.data.push('\n');
        }
        self.has_data = true;
        // Valid UTF-8 (nearly always) is checked word by word; only invalid bytes take the
        // lossy path.
        match std::str::from_utf8(value) {
            Ok(text) => self.data.push_str(text),
            Err(_) => self.data.push_str(&String::from_utf8_lossy(value)),
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if !self.has_data {
            self.event = None;
            return;
        }
        self.has_data = false;
        self.n_events += 1;
        out.push(SseEvent {
            event: self.event.take(),
            data: std::mem::take(&mut self.data),
            id: self.id.take(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        decoder.decode(input, &mut out).expect("decodes");
        decoder.finish(&mut out).expect("finishes");
        out
    }

    fn data(text: &str) -> SseEvent {
        SseEvent {
            data: text.to_owned(),
            ..SseEvent::default()
        }
    }

    #[test]
    fn line_ends_lf_crlf_and_cr() {
        let expected = vec![data("a"), data("b"), data("c")];
        assert_eq!(
            decode_all(b"data: a\n\ndata: b\r\n\r\ndata: c\r\r"),
            expected
        );
    }

    #[test]
    fn comments_fields_and_multiline_data() {
        let input = b": ping\n\nevent: delta\nid: 7\ndata: one\ndata:two\nretry: 10\ndata\n\n";
        let events = decode_all(input);
        assert_eq!(
            events,
            vec![SseEvent {
                event: Some("delta".into()),
                data: "one\ntwo\n".into(),
                id: Some("7".into())
            }]
        );
    }

    #[test]
    fn bom_and_only_one_space_stripped() {
        assert_eq!(decode_all(b"\xEF\xBB\xBFdata:  x\n\n"), vec![data(" x")]);
    }

    #[test]
    fn done_marker_and_unterminated_last_event() {
        let events = decode_all(b"data: [DONE]");
        assert_eq!(events.len(), 1);
        assert!(events[0].is_done());
    }

    #[test]
    fn invalid_utf8_in_data_becomes_the_replacement_character() {
        // The event-stream standard decodes the stream as UTF-8 with replacement: a stray byte
        // is U+FFFD, and valid text around it (here a two-byte `é`) is kept.
        let events = decode_all(b"data: caf\xc3\xa9 \xff!\n\ndata: ok\n\n");
        assert_eq!(events, [data("caf\u{e9} \u{fffd}!"), data("ok")]);
    }

    #[test]
    fn cr_at_chunk_end_then_lf() {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        decoder.decode(b"data: a\r", &mut out).expect("decodes");
        decoder.decode(b"", &mut out).expect("decodes");
        decoder.decode(b"\n\r", &mut out).expect("decodes");
        decoder.decode(b"\n", &mut out).expect("decodes");
        assert_eq!(out, vec![data("a")]);
    }

    #[test]
    fn error_field_is_an_error_event() {
        let events = decode_all(b"error: {\"code\":500}\n\n");
        assert_eq!(events[0].event.as_deref(), Some("error"));
        assert_eq!(events[0].data, "{\"code\":500}");
    }

    #[test]
    fn long_line_is_refused() {
        let mut decoder = SseDecoder::new(16);
        let mut out = Vec::new();
        decoder.decode(b"data: short\n\n", &mut out).expect("fits");
        decoder
            .decode(b"data: 0123456789", &mut out)
            .expect("fits so far");
        let error = decoder.decode(b"abc", &mut out).expect_err("too long");
        assert!(
            matches!(
                error,
                ClientError::LineTooLong {
                    limit: 16,
                    events_received: 1
                }
            ),
            "{error:?}"
        );
        let mut fresh = SseDecoder::new(16);
        let error = fresh
            .decode(b"data: 0123456789abc\n", &mut out)
            .expect_err("too long");
        assert!(matches!(error, ClientError::LineTooLong { limit: 16, .. }));
    }
}
