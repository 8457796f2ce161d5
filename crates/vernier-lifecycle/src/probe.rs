//! The one-token probe `watch` sends, and how a client error is classified as an outcome
//! (`ready` uses the classification for a request that could not be made).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use vernier_openai::{ChatMessage, ChatRequest, Client, ClientError};

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProbeOutcome {
    /// A token (or the end of the answer) arrived in time.
    Ok {
        /// From sending the request to the first token, in milliseconds.
        latency_ms: f64,
    },
    /// Nothing arrived within the probe's timeout.
    Timeout,
    /// No connection: refused, reset or unreachable (the server is down).
    Unreachable {
        /// The client's error.
        error: String,
    },
    /// The server answered with an error status.
    Http {
        /// The status.
        status: u16,
    },
    /// Another failure (a broken stream, a malformed answer).
    Failed {
        /// The client's error.
        error: String,
    },
}

impl ProbeOutcome {
    /// Whether the probe succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok { .. })
    }

    /// A short description for notes.
    pub fn short(&self) -> String {
        match self {
            Self::Ok { latency_ms } => format!("ok in {latency_ms:.0} ms"),
            Self::Timeout => "timed out".to_owned(),
            Self::Unreachable { error } => format!("unreachable: {error}"),
            Self::Http { status } => format!("HTTP {status}"),
            Self::Failed { error } => format!("failed: {error}"),
        }
    }
}

/// Streams a `max_tokens` = 1 chat request and waits for its first token, up to `timeout`.
pub(crate) async fn probe(
    client: &Client,
    model: &str,
    prompt: &str,
    extra_body: &serde_json::Map<String, serde_json::Value>,
    timeout: Duration,
) -> ProbeOutcome {
    let mut request = ChatRequest::new(model, vec![ChatMessage::user(prompt)]);
    request.extra.extend(extra_body.clone());
    request.max_tokens = Some(1);
    let started = Instant::now();
    let attempt = async {
        let mut stream = client.chat_stream(&request).await?;
        while let Some(event) = stream.next_event().await {
            let event = event?;
            if event.chunk.is_token_bearing() {
                break;
            }
        }
        Ok::<_, ClientError>(())
    };
    match tokio::time::timeout(timeout, attempt).await {
        Err(_) => ProbeOutcome::Timeout,
        Ok(Ok(())) => ProbeOutcome::Ok {
            latency_ms: started.elapsed().as_secs_f64() * 1000.0,
        },
        Ok(Err(error)) => classify(&error),
    }
}

/// The outcome a client error stands for: no connection is `Unreachable`, an error status
/// `Http`, a client timeout `Timeout`, anything else `Failed` (with the whole cause chain).
/// A status that says the request itself is wrong (key, model, body), not that the server is
/// unwell ([`vernier_run::is_refusal`]).
pub(crate) use vernier_run::is_refusal as is_configuration_status;

/// The flag a configuration status points at (`--base-url` when it names none).
pub(crate) fn configuration_flag(status: u16) -> &'static str {
    vernier_run::refusal_flag(status).unwrap_or("--base-url")
}

/// What to change for a configuration status.
pub(crate) fn configuration_hint(status: u16) -> &'static str {
    vernier_run::refusal_hint(status)
        .unwrap_or("the server refuses the probe itself; check --base-url and --model")
}

pub(crate) fn classify(error: &ClientError) -> ProbeOutcome {
    match error {
        ClientError::Connect { .. } => ProbeOutcome::Unreachable {
            error: vernier_cli::one_line(error),
        },
        ClientError::Http { status, .. } => ProbeOutcome::Http { status: *status },
        ClientError::Timeout { .. } => ProbeOutcome::Timeout,
        other => ProbeOutcome::Failed {
            error: vernier_cli::one_line(other),
        },
    }
}
