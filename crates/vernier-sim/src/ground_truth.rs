//! What the simulator knows it did for each request.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::error::SimError;
use crate::fault::Fault;

/// One request as the simulator served it; one JSON line each in the ground-truth file.
///
/// Instants are nanoseconds after the request arrived (its headers were parsed). For a stream,
/// an event's instant is when its last byte was handed to the connection. For `stream: false`
/// the event lists hold the engine steps' completion instants (nothing is sent per step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GroundTruth {
    /// Response id (`chatcmpl-…` or `cmpl-…`).
    pub request_id: String,
    /// `"chat"` or `"completions"`.
    pub endpoint: String,
    /// Prompt tokens, template overhead included.
    pub prompt_tokens: u32,
    /// Prompt tokens served from the prefix cache.
    pub cached_tokens: u32,
    /// Completion tokens as reported in `usage` (reasoning included).
    pub completion_tokens: u32,
    /// Reasoning tokens among the completion tokens.
    pub reasoning_tokens: u32,
    /// Tokens carried by each token-bearing event, in order (role-only, usage, `[DONE]`,
    /// keep-alive and fault events are not listed).
    pub tokens_per_event: Vec<u32>,
    /// Send instant of each token-bearing event, ns after arrival.
    pub event_offsets_ns: Vec<u64>,
    /// Send instant of the first token-bearing event, ns after arrival.
    pub first_token_event_ns: Option<u64>,
    /// `(completion_tokens − tokens in the first token-bearing event) / (last − first
    /// token-bearing instant)`; `None` with fewer than two such events.
    pub true_decode_tokens_per_s: Option<f64>,
    /// Modelled prefill: fixed overhead plus uncached tokens at the prefill rate, in ms.
    pub prefill_ms: f64,
    /// Time spent waiting for a slot (`max_num_seqs`), in ms.
    pub queue_ms: f64,
    /// Whether any prompt token came from the prefix cache.
    pub cache_hit: bool,
    /// The request's `cache_salt`.
    pub cache_salt: Option<String>,
    /// `"stop"`, `"length"` or `"tool_calls"`.
    pub finish_reason: String,
    /// Whether the request asked for a stream.
    pub stream: bool,
    /// The fault applied to this request, if any.
    pub fault: Option<Fault>,
    /// Whether the whole response was handed over (false after a drop or a client hang-up).
    pub completed: bool,
    /// Index of the script rule that answered, if any.
    pub script_rule: Option<usize>,
    /// When the request arrived, in nanoseconds since the Unix epoch (the wall clock read once
    /// per request and set back by the time since arrival), so that records of several
    /// requests can be laid on one time line.
    #[serde(default)]
    pub arrival_unix_ns: u64,
    /// Tools the request offered (its `tools` array's length; 0 without one).
    #[serde(default)]
    pub tools_offered: u32,
    /// Tool calls in the reply (scripted, or drawn by
    /// [`SimConfig::tool_call_share`](crate::SimConfig::tool_call_share)).
    #[serde(default)]
    pub tool_calls: u32,
}

impl GroundTruth {
    /// Records one token-bearing event carrying `tokens`, sent (or computed) at `at`.
    pub(crate) fn push_event(&mut self, arrival: Instant, at: Instant, tokens: u32) {
        let offset = at.duration_since(arrival).as_nanos();
        self.event_offsets_ns
            .push(u64::try_from(offset).unwrap_or(u64::MAX));
        self.tokens_per_event.push(tokens);
    }

    pub(crate) fn finish_rates(&mut self) {
        self.first_token_event_ns = self.event_offsets_ns.first().copied();
        let (Some(first), Some(last), Some(first_tokens)) = (
            self.event_offsets_ns.first(),
            self.event_offsets_ns.last(),
            self.tokens_per_event.first(),
        ) else {
            self.true_decode_tokens_per_s = None;
            return;
        };
        let sent: u32 = self.tokens_per_event.iter().sum();
        let total = if self.completed {
            self.completion_tokens
        } else {
            sent
        };
        self.true_decode_tokens_per_s = (last > first).then(|| {
            f64::from(total.saturating_sub(*first_tokens)) / ((last - first) as f64 / 1e9)
        });
    }
}

/// In-memory list and optional JSON Lines file.
#[derive(Debug)]
pub(crate) struct GroundTruthLog {
    records: Mutex<Vec<GroundTruth>>,
    file: Mutex<Option<File>>,
}

impl GroundTruthLog {
    pub(crate) fn open(path: Option<&Path>) -> Result<Self, SimError> {
        let file = path
            .map(|path| {
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| SimError::GroundTruthFile {
                        path: path.to_owned(),
                        source,
                    })
            })
            .transpose()?;
        Ok(Self {
            records: Mutex::new(Vec::new()),
            file: Mutex::new(file),
        })
    }

    pub(crate) fn push(&self, mut record: GroundTruth) {
        record.finish_rates();
        if let Ok(mut file) = self.file.lock()
            && let Some(file) = file.as_mut()
            && let Ok(mut line) = serde_json::to_vec(&record)
        {
            line.push(b'\n');
            // One write per line, then flush: a crash loses at most the line being written.
            // A failing disk must not take the server down, so errors are ignored here.
            let _ = file.write_all(&line).and_then(|()| file.flush());
        }
        if let Ok(mut records) = self.records.lock() {
            records.push(record);
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<GroundTruth> {
        self.records
            .lock()
            .map(|records| records.clone())
            .unwrap_or_default()
    }
}
