//! The soak's load: workers that each keep one long generation in flight (a new one as each
//! ends), and the table of what is in flight, read at a death.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;
use vernier_journal::JournalWriter;
use vernier_openai::{ChatMessage, ChatRequest, Client, ClientError, StreamOptions};
use vernier_run::unix_ms;

use crate::soak_journal::{InFlight, RequestLine, SoakJournalLine};

/// One request in flight.
#[derive(Debug, Clone)]
struct Entry {
    started: Instant,
    started_unix_ms: u64,
    tokens: u64,
    from_usage: bool,
    last_token: Option<Instant>,
    error: Option<String>,
    /// When it failed (it stays a while, so a death's record reads its last count).
    ended_at: Option<Instant>,
}

/// How long a failed request stays in the table.
const KEEP_FAILED: Duration = Duration::from_secs(30);

/// What is in flight, by request number.
#[derive(Debug, Default)]
pub(crate) struct InFlightTable {
    entries: Mutex<BTreeMap<u64, Entry>>,
}

impl InFlightTable {
    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<u64, Entry>) -> T) -> T {
        match self.entries.lock() {
            Ok(mut entries) => f(&mut entries),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// The requests in flight at `at` (sent before it), and those that failed in the two
    /// seconds before it.
    pub(crate) fn in_flight_at(&self, at: Instant) -> Vec<u64> {
        self.with(|entries| {
            entries
                .iter()
                .filter(|(_, entry)| {
                    entry.started <= at
                        && entry
                            .ended_at
                            .is_none_or(|ended| ended + Duration::from_secs(2) >= at)
                })
                .map(|(request, _)| *request)
                .collect()
        })
    }

    /// Requests `ids` as they stand now (their last token counts), aged at `at`, with the
    /// settings each was sent with.
    pub(crate) fn records(
        &self,
        ids: &[u64],
        at: Instant,
        settings: &Map<String, Value>,
    ) -> Vec<InFlight> {
        self.with(|entries| {
            ids.iter()
                .filter_map(|request| entries.get(request).map(|entry| (request, entry)))
                .map(|(request, entry)| InFlight {
                    request: *request,
                    started_unix_ms: entry.started_unix_ms,
                    age_s: at.saturating_duration_since(entry.started).as_secs_f64(),
                    tokens: entry.tokens,
                    token_source: token_source(entry.from_usage).to_owned(),
                    since_last_token_s: at
                        .saturating_duration_since(entry.last_token.unwrap_or(entry.started))
                        .as_secs_f64(),
                    error: entry.error.clone(),
                    settings: settings.clone(),
                })
                .collect()
        })
    }

    /// Seconds since the last token on any request in flight (since the newest request was
    /// sent, when none has a token); `None` when nothing is in flight.
    pub(crate) fn stalled_for(&self, now: Instant) -> Option<Duration> {
        self.with(|entries| {
            entries
                .values()
                .filter(|entry| entry.ended_at.is_none())
                .map(|entry| {
                    now.saturating_duration_since(entry.last_token.unwrap_or(entry.started))
                })
                .min()
        })
    }

    /// Empties the table (the workers were stopped), returning the requests still running.
    pub(crate) fn drain(&self, now: Instant, settings: &Map<String, Value>) -> Vec<InFlight> {
        let running: Vec<u64> = self.with(|entries| {
            entries
                .iter()
                .filter(|(_, entry)| entry.ended_at.is_none())
                .map(|(request, _)| *request)
                .collect()
        });
        let records = self.records(&running, now, settings);
        self.with(BTreeMap::clear);
        records
    }
}

fn token_source(from_usage: bool) -> &'static str {
    if from_usage { "server usage" } else { "events" }
}

/// How a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailClass {
    /// No connection.
    Refused,
    /// The connection broke mid-way.
    Reset,
    /// The server refused the request itself (a 4xx other than 408 and 429): every request
    /// has the same shape, so every one would be refused.
    Rejected(u16),
    /// Anything else (an error status, an error event, a malformed answer).
    Other,
}

/// A failed request, for the coordinator.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) request: u64,
    pub(crate) at: Instant,
    pub(crate) unix_ms: u64,
    pub(crate) class: FailClass,
    pub(crate) error: String,
}

/// What the workers share.
#[derive(Debug)]
pub(crate) struct Load {
    pub(crate) client: Client,
    pub(crate) model: String,
    pub(crate) arm: String,
    pub(crate) prompt: String,
    pub(crate) nonce: String,
    pub(crate) max_tokens: u32,
    /// `ignore_eos` and the extra body, merged into every request.
    pub(crate) extra: Map<String, Value>,
    pub(crate) table: InFlightTable,
    pub(crate) next_request: Arc<AtomicU64>,
    pub(crate) writer: Arc<JournalWriter>,
    pub(crate) failures: UnboundedSender<Failure>,
    pub(crate) tokens: AtomicU64,
    pub(crate) finished: AtomicU64,
}

