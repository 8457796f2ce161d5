//! What the meter consumes: one [`Observation`] per stream event and one [`Final`] per request.

use std::time::Instant;

/// One stream event as it arrived: when its last byte was read and what it carried.
///
/// Build it with [`Observation::new`] and the `with_*` setters. Byte counts are the UTF-8
/// lengths of the delta's `content`, reasoning (`reasoning_content` / `reasoning`) and tool-call
/// fragments. The token fields are `None` when the server did not say.
///
/// An observation is *token-bearing* when it carries any bytes or a positive token count
/// (token ids or logprob entries). A role-only chunk, a usage-only chunk or a keep-alive is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Observation {
    /// When the event's final byte was read from the socket.
    pub at: Instant,
    /// UTF-8 bytes of answer content in this event.
    pub content_bytes: u32,
    /// UTF-8 bytes of reasoning text in this event.
    pub reasoning_bytes: u32,
    /// UTF-8 bytes of tool-call fragments (name and arguments) in this event.
    pub tool_call_bytes: u32,
    /// Number of generated token ids in this event (vLLM `return_token_ids`).
    pub token_ids: Option<u32>,
    /// Cumulative completion tokens reported in this event (`continuous_usage_stats`).
    pub cumulative_completion_tokens: Option<u64>,
    /// Entries in this event's `logprobs.content`.
    pub logprob_tokens: Option<u32>,
    /// When our task read the event, where `at` is the kernel's receive time of the socket
    /// read that completed it (`None`: `at` is our read instant).
    pub read_at: Option<Instant>,
    /// The number of the socket read that completed the event, when the reads are numbered:
    /// token-bearing events that share one arrived in one read (a coalesced read).
    pub read_seq: Option<u64>,
}

impl Observation {
    /// An event at `at` carrying nothing yet (a role-only chunk or keep-alive until set).
    #[must_use]
    pub const fn new(at: Instant) -> Self {
        Self {
            at,
            content_bytes: 0,
            reasoning_bytes: 0,
            tool_call_bytes: 0,
            token_ids: None,
            cumulative_completion_tokens: None,
            logprob_tokens: None,
            read_at: None,
            read_seq: None,
        }
    }

    /// Marks `at` as the kernel's receive time of the read that completed the event, which
    /// our task read at `read_at`.
    #[must_use]
    pub const fn with_kernel_rx(mut self, read_at: Instant) -> Self {
        self.read_at = Some(read_at);
        self
    }

    /// Sets the number of the socket read that completed the event.
    #[must_use]
    pub const fn with_read_seq(mut self, seq: u64) -> Self {
        self.read_seq = Some(seq);
        self
    }

    /// Sets the answer content bytes.
    #[must_use]
    pub const fn with_content_bytes(mut self, bytes: u32) -> Self {
        self.content_bytes = bytes;
        self
    }

    /// Sets the reasoning bytes.
    #[must_use]
    pub const fn with_reasoning_bytes(mut self, bytes: u32) -> Self {
        self.reasoning_bytes = bytes;
        self
    }

    /// Sets the tool-call fragment bytes.
    #[must_use]
    pub const fn with_tool_call_bytes(mut self, bytes: u32) -> Self {
        self.tool_call_bytes = bytes;
        self
    }

    /// Sets the number of token ids the event carried.
    #[must_use]
    pub const fn with_token_ids(mut self, n_token_ids: u32) -> Self {
        self.token_ids = Some(n_token_ids);
        self
    }

    /// Sets the cumulative completion tokens from per-chunk usage.
    #[must_use]
    pub const fn with_cumulative_completion_tokens(mut self, tokens: u64) -> Self {
        self.cumulative_completion_tokens = Some(tokens);
        self
    }

    /// Sets the number of logprob entries the event carried.
    #[must_use]
    pub const fn with_logprob_tokens(mut self, n_logprobs: u32) -> Self {
        self.logprob_tokens = Some(n_logprobs);
        self
    }

    /// Whether the event carried generated output: any bytes, token ids or logprob entries.
    #[must_use]
    pub const fn is_token_bearing(&self) -> bool {
        self.content_bytes > 0
            || self.reasoning_bytes > 0
            || self.tool_call_bytes > 0
            || matches!(self.token_ids, Some(n) if n > 0)
            || matches!(self.logprob_tokens, Some(n) if n > 0)
    }

