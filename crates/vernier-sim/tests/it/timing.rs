//! Timing: the ground truth must match what a correct client measures. These are the timed
//! assertions the simulator exists for, with the tolerance its contract states (1%).

use std::time::Duration;

use vernier_sim::TokensPerEvent;

use crate::{post_chat, start, token_chunks};

#[tokio::test]
async fn client_decode_rate_matches_ground_truth_within_one_percent() {
    for tokens_per_event in 1..=4_u32 {
        let config = vernier_sim::SimConfig::builder()
            .tokens_per_event(TokensPerEvent::Fixed(tokens_per_event))
            .decode_step(Duration::from_millis(10))
            .build();
        let sim = start(config).await;
        let max_tokens = 100 * tokens_per_event;
        let response = post_chat(sim.addr(), "Tell me a story.", max_tokens).await;
        let chunks = response.chunks();
        let token_events: Vec<_> = response
            .data_events()
            .into_iter()
            .filter(|e| e.data != "[DONE]")
            .zip(&chunks)
            .filter(|(_, chunk)| token_chunks(std::slice::from_ref(chunk)).len() == 1)
            .map(|(event, _)| event.at)
            .collect();
        assert_eq!(token_events.len(), 100);
        let span = token_events[99]
            .duration_since(token_events[0])
            .as_secs_f64();
        let measured = f64::from(max_tokens - tokens_per_event) / span;
        let truth = sim.ground_truth();
        let expected = truth[0].true_decode_tokens_per_s.expect("decode rate");
        let nominal = f64::from(tokens_per_event) / 0.010;
        assert!(
            (measured - expected).abs() / expected < 0.01,
            "k={tokens_per_event}: client {measured:.2} tok/s vs ground truth {expected:.2}"
        );
        // The simulator's own schedule holds too (sleep granularity is about 1 ms per event,
        // not cumulative, over a 990 ms span).
        assert!(
            (expected - nominal).abs() / nominal < 0.01,
            "k={tokens_per_event}: {expected} vs {nominal}"
        );
        // TTFT covers the modelled prefill (5 ms overhead + prompt at 5000 tok/s).
        let ttft = token_events[0]
            .duration_since(response.sent_at)
            .as_secs_f64()
            * 1e3;
        assert!(
            ttft >= truth[0].prefill_ms,
            "ttft {ttft} ms < prefill {} ms",
            truth[0].prefill_ms
        );
    }
}
