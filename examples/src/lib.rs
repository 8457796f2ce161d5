//! Support shared by the examples in `examples/` and their tests.
//!
//! [`measure_chat_stream`] is the loop that joins the crates: stream a chat request with
//! `vernier-openai`, feed every stamped event to a `vernier-meter` [`Meter`] as it arrives, and
//! finish with the stream's final counts.

use std::time::Instant;

use vernier_meter::{Measurement, Meter};
use vernier_openai::{ChatRequest, Client, Error, final_counts, observation};

/// Streams `request` on `client`, feeding every event to a [`Meter`], and measures it.
///
/// A stream that breaks off is still measured, from the events that arrived; its error comes
/// back beside the measurement. Only a stream that fails to open is an `Err`.
///
/// # Errors
///
/// The error of [`Client::chat_stream`] when the stream does not open.
pub async fn measure_chat_stream(
    client: &Client,
    request: &ChatRequest,
) -> Result<(Measurement, Option<Error>), Error> {
    let mut stream = client.chat_stream(request).await?;
    let max_tokens = request.max_tokens.unwrap_or(256);
    let expected_events = usize::try_from(max_tokens)
        .unwrap_or(usize::MAX)
        .saturating_add(8);
    let mut meter = Meter::new(stream.request_sent_at(), expected_events);
    meter.headers_received(stream.headers_at());
    let mut stream_error = None;
    while let Some(event) = stream.next_event().await {
        match event {
            Ok(event) => meter.observe(&observation(&event)),
            Err(error) => {
                stream_error = Some(error);
                break;
            }
        }
    }
    let completed_at = stream.finished_at().unwrap_or_else(Instant::now);
    let mut final_state = final_counts(stream.accumulated(), completed_at);
    if let Some(max_tokens) = request.max_tokens {
        final_state = final_state.with_requested_max_tokens(max_tokens);
    }
    Ok((meter.finish(&final_state), stream_error))
}
