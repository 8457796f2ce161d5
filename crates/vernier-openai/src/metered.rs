//! Adapters from stream events to `vernier-meter` (feature `meter`), and the one metered
//! stream every tool uses: [`MeteredStream`].

use std::time::Instant;

use vernier_meter::{Final, LlamaTimings, Measurement, Meter, Observation};

use crate::{ChatAccumulator, ChatRequest, ChatStream, Client, ClientError, StampedChunk};

/// Events the meter reserves room for when the request names no token budget.
const DEFAULT_EXPECTED_EVENTS: u64 = 256;
/// The most events reserved up front; a longer stream grows the buffer once in a while.
const MAX_RESERVED_EVENTS: u64 = 65_536;
/// Room beyond the budget: the role chunk, the usage chunk, keep-alive-free extras.
const EXTRA_EVENTS: usize = 16;

/// A [`ChatStream`] whose every event is observed by a [`Meter`] on its way to the caller.
///
/// The caller drives it with [`next_event`](Self::next_event) (and may wrap each call, as the
/// sweep does with its watchdog), then calls [`finish`](Self::finish) for the
/// [`Measurement`]. What a broken stream yields is decided here, once, for every tool:
///
/// - the error is handed to the caller by `next_event`, and the stream ends;
/// - `finish` still measures the events that arrived, ends the measurement at the instant the
///   stream ended (never at the moment `finish` happens to be called), and adds a warning that
///   the stream broke off; [`Metered::broken`] says so in a field.
#[derive(Debug)]
pub struct MeteredStream {
    stream: ChatStream,
    meter: Meter,
    requested_max_tokens: Option<u64>,
    last_event_at: Instant,
    broken: bool,
}

/// A finished [`MeteredStream`]: the measurement, the sum of the events, and whether the
/// stream broke off before its end.
#[derive(Debug)]
#[non_exhaustive]
pub struct Metered {
    /// What the meter measured (over the events that arrived, when broken).
    pub measurement: Measurement,
    /// Content, reasoning, tool calls, usage and finish reason of the events that arrived.
    pub accumulated: ChatAccumulator,
    /// True when the stream ended with an error rather than `[DONE]` or a clean end.
    pub broken: bool,
    /// The response byte for byte, with [`MeteredStream::capture_body`].
    pub capture: Option<crate::Capture>,
}

impl MeteredStream {
    /// Meters `stream`, whose request asked for at most `requested_max_tokens` (used to size
    /// the meter's buffer and to flag completions of another length).
    pub fn new(stream: ChatStream, requested_max_tokens: Option<u64>) -> Self {
        let expected = requested_max_tokens
            .unwrap_or(DEFAULT_EXPECTED_EVENTS)
            .min(MAX_RESERVED_EVENTS);
        let expected = usize::try_from(expected)
            .unwrap_or(usize::MAX)
            .saturating_add(EXTRA_EVENTS);
        let mut meter = Meter::new(stream.request_sent_at(), expected);
        meter.headers_received(stream.headers_at());
        let last_event_at = stream.headers_at();
        Self {
            stream,
            meter,
            requested_max_tokens,
            last_event_at,
            broken: false,
        }
    }

    /// The next event, observed by the meter first; `None` at the end of the stream and after
    /// an error (the error itself is returned once).
    pub async fn next_event(&mut self) -> Option<Result<StampedChunk, ClientError>> {
        if self.broken {
            return None;
        }
        match self.stream.next_event().await? {
            Ok(event) => {
                self.meter.observe(&observation(&event));
                self.last_event_at = event.arrived_at;
                Some(Ok(event))
            }
            Err(error) => {
                self.broken = true;
                Some(Err(error))
            }
        }
    }

