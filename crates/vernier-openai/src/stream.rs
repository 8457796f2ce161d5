//! Streaming responses: each event stamped with the instant its last byte was read.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

use http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::transport::{after, earliest};
use crate::{
    ChatAccumulator, ChatChunk, ClientError, CompletionChunk, ResponseEnvelope, SseDecoder,
    SseEvent, TimeoutKind,
};

/// A decoded stream event with the instant its final byte arrived.
#[derive(Debug, Clone)]
pub struct StampedChunk<C = ChatChunk> {
    /// When the body frame that completed this event arrived: the kernel's receive time of
    /// the socket read that brought it (Linux, `SO_TIMESTAMPNS`), else the instant our task
    /// read it.
    pub arrived_at: Instant,
    /// With a kernel receive time in `arrived_at`: the instant our task read the frame (the
    /// difference is the client's own lag).
    pub read_at: Option<Instant>,
    /// The number of the socket read that completed the frame (events sharing one arrived in
    /// one read).
    pub read_seq: Option<u64>,
    /// The parsed event.
    pub chunk: C,
    /// Bytes of the event's `data` payload.
    pub n_bytes: usize,
}

impl<C> StampedChunk<C> {
    /// An event read by our task at `arrived_at`, with no kernel stamp and no read number.
    pub fn new(arrived_at: Instant, chunk: C, n_bytes: usize) -> Self {
        Self {
            arrived_at,
            read_at: None,
            read_seq: None,
            chunk,
            n_bytes,
        }
    }
}

/// What a stream chunk type must offer the shared stream machinery.
pub(crate) trait StreamChunk: DeserializeOwned {
    const WHAT: &'static str;
    fn accumulate(&self, accumulator: &mut ChatAccumulator);
    /// The error object when this payload is an error rather than a chunk.
    fn error_object(&self) -> Option<Value>;
}

impl StreamChunk for ChatChunk {
    const WHAT: &'static str = "chat chunk";
    fn accumulate(&self, accumulator: &mut ChatAccumulator) {
        accumulator.push(self);
    }
    fn error_object(&self) -> Option<Value> {
        ResponseEnvelope::error_object(self)
    }
}

impl StreamChunk for CompletionChunk {
    const WHAT: &'static str = "completion chunk";
    fn accumulate(&self, accumulator: &mut ChatAccumulator) {
        accumulator.push_completion(self);
    }
    fn error_object(&self) -> Option<Value> {
        ResponseEnvelope::error_object(self)
    }
}

/// When a body frame (or the response head) arrived: see [`StampedChunk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arrival {
    at: Instant,
    read_at: Option<Instant>,
    read_seq: Option<u64>,
}

