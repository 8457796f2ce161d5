//! Fields a server may refuse, and what the run loses without each. A refused field is
//! detected once (a `400` naming it), dropped for the rest of the run, journaled, and named in
//! the report beside the guarantee it carried.

/// Each field the sweep sends that a server may refuse, and the guarantee lost without it.
pub(crate) const REFUSABLE: [(&str, &str); 7] = [
    (
        "cache_salt",
        "prefix cache salted per request (the opening nonce still defeats the cache)",
    ),
    (
        "cache_prompt",
        "llama.cpp's cache_prompt: false (the opening nonce still defeats the cache)",
    ),
    ("ignore_eos", "output length not forced"),
    ("min_tokens", "output length not forced"),
    (
        "return_token_ids",
        "no per-chunk token ids: tokens come from the next best source",
    ),
    (
        "continuous_usage_stats",
        "no per-chunk usage: tokens come from the next best source",
    ),
    (
        "max_tokens",
        "none: the output cap is sent as max_completion_tokens instead",
    ),
];

/// The field a `400` body refuses, if it names one the sweep can do without.
pub(crate) fn refused_field(body: &str) -> Option<&'static str> {
    vernier_openai::refused_field(body)
}

/// The guarantee lost when `field` is dropped.
pub(crate) fn guarantee_lost(field: &str) -> &'static str {
    REFUSABLE
        .iter()
        .find(|(name, _)| *name == field)
        .map_or("unknown", |(_, lost)| lost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_of_known_fields_are_recognised_and_other_400s_are_not() {
        // OpenAI's wording for an unknown argument.
        assert_eq!(
            refused_field(
                r#"{"error":{"message":"Unrecognized request argument supplied: cache_salt"}}"#
            ),
            Some("cache_salt")
        );
        // Pydantic's (vLLM with strict request models).
        assert_eq!(
            refused_field(
                r#"{"detail":[{"type":"extra_forbidden","loc":["body","return_token_ids"],"msg":"Extra inputs are not permitted"}]}"#
            ),
            Some("return_token_ids")
        );
        // OpenAI's reasoning models.
        assert_eq!(
            refused_field(
                r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","param":"max_tokens"}}"#
            ),
            Some("max_tokens")
        );
        // A length error names max_tokens too, but refuses no field.
        assert_eq!(
            refused_field(
                r#"{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 9000. This model's maximum context length is 8192 tokens."}}"#
            ),
            None
        );
        assert_eq!(refused_field(r#"{"error":"model not found"}"#), None);
        assert_eq!(guarantee_lost("ignore_eos"), "output length not forced");
    }
}