    /// The next event's [`Observation`], observed by the meter first; `None` at the end of
    /// the stream and after an error (the error itself is returned once).
    ///
    /// It sums the stream as [`next_event`](Self::next_event) does, but hands out no chunk:
    /// where a chunk holds only what the meter and the accumulator use (text, reasoning, role,
    /// finish reason, token ids, usage), it is read borrowed from the event's text, with no
    /// allocation and nothing to move; any other chunk is read whole. For a caller that needs
    /// the counts and the sum, not each chunk, this is the cheaper way to read a stream.
    pub async fn next_observation(&mut self) -> Option<Result<Observation, ClientError>> {
        if self.broken {
            return None;
        }
        match self.stream.next_seen().await? {
            Ok(seen) => {
                let observation = seen_observation(&seen);
                self.meter.observe(&observation);
                self.last_event_at = seen.arrived_at;
                Some(Ok(observation))
            }
            Err(error) => {
                self.broken = true;
                Some(Err(error))
            }
        }
    }

    /// Keeps the response byte for byte, every body frame with its arrival (off by default);
    /// [`Metered::capture`] holds it.
    pub fn capture_body(&mut self) {
        self.stream.capture_body();
    }

    /// The stream underneath: its send instant, headers and events so far.
    pub fn stream(&self) -> &ChatStream {
        &self.stream
    }

    /// The sum of the events so far.
    pub fn accumulated(&self) -> &ChatAccumulator {
        self.stream.accumulated()
    }

    /// Measures what arrived. See the type's documentation for a broken stream.
    pub fn finish(mut self) -> Metered {
        let completed_at = self.stream.finished_at().unwrap_or(self.last_event_at);
        let mut counts = final_counts(self.stream.accumulated(), completed_at);
        if let Some(max_tokens) = self.requested_max_tokens {
            counts = counts.with_requested_max_tokens(max_tokens);
        }
        let mut measurement = self.meter.finish(&counts);
        if self.broken {
            measurement.warnings.push(format!(
                "the stream broke off after {} events; the figures cover only what arrived",
                self.stream.events_received()
            ));
        }
        let capture = self.stream.take_capture();
        Metered {
            measurement,
            capture,
            accumulated: self.stream.into_accumulated(),
            broken: self.broken,
        }
    }
}

impl Client {
    /// Opens a streamed chat completion and meters it ([`MeteredStream`]); the requested
    /// budget is the request's `max_tokens`, or else its `max_completion_tokens`.
    pub async fn metered_chat_stream(
        &self,
        request: &ChatRequest,
    ) -> Result<MeteredStream, ClientError> {
        let stream = self.chat_stream(request).await?;
        let requested = request.max_tokens.or(request.max_completion_tokens);
        Ok(MeteredStream::new(stream, requested))
    }

    /// Streams `request` to its end through a [`MeteredStream`] and measures it. A stream that
    /// breaks off is still measured (see [`MeteredStream`]); its error comes back beside the
    /// result. Only a stream that fails to open is an `Err`.
    pub async fn measure_chat(
        &self,
        request: &ChatRequest,
    ) -> Result<(Metered, Option<ClientError>), ClientError> {
        let mut stream = self.metered_chat_stream(request).await?;
        let mut stream_error = None;
        while let Some(event) = stream.next_observation().await {
            if let Err(error) = event {
                stream_error = Some(error);
            }
        }
        Ok((stream.finish(), stream_error))
    }
}

fn saturating_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The meter's view of one stamped chat chunk: arrival instant, content, reasoning and
/// tool-call bytes, token ids, per-chunk usage and logprob entries when present.
pub fn observation(chunk: &StampedChunk) -> Observation {
    seen_observation(&crate::stream::Seen::of_chunk(chunk))
}

