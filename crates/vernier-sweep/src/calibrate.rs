//! Sizing prompts in the server's own tokens.
//!
//! The server counts the prompt (chat template included) through `/tokenize` with the chat
//! messages when it has that endpoint, else through probe requests with `max_tokens: 1` that
//! read `usage.prompt_tokens`. The corpus length is found by [`vernier_openai::fit_units`]:
//! interpolation between the nearest counts below and above the target, with bisection as a
//! fallback, so long prompts need few probes.

use serde::{Deserialize, Serialize};
use vernier_openai::{ChatRequest, Client};

use crate::config::Workload;
use crate::corpus::{Corpus, NoncePlacement, NonceSource};

/// How prompt tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CountMethod {
    /// `POST /tokenize` with `{model, messages}`.
    TokenizeChat,
    /// `max_tokens: 1` requests reading `usage.prompt_tokens`.
    ProbeRequests,
}

impl CountMethod {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::TokenizeChat => "tokenize_chat",
            Self::ProbeRequests => "probe_requests",
        }
    }
}

/// What calibration needs from the run: the client, a request template and nonces.
pub(crate) struct Counter<'a> {
    pub(crate) client: &'a Client,
    pub(crate) model: &'a str,
    pub(crate) method: CountMethod,
    pub(crate) nonces: &'a NonceSource,
    pub(crate) use_nonce: bool,
    pub(crate) nonce_placement: NoncePlacement,
    /// Turns a prompt into the request that will be sent (cache defeats, extra body...).
    pub(crate) build: &'a (dyn Fn(String, Option<&str>, u32) -> ChatRequest + Sync),
}

impl std::fmt::Debug for Counter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter")
            .field("model", &self.model)
            .field("method", &self.method)
            .finish_non_exhaustive()
    }
}

/// Picks the counting method: `/tokenize` with messages when the server accepts it.
pub(crate) async fn choose_method(client: &Client, model: &str) -> CountMethod {
    if client.counts_chat_tokens(model).await {
        CountMethod::TokenizeChat
    } else {
        CountMethod::ProbeRequests
    }
}

impl Counter<'_> {
    async fn count(&self, corpus: &Corpus, n_units: usize) -> Result<u64, String> {
        let nonce = self.use_nonce.then(|| self.nonces.next());
        let prompt = corpus.prompt(nonce.as_deref(), self.nonce_placement, n_units);
        match self.method {
            CountMethod::TokenizeChat => {
                let request = (self.build)(prompt, nonce.as_deref(), 1);
                self.client
                    .tokenize_chat(self.model, &request.messages)
                    .await
                    .map(|tokenized| tokenized.count as u64)
                    .map_err(|error| vernier_cli::one_line(&error))
            }
            CountMethod::ProbeRequests => {
                let request = (self.build)(prompt, nonce.as_deref(), 1);
                let response = self
                    .client
                    .chat(&request)
                    .await
                    .map_err(|error| vernier_cli::one_line(&error))?;
                response
                    .usage
                    .map(|usage| usage.prompt_tokens)
                    .ok_or_else(|| "the probe's response has no usage.prompt_tokens".to_owned())
            }
        }
    }
}

/// The chosen corpus length and what the server counted for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Calibrated {
    pub(crate) n_units: usize,
    pub(crate) prompt_tokens: u64,
    pub(crate) n_probes: u32,
}

/// Finds the corpus length whose prompt is closest to `target` server tokens.
pub(crate) async fn calibrate(
    counter: &Counter<'_>,
    workload: Workload,
    target: u32,
) -> Result<Calibrated, String> {
    let corpus = Corpus::new(workload);
    let fitted = vernier_openai::fit_units(u64::from(target), corpus.n_units(), |n_units| {
        counter.count(&corpus, n_units)
    })
    .await
    .map_err(|error| match error {
        vernier_openai::FitError::FixedPartTooLong { fixed } => format!(
            "the fixed part of the prompt (nonce, instruction and chat template) is already {fixed} tokens; ask for more"
        ),
        vernier_openai::FitError::Count(message) => message,
        _ => "the prompt could not be sized".to_owned(),
    })?;
    Ok(Calibrated {
        n_units: fitted.n_units,
        prompt_tokens: fitted.tokens,
        n_probes: fitted.n_counts,
    })
}
