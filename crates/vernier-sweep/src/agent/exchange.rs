//! One streamed request of an agent run or a replay: sent, metered event by event (kernel
//! receive times where the kernel gives them), its answer assembled, the prefix-cache count
//! the server reported read from `usage.prompt_tokens_details.cached_tokens` or llama.cpp's
//! `timings.cache_n`, and tries repeated when the failure is worth repeating.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vernier_openai::{ChatRequest, Client, StreamOptions};
use vernier_run::{ClockAnchor, RefusedFields};

use super::conversation::CallMade;
use crate::error::SweepError;
use crate::journal::CapturedFrame;
use crate::request::{Failure, classify};

/// Tries per request before it counts as failed.
const TRIES: u32 = 3;
/// The longest a request may take before it is given up as hung.
const REQUEST_DEADLINE: Duration = Duration::from_secs(900);
/// The longest the server may take to list its models when asked whether it still answers.
const ALIVE_DEADLINE: Duration = Duration::from_secs(5);

/// Where the server's count of cached prompt tokens came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CachedSource {
    /// `usage.prompt_tokens_details.cached_tokens` (vLLM, `SGLang`, llama.cpp).
    Usage,
    /// llama.cpp's `timings.cache_n`.
    Timings,
    /// The server said nothing of its cache.
    None,
}

/// What one answered request gave.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub(crate) measurement: vernier_meter::Measurement,
    pub(crate) sent_unix_ns: u64,
    pub(crate) end_unix_ns: u64,
    pub(crate) content: String,
    pub(crate) calls: Vec<CallMade>,
    pub(crate) cached_tokens: Option<u64>,
    pub(crate) cached_source: CachedSource,
    pub(crate) tries: u32,
    /// When the first try began: its first byte's time when it was answered, else the
    /// instant the request was handed to the client (ns since the Unix epoch).
    pub(crate) first_try_unix_ns: u64,
    pub(crate) capture: Option<String>,
}

/// How a request ended when it gave no answer.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// The server failed it every try (status `infra`): the last message, the tries, and
    /// when the first try began (ns since the Unix epoch).
    Infra(String, u32, u64),
    /// The server cannot take a prompt this long (status `too_long`).
    TooLong(String),
    /// A refusal no retry fixes: the run stops.
    Fatal(String),
}

impl std::fmt::Display for Unanswered {
    /// The server's words, and what they mean for the run.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Infra(message, tries, _) => {
                write!(f, "{message} (no answer after {tries} tries)")
            }
            Self::TooLong(message) => write!(f, "the server cannot take the prompt: {message}"),
            Self::Fatal(message) => f.write_str(message),
        }
    }
}

/// What every request of a run shares.
pub(crate) struct Wire {
    pub(crate) client: Client,
    pub(crate) clock: ClockAnchor,
    pub(crate) refused: RefusedFields,
    pub(crate) out: PathBuf,
    pub(crate) capture: bool,
    pub(crate) extra_body: serde_json::Map<String, serde_json::Value>,
    /// A stream with no event for this long is given up as hung.
    pub(crate) idle_timeout: Duration,
}

impl Wire {
    /// The run's wire to `client`: captures (when asked) under `out`, `extra_body` merged into
    /// every request, the clock anchored now.
    pub(crate) fn new(
        client: Client,
        out: &Path,
        capture: bool,
        extra_body: &serde_json::Map<String, serde_json::Value>,
        idle_timeout: Duration,
    ) -> Self {
        Self {
            client,
            clock: ClockAnchor::now(),
            refused: RefusedFields::new(std::collections::BTreeSet::new()),
            out: out.to_owned(),
            capture,
            extra_body: extra_body.clone(),
            idle_timeout,
        }
    }

    /// Whether the server still answers: its model list within a few seconds. A request that
    /// failed every try on a server that answers is one failed request; on one that does not,
    /// the server has stopped.
    pub(crate) async fn alive(&self) -> bool {
        matches!(
            tokio::time::timeout(ALIVE_DEADLINE, self.client.models()).await,
            Ok(Ok(_))
        )
    }

    /// `request` with the run's extra fields merged in and every refused field taken out.
    fn finished(&self, request: &ChatRequest) -> ChatRequest {
        let mut request = request.clone();
        request.stream_options = Some(StreamOptions::usage(false));
        for (key, value) in &self.extra_body {
            request.extra.insert(key.clone(), value.clone());
        }
        for field in self.refused.snapshot() {
            if field == "max_tokens" {
                request.max_completion_tokens = request.max_tokens.take();
            } else {
                request.extra.remove(field);
            }
        }
        request
    }