    /// Whether the event carried answer content or a tool-call fragment (not reasoning).
    #[must_use]
    pub const fn is_content_bearing(&self) -> bool {
        self.content_bytes > 0 || self.tool_call_bytes > 0
    }
}

/// llama.cpp's per-request `timings` object (only the fields the meter uses).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LlamaTimings {
    /// Prompt tokens evaluated (cached tokens excluded).
    pub prompt_n: u64,
    /// Milliseconds spent evaluating the prompt.
    pub prompt_ms: f64,
    /// Tokens generated.
    pub predicted_n: u64,
    /// Milliseconds spent generating.
    pub predicted_ms: f64,
}

impl LlamaTimings {
    /// Timings as llama.cpp reports them.
    #[must_use]
    pub const fn new(prompt_n: u64, prompt_ms: f64, predicted_n: u64, predicted_ms: f64) -> Self {
        Self {
            prompt_n,
            prompt_ms,
            predicted_n,
            predicted_ms,
        }
    }
}

/// What is known once the stream has ended: the final usage and how the request ended.
///
/// Every count is `None` when the server did not report it. For a stream that broke off, use
/// `Final::new(at)` alone: the meter still measures what arrived.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Final {
    /// When the stream ended (the `[DONE]` marker, the end of the body, or the error).
    pub completed_at: Instant,
    /// `usage.completion_tokens` of the final usage object.
    pub usage_completion_tokens: Option<u64>,
    /// `usage.prompt_tokens` of the final usage object.
    pub usage_prompt_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens`.
    pub cached_prompt_tokens: Option<u64>,
    /// `usage.completion_tokens_details.reasoning_tokens`.
    pub reasoning_tokens: Option<u64>,
    /// llama.cpp's `timings`, when present.
    pub llama_timings: Option<LlamaTimings>,
    /// The last `finish_reason` seen (`stop`, `length`, `tool_calls`, ...).
    pub finish_reason: Option<String>,
    /// The `max_tokens` the request asked for, to flag outputs of another length.
    pub requested_max_tokens: Option<u64>,
}

impl Final {
    /// A stream that ended at `completed_at` with nothing else known.
    #[must_use]
    pub const fn new(completed_at: Instant) -> Self {
        Self {
            completed_at,
            usage_completion_tokens: None,
            usage_prompt_tokens: None,
            cached_prompt_tokens: None,
            reasoning_tokens: None,
            llama_timings: None,
            finish_reason: None,
            requested_max_tokens: None,
        }
    }

    /// Sets `usage.completion_tokens`.
    #[must_use]
    pub const fn with_usage_completion_tokens(mut self, tokens: u64) -> Self {
        self.usage_completion_tokens = Some(tokens);
        self
    }

    /// Sets `usage.prompt_tokens`.
    #[must_use]
    pub const fn with_usage_prompt_tokens(mut self, tokens: u64) -> Self {
        self.usage_prompt_tokens = Some(tokens);
        self
    }

    /// Sets `usage.prompt_tokens_details.cached_tokens`.
    #[must_use]
    pub const fn with_cached_prompt_tokens(mut self, tokens: u64) -> Self {
        self.cached_prompt_tokens = Some(tokens);
        self
    }

    /// Sets `usage.completion_tokens_details.reasoning_tokens`.
    #[must_use]
    pub const fn with_reasoning_tokens(mut self, tokens: u64) -> Self {
        self.reasoning_tokens = Some(tokens);
        self
    }

    /// Sets llama.cpp's `timings`.
    #[must_use]
    pub const fn with_llama_timings(mut self, timings: LlamaTimings) -> Self {
        self.llama_timings = Some(timings);
        self
    }

    /// Sets the finish reason.
    #[must_use]
    pub fn with_finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    /// Sets the requested `max_tokens`.
    #[must_use]
    pub const fn with_requested_max_tokens(mut self, max_tokens: u64) -> Self {
        self.requested_max_tokens = Some(max_tokens);
        self
    }
}
