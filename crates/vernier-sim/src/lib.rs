//! A loopback OpenAI-compatible server that imitates vLLM, for testing clients and meters
//! against a server whose every timing and token count is known.
//!
//! It serves `POST /v1/chat/completions` and `POST /v1/completions` (streamed or not),
//! `GET /v1/models`, `POST /tokenize`, `GET /metrics` (vLLM metric names), `GET /version` and
//! `GET /health`. Its timing model: a request waits for a slot ([`SimConfig::max_num_seqs`]),
//! then prefill takes [`SimConfig::fixed_overhead`] plus the uncached prompt tokens at
//! [`SimConfig::prefill_tokens_per_s`]; then every [`SimConfig::decode_step`] one event leaves,
//! carrying [`SimConfig::tokens_per_event`] tokens. Events are scheduled on absolute deadlines
//! (no drift) and the send instant of each is recorded in a [`GroundTruth`] per request.
//!
//! The stream follows vLLM: a role-only first chunk (`content: ""`, not token-bearing) sent as
//! soon as the response starts, token-bearing chunks (`reasoning_content`, then `content`,
//! then tool-call fragments), `finish_reason` on the last of them, an optional usage chunk
//! with `choices: []`, then `data: [DONE]`.
//!
//! Tokens come from [`sim_tokenize`]: one token per match of `\w+|[^\w\s]`. Generated answers
//! are exactly `max_tokens` (or `max_completion_tokens`, default 256) tokens long and end
//! with `finish_reason: "length"`, unless a [`Script`] rule answers, or, for a chat turn that
//! offers tools, a draw under [`SimConfig::tool_call_share`] makes it one tool call. Offered
//! tools and the tool calls in the history count as prompt tokens ([`sim_tools_content`],
//! [`sim_assistant_content`]).
//!
//! The prefix cache (16-token blocks) holds each prompt's full blocks and, once a request
//! has finished, those of its prompt followed by its reply, as vLLM v1 does: the next turn of
//! a conversation, which sends the reply back as an assistant message, hits both.
//!
//! Faults ([`Faults`], or a request's `"sim_fault"` field, see [`Fault`]) turn requests into
//! HTTP errors, dropped connections, stalls, malformed or over-long lines; [`CrashFault`] kills
//! the whole server under a chosen load ([`SimHandle::crashed`] says when, and under what).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), vernier_sim::SimError> {
//! use std::time::Duration;
//! use vernier_sim::{Sim, SimConfig, TokensPerEvent};
//!
//! let config = SimConfig::builder()
//!     .tokens_per_event(TokensPerEvent::Fixed(3))
//!     .decode_step(Duration::from_millis(2))
//!     .build();
//! let sim = Sim::start(config).await?;
//! assert!(sim.base_url().starts_with("http://127.0.0.1:"));
//! // Point a client at sim.base_url() + "/v1/chat/completions", then:
//! assert!(sim.ground_truth().is_empty());
//! sim.shutdown().await;
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod body;
mod config;
mod crash;
mod crash_watch;
mod error;
mod fault;
mod ground_truth;
mod metrics;
mod plan;
mod recall;
mod reply;
mod routes;
mod script;
mod server;
mod shape;
mod state;
mod tokenizer;
mod tools;
mod usage;
mod wire;

pub use config::{Faults, MEDIA_TOKENS, MediaInput, SimConfig, SimConfigBuilder, TokensPerEvent};
pub use crash::{CrashFault, CrashReport, CrashedStream};
pub use error::SimError;
pub use fault::Fault;
pub use ground_truth::GroundTruth;
pub use metrics::SimMetrics;
pub use recall::{Recall, RecallMiss};
pub use script::{Script, ScriptReply, ScriptRule, ScriptToolCall};
pub use server::{Sim, SimHandle};
pub use tokenizer::{
    VOCAB_SIZE, sim_assistant_content, sim_chat_tokenize, sim_tokenize, sim_tools_content, token_id,
};