impl Arrival {
    /// The frame read now: by the kernel's stamp of the connection's latest read when there
    /// is a credible one, else by our own instant.
    ///
    /// Frames of the kernel-stamped socket read that `previous` came from keep its instant:
    /// they arrived together, and converting the same stamp again would only add the jitter of
    /// reading two clocks. And no instant is earlier than `previous`'s: the kernel's stamps of successive
    /// reads never go back, so an earlier one is that jitter (nanoseconds), not a fact.
    pub(crate) fn now(rx: Option<&crate::kernel_stamps::RxLog>, previous: Option<Self>) -> Self {
        let read_at = Instant::now();
        let latest = rx.and_then(crate::kernel_stamps::RxLog::latest);
        let read_seq = latest.map(|read| read.seq);
        let same_stamped_read =
            |p: &Self| p.read_at.is_some() && p.read_seq.is_some() && p.read_seq == read_seq;
        if let Some(previous) = previous.filter(same_stamped_read) {
            return Self {
                read_at: Some(read_at),
                ..previous
            };
        }
        let kernel = latest
            .and_then(|read| read.kernel_ns)
            .and_then(|kernel_ns| {
                crate::kernel_stamps::kernel_instant(
                    read_at,
                    crate::kernel_stamps::realtime_ns(),
                    kernel_ns,
                )
            });
        let at = kernel.unwrap_or(read_at);
        Self {
            at: previous.map_or(at, |previous| at.max(previous.at)),
            read_at: kernel.map(|_| read_at),
            read_seq,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Done,
    Failed,
}

/// Everything the stream needs from the request that opened it.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: crate::transport::Body,
    pub(crate) request_sent_at: Instant,
    /// When the read that completed the response head arrived (the kernel's stamp where
    /// there is one); body frames of that same read keep its instant.
    pub(crate) head_arrival: Arrival,
    pub(crate) first_byte: Option<Duration>,
    pub(crate) idle: Option<Duration>,
    pub(crate) total_deadline: Option<Instant>,
    pub(crate) max_line_bytes: usize,
    /// The connection's socket reads, with kernel receive times where the kernel gives them.
    pub(crate) rx: Option<std::sync::Arc<crate::kernel_stamps::RxLog>>,
}

#[derive(Debug)]
pub(crate) struct EventStream<C> {
    opened: Opened,
    decoder: SseDecoder,
    decoded: Vec<SseEvent>,
    pending: VecDeque<(SseEvent, Arrival)>,
    deferred_error: Option<ClientError>,
    /// When the last frame that completed at least one event was read. Comments (keep-alives)
    /// and frames holding only part of an event leave it alone, so a server that only sends
    /// `: ping` lines still runs into the idle deadline.
    last_event_at: Option<Instant>,
    /// When the last frame was read (see [`Arrival::now`]).
    last_arrival: Option<Arrival>,
    eof: bool,
    state: State,
    finished_at: Option<Instant>,
    accumulator: ChatAccumulator,
    /// With [`ChatStream::capture_body`]: every body frame with the instant it was read.
    capture: Option<Vec<(Instant, bytes::Bytes)>>,
    /// The stream's one deadline timer (first byte, idle, total), armed at the first wait.
    timer: crate::LazyTimer,
    chunk_type: PhantomData<fn() -> C>,
}

/// One body frame as it was read, for replay.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CapturedRead {
    /// When it was read, in nanoseconds after the request's first byte was written.
    pub offset_ns: u64,
    /// The bytes, exactly as they came.
    pub bytes: Vec<u8>,
}

/// A response kept byte for byte: status, headers and every body frame with its arrival.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capture {
    /// The response status.
    pub status: u16,
    /// The response headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body frames, in order.
    pub reads: Vec<CapturedRead>,
}

impl<C: StreamChunk> EventStream<C> {
    pub(crate) fn new(opened: Opened) -> Self {
        let decoder = SseDecoder::new(opened.max_line_bytes);
        let head_arrival = opened.head_arrival;
        Self {
            opened,
            decoder,
            decoded: Vec::new(),
            pending: VecDeque::new(),
            deferred_error: None,
            last_event_at: None,
            last_arrival: Some(head_arrival),
            eof: false,
            state: State::Open,
            finished_at: None,
            accumulator: ChatAccumulator::new(),
            capture: None,
            timer: crate::LazyTimer::new(),
            chunk_type: PhantomData,
        }
    }

    fn take_capture(&mut self) -> Option<Capture> {
        let reads = self.capture.take()?;
        let sent = self.opened.request_sent_at;
        Some(Capture {
            status: self.opened.status.as_u16(),
            headers: self
                .opened
                .headers
                .iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            reads: reads
                .into_iter()
                .map(|(at, bytes)| CapturedRead {
                    offset_ns: u64::try_from(at.saturating_duration_since(sent).as_nanos())
                        .unwrap_or(u64::MAX),
                    bytes: bytes.to_vec(),
                })
                .collect(),
        })
    }

    /// Events parsed and handed out so far: the accumulator counts each one.
    fn events_received(&self) -> usize {
        self.accumulator.n_events()
    }

    pub(crate) async fn next_event(&mut self) -> Option<Result<StampedChunk<C>, ClientError>> {
        self.next_with(Self::handle).await
    }