    /// Sends `request` until it is answered (at most [`TRIES`] tries), measuring the answer;
    /// `name` names the capture file when responses are kept.
    pub(crate) async fn send(
        &self,
        request: &ChatRequest,
        name: &str,
    ) -> Result<Exchange, Unanswered> {
        let began = self.clock.unix_ns(std::time::Instant::now());
        let mut tries = 0;
        let mut last = String::new();
        let mut refusals = 0;
        while tries < TRIES {
            tries += 1;
            let request = self.finished(request);
            let outcome = tokio::time::timeout(REQUEST_DEADLINE, self.once(&request, name)).await;
            let failure = match outcome {
                Ok(Ok(mut exchange)) => {
                    exchange.tries = tries;
                    if tries > 1 {
                        exchange.first_try_unix_ns = began;
                    }
                    return Ok(exchange);
                }
                Ok(Err(failure)) => failure,
                Err(_) => {
                    Failure::Retryable(format!("no answer within {} s", REQUEST_DEADLINE.as_secs()))
                }
            };
            match failure {
                // A refused field is dropped for the rest of the run; the try is not spent.
                // Refused again (or not one the request can lose), it is a refusal.
                Failure::FieldRefused(message, field)
                    if refusals < 8 && self.refused.refuse(field) =>
                {
                    refusals += 1;
                    tries -= 1;
                    last = message;
                }
                Failure::ContextExceeded(message) => return Err(Unanswered::TooLong(message)),
                Failure::Fatal(message) | Failure::FieldRefused(message, _) => {
                    return Err(Unanswered::Fatal(message));
                }
                Failure::RateLimited(message, error) => {
                    let asked = match &error {
                        vernier_openai::ClientError::Http { retry_after, .. } => *retry_after,
                        _ => None,
                    };
                    let wait = asked
                        .unwrap_or(Duration::from_secs(1))
                        .min(Duration::from_secs(30));
                    tokio::time::sleep(wait).await;
                    last = message;
                }
                Failure::Retryable(message)
                | Failure::Unreachable(message)
                | Failure::Hung(message) => {
                    tokio::time::sleep(Duration::from_millis(250 << tries.min(4))).await;
                    last = message;
                }
            }
        }
        Err(Unanswered::Infra(last, tries, began))
    }

    async fn once(&self, request: &ChatRequest, name: &str) -> Result<Exchange, Failure> {
        let mut stream =
            match tokio::time::timeout(self.idle_timeout, self.client.metered_chat_stream(request))
                .await
            {
                Ok(opened) => opened.map_err(classify)?,
                Err(_) => {
                    return Err(Failure::Hung(format!(
                        "no answer to the request for {} s",
                        self.idle_timeout.as_secs_f64()
                    )));
                }
            };
        if self.capture {
            stream.capture_body();
        }
        let sent = stream.stream().request_sent_at();
        loop {
            match tokio::time::timeout(self.idle_timeout, stream.next_observation()).await {
                Ok(Some(event)) => {
                    event.map_err(classify)?;
                }
                Ok(None) => break,
                Err(_) => {
                    return Err(Failure::Hung(format!(
                        "no stream event for {} s",
                        self.idle_timeout.as_secs_f64()
                    )));
                }
            }
        }
        let end = std::time::Instant::now();
        let metered = stream.finish();
        if metered.broken {
            return Err(Failure::Retryable("the stream broke off".to_owned()));
        }
        let accumulated = &metered.accumulated;
        let usage_cached = accumulated
            .usage()
            .and_then(vernier_openai::Usage::cached_tokens);
        let timings_cached = accumulated.timings().and_then(|t| t.cache_n);
        let (cached_tokens, cached_source) = match (usage_cached, timings_cached) {
            (Some(n), _) => (Some(n), CachedSource::Usage),
            (None, Some(n)) => (Some(n), CachedSource::Timings),
            (None, None) => (None, CachedSource::None),
        };
        let calls = accumulated
            .tool_calls()
            .iter()
            .enumerate()
            .map(|(index, call)| CallMade {
                id: if call.id.is_empty() {
                    format!("call-{name}-{index}")
                } else {
                    call.id.clone()
                },
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .collect();
        let capture = match metered.capture {
            Some(capture) => Some(self.write_capture(request, &capture, name).map_err(
                |error| Failure::Fatal(format!("could not keep the response: {error}")),
            )?),
            None => None,
        };
        Ok(Exchange {
            content: accumulated.content().to_owned(),
            calls,
            cached_tokens,
            cached_source,
            sent_unix_ns: self.clock.unix_ns(sent),
            first_try_unix_ns: self.clock.unix_ns(sent),
            end_unix_ns: self.clock.unix_ns(end),
            measurement: metered.measurement,
            tries: 1,
            capture,
        })
    }

    /// Writes a kept response as `captures/NAME.json` (the request, status, headers and every
    /// body frame with its arrival); returns the path relative to the output folder.
    fn write_capture(
        &self,
        request: &ChatRequest,
        capture: &vernier_openai::Capture,
        name: &str,
    ) -> Result<String, SweepError> {
        let relative = format!("captures/{name}.json");
        let record = serde_json::json!({
            "request": request,
            "status": capture.status,
            "headers": capture.headers,
            "frames": capture
                .reads
                .iter()
                .map(|read| CapturedFrame::new(read.offset_ns, &read.bytes))
                .collect::<Vec<_>>(),
        });
        let path = self.out.join(&relative);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|source| SweepError::WriteReport {
                path: path.clone(),
                source,
            })?;
        }
        crate::report::write(path, &record.to_string())?;
        Ok(relative)
    }
}
