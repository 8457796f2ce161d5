//! The meter end to end: vernier-openai over real loopback HTTP against vernier-sim, compared
//! with the simulator's own ground truth.

mod accuracy;

use std::time::{Duration, Instant};

use vernier_meter::{Measurement, Meter};
use vernier_openai::{
    ChatMessage, ChatRequest, ClientBuilder, StreamOptions, final_counts, observation,
};
use vernier_sim::{GroundTruth, Sim, SimConfigBuilder, SimHandle};

/// Tokens requested in every test: divisible by 1, 2, 3 and 4, so every event carries exactly
/// the configured tokens.
pub(crate) const MAX_TOKENS: u64 = 240;

/// Decode step: long enough that scheduling jitter of a few milliseconds stays far below 1%.
pub(crate) const DECODE_STEP: Duration = Duration::from_millis(20);

/// What one request asks of the simulator.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ask {
    pub(crate) token_ids: bool,
    pub(crate) continuous_usage: bool,
    pub(crate) include_usage: bool,
}

pub(crate) async fn start(config: SimConfigBuilder) -> SimHandle {
    Sim::start(config.decode_step(DECODE_STEP).build())
        .await
        .expect("the simulator starts on loopback")
}

/// Streams one chat request to `sim` and measures it the way the `measure` example does.
pub(crate) async fn measure(sim: &SimHandle, ask: Ask) -> Measurement {
    let client = ClientBuilder::new(&sim.base_url())
        .build()
        .expect("client for the simulator");
    let mut request = ChatRequest::new(
        "vernier-sim",
        vec![ChatMessage::user(
            "Tell me about lighthouses and the tides.",
        )],
    );
    request.max_tokens = Some(MAX_TOKENS);
    if ask.include_usage || ask.continuous_usage {
        request.stream_options = Some(StreamOptions::usage(ask.continuous_usage));
    }
    if ask.token_ids {
        request = request.with_extra("return_token_ids", true);
    }
    let mut stream = client.chat_stream(&request).await.expect("stream opens");
    let mut meter = Meter::new(stream.request_sent_at(), 256);
    meter.headers_received(stream.headers_at());
    while let Some(event) = stream.next_event().await {
        meter.observe(&observation(&event.expect("a well-formed event")));
    }
    let completed_at = stream.finished_at().unwrap_or_else(Instant::now);
    meter.finish(
        &final_counts(stream.accumulated(), completed_at).with_requested_max_tokens(MAX_TOKENS),
    )
}

/// The simulator's record of the only request it served.
pub(crate) fn only_ground_truth(sim: &SimHandle) -> GroundTruth {
    let mut records = sim.ground_truth();
    assert_eq!(records.len(), 1, "expected one request in the ground truth");
    records.remove(0)
}

/// Relative difference `|actual − expected| / expected`.
pub(crate) fn relative_error(actual: f64, expected: f64) -> f64 {
    (actual - expected).abs() / expected
}