    /// The next event as `handle` reads it: the one loop over pending events, deferred
    /// errors, the end of the body and new frames, whatever form the caller wants an event in.
    async fn next_with<T>(
        &mut self,
        handle: fn(&mut Self, &SseEvent, Arrival) -> Option<Result<T, ClientError>>,
    ) -> Option<Result<T, ClientError>> {
        loop {
            if self.state != State::Open {
                return None;
            }
            if let Some((event, arrival)) = self.pending.pop_front() {
                if let Some(result) = handle(self, &event, arrival) {
                    return Some(result);
                }
                continue;
            }
            if let Some(error) = self.deferred_error.take() {
                return Some(Err(self.fail(error)));
            }
            if self.eof {
                self.finished_at.get_or_insert_with(Instant::now);
                if self.accumulator.finish_reason().is_some() {
                    self.state = State::Done;
                    return None;
                }
                let error = ClientError::StreamDropped {
                    events_received: self.events_received(),
                    source: None,
                };
                return Some(Err(self.fail(error)));
            }
            if let Err(error) = self.read_frame().await {
                return Some(Err(self.fail(error)));
            }
        }
    }

    fn fail(&mut self, error: ClientError) -> ClientError {
        self.state = State::Failed;
        self.finished_at.get_or_insert_with(Instant::now);
        match error {
            ClientError::LineTooLong { limit, .. } => ClientError::LineTooLong {
                limit,
                events_received: self.events_received(),
            },
            other => other,
        }
    }

    async fn read_frame(&mut self) -> Result<(), ClientError> {
        // Until the first event the first-byte deadline runs from the send; after it the idle
        // deadline runs from the last event, not the last frame: keep-alive comments do not
        // restart it.
        let phase = match self.last_event_at {
            Some(last_event_at) => after(last_event_at, self.opened.idle, TimeoutKind::Idle),
            None => after(
                self.opened.request_sent_at,
                self.opened.first_byte,
                TimeoutKind::FirstByte,
            ),
        };
        let deadline = earliest(phase, self.opened.total_deadline);
        let frame = self.frame_within(deadline).await?;
        let arrival = Arrival::now(self.opened.rx.as_deref(), self.last_arrival);
        self.last_arrival = Some(arrival);
        let arrived_at = arrival.at;
        match frame {
            None => {
                self.eof = true;
                if let Err(error) = self.decoder.finish(&mut self.decoded) {
                    self.deferred_error = Some(error);
                }
            }
            Some(Err(error)) => {
                return Err(ClientError::StreamDropped {
                    events_received: self.events_received(),
                    source: Some(error),
                });
            }
            Some(Ok(data)) => {
                if data.is_empty() {
                    return Ok(());
                }
                if let Some(capture) = &mut self.capture {
                    capture.push((arrived_at, data.clone()));
                }
                if let Err(error) = self.decoder.decode(&data, &mut self.decoded) {
                    self.deferred_error = Some(error);
                }
            }
        }
        if !self.decoded.is_empty() {
            self.last_event_at = Some(arrived_at);
        }
        self.pending
            .extend(self.decoded.drain(..).map(|event| (event, arrival)));
        Ok(())
    }

    /// The next body frame, or a timeout at `deadline`. One timer serves the whole stream: it
    /// is moved only when the deadline comes earlier or when it fires before the deadline, so a
    /// frame costs no timer of its own.
    async fn frame_within(
        &mut self,
        deadline: Option<(Instant, TimeoutKind)>,
    ) -> Result<Option<Result<bytes::Bytes, crate::BoxError>>, ClientError> {
        let Some((at, which)) = deadline else {
            return Ok(self.opened.body.next_data().await);
        };
        let events_received = self.events_received();
        let due = tokio::time::Instant::from_std(at);
        tokio::select! {
            biased;
            frame = self.opened.body.next_data() => Ok(frame),
            () = self.timer.until(due) => Err(ClientError::Timeout { which, events_received }),
        }
    }

