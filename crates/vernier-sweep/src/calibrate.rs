//! Sizing prompts in the server's own tokens.
//!
//! The server counts the prompt (chat template included) through `/tokenize` with the chat
//! messages when it has that endpoint, else through probe requests with `max_tokens: 1` that
//! read `usage.prompt_tokens`. The corpus length is found by [`vernier_run::fit_units`]:
//! interpolation between the nearest counts below and above the target, with bisection as a
//! fallback, so long prompts need few probes.

use serde::{Deserialize, Serialize};
use vernier_openai::{ChatRequest, Client};

use crate::cells::skip_cell;
use crate::config::Workload;
use crate::corpus::{Corpus, NoncePlacement, NonceSource};
use crate::error::SweepError;
use crate::journal::{Calibration, SweepJournalLine};
use crate::parts::{Plan, Record, Target, dropped_fields};
use crate::request::build_request;
use crate::resume::ResumeState;

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
    // A unit is a word or a punctuation mark, close to one token in every tokenizer seen, so
    // the first guess is the target itself: a first probe of the whole corpus (about 12k
    // tokens) would be refused by any server with a smaller context.
    let first_guess = usize::try_from(target).unwrap_or(usize::MAX);
    let fitted = vernier_run::fit_units(u64::from(target), first_guess, |n_units| {
        counter.count(&corpus, n_units)
    })
    .await
    .map_err(|error| match error {
        vernier_run::FitError::FixedPartTooLong { fixed } => format!(
            "the fixed part of the prompt (nonce, instruction and chat template) is already {fixed} tokens; ask for more"
        ),
        vernier_run::FitError::Count(message) => message,
        _ => "the prompt could not be sized".to_owned(),
    })?;
    Ok(Calibrated {
        n_units: fitted.n_units,
        prompt_tokens: fitted.tokens,
        n_probes: fitted.n_counts,
    })
}

/// Calibrates every (workload, prompt length) the journal does not already have.
pub(crate) async fn calibrate_all(
    server: &Target,
    plan: &Plan,
    record: &Record,
    state: &mut ResumeState,
) -> Result<(), SweepError> {
    let config = &plan.config;
    let mut method: Option<CountMethod> = None;
    for &workload in &config.workloads {
        for &target in &config.prompt_tokens {
            if state.calibrations.contains_key(&(workload, target)) {
                continue;
            }
            // A prompt length whose every cell is left out needs no calibration.
            let cells_of = |state: &ResumeState| {
                config
                    .cells()
                    .into_iter()
                    .filter(|c| c.workload == workload && c.prompt_tokens_target == target)
                    .all(|c| state.skipped.contains_key(&c))
            };
            if !config.is_search() && cells_of(state) {
                continue;
            }
            let method = if let Some(method) = method {
                method
            } else {
                let chosen = choose_method(&server.client, &config.model).await;
                method = Some(chosen);
                chosen
            };
            record.observer.status(&format!(
                "calibrating {workload} prompt to {target} tokens ({})",
                method.as_str()
            ));
            let build = |prompt: String, nonce: Option<&str>, max_tokens: u32| {
                let mut probe_config = config.clone();
                probe_config.force_length = false;
                probe_config.continuous_usage = false;
                probe_config.token_ids = false;
                let mut request = build_request(
                    &probe_config,
                    &dropped_fields(server),
                    prompt,
                    nonce,
                    max_tokens,
                );
                request.stream_options = None;
                request
            };
            let counter = Counter {
                client: &server.client,
                model: &config.model,
                method,
                nonces: &plan.nonces,
                use_nonce: config.defeat_prefix_cache,
                nonce_placement: NoncePlacement::from_suffix(config.nonce_as_suffix),
                build: &build,
            };
            let calibrated = match calibrate(&counter, workload, target).await {
                Ok(calibrated) => calibrated,
                // Probe requests this long are refused for their length: every cell of this
                // prompt length is left out, and the run goes on.
                Err(detail) if vernier_openai::says_context_exceeded(&detail) => {
                    for cell in config
                        .cells()
                        .into_iter()
                        .filter(|c| c.workload == workload && c.prompt_tokens_target == target)
                    {
                        skip_cell(record, state, cell, detail.clone())?;
                    }
                    continue;
                }
                Err(detail) => {
                    return Err(SweepError::Calibration {
                        workload: workload.to_string(),
                        target,
                        detail,
                    });
                }
            };
            record
                .journal
                .append(&SweepJournalLine::Calibration(Calibration {
                    workload,
                    prompt_tokens_target: target,
                    n_units: calibrated.n_units,
                    prompt_tokens_actual: calibrated.prompt_tokens,
                    method: method.as_str().to_owned(),
                    n_probes: calibrated.n_probes,
                }))?;
            state
                .calibrations
                .insert((workload, target), calibrated.n_units);
        }
    }
    Ok(())
}
