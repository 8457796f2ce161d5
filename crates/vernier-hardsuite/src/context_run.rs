//! Long-context requests: each prompt rendered again for its request, with a fresh opening
//! nonce, at the haystack length the server's own token count calls for, and proved to hold its
//! needles before it is sent.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use vernier_openai::{ChatMessage, ChatRequest, Client};
use vernier_tasks::{ContextSpec, Haystack, Rendered};

/// How prompts are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SizeMethod {
    /// The server counts every prompt before it is sent (`/tokenize` with the messages).
    TokenizeChat,
    /// Units per token learnt from `max_tokens: 1` probes and then from every request's
    /// `usage.prompt_tokens`.
    UsageRatio,
}

impl SizeMethod {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::TokenizeChat => "tokenize_chat",
            Self::UsageRatio => "usage_ratio",
        }
    }
}

/// What one corpus costs in the server's tokens: the fixed part, and the units and tokens
/// beyond it summed over every count so far.
#[derive(Debug, Clone, Copy)]
struct Ratio {
    fixed: f64,
    units: f64,
    variable_tokens: f64,
}

impl Ratio {
    fn per_unit(self) -> f64 {
        (self.variable_tokens / self.units.max(1.0)).max(1e-3)
    }
}

/// A prompt ready to send.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) rendered: Rendered,
    pub(crate) n_units: usize,
    pub(crate) nonce: String,
    pub(crate) counted_tokens: Option<u64>,
}

/// Sizes the prompts of one run.
pub(crate) struct ContextSizer {
    pub(crate) method: SizeMethod,
    nonce_base: u64,
    nonce_counter: AtomicU64,
    /// The length that fitted last, per (target, corpus): the next search starts there.
    fitted: Mutex<HashMap<(u32, Haystack), usize>>,
    /// Usage-ratio mode: what each corpus costs.
    ratios: Mutex<HashMap<Haystack, Ratio>>,
}

impl std::fmt::Debug for ContextSizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextSizer")
            .field("method", &self.method)
            .finish_non_exhaustive()
    }
}

fn user_messages(prompt: &str) -> [ChatMessage; 1] {
    [ChatMessage::user(prompt.to_owned())]
}

impl ContextSizer {
    /// Asks the server whether it counts chat prompts; `nonce_base` makes this run's nonces
    /// its own.
    pub(crate) async fn new(client: &Client, model: &str, nonce_base: u64) -> Self {
        let method = if client.counts_chat_tokens(model).await {
            SizeMethod::TokenizeChat
        } else {
            SizeMethod::UsageRatio
        };
        Self {
            method,
            nonce_base,
            nonce_counter: AtomicU64::new(0),
            fitted: Mutex::new(HashMap::new()),
            ratios: Mutex::new(HashMap::new()),
        }
    }

