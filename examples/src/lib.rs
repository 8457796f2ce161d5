//! Support shared by the examples in `examples/` and their tests.
//!
//! The loop that joins the crates (stream a chat request with `vernier-openai`, feed every
//! stamped event to a `vernier-meter` meter as it arrives, finish with the stream's final
//! counts) is `vernier_openai::Client::measure_chat`, the same metered stream the sweep and the
//! hard suite use.
//!
//! [`pick_generation_model`] and [`max_tokens_rejected`] are the `measure` example's choices,
//! kept here so they are unit-tested.

use vernier_openai::ClientError;

/// Parts of a model id that mark a model which does not generate chat text.
const NOT_GENERATION_MARKERS: [&str; 5] = ["embed", "rerank", "whisper", "tts", "moderation"];

/// The first of `ids` that does not look like an embedding, rerank, speech or moderation model
/// (its id, in any case, contains none of `embed`, `rerank`, `whisper`, `tts`, `moderation`).
///
/// Servers list such models beside chat models, often first; they refuse a chat request.
pub fn pick_generation_model<'a>(ids: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    ids.into_iter().find(|id| {
        let id = id.to_ascii_lowercase();
        !NOT_GENERATION_MARKERS
            .iter()
            .any(|marker| id.contains(marker))
    })
}

/// Whether `error` is the server refusing a request with 400 and a body naming `max_tokens`,
/// as hosted models that only accept `max_completion_tokens` do.
pub fn max_tokens_rejected(error: &ClientError) -> bool {
    matches!(error, ClientError::Http { status: 400, body, .. } if body.contains("max_tokens"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_model_that_generates_text_is_picked() {
        let ids = [
            "text-embedding-3-small",
            "BAAI/bge-reranker-v2-m3",
            "whisper-large-v3",
            "tts-1-hd",
            "omni-moderation-latest",
            "nomic-Embed-text",
            "Qwen/Qwen3-8B",
            "gpt-4o-mini",
        ];
        assert_eq!(pick_generation_model(ids), Some("Qwen/Qwen3-8B"));
        assert_eq!(
            pick_generation_model(["llama-3.1-8b", "e5-embed"]),
            Some("llama-3.1-8b")
        );
    }

    #[test]
    fn no_model_is_picked_when_none_generates_text() {
        assert_eq!(pick_generation_model(["bge-EMBED", "rerank-2"]), None);
        assert_eq!(pick_generation_model([]), None);
    }

    #[test]
    fn only_a_400_naming_max_tokens_is_a_max_tokens_rejection() {
        let rejected = |status: u16, body: &str| {
            max_tokens_rejected(&ClientError::Http {
                status,
                body: body.to_owned(),
                retry_after: None,
            })
        };
        let refusal = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","param":"max_tokens"}}"#;
        assert!(rejected(400, refusal));
        assert!(!rejected(429, refusal));
        assert!(!rejected(400, r#"{"error":"unknown model"}"#));
        assert!(!rejected(400, "max_completion_tokens must be at least 1"));
    }
}
