//! Simulator settings: timing, tokens per event, faults and the builder.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::crash::CrashFault;
use crate::error::SimError;
use crate::fault::Fault;
use crate::script::Script;

/// How many tokens one engine step (and so one streamed event) carries.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TokensPerEvent {
    /// Every step emits this many tokens (the last step of a segment may emit fewer).
    Fixed(u32),
    /// Speculative decoding: each step emits between 1 and `draft_tokens + 1` tokens.
    ///
    /// `prose[i]` (or `code[i]` for a prompt that looks like code) is the probability that a
    /// step emits `i + 1` tokens; each vector has `draft_tokens + 1` entries summing to 1.
    Speculative {
        /// Draft tokens proposed per step.
        draft_tokens: u32,
        /// Distribution of tokens per step for prose prompts.
        prose: Vec<f64>,
        /// Distribution of tokens per step for code prompts.
        code: Vec<f64>,
    },
}

const PROSE_DISTRIBUTION: [f64; 5] = [0.32, 0.30, 0.20, 0.10, 0.08];
const CODE_DISTRIBUTION: [f64; 5] = [0.12, 0.15, 0.20, 0.25, 0.28];

impl TokensPerEvent {
    /// Four draft tokens, prose-like acceptance for every prompt: 2.32 tokens per step on average.
    pub fn prose_like() -> Self {
        Self::Speculative {
            draft_tokens: 4,
            prose: PROSE_DISTRIBUTION.to_vec(),
            code: PROSE_DISTRIBUTION.to_vec(),
        }
    }

    /// Four draft tokens, code-like acceptance for every prompt: 3.42 tokens per step on average.
    pub fn code_like() -> Self {
        Self::Speculative {
            draft_tokens: 4,
            prose: CODE_DISTRIBUTION.to_vec(),
            code: CODE_DISTRIBUTION.to_vec(),
        }
    }

    /// Four draft tokens; prose prompts average 2.32 tokens per step and code prompts 3.42,
    /// as a real speculative decoder accepts more drafts on code.
    pub fn speculative() -> Self {
        Self::Speculative {
            draft_tokens: 4,
            prose: PROSE_DISTRIBUTION.to_vec(),
            code: CODE_DISTRIBUTION.to_vec(),
        }
    }

    /// Mean tokens per step for a prose (`is_code == false`) or code prompt.
    pub fn mean_tokens_per_step(&self, is_code: bool) -> f64 {
        match self {
            Self::Fixed(n) => f64::from(*n),
            Self::Speculative { prose, code, .. } => {
                let distribution = if is_code { code } else { prose };
                distribution
                    .iter()
                    .zip(1_u32..)
                    .map(|(p, k)| p * f64::from(k))
                    .sum()
            }
        }
    }

    fn validate(&self) -> Result<(), SimError> {
        match self {
            Self::Fixed(0) => Err(SimError::InvalidConfig {
                field: "tokens_per_event",
                reason: "Fixed(0) emits nothing; use 1 or more".to_owned(),
            }),
            Self::Fixed(_) => Ok(()),
            Self::Speculative {
                draft_tokens,
                prose,
                code,
            } => {
                for (name, distribution) in [("prose", prose), ("code", code)] {
                    if distribution.len() != *draft_tokens as usize + 1 {
                        return Err(SimError::InvalidConfig {
                            field: "tokens_per_event",
                            reason: format!(
                                "the {name} distribution has {} entries; it needs draft_tokens + 1 = {}",
                                distribution.len(),
                                draft_tokens + 1
                            ),
                        });
                    }
                    let sum: f64 = distribution.iter().sum();
                    if distribution.iter().any(|p| !p.is_finite() || *p < 0.0)
                        || (sum - 1.0).abs() > 1e-6
                    {
                        return Err(SimError::InvalidConfig {
                            field: "tokens_per_event",
                            reason: format!(
                                "the {name} probabilities must be non-negative and sum to 1 (they sum to {sum})"
                            ),
                        });
                    }
                }
                Ok(())
            }
        }
    }
}

