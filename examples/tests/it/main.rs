//! The meter end to end: vernier-openai over real loopback HTTP against vernier-sim, compared
//! with the simulator's own ground truth.

mod accuracy;

use std::time::Duration;

use vernier_meter::Measurement;
use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder, StreamOptions};
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

impl Ask {
    /// Per-chunk token ids and a final usage chunk, what a vLLM server gives when asked for both.
    pub(crate) const TOKEN_IDS_AND_USAGE: Self = Self {
        token_ids: true,
        continuous_usage: false,
        include_usage: true,
    };
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
    let (metered, stream_error) = client.measure_chat(&request).await.expect("stream opens");
    assert!(
        stream_error.is_none(),
        "a well-formed stream: {stream_error:?}"
    );
    assert!(!metered.broken);
    metered.measurement
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
