//! The crate's single error type.

use std::path::PathBuf;

/// Everything that can go wrong when configuring or starting the simulator.
///
/// Messages read after "failed to ..." and name the input and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The listening socket could not be bound.
    #[error("bind the simulator to {addr} (choose a free port or port 0)")]
    Bind {
        /// The address that was asked for.
        addr: std::net::SocketAddr,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A configuration value is out of range.
    #[error("accept simulator setting `{field}`: {reason}")]
    InvalidConfig {
        /// The setting's name.
        field: &'static str,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// A script rule's pattern is not a valid regular expression.
    #[error("compile script pattern `{pattern}` (fix the regular expression)")]
    ScriptPattern {
        /// The pattern as written.
        pattern: String,
        /// The regex crate's reason.
        source: regex::Error,
    },
    /// A script file could not be read.
    #[error("read script file {path} (check the path)")]
    ScriptRead {
        /// The path given.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A script in JSON could not be parsed.
    #[error(
        "parse script JSON (expected {{\"rules\": [{{\"pattern\": ..., \"reply\": {{...}}}}]}} or a bare array of rules)"
    )]
    ScriptJson(#[source] serde_json::Error),
    /// A script in TOML could not be parsed.
    #[error("parse script TOML (expected [[rules]] tables with pattern and reply)")]
    ScriptToml(#[source] toml::de::Error),
    /// The ground-truth file could not be opened for appending.
    #[error("open ground-truth file {path} (check that its folder exists and is writable)")]
    GroundTruthFile {
        /// The path given.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
}
