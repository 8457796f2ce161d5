//! Sizing prompts in the server's own tokens.
//!
//! The server counts the prompt (chat template included) through `/tokenize` with the chat
//! messages when it has that endpoint, else through probe requests with `max_tokens: 1` that
//! read `usage.prompt_tokens`. The corpus length is found by interpolation between the
//! nearest counts below and above the target, with bisection as a fallback, so long prompts
//! need few probes.

use serde::{Deserialize, Serialize};
use vernier_openai::{ChatMessage, ChatRequest, Client};

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
    match client
        .tokenize_chat(model, &[ChatMessage::user("Hello there.")])
        .await
    {
        Ok(tokenized) if tokenized.count > 0 => CountMethod::TokenizeChat,
        _ => CountMethod::ProbeRequests,
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

const MAX_PROBES: u32 = 40;

/// Finds the corpus length whose prompt is closest to `target` server tokens.
pub(crate) async fn calibrate(
    counter: &Counter<'_>,
    workload: Workload,
    target: u32,
) -> Result<Calibrated, String> {
    let corpus = Corpus::new(workload);
    let target = u64::from(target);
    let mut n_probes = 0u32;
    let fixed = counter.count(&corpus, 0).await?;
    n_probes += 1;
    if fixed >= target {
        return Err(format!(
            "the fixed part of the prompt (nonce, instruction and chat template) is already {fixed} tokens; ask for more"
        ));
    }
    let pass = corpus.n_units();
    let full = counter.count(&corpus, pass).await?;
    n_probes += 1;
    let slope = (full.saturating_sub(fixed) as f64 / pass as f64).max(1e-3);
    // Bracket: `low` counts below target, `high` (when known) above.
    let (mut low, mut low_count) = (0usize, fixed);
    let mut high: Option<(usize, u64)> = None;
    if full >= target {
        high = Some((pass, full));
    } else {
        low = pass;
        low_count = full;
    }
    if full == target {
        return Ok(Calibrated {
            n_units: pass,
            prompt_tokens: full,
            n_probes,
        });
    }
    let mut guess = low + units_for(target - low_count, slope);
    let mut bisect_next = false;
    while n_probes < MAX_PROBES {
        if let Some((high_units, _)) = high {
            if high_units - low <= 1 {
                break;
            }
            if guess <= low || guess >= high_units {
                guess = low + (high_units - low) / 2;
            }
        }
        let count = counter.count(&corpus, guess).await?;
        n_probes += 1;
        if count == target {
            return Ok(Calibrated {
                n_units: guess,
                prompt_tokens: count,
                n_probes,
            });
        }
        if count < target {
            low = guess;
            low_count = count;
        } else {
            high = Some((guess, count));
        }
        guess = match high {
            Some((high_units, high_count)) if !bisect_next => {
                // Interpolate inside the bracket.
                let local = (high_count - low_count) as f64 / (high_units - low) as f64;
                bisect_next = true;
                low + units_for(target - low_count, local.max(1e-3))
            }
            Some((high_units, _)) => {
                bisect_next = false;
                low + (high_units - low) / 2
            }
            None => low + units_for(target - low_count, slope).max(1),
        };
    }
    let best = match high {
        Some((high_units, high_count)) if high_count - target < target - low_count => {
            (high_units, high_count)
        }
        _ => (low, low_count),
    };
    Ok(Calibrated {
        n_units: best.0,
        prompt_tokens: best.1,
        n_probes,
    })
}

fn units_for(tokens: u64, tokens_per_unit: f64) -> usize {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "positive and far below usize::MAX"
    )]
    let units = (tokens as f64 / tokens_per_unit).round() as usize;
    units.max(1)
}