/// Faults applied to every request (default: none).
///
/// When several apply, one fault is chosen per request, in this order: the request's
/// `sim_fault`, a script rule's `fault_first_attempts`, `fail_first_n_requests`,
/// `http_status`, `drop_after_events`, `stall_after_events`, `malformed_json_after_events`,
/// `overlong_line_after_events`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Faults {
    /// Every generation request is answered with this status and body.
    pub http_status: Option<(u16, String)>,
    /// The first `n` generation requests (counted across endpoints) get this fault.
    pub fail_first_n_requests: Option<(usize, Fault)>,
    /// Every stream is dropped after this many events.
    pub drop_after_events: Option<usize>,
    /// Every stream stalls for the duration after this many events.
    pub stall_after_events: Option<(usize, Duration)>,
    /// Every stream carries one malformed JSON event after this many events.
    pub malformed_json_after_events: Option<usize>,
    /// Every stream carries one over-long line after this many events.
    pub overlong_line_after_events: Option<usize>,
    /// `(per_mille, retry_after_s)`: this many generation requests in a thousand, drawn from
    /// the seed, are answered `429 Too Many Requests` with `Retry-After: retry_after_s`, as a
    /// rate-limited hosted endpoint does. Checked before every other fault.
    pub rate_limited: Option<(u32, u64)>,
    /// The whole server dies when enough streams are deep enough (see [`CrashFault`]).
    pub crash: Option<CrashFault>,
}

impl Faults {
    /// The fault the configuration applies to every request, if any.
    pub(crate) fn standing_fault(&self) -> Option<Fault> {
        if let Some((status, body)) = &self.http_status {
            return Some(Fault::HttpStatus {
                status: *status,
                body: Some(body.clone()),
            });
        }
        if let Some(events) = self.drop_after_events {
            return Some(Fault::DropAfterEvents { events });
        }
        if let Some((events, stall)) = self.stall_after_events {
            return Some(Fault::StallAfterEvents {
                events,
                ms: u64::try_from(stall.as_millis()).unwrap_or(u64::MAX),
            });
        }
        if let Some(events) = self.malformed_json_after_events {
            return Some(Fault::MalformedJsonAfterEvents { events });
        }
        self.overlong_line_after_events
            .map(|events| Fault::OverlongLineAfterEvents { events })
    }
}

