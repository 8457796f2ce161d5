//! An OpenAI-protocol client built for measuring inference servers.
//!
//! - [`Client`] (configured with [`ClientBuilder`]) talks to vLLM, llama.cpp's server, `SGLang`
//!   or a hosted API: chat and legacy completions, streamed ([`ChatStream`],
//!   [`CompletionStream`]) or not, plus `/v1/models`, `/tokenize`, `/metrics` and server
//!   identity.
//! - Every streamed event comes as a [`StampedChunk`] holding the [`Instant`](std::time::Instant)
//!   its last byte was read: the body is polled directly, no relay task sits between the socket
//!   and the stamp. The stream also knows when the request's first byte was written
//!   ([`ChatStream::request_sent_at`]) and when the headers arrived.
//! - Each request opens its own connection (`TCP_NODELAY`, request head and body in one write),
//!   so no pool or Nagle delay skews the timing.
//! - [`SseDecoder`] decodes any split of the byte stream into identical events, with a bounded
//!   line length; [`ChatAccumulator`] sums chunks (reasoning apart from content, tool calls
//!   assembled from fragments).
//! - Request and response types keep unknown fields in `extra`, so vendor extensions pass
//!   through.
//!
//! ```no_run
//! use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder, StreamOptions};
//!
//! # async fn run() -> Result<(), vernier_openai::ClientError> {
//! let client = ClientBuilder::new("http://127.0.0.1:8000/v1").build()?;
//! let mut request = ChatRequest::new("my-model", vec![ChatMessage::user("Say hello.")]);
//! request.max_tokens = Some(32);
//! request.stream_options = Some(StreamOptions::usage(false));
//! let mut stream = client.chat_stream(&request).await?;
//! while let Some(event) = stream.next_event().await {
//!     let event = event?;
//!     let since_send = event.arrived_at - stream.request_sent_at();
//!     let _ = (since_send, event.chunk.content_len());
//! }
//! let answer = stream.accumulated();
//! assert!(answer.finish_reason().is_some());
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod accumulator;
mod chat;
mod client;
mod completion;
mod context;
mod deadline;
mod endpoints;
mod envelope;
mod error;
mod h1;
mod kernel_stamps;
mod lean;
mod media;
#[cfg(feature = "meter")]
mod metered;
mod metrics;
mod proxy;
mod rate_limit;
mod server_metrics;
mod sse;
mod stream;
mod transport;
mod url_parts;
mod usage;

pub use accumulator::{ChatAccumulator, ToolCall};
pub use chat::{
    ChatChoice, ChatChunk, ChatMessage, ChatRequest, ChatResponse, ChoiceLogprobs, ChunkChoice,
    Delta, FunctionCall, FunctionDef, FunctionDelta, MessageContent, MessageToolCall,
    StreamOptions, TokenLogprob, Tool, ToolCallDelta,
};
pub use client::{Client, ClientBuilder, Timeouts};
pub use completion::{
    CompletionChoice, CompletionChunk, CompletionPrompt, CompletionRequest, CompletionResponse,
};
pub use context::{
    ContextLimit, SharedCapacity, context_limit, is_context_exceeded, is_shared_capacity_exceeded,
    says_context_exceeded, shared_capacity,
};
pub use deadline::LazyTimer;
pub use endpoints::{ModelInfo, ModelStatements, ServerIdentity, ServerKind, Tokenized};
pub use envelope::ResponseEnvelope;
pub use error::{BoxError, ClientError, TimeoutKind};
pub use kernel_stamps::kernel_rx_available;
pub use media::{
    is_media_unsupported, is_response_format_unsupported, is_tools_unsupported,
    says_media_unsupported, says_response_format_unsupported, says_tools_unsupported,
};
#[cfg(feature = "meter")]
pub use metered::{Metered, MeteredStream, final_counts, observation};
pub use metrics::{MetricsSnapshot, Sample};
pub use rate_limit::{REFUSABLE_FIELDS, is_rate_limited, refused_field, retry_after};
pub use server_metrics::{
    KNOWN_METRICS, KvCacheStated, MetricNames, ServerLoad, generation_counter,
    generation_metric_names, kv_cache_stated, load_metric_names, metric_sums, server_load,
    spec_decode_counters,
};
pub use sse::{DEFAULT_MAX_LINE_BYTES, SseDecoder, SseEvent};
pub use stream::{Capture, CapturedRead, ChatStream, CompletionStream, StampedChunk};
pub use usage::{CompletionTokensDetails, PromptTokensDetails, Timings, Usage};

#[cfg(test)]
mod tests {
    #[test]
    fn client_and_streams_cross_threads() {
        fn shareable<T: Clone + Send + Sync + std::fmt::Debug>() {}
        fn sendable<T: Send>() {}
        shareable::<crate::Client>();
        sendable::<crate::ChatStream>();
        sendable::<crate::CompletionStream>();
        sendable::<crate::ClientError>();
    }
}