impl Load {
    /// The settings every request carries, as recorded with the requests in flight.
    pub(crate) fn settings(&self) -> Map<String, Value> {
        let mut settings = self.extra.clone();
        settings.insert("max_tokens".to_owned(), Value::from(self.max_tokens));
        settings
    }

    fn request(&self, number: u64) -> ChatRequest {
        let prompt = format!("Soak request {}-{number}. {}", self.nonce, self.prompt);
        let mut request = ChatRequest::new(&self.model, vec![ChatMessage::user(prompt)]);
        request.max_tokens = Some(u64::from(self.max_tokens));
        request.stream = Some(true);
        request.stream_options = Some(StreamOptions::usage(true));
        request.extra.clone_from(&self.extra);
        request
    }
}

/// One worker: a request in flight, a new one as it ends, until aborted. A failed request is
/// reported and kept in the table a while (so a death's record reads its last count); the
/// next one goes out half a second later.
pub(crate) async fn worker(load: Arc<Load>) {
    loop {
        let number = load.next_request.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let started_unix_ms = unix_ms();
        load.table.with(|entries| {
            entries.retain(|_, entry| {
                entry
                    .ended_at
                    .is_none_or(|ended| ended.elapsed() < KEEP_FAILED)
            });
            entries.insert(
                number,
                Entry {
                    started,
                    started_unix_ms,
                    tokens: 0,
                    from_usage: false,
                    last_token: None,
                    error: None,
                    ended_at: None,
                },
            )
        });
        let result = stream(&load, number).await;
        let (tokens, from_usage) = load
            .table
            .with(|entries| entries.get(&number).map(|e| (e.tokens, e.from_usage)))
            .unwrap_or_default();
        let mut line = RequestLine {
            arm: load.arm.clone(),
            request: number,
            started_unix_ms,
            duration_s: started.elapsed().as_secs_f64(),
            tokens,
            token_source: token_source(from_usage).to_owned(),
            finish_reason: None,
            error: None,
        };
        match result {
            Ok(finish_reason) => {
                load.table.with(|entries| entries.remove(&number));
                load.finished.fetch_add(1, Ordering::Relaxed);
                line.finish_reason = finish_reason;
                let _ = load.writer.append(&SoakJournalLine::Request(line));
            }
            Err((class, error)) => {
                load.table.with(|entries| {
                    if let Some(entry) = entries.get_mut(&number) {
                        entry.error = Some(error.clone());
                        entry.ended_at = Some(Instant::now());
                    }
                });
                let _ = load.failures.send(Failure {
                    request: number,
                    at: Instant::now(),
                    unix_ms: unix_ms(),
                    class,
                    error: error.clone(),
                });
                line.error = Some(error);
                let _ = load.writer.append(&SoakJournalLine::Request(line));
                // Not a tight loop against a server that is down.
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
}

/// Streams request `number`, counting its tokens in the table; its finish reason, or how it
/// failed.
async fn stream(load: &Load, number: u64) -> Result<Option<String>, (FailClass, String)> {
    let request = load.request(number);
    let mut stream = load
        .client
        .chat_stream(&request)
        .await
        .map_err(|error| classify(&error))?;
    let mut finish_reason = None;
    while let Some(event) = stream.next_event().await {
        let event = event.map_err(|error| classify(&error))?;
        let chunk = &event.chunk;
        let usage = chunk.usage.as_ref().map(|usage| usage.completion_tokens);
        let bearing = chunk.is_token_bearing();
        if let Some(reason) = chunk.finish_reason() {
            finish_reason = Some(reason.to_owned());
        }
        if usage.is_none() && !bearing {
            continue;
        }
        let now = Instant::now();
        let mut added = 0;
        load.table.with(|entries| {
            if let Some(entry) = entries.get_mut(&number) {
                let before = entry.tokens;
                match usage {
                    Some(tokens) => {
                        entry.from_usage = true;
                        entry.tokens = entry.tokens.max(tokens);
                    }
                    None if !entry.from_usage => entry.tokens += 1,
                    None => {}
                }
                added = entry.tokens - before;
                if added > 0 || bearing {
                    entry.last_token = Some(now);
                }
            }
        });
        load.tokens.fetch_add(added, Ordering::Relaxed);
    }
    if finish_reason.is_none() {
        return Err((
            FailClass::Reset,
            "the stream ended without a finish reason".to_owned(),
        ));
    }
    Ok(finish_reason)
}

fn classify(error: &ClientError) -> (FailClass, String) {
    let class = match error {
        ClientError::Connect { .. } => FailClass::Refused,
        ClientError::StreamDropped { .. }
        | ClientError::Request { .. }
        | ClientError::Response { .. } => FailClass::Reset,
        ClientError::Http { status, .. } if crate::probe::is_configuration_status(*status) => {
            FailClass::Rejected(*status)
        }
        _ => FailClass::Other,
    };
    (class, vernier_cli::one_line(error))
}
