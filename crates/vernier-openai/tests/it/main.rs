//! Integration tests for vernier-openai: recorded transcripts, a loopback fault server, a
//! loopback TLS server, the simulator, and property tests of the SSE decoder.

mod faults;
mod fixtures;
mod head;
#[cfg(feature = "meter")]
mod provider_shapes;
mod sim;
mod split;
mod support;
mod tls;