    /// A nonce no other request of the run has: 16 hex digits, letters only in the upper half
    /// of the alphabet so that no 7-digit needle value can appear in it by chance.
    fn nonce(&self) -> String {
        let n = self.nonce_counter.fetch_add(1, Ordering::Relaxed);
        let mut state = self.nonce_base ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        state = (state ^ (state >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let mut out = String::with_capacity(16);
        for shift in (0..16).rev() {
            let nibble = (state >> (shift * 4)) & 0xF;
            // g..v: sixteen letters, never a digit.
            out.push(char::from(b'g' + u8::try_from(nibble).unwrap_or(0)));
        }
        out
    }

    /// The prompt for one request of `spec`: rendered with a fresh nonce at the length that
    /// hits its target in the server's tokens. `probe` sends a `max_tokens: 1` request of a
    /// prompt and gives its `usage.prompt_tokens` (usage-ratio mode, first request of a corpus).
    pub(crate) async fn prepare(
        &self,
        client: &Client,
        model: &str,
        spec: &ContextSpec,
        probe: &(dyn Fn(String) -> ChatRequest + Sync),
    ) -> Result<Prepared, String> {
        let nonce = self.nonce();
        let key = (spec.target_tokens, spec.haystack);
        let guess = self
            .fitted
            .lock()
            .ok()
            .and_then(|fitted| fitted.get(&key).copied())
            .unwrap_or_else(|| spec.guess_units());
        let (n_units, counted) = match self.method {
            SizeMethod::TokenizeChat => {
                let fitted = vernier_run::fit_units(
                    u64::from(spec.target_tokens),
                    guess,
                    |n_units| {
                        let prompt = spec.render(&nonce, n_units).prompt;
                        async move {
                            client
                                .tokenize_chat(model, &user_messages(&prompt))
                                .await
                                .map(|tokenized| tokenized.count as u64)
                                .map_err(|error| vernier_cli::one_line(&error))
                        }
                    },
                )
                .await
                .map_err(|error| match error {
                    vernier_run::FitError::FixedPartTooLong { fixed } => format!(
                        "the question and chat template alone are {fixed} tokens, above the target of {}",
                        spec.target_tokens
                    ),
                    vernier_run::FitError::Count(message) => format!("count the prompt: {message}"),
                    _ => "the prompt could not be sized".to_owned(),
                })?;
                (fitted.n_units, Some(fitted.tokens))
            }
            SizeMethod::UsageRatio => {
                let ratio = self.ratio(client, spec, probe).await?;
                let wanted = (f64::from(spec.target_tokens) - ratio.fixed) / ratio.per_unit();
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "clamped to at least one unit, far below usize::MAX"
                )]
                let n_units = wanted.round().max(1.0) as usize;
                (n_units, None)
            }
        };
        if let Ok(mut fitted) = self.fitted.lock() {
            fitted.insert(key, n_units);
        }
        let rendered = spec.render(&nonce, n_units);
        let failures = spec.verify(&rendered);
        if !failures.is_empty() {
            return Err(format!(
                "the rendered prompt failed its proof: {}",
                failures.join("; ")
            ));
        }
        Ok(Prepared {
            rendered,
            n_units,
            nonce,
            counted_tokens: counted,
        })
    }

    /// The corpus's cost, probed with two `max_tokens: 1` requests the first time.
    async fn ratio(
        &self,
        client: &Client,
        spec: &ContextSpec,
        probe: &(dyn Fn(String) -> ChatRequest + Sync),
    ) -> Result<Ratio, String> {
        if let Some(ratio) = self
            .ratios
            .lock()
            .ok()
            .and_then(|ratios| ratios.get(&spec.haystack).copied())
        {
            return Ok(ratio);
        }
        let probe_units = 600usize;
        let mut counts = [0u64; 2];
        for (slot, n_units) in [(0usize, 0usize), (1, probe_units)] {
            let prompt = spec.render(&self.nonce(), n_units).prompt;
            let response = client.chat(&probe(prompt)).await.map_err(|error| {
                format!("probe the prompt size: {}", vernier_cli::one_line(&error))
            })?;
            counts[slot] = response
                .usage
                .map(|usage| usage.prompt_tokens)
                .ok_or_else(|| "the size probe's response has no usage.prompt_tokens".to_owned())?;
        }
        let ratio = Ratio {
            fixed: counts[0] as f64,
            units: probe_units as f64,
            variable_tokens: counts[1].saturating_sub(counts[0]) as f64,
        };
        if let Ok(mut ratios) = self.ratios.lock() {
            ratios.entry(spec.haystack).or_insert(ratio);
        }
        Ok(ratio)
    }

    /// Usage-ratio mode: learns from a request's `usage.prompt_tokens` (every request adds to
    /// the corpus's totals, so the ratio settles as the run goes).
    pub(crate) fn learn(&self, haystack: Haystack, n_units: usize, prompt_tokens: u64) {
        if self.method != SizeMethod::UsageRatio {
            return;
        }
        if let Ok(mut ratios) = self.ratios.lock()
            && let Some(ratio) = ratios.get_mut(&haystack)
        {
            ratio.units += n_units as f64;
            ratio.variable_tokens += (prompt_tokens as f64 - ratio.fixed).max(0.0);
        }
    }
}
