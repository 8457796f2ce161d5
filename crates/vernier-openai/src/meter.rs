//! Adapters from stream events to `vernier-meter` (feature `meter`).

use std::time::Instant;

use vernier_meter::{Final, LlamaTimings, Observation};

use crate::{ChatAccumulator, StampedChunk};

fn saturating_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The meter's view of one stamped chat chunk: arrival instant, content, reasoning and
/// tool-call bytes, token ids, per-chunk usage and logprob entries when present.
pub fn observation(chunk: &StampedChunk) -> Observation {
    let event = &chunk.chunk;
    let mut observation = Observation::new(chunk.arrived_at)
        .with_content_bytes(saturating_u32(event.content_len()))
        .with_reasoning_bytes(saturating_u32(event.reasoning_len()))
        .with_tool_call_bytes(saturating_u32(event.tool_call_len()));
    if let Some(n) = event.token_id_count() {
        observation = observation.with_token_ids(saturating_u32(n));
    }
    if let Some(usage) = &event.usage {
        observation = observation.with_cumulative_completion_tokens(usage.completion_tokens);
    }
    if let Some(n) = event.logprob_count() {
        observation = observation.with_logprob_tokens(saturating_u32(n));
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
        let stamped = StampedChunk {
            arrived_at: at,
            chunk,
            n_bytes: json.len(),
        };
        let observation = observation(&stamped);
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