/// Everything the simulator can be told. Build with [`SimConfig::builder`] or start from
/// [`SimConfig::default`] and set fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one independent switch of the simulated server"
)]
pub struct SimConfig {
    /// Served model id (default `"vernier-sim"`); other ids get 404.
    pub model: String,
    /// The path `/v1/models` states as the model's `root`, as vLLM does for the weights it
    /// loaded under `--served-model-name` (default: the served id).
    pub model_root: Option<String>,
    /// Context length reported by `/v1/models` and `/tokenize`, and enforced (default 32768):
    /// a longer prompt, or a longer `max_tokens`, is refused with a `400` that says
    /// "maximum context length"; a prompt and `max_tokens` that fit apart but not together are
    /// answered up to the end of the context, as vLLM 0.32 answers them.
    pub max_model_len: u32,
    /// Listening address (default `127.0.0.1:0`, an ephemeral port).
    pub bind: SocketAddr,
    /// Prefill speed for uncached prompt tokens (default 5000 tokens/s).
    pub prefill_tokens_per_s: f64,
    /// Fixed time added to every prefill (default 5 ms).
    pub fixed_overhead: Duration,
    /// One engine step; each step emits one event (default 10 ms).
    pub decode_step: Duration,
    /// Tokens carried per step (default `Fixed(1)`).
    pub tokens_per_event: TokensPerEvent,
    /// Refuse chat requests that send `max_tokens` with `OpenAI`'s 400 (use
    /// `max_completion_tokens` instead), as hosted reasoning models do (default off).
    pub refuse_max_tokens: bool,
    /// Refuse chat requests that carry `response_format` with a 400 in `OpenAI`'s words
    /// (`'response_format' of type 'json_schema' is not supported with this model`), as a
    /// server without structured outputs does (default off).
    pub refuse_response_format: bool,
    /// Answer with a scripted rule's `degraded` reply when more than this many requests are in
    /// flight (running or waiting, the request itself counted) as it starts (default: never).
    pub degrade_above_in_flight: Option<u32>,
    /// Tokens of the first step, when it differs from the rest: vLLM's first token comes out
    /// of the prefill alone, one token, however many later steps carry (default: as the rest).
    pub first_step_tokens: Option<u32>,
    /// Prefix cache with 16-token blocks, keyed by `cache_salt` (default on). It holds every
    /// prompt's full blocks and, once a request has finished normally, the full blocks of its
    /// prompt followed by its reply (less the last generated token), as vLLM v1 caches the
    /// blocks filled during decode: the next turn of a conversation hits them.
    pub prefix_cache: bool,
    /// Reasoning tokens streamed as `reasoning_content` before the content (default 0).
    pub reasoning_tokens: u32,
    /// Decode step is multiplied by `1 + k * (running - 1)` (default 0).
    pub slowdown_per_running_request: f64,
    /// At most this many requests run at once; others wait (default unlimited).
    pub max_num_seqs: Option<usize>,
    /// Send `: keepalive` comments when no event went out for this long (default never).
    pub keepalive_comment_every: Option<Duration>,
    /// Write each event in two writes, split mid-line or inside a UTF-8 character.
    pub split_writes: bool,
    /// Faults applied to every request.
    pub faults: Faults,
    /// Scripted replies matched against the last user message.
    pub script: Option<Script>,
    /// Append one JSON line of [`GroundTruth`](crate::GroundTruth) per request here.
    pub ground_truth_path: Option<PathBuf>,
    /// More model ids served by the same engine, as a swapping proxy (llama-swap) lists the
    /// models it switches between: listed by `/v1/models` and answered alike, the switch
    /// costing nothing.
    pub aliases: Vec<String>,
    /// Append each POST request as the server received it here, one JSON line
    /// (`{"path": …, "body": …}`) before it is answered: the server's own request log, for a
    /// test that checks what every request carried.
    pub request_log_path: Option<PathBuf>,
    /// Seed for generated text, speculative acceptance and logprobs.
    pub seed: u64,
    /// Serve `POST /tokenize` (default on). Off, it answers 404 like a server without the
    /// endpoint, so clients must count prompt tokens another way.
    pub tokenize_endpoint: bool,
    /// KV cells the running requests share, as llama-server's slots share one cache (its
    /// default with automatic slots): a request that starts while those running hold more
    /// than the rest (each its prompt plus `max_tokens`) gets llama.cpp's mid-stream
    /// `Context size has been exceeded.` error event after its first event, though it fits the
    /// context alone (default: none, every request has room).
    pub shared_kv_tokens: Option<u32>,
    /// What the server does with image and video parts (default: takes them, counting
    /// [`MEDIA_TOKENS`] prompt tokens each, reported apart as `image_tokens` and `video_tokens`
    /// in `prompt_tokens_details`).
    pub media: MediaInput,
    /// After this many generation requests, `/version` answers `vernier-sim … (upgraded)`: a
    /// server replaced mid-run, for the verdict's identity check (default: never).
    pub version_changes_after: Option<usize>,
    /// Share of the chat turns that offer tools answered with one tool call, in `0..=1`
    /// (default 0: never). A turn calls when no script rule answers it and a draw from its
    /// prompt's token ids and [`seed`](Self::seed) falls below the share, so the same
    /// conversation gets the same decision in every run, whatever its `cache_salt`. The call
    /// goes to the first offered tool, with arguments `{"query":"<3 to 6 words>"}`, and ends
    /// with `finish_reason: "tool_calls"`; like a script's reply, it is not cut at `max_tokens`.
    pub tool_call_share: f64,
    /// The length a generated chat reply ends at by itself (`finish_reason: "stop"`), as a
    /// model's answer does, when the request does not force its length (`ignore_eos`) and
    /// allows more (default: none, every generated reply runs to `max_tokens` and is cut off).
    pub reply_tokens: Option<u32>,
}

/// Prompt tokens the simulator counts for each image or video part.
pub const MEDIA_TOKENS: u32 = 256;

