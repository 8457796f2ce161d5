//! Token-accurate measurement of one streamed LLM response.
//!
//! `vernier-meter` has no HTTP dependency: feed it plain [`Observation`]s (when each stream event
//! arrived and what it carried) and a [`Final`] (the final usage and how the stream ended), and
//! it returns a [`Measurement`]: TTFT from the first *token-bearing* event (a role-only chunk
//! does not count), time to first byte and to first content, decode rate from token counts
//! rather than event counts, prefill rate, inter-token latency per token, tokens per event, the
//! rate an event-counting tool would report, and which [`TokenSource`] the counts came from.
//!
//! Token sources, best first: per-chunk token ids, per-chunk cumulative usage, logprobs,
//! llama.cpp `timings`, final usage, and the event count (flagged as a lower bound). Every other
//! source present is cross-checked against the best one ([`CrossCheck`]) and disagreement is
//! reported in [`Measurement::warnings`].
//!
//! [`Meter::observe`] does not allocate while within the capacity given to [`Meter::new`].
//!
//! # Example
//!
//! ```
//! use std::time::{Duration, Instant};
//! use vernier_meter::{Final, Meter, Observation, TokenSource};
//!
//! let sent = Instant::now();
//! let at = |ms: u64| sent + Duration::from_millis(ms);
//! let mut meter = Meter::new(sent, 8);
//! meter.headers_received(at(5));
//! meter.observe(&Observation::new(at(6))); // role-only chunk: not a token
//! for ms in [100, 120, 140, 160] {
//!     // Each event carries 3 tokens (12 bytes of text), as with speculative decoding.
//!     meter.observe(&Observation::new(at(ms)).with_content_bytes(12).with_token_ids(3));
//! }
//! let measurement = meter.finish(&Final::new(at(161)).with_usage_completion_tokens(12));
//! assert_eq!(measurement.token_source, TokenSource::TokenIds);
//! assert_eq!(measurement.ttft_ms, Some(100.0));
//! // 9 tokens after the first event over 60 ms: 150 tokens/s; an event counter says 50/s.
//! let decode = measurement.decode_tokens_per_s.expect("four token-bearing events");
//! let event_rate = measurement.event_rate_per_s.expect("four token-bearing events");
//! assert!((decode - 150.0).abs() < 1e-9);
//! assert!((event_rate - 50.0).abs() < 1e-9);
//! ```
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod measurement;
mod meter;
mod observation;
mod summary;

pub use measurement::{
    CrossCheck, EventClock, LatencySummary, Measurement, TokenSource, TokensPerEventHistogram,
};
pub use meter::Meter;
pub use observation::{Final, LlamaTimings, Observation};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