    fn handle(
        &mut self,
        event: &SseEvent,
        arrival: Arrival,
    ) -> Option<Result<StampedChunk<C>, ClientError>> {
        let arrived_at = arrival.at;
        if event.is_done() {
            self.state = State::Done;
            self.finished_at = Some(arrived_at);
            self.pending.clear();
            return None;
        }
        if event.event.as_deref() == Some("error") {
            let error = serde_json::from_str(&event.data)
                .unwrap_or_else(|_| Value::String(event.data.clone()));
            let error = ClientError::ServerErrorEvent {
                error,
                events_received: self.events_received(),
            };
            return Some(Err(self.fail(error)));
        }
        let chunk = match serde_json::from_str::<C>(&event.data) {
            Ok(chunk) => chunk,
            Err(error) => {
                let what = format!("{} {}", C::WHAT, self.events_received() + 1);
                let error =
                    ClientError::json(what, event.data.as_bytes(), &error, self.events_received());
                return Some(Err(self.fail(error)));
            }
        };
        if let Some(error) = chunk.error_object() {
            let error = ClientError::ServerErrorEvent {
                error,
                events_received: self.events_received(),
            };
            return Some(Err(self.fail(error)));
        }
        chunk.accumulate(&mut self.accumulator);
        Some(Ok(StampedChunk {
            arrived_at,
            read_at: arrival.read_at,
            read_seq: arrival.read_seq,
            chunk,
            n_bytes: event.data.len(),
        }))
    }
}

/// What the meter takes from one chat event, however it was read: its arrival and the counts
/// of [`observation`](crate::observation), without the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) arrived_at: Instant,
    pub(crate) read_at: Option<Instant>,
    pub(crate) read_seq: Option<u64>,
    pub(crate) content_bytes: usize,
    pub(crate) reasoning_bytes: usize,
    pub(crate) tool_call_bytes: usize,
    pub(crate) token_ids: Option<usize>,
    pub(crate) cumulative_completion_tokens: Option<u64>,
    pub(crate) logprob_tokens: Option<usize>,
}

impl Seen {
    /// The counts of a whole chunk.
    pub(crate) fn of_chunk(event: &StampedChunk) -> Self {
        let chunk = &event.chunk;
        Self {
            arrived_at: event.arrived_at,
            read_at: event.read_at,
            read_seq: event.read_seq,
            content_bytes: chunk.content_len(),
            reasoning_bytes: chunk.reasoning_len(),
            tool_call_bytes: chunk.tool_call_len(),
            token_ids: chunk.token_id_count(),
            cumulative_completion_tokens: chunk.usage.as_ref().map(|usage| usage.completion_tokens),
            logprob_tokens: chunk.logprob_count(),
        }
    }

    /// The counts of a lean chunk (which has no tool calls and no logprobs).
    fn of_lean(chunk: &crate::lean::LeanChunk<'_>, arrival: Arrival) -> Self {
        Self {
            arrived_at: arrival.at,
            read_at: arrival.read_at,
            read_seq: arrival.read_seq,
            content_bytes: chunk.content_len(),
            reasoning_bytes: chunk.reasoning_len(),
            tool_call_bytes: 0,
            token_ids: chunk.token_id_count(),
            cumulative_completion_tokens: chunk.usage.as_ref().map(|usage| usage.completion_tokens),
            logprob_tokens: None,
        }
    }
}

impl EventStream<ChatChunk> {
    /// The next event's counts, read leanly where the chunk allows (see `lean`), else whole.
    pub(crate) async fn next_seen(&mut self) -> Option<Result<Seen, ClientError>> {
        self.next_with(Self::handle_seen).await
    }

    fn handle_seen(
        &mut self,
        event: &SseEvent,
        arrival: Arrival,
    ) -> Option<Result<Seen, ClientError>> {
        if !event.is_done()
            && event.event.is_none()
            && let Some(chunk) = crate::lean::LeanChunk::read(&event.data)
        {
            self.accumulator.push_lean(&chunk);
            return Some(Ok(Seen::of_lean(&chunk, arrival)));
        }
        self.handle(event, arrival)
            .map(|result| result.map(|chunk| Seen::of_chunk(&chunk)))
    }
}

