//! The response body: a fixed buffer, or a stream that sends each planned event at its
//! deadline and stamps the instant it hands the bytes to the connection.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use crate::ground_truth::GroundTruth;
use crate::plan::Planned;
use crate::state::{DecodeBlocks, HUNG_RECHECK, RunningGuard};

/// Body of every simulator response.
#[derive(Debug)]
pub(crate) enum SimBody {
    Full(Option<Bytes>),
    Stream(Box<EventStream>),
    /// Fails at once: the connection is dropped after the headers.
    Abort,
}

impl SimBody {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Self::Full(Some(bytes.into()))
    }
}

impl Body for SimBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            Self::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Self::Stream(stream) => stream.poll_event(cx),
            Self::Abort => Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "simulated connection drop",
            )))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            Self::Full(None) => SizeHint::with_exact(0),
            Self::Stream(_) | Self::Abort => SizeHint::default(),
        }
    }
}

/// A stream being sent.
#[derive(Debug)]
pub(crate) struct EventStream {
    plan: VecDeque<Planned>,
    guard: RunningGuard,
    arrival: Instant,
    first_token_deadline: Instant,
    last_token_deadline: Option<Instant>,
    /// Deadline of the event at the front of the plan, once computed.
    target: Option<Instant>,
    not_before: Instant,
    last_write: Instant,
    keepalive: Option<Duration>,
    split_writes: bool,
    sleep: Pin<Box<Sleep>>,
    /// Second half of a split event, and whether to yield once before sending it.
    second_half: Option<(Bytes, bool)>,
    /// Tokens of the event whose last byte is still to be handed over.
    unstamped_tokens: Option<u32>,
    record: Option<GroundTruth>,
    drop_armed: bool,
    /// When the engine was first seen hung while this stream waited for a step.
    hung_since: Option<Instant>,
    /// Blocks the prefix cache gets if the stream ends normally.
    decode_blocks: Option<DecodeBlocks>,
}

impl EventStream {
    pub(crate) fn new(
        plan: Vec<Planned>,
        guard: RunningGuard,
        arrival: Instant,
        first_token_deadline: Instant,
        record: GroundTruth,
    ) -> Self {
        let config = &guard.state().config;
        let now = Instant::now();
        Self {
            keepalive: config.keepalive_comment_every,
            split_writes: config.split_writes,
            plan: plan.into(),
            arrival,
            first_token_deadline,
            last_token_deadline: None,
            target: None,
            not_before: now,
            last_write: now,
            sleep: Box::pin(tokio::time::sleep_until(now)),
            second_half: None,
            unstamped_tokens: None,
            record: Some(record),
            drop_armed: false,
            hung_since: None,
            decode_blocks: None,
            guard,
        }
    }

    /// Puts `blocks` in the prefix cache when the whole stream has been handed over.
    pub(crate) fn cache_on_completion(mut self, blocks: Option<DecodeBlocks>) -> Self {
        self.decode_blocks = blocks;
        self
    }

