//! Tool calls drawn for a share of the chat turns that offer tools (see
//! [`SimConfig::tool_call_share`](crate::SimConfig::tool_call_share)).

use vernier_stats::SplitMix64;

use crate::script::{ScriptReply, ScriptToolCall};
use crate::tokenizer::generate_words;

/// Keeps this stream apart from the other seeded draws.
const STREAM: u64 = 0x746f_6f6c_6361_6c6c;

/// A draw stream fixed by the prompt's token ids and the seed alone: the same conversation
/// draws the same, whatever the request's order, its `cache_salt` or the prefix cache.
fn prompt_stream(prompt: &[u32], seed: u64) -> SplitMix64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for token in prompt {
        for byte in token.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    SplitMix64::new(hash ^ seed ^ STREAM)
}

/// The reply when the draw says this turn calls a tool: one call to `tool` with arguments
/// `{"query":"<3 to 6 words>"}` (compact JSON), finish reason `tool_calls`. The draw, uniform
/// in `[0, 1)` from the prompt's tokens and the seed, calls when it is below `share`: never at
/// 0, always at 1. The words come from the same stream, so a conversation's call is the same
/// in every run with the same seed.
pub(crate) fn drawn_tool_call(
    prompt: &[u32],
    seed: u64,
    share: f64,
    tool: &str,
) -> Option<ScriptReply> {
    let mut draw = prompt_stream(prompt, seed);
    if draw.next_f64() >= share {
        return None;
    }
    let words = 3 + usize::try_from(draw.below(4)).unwrap_or(0);
    let query = generate_words(&mut draw, words).join(" ");
    let arguments = serde_json::json!({ "query": query }).to_string();
    Some(ScriptReply::text("").with_tool_call(ScriptToolCall::new(tool, arguments)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_zero_never_calls_and_one_always_does() {
        for n in 0..200_u32 {
            let prompt: Vec<u32> = (0..n).collect();
            assert!(drawn_tool_call(&prompt, 7, 0.0, "search").is_none());
            assert!(drawn_tool_call(&prompt, 7, 1.0, "search").is_some());
        }
    }

    #[test]
    fn the_same_prompt_draws_the_same_call() {
        let prompt: Vec<u32> = (100..164).collect();
        let first = drawn_tool_call(&prompt, 3, 1.0, "search").expect("a call");
        let again = drawn_tool_call(&prompt, 3, 1.0, "search").expect("a call");
        assert_eq!(first, again);
        let call = &first.tool_calls[0];
        assert_eq!(call.name, "search");
        assert_eq!(first.finish_reason(), "tool_calls");
        let arguments: serde_json::Value =
            serde_json::from_str(&call.arguments).expect("arguments are JSON");
        let words = arguments["query"]
            .as_str()
            .expect("a query")
            .split(' ')
            .count();
        assert!((3..=6).contains(&words), "{}", call.arguments);
        assert!(
            !call.arguments.contains(": "),
            "compact JSON: {}",
            call.arguments
        );
        // Decisions at a share in between are a property of the prompt, and about that share.
        let calls = (0..2000_u32)
            .filter(|n| drawn_tool_call(&[*n, 5, 9], 3, 0.3, "search").is_some())
            .count();
        assert!((500..700).contains(&calls), "{calls} of 2000 at 0.3");
        let decisions = |seed| {
            (0..64_u32)
                .map(|n| drawn_tool_call(&[n], seed, 0.5, "search").is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(decisions(3), decisions(3));
        assert_ne!(decisions(3), decisions(4), "the seed changes the draws");
    }
}