/// How the simulator answers a request with images or videos.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MediaInput {
    /// Takes them, as a vision-language model does.
    #[default]
    Accept,
    /// Refuses them as llama.cpp without a projector does: `500`, "image input is not
    /// supported - hint: ... mmproj" ("video input" for a request with a video).
    RefuseLikeLlamaCpp,
    /// Refuses them as vLLM with a text-only model does: `400`, "At most 0 image(s) may be
    /// provided in one request." ("video(s)" for a request with a video).
    RefuseLikeVllm,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            model: "vernier-sim".to_owned(),
            model_root: None,
            max_model_len: 32_768,
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            prefill_tokens_per_s: 5000.0,
            fixed_overhead: Duration::from_millis(5),
            decode_step: Duration::from_millis(10),
            tokens_per_event: TokensPerEvent::Fixed(1),
            first_step_tokens: None,
            refuse_max_tokens: false,
            refuse_response_format: false,
            degrade_above_in_flight: None,
            prefix_cache: true,
            reasoning_tokens: 0,
            slowdown_per_running_request: 0.0,
            max_num_seqs: None,
            keepalive_comment_every: None,
            split_writes: false,
            faults: Faults::default(),
            script: None,
            ground_truth_path: None,
            request_log_path: None,
            aliases: Vec::new(),
            seed: 0,
            tokenize_endpoint: true,
            media: MediaInput::Accept,
            shared_kv_tokens: None,
            version_changes_after: None,
            tool_call_share: 0.0,
            reply_tokens: None,
        }
    }
}

impl SimConfig {
    /// Whether `model` is an id this engine serves (its own or an alias).
    pub fn serves(&self, model: &str) -> bool {
        model == self.model || self.aliases.iter().any(|alias| alias == model)
    }
    /// A builder starting from the defaults.
    pub fn builder() -> SimConfigBuilder {
        SimConfigBuilder {
            config: Self::default(),
        }
    }

    pub(crate) fn validate(&self) -> Result<(), SimError> {
        if !(self.prefill_tokens_per_s.is_finite() && self.prefill_tokens_per_s > 0.0) {
            return Err(SimError::InvalidConfig {
                field: "prefill_tokens_per_s",
                reason: format!("{} is not a positive rate", self.prefill_tokens_per_s),
            });
        }
        if !(self.slowdown_per_running_request.is_finite()
            && self.slowdown_per_running_request >= 0.0)
        {
            return Err(SimError::InvalidConfig {
                field: "slowdown_per_running_request",
                reason: format!("{} must be 0 or more", self.slowdown_per_running_request),
            });
        }
        if !(0.0..=1.0).contains(&self.tool_call_share) {
            return Err(SimError::InvalidConfig {
                field: "tool_call_share",
                reason: format!("{} is not a share between 0 and 1", self.tool_call_share),
            });
        }
        if self.max_num_seqs == Some(0) {
            return Err(SimError::InvalidConfig {
                field: "max_num_seqs",
                reason: "0 would never run anything; use None for unlimited".to_owned(),
            });
        }
        if self.keepalive_comment_every == Some(Duration::ZERO) {
            return Err(SimError::InvalidConfig {
                field: "keepalive_comment_every",
                reason: "a zero interval would flood the stream".to_owned(),
            });
        }
        if let Some(crash) = &self.faults.crash {
            crash.validate()?;
        }
        self.tokens_per_event.validate()
    }
}

/// Builder for [`SimConfig`]; every setter replaces one field.
#[derive(Debug, Clone)]
pub struct SimConfigBuilder {
    config: SimConfig,
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty),* $(,)?) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $name(mut self, value: $ty) -> Self {
                self.config.$name = value;
                self
            }
        )*
    };
}