/// The one mapping of an event's counts onto the meter, for whole and lean chunks alike.
fn seen_observation(seen: &crate::stream::Seen) -> Observation {
    let mut observation = Observation::new(seen.arrived_at)
        .with_content_bytes(saturating_u32(seen.content_bytes))
        .with_reasoning_bytes(saturating_u32(seen.reasoning_bytes))
        .with_tool_call_bytes(saturating_u32(seen.tool_call_bytes));
    if let Some(n) = seen.token_ids {
        observation = observation.with_token_ids(saturating_u32(n));
    }
    if let Some(n) = seen.cumulative_completion_tokens {
        observation = observation.with_cumulative_completion_tokens(n);
    }
    if let Some(n) = seen.logprob_tokens {
        observation = observation.with_logprob_tokens(saturating_u32(n));
    }
    if let Some(read_at) = seen.read_at {
        observation = observation.with_kernel_rx(read_at);
    }
    if let Some(seq) = seen.read_seq {
        observation = observation.with_read_seq(seq);
    }
    observation
}

/// What the meter needs once the stream ended: the last usage (completion, prompt, cached and
/// reasoning tokens), llama.cpp timings when complete, and the finish reason.
pub fn final_counts(accumulated: &ChatAccumulator, completed_at: Instant) -> Final {
    let mut counts = Final::new(completed_at);
    if let Some(usage) = accumulated.usage() {
        counts = counts
            .with_usage_completion_tokens(usage.completion_tokens)
            .with_usage_prompt_tokens(usage.prompt_tokens);
        if let Some(cached) = usage.cached_tokens() {
            counts = counts.with_cached_prompt_tokens(cached);
        }
        if let Some(reasoning) = usage.reasoning_tokens() {
            counts = counts.with_reasoning_tokens(reasoning);
        }
    }
    if let Some(timings) = accumulated.timings()
        && let (Some(prompt_n), Some(prompt_ms), Some(predicted_n), Some(predicted_ms)) = (
            timings.prompt_n,
            timings.prompt_ms,
            timings.predicted_n,
            timings.predicted_ms,
        )
    {
        counts = counts.with_llama_timings(LlamaTimings::new(
            prompt_n,
            prompt_ms,
            predicted_n,
            predicted_ms,
        ));
    }
    if let Some(reason) = accumulated.finish_reason() {
        counts = counts.with_finish_reason(reason);
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChatChunk;

    #[test]
    fn chunk_and_accumulator_map_onto_the_meter() {
        let json = r#"{"choices":[{"index":0,"delta":{"content":"héllo","reasoning_content":"ab"},"token_ids":[1,2],
            "logprobs":{"content":[{"token":"h","logprob":-0.1},{"token":"ello","logprob":-0.2}]},"finish_reason":"length"}],
            "usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":4}},
            "timings":{"prompt_n":3,"prompt_ms":1.5,"predicted_n":2,"predicted_ms":10.0}}"#;
        let chunk: ChatChunk = serde_json::from_str(json).expect("chunk");
        let at = Instant::now();
        let mut stamped = StampedChunk::new(at, chunk, json.len());
        let observation = observation(&stamped);
        assert_eq!((observation.read_at, observation.read_seq), (None, None));
        // A kernel-stamped event carries our read instant and the read's number along.
        let read_at = at + std::time::Duration::from_micros(40);
        stamped.read_at = Some(read_at);
        stamped.read_seq = Some(7);
        let kernel = super::observation(&stamped);
        assert_eq!(
            (kernel.at, kernel.read_at, kernel.read_seq),
            (at, Some(read_at), Some(7))
        );
        assert_eq!(
            (observation.content_bytes, observation.reasoning_bytes),
            (6, 2)
        );
        assert_eq!(observation.token_ids, Some(2));
        assert_eq!(observation.logprob_tokens, Some(2));
        assert_eq!(observation.cumulative_completion_tokens, Some(2));
        let mut accumulated = ChatAccumulator::new();
        accumulated.push(&stamped.chunk);
        let counts = final_counts(&accumulated, at);
        assert_eq!(counts.usage_completion_tokens, Some(2));
        assert_eq!(counts.cached_prompt_tokens, Some(4));
        assert_eq!(
            counts.llama_timings.map(|timings| timings.predicted_n),
            Some(2)
        );
        assert_eq!(counts.finish_reason.as_deref(), Some("length"));
    }
}
