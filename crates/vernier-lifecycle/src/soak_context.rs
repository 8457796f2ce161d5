//! What every part of a soak shares, and how it names times and files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use vernier_journal::JournalWriter;
use vernier_openai::Client;

use crate::observer::ReadyObserver;
use crate::soak_config::{SoakArm, SoakConfig};

/// What every part of a soak shares.
pub(crate) struct Context<'a> {
    pub(crate) config: &'a SoakConfig,
    pub(crate) out: &'a Path,
    pub(crate) writer: Arc<JournalWriter>,
    pub(crate) observer: &'a dyn ReadyObserver,
    pub(crate) next_request: Arc<AtomicU64>,
    /// Opens every prompt, with the request's number: no two prompts share a cached prefix.
    pub(crate) nonce: String,
    pub(crate) load_client: Client,
    pub(crate) probe_client: Client,
}

/// `mm:ss` (or `h:mm:ss`) of seconds.
pub(crate) fn clock(seconds: f64) -> String {
    let whole = Duration::try_from_secs_f64(seconds.max(0.0) + 0.5).map_or(0, |d| d.as_secs());
    let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{secs:02}")
    } else {
        format!("{minutes:02}:{secs:02}")
    }
}

/// A file-name form of an arm's name.
pub(crate) fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Where a launch's log goes.
pub(crate) fn log_path(ctx: &Context<'_>, arm: &SoakArm, launch: usize) -> PathBuf {
    ctx.out
        .join("logs")
        .join(format!("{}-{launch}.log", slug(&arm.name)))
}