impl SimConfigBuilder {
    setters! {
        /// Sets [`SimConfig::model_root`].
        model_root: Option<String>,
        /// Sets [`SimConfig::max_model_len`].
        max_model_len: u32,
        /// Sets [`SimConfig::bind`].
        bind: SocketAddr,
        /// Sets [`SimConfig::prefill_tokens_per_s`].
        prefill_tokens_per_s: f64,
        /// Sets [`SimConfig::fixed_overhead`].
        fixed_overhead: Duration,
        /// Sets [`SimConfig::decode_step`].
        decode_step: Duration,
        /// Sets [`SimConfig::tokens_per_event`].
        tokens_per_event: TokensPerEvent,
        /// Sets [`SimConfig::first_step_tokens`].
        first_step_tokens: Option<u32>,
        /// Sets [`SimConfig::refuse_max_tokens`].
        refuse_max_tokens: bool,
        /// Sets [`SimConfig::refuse_response_format`].
        refuse_response_format: bool,
        /// Sets [`SimConfig::degrade_above_in_flight`].
        degrade_above_in_flight: Option<u32>,
        /// Sets [`SimConfig::prefix_cache`].
        prefix_cache: bool,
        /// Sets [`SimConfig::reasoning_tokens`].
        reasoning_tokens: u32,
        /// Sets [`SimConfig::slowdown_per_running_request`].
        slowdown_per_running_request: f64,
        /// Sets [`SimConfig::max_num_seqs`].
        max_num_seqs: Option<usize>,
        /// Sets [`SimConfig::keepalive_comment_every`].
        keepalive_comment_every: Option<Duration>,
        /// Sets [`SimConfig::split_writes`].
        split_writes: bool,
        /// Sets [`SimConfig::faults`].
        faults: Faults,
        /// Sets [`SimConfig::script`].
        script: Option<Script>,
        /// Sets [`SimConfig::ground_truth_path`].
        ground_truth_path: Option<PathBuf>,
        /// Sets [`SimConfig::request_log_path`].
        request_log_path: Option<PathBuf>,
        /// Sets [`SimConfig::aliases`].
        aliases: Vec<String>,
        /// Sets [`SimConfig::seed`].
        seed: u64,
        /// Sets [`SimConfig::tokenize_endpoint`].
        tokenize_endpoint: bool,
        /// Sets [`SimConfig::media`].
        media: MediaInput,
        /// Sets [`SimConfig::shared_kv_tokens`].
        shared_kv_tokens: Option<u32>,
        /// Sets [`SimConfig::version_changes_after`].
        version_changes_after: Option<usize>,
        /// Sets [`SimConfig::tool_call_share`].
        tool_call_share: f64,
        /// Sets [`SimConfig::reply_tokens`].
        reply_tokens: Option<u32>,
    }

    /// Sets [`SimConfig::model`].
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.config.model = model.into();
        self
    }

    /// The finished configuration (checked when the simulator starts).
    pub fn build(self) -> SimConfig {
        self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_have_the_documented_means() {
        let prose = TokensPerEvent::prose_like().mean_tokens_per_step(true);
        let code = TokensPerEvent::code_like().mean_tokens_per_step(false);
        assert!((prose - 2.32).abs() < 1e-9, "{prose}");
        assert!((code - 3.42).abs() < 1e-9, "{code}");
        let mixed = TokensPerEvent::speculative();
        assert!((mixed.mean_tokens_per_step(false) - 2.32).abs() < 1e-9);
        assert!((mixed.mean_tokens_per_step(true) - 3.42).abs() < 1e-9);
        assert!(mixed.validate().is_ok());
    }

    #[test]
    fn bad_settings_are_refused() {
        let config = SimConfig::builder()
            .tokens_per_event(TokensPerEvent::Fixed(0))
            .build();
        assert!(config.validate().is_err());
        let config = SimConfig::builder()
            .tokens_per_event(TokensPerEvent::Speculative {
                draft_tokens: 2,
                prose: vec![0.5, 0.5],
                code: vec![0.2, 0.3, 0.5],
            })
            .build();
        let message = config.validate().expect_err("wrong length").to_string();
        assert!(message.contains("draft_tokens + 1 = 3"), "{message}");
        let config = SimConfig::builder().prefill_tokens_per_s(0.0).build();
        assert!(config.validate().is_err());
        for share in [-0.1, 1.5, f64::NAN] {
            let config = SimConfig::builder().tool_call_share(share).build();
            let message = config.validate().expect_err("not a share").to_string();
            assert!(message.contains("tool_call_share"), "{message}");
        }
        for share in [0.0, 0.25, 1.0] {
            let config = SimConfig::builder().tool_call_share(share).build();
            assert!(config.validate().is_ok(), "{share}");
        }
        assert!(SimConfig::default().validate().is_ok());
    }

    #[test]
    fn fault_parses_from_request_json() {
        let fault: Fault =
            serde_json::from_str(r#"{"kind":"stall_after_events","events":3,"ms":250}"#)
                .expect("valid fault");
        assert_eq!(fault, Fault::StallAfterEvents { events: 3, ms: 250 });
        let fault: Fault =
            serde_json::from_str(r#"{"kind":"http_status","status":429}"#).expect("valid fault");
        assert_eq!(
            fault,
            Fault::HttpStatus {
                status: 429,
                body: None
            }
        );
    }
}
