//! Faults a request can be answered with: an error status, a dropped or stalled stream, a
//! malformed or over-long event.

use serde::{Deserialize, Serialize};

/// One fault applied to one request.
///
/// In a request body it is the field `"sim_fault"`, for example
/// `{"kind": "stall_after_events", "events": 3, "ms": 500}`.
/// "Events" count every `data:` line sent, including the role-only first chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Fault {
    /// Answer with this HTTP status and body instead of generating.
    /// Without a body, a vLLM-shaped error object is sent.
    HttpStatus {
        /// HTTP status code, e.g. 429 or 500.
        status: u16,
        /// Response body sent as is (JSON content type).
        #[serde(default)]
        body: Option<String>,
    },
    /// Close the connection abruptly after this many events.
    DropAfterEvents {
        /// Events sent before the drop.
        events: usize,
    },
    /// Pause for `ms` milliseconds after this many events, then carry on.
    StallAfterEvents {
        /// Events sent before the stall.
        events: usize,
        /// Length of the stall in milliseconds.
        ms: u64,
    },
    /// Send one event whose JSON is cut off after this many events, then carry on.
    MalformedJsonAfterEvents {
        /// Events sent before the malformed one.
        events: usize,
    },
    /// Send an error event (`data: {"error": {"code": 500, "message": ..., "type":
    /// "server_error"}}`, as llama.cpp does) after this many events, and end the stream there.
    ErrorEventAfterEvents {
        /// Events sent before the error.
        events: usize,
        /// The error's message.
        message: String,
    },
    /// Send one 5 MiB `data:` line after this many events, then carry on.
    OverlongLineAfterEvents {
        /// Events sent before the over-long one.
        events: usize,
    },
}
