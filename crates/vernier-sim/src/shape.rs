//! What shapes a request's answer on the wire: the request's options and the counts its
//! `usage` reports ([`StreamShape`], read by `plan.rs` for the events and by `usage.rs`).

/// The request options that shape the stream.
#[derive(Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one independent request option, as on the wire"
)]
pub(crate) struct StreamShape<'a> {
    pub(crate) id: &'a str,
    pub(crate) model: &'a str,
    pub(crate) created: u64,
    pub(crate) chat: bool,
    pub(crate) include_usage: bool,
    pub(crate) continuous_usage: bool,
    pub(crate) return_token_ids: bool,
    pub(crate) logprobs: bool,
    pub(crate) prompt_tokens: u32,
    pub(crate) cached_tokens: u32,
    /// Prompt tokens this request wrote to the prefix cache (vLLM's `created_cache_tokens`).
    pub(crate) created_cache_tokens: u32,
    /// Prompt tokens of image parts and of video parts, reported in `prompt_tokens_details`.
    pub(crate) media_tokens: (u32, u32),
    pub(crate) prompt_token_ids: &'a [u32],
    /// Whether usage counts reasoning tokens (`completion_tokens_details`), as vLLM's does
    /// only with a reasoning parser: the simulator's counterpart is a reasoning model
    /// ([`SimConfig::reasoning_tokens`](crate::SimConfig::reasoning_tokens)) or a reply with
    /// reasoning.
    pub(crate) reasoning_details: bool,
    /// `system_fingerprint`, on the stream's last chunk.
    pub(crate) fingerprint: &'a str,
}