    fn poll_event(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if let Some((bytes, yield_first)) = self.second_half.take() {
            if yield_first {
                // Returning Pending makes the connection flush the first half in its own write.
                self.second_half = Some((bytes, false));
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            return Poll::Ready(Some(Ok(self.hand_over(bytes))));
        }
        loop {
            let Some(front) = self.plan.front() else {
                self.finish(true);
                return Poll::Ready(None);
            };
            let is_tokens = matches!(front, Planned::Tokens { .. });
            if is_tokens && self.wait_while_hung(cx) {
                return Poll::Pending;
            }
            let target = if let Some(target) = self.target {
                target
            } else {
                let deadline = if is_tokens {
                    match self.last_token_deadline {
                        None => self.first_token_deadline,
                        Some(last) => last + self.guard.state().current_step(),
                    }
                } else {
                    self.not_before
                };
                let target = deadline.max(self.not_before);
                self.target = Some(target);
                target
            };
            let now = Instant::now();
            if now < target {
                let mut wake_at = target;
                if let Some(every) = self.keepalive {
                    let keepalive_at = self.last_write + every;
                    if keepalive_at <= now {
                        self.last_write = now;
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                            b": keepalive\n\n",
                        )))));
                    }
                    wake_at = wake_at.min(keepalive_at);
                }
                if self.sleep.deadline() != wake_at {
                    self.sleep.as_mut().reset(wake_at);
                }
                if self.sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                continue;
            }
            self.target = None;
            let Some(item) = self.plan.pop_front() else {
                continue;
            };
            match item {
                Planned::Stall(duration) => {
                    self.not_before = now + duration;
                }
                Planned::Drop if !self.drop_armed => {
                    // Yield once so the connection flushes what it has buffered; the client
                    // sees every event before the drop, as from a server that died mid-stream.
                    self.drop_armed = true;
                    self.plan.push_front(Planned::Drop);
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Planned::Drop => {
                    self.finish(false);
                    return Poll::Ready(Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "simulated connection drop",
                    ))));
                }
                Planned::Immediate(bytes) => return Poll::Ready(Some(Ok(self.send(bytes)))),
                Planned::Tokens { .. } if self.guard.state().is_crashing() => {
                    // The process is dying: the connection goes with it.
                    self.finish(false);
                    return Poll::Ready(Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "simulated crash",
                    ))));
                }
                Planned::Tokens {
                    bytes,
                    tokens,
                    spec,
                } => {
                    if self.dying(tokens) {
                        return Poll::Ready(Some(Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "simulated crash",
                        ))));
                    }
                    self.last_token_deadline = Some(target);
                    self.guard.state().counters.count_step(tokens, spec);
                    self.unstamped_tokens = Some(tokens);
                    return Poll::Ready(Some(Ok(self.send(bytes))));
                }
            }
        }
    }

    /// With the crash fault: counts this step's tokens in the stream's depth, or, once the
    /// server is crashing, ends the stream (true) so that no token leaves after the dump.
    fn dying(&mut self, tokens: u32) -> bool {
        if self.guard.state().config.faults.crash.is_none() {
            return false;
        }
        let Some(request_id) = self.record.as_ref().map(|r| r.request_id.clone()) else {
            return false;
        };
        if self.guard.add_depth(&request_id, tokens) {
            return false;
        }
        self.finish(false);
        true
    }

    /// A hung engine runs no step: true (with a wake-up armed) while it is hung. Once it runs
    /// again, the rest of the schedule moves by the pause.
    fn wait_while_hung(&mut self, cx: &mut Context<'_>) -> bool {
        if self.guard.state().is_hung() {
            self.hung_since.get_or_insert_with(Instant::now);
            loop {
                self.sleep.as_mut().reset(Instant::now() + HUNG_RECHECK);
                if self.sleep.as_mut().poll(cx).is_pending() {
                    return true;
                }
            }
        }
        if let Some(since) = self.hung_since.take() {
            let paused = Instant::now() - since;
            self.first_token_deadline += paused;
            if let Some(last) = self.last_token_deadline.as_mut() {
                *last += paused;
            }
            self.target = None;
        }
        false
    }

    /// Sends an event whole, or its first half when writes are split.
    fn send(&mut self, bytes: Bytes) -> Frame<Bytes> {
        if self.split_writes && bytes.len() > 1 {
            let at = split_point(&bytes);
            let mut first = bytes;
            let second = first.split_off(at);
            self.second_half = Some((second, true));
            self.last_write = Instant::now();
            return Frame::data(first);
        }
        self.hand_over(bytes)
    }

    /// Hands over an event's last bytes and stamps it.
    fn hand_over(&mut self, bytes: Bytes) -> Frame<Bytes> {
        let now = Instant::now();
        self.last_write = now;
        if let (Some(tokens), Some(record)) = (self.unstamped_tokens.take(), self.record.as_mut()) {
            record.push_event(self.arrival, now, tokens);
        }
        Frame::data(bytes)
    }

    fn finish(&mut self, completed: bool) {
        if let Some(blocks) = self.decode_blocks.take()
            && completed
        {
            self.guard.state().cache_decode_blocks(&blocks);
        }
        if let Some(mut record) = self.record.take() {
            record.completed = completed;
            self.guard.state().ground_truth.push(record);
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        // The client went away (or the server stopped) before the end.
        self.finish(false);
    }
}

/// Where to cut an event in two: inside its first multi-byte UTF-8 character if it has one,
/// else in the middle of the line.
pub(crate) fn split_point(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|b| *b >= 0x80)
        .map_or(bytes.len() / 2, |start| start + 1)
        .clamp(1, bytes.len().saturating_sub(1).max(1))
}

#[cfg(test)]
mod tests {
    use super::split_point;

    #[test]
    fn splits_inside_a_multibyte_character() {
        let event = "data: {\"content\":\" café\"}\n\n".as_bytes();
        let at = split_point(event);
        assert!(
            std::str::from_utf8(&event[..at]).is_err(),
            "cut must fall inside é"
        );
        assert_eq!(split_point(b"data: abcd\n\n"), 6);
    }
}
