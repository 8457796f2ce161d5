//! Pieces `ready` and `watch` share: the client, the one-token probe, small statistics.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use vernier_openai::{ChatMessage, ChatRequest, Client, ClientBuilder, ClientError, Timeouts};

use crate::error::LifecycleError;

/// A future that, when it completes, stops the run (what was measured is still reported).
pub type Interrupt = Pin<Box<dyn Future<Output = ()> + Send>>;

pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

pub(crate) fn client(base_url: &str, timeouts: Timeouts) -> Result<Client, LifecycleError> {
    ClientBuilder::new(base_url)
        .timeouts(timeouts)
        .user_agent(concat!("vernier-lifecycle/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|source| LifecycleError::Client {
            base_url: base_url.to_owned(),
            source,
        })
}

pub(crate) fn seconds(value: f64, field: &'static str) -> Result<Duration, LifecycleError> {
    Duration::try_from_secs_f64(value).map_err(|_| LifecycleError::InvalidConfig {
        field,
        reason: format!("{value} is not a number of seconds 0 or more"),
    })
}

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
}

/// Streams a `max_tokens` = 1 chat request and waits for its first token, up to `timeout`.
pub(crate) async fn probe(
    client: &Client,
    model: &str,
    prompt: &str,
    timeout: Duration,
) -> ProbeOutcome {
    let mut request = ChatRequest::new(model, vec![ChatMessage::user(prompt)]);
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

pub(crate) fn classify(error: &ClientError) -> ProbeOutcome {
    match error {
        ClientError::Connect { .. } => ProbeOutcome::Unreachable {
            error: vernier_one_line(error),
        },
        ClientError::Http { status, .. } => ProbeOutcome::Http { status: *status },
        ClientError::Timeout { .. } => ProbeOutcome::Timeout,
        other => ProbeOutcome::Failed {
            error: vernier_one_line(other),
        },
    }
}

fn vernier_one_line(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Median, smallest and largest of a set of values (seconds or milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Distribution {
    /// Values summarised.
    pub n: usize,
    /// The median (type 7).
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// Every value, in the order measured.
    pub values: Vec<f64>,
}

impl Distribution {
    /// `None` for no (finite) values.
    pub fn of(values: &[f64]) -> Option<Self> {
        let values: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let median = vernier_stats::median(&values).ok()?;
        Some(Self {
            n: values.len(),
            median,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            values,
        })
    }
}