macro_rules! stream_type {
    ($(#[$doc:meta])* $name:ident, $chunk:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name {
            inner: EventStream<$chunk>,
        }

        impl $name {
            pub(crate) fn new(opened: Opened) -> Self {
                Self { inner: EventStream::new(opened) }
            }

            /// The next event, `None` after `[DONE]` (or a clean end after a finish reason) and
            /// after an error. Errors carry `events_received`; [`accumulated`](Self::accumulated)
            /// keeps what arrived before them.
            pub async fn next_event(&mut self) -> Option<Result<StampedChunk<$chunk>, ClientError>> {
                self.inner.next_event().await
            }

            /// When the request's first byte was written to the socket.
            pub fn request_sent_at(&self) -> Instant {
                self.inner.opened.request_sent_at
            }

            /// When the response head arrived: the kernel's receive time of the socket read
            /// that completed it where the kernel stamps reads (Linux), else when it was read.
            /// Body frames from that same read share this instant.
            pub fn headers_at(&self) -> Instant {
                self.inner.opened.head_arrival.at
            }

            /// When the stream ended (`[DONE]`, end of body or error), once it has.
            pub fn finished_at(&self) -> Option<Instant> {
                self.inner.finished_at
            }

            /// The response status.
            pub fn status(&self) -> StatusCode {
                self.inner.opened.status
            }

            /// The response headers.
            pub fn headers(&self) -> &HeaderMap {
                &self.inner.opened.headers
            }

            /// Events parsed and handed out so far.
            pub fn events_received(&self) -> usize {
                self.inner.events_received()
            }

            /// The sum of the events so far.
            pub fn accumulated(&self) -> &ChatAccumulator {
                &self.inner.accumulator
            }

            /// Keeps every body frame read from now on, byte for byte with its arrival instant
            /// (see [`take_capture`](Self::take_capture)). Off by default.
            pub fn capture_body(&mut self) {
                self.inner.capture.get_or_insert_with(Vec::new);
            }

            /// What [`capture_body`](Self::capture_body) kept, once; `None` without it.
            pub fn take_capture(&mut self) -> Option<Capture> {
                self.inner.take_capture()
            }

            /// The sum of the events so far, taking the stream apart.
            pub fn into_accumulated(self) -> ChatAccumulator {
                self.inner.accumulator
            }

            /// Reads the rest of the stream, returning the sum of all events.
            pub async fn collect(mut self) -> Result<ChatAccumulator, ClientError> {
                while let Some(event) = self.next_event().await {
                    event?;
                }
                Ok(self.inner.accumulator)
            }
        }
    };
}

stream_type!(
    /// A streamed chat completion (from [`Client::chat_stream`](crate::Client::chat_stream)).
    ChatStream,
    ChatChunk
);

impl ChatStream {
    /// The next event's counts for the meter, without handing out the chunk (see
    /// [`MeteredStream::next_observation`](crate::MeteredStream::next_observation)).
    #[cfg_attr(
        not(feature = "meter"),
        expect(dead_code, reason = "only the meter reads events this way")
    )]
    pub(crate) async fn next_seen(&mut self) -> Option<Result<Seen, ClientError>> {
        self.inner.next_seen().await
    }
}

stream_type!(
    /// A streamed completion (from [`Client::completion_stream`](crate::Client::completion_stream)).
    CompletionStream,
    CompletionChunk
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_of_one_stamped_read_share_its_instant_and_instants_never_go_back() {
        let log = crate::kernel_stamps::RxLog::default();
        log.record(Some(crate::kernel_stamps::realtime_ns()));
        let first = Arrival::now(Some(&log), None);
        assert!(first.read_at.is_some(), "kernel-stamped");
        // A second frame of the same read: the same instant, read later.
        let second = Arrival::now(Some(&log), Some(first));
        assert_eq!((second.at, second.read_seq), (first.at, first.read_seq));
        assert!(second.read_at >= first.read_at);
        // A later read whose converted instant comes out earlier (the two clocks read a little
        // apart) is held at the previous instant, never before it.
        let ahead = Arrival {
            at: Instant::now() + Duration::from_millis(5),
            ..first
        };
        log.record(Some(crate::kernel_stamps::realtime_ns()));
        let third = Arrival::now(Some(&log), Some(ahead));
        assert_ne!(third.read_seq, first.read_seq);
        assert_eq!(third.at, ahead.at);
        // Unstamped reads keep their own instants.
        let plain = crate::kernel_stamps::RxLog::default();
        plain.record(None);
        let a = Arrival::now(Some(&plain), None);
        let b = Arrival::now(Some(&plain), Some(a));
        assert_eq!(a.read_at, None);
        assert!(b.at >= a.at);
    }
}
