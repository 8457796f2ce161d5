//! One life of a run, shared by every Vernier engine (`vernier-sweep`, `vernier-hardsuite`,
//! `vernier-lifecycle`), so that what a run is, whether it may continue and how it ends are
//! decided once:
//!
//! - [`RunError`]: the failures every engine shares (a refused flag, a journal that exists or
//!   cannot be continued, a busy, changed or stopped server), each with its documented exit
//!   code (its kind through `vernier_cli::Failure`); each engine's error wraps it.
//! - [`check_resume`] with [`Setting`]s: one resume policy; each engine declares each setting
//!   as measurement (a change is refused by name) or operational (the value typed wins and is
//!   recorded).
//! - [`ServerFingerprint`] and [`check_same_server`]: one identity check for a resumed run.
//! - [`unix_ms`] and [`ClockAnchor`]: the wall clock beside the monotonic one.
//! - [`RefusedFields`]: optional fields a server refused, and what each carried.
//! - [`run_folder`] and [`run_file_in`]: a run named by its folder or any file in it, wherever a
//!   command line reads one (`show`, `compare`, `--resume`).
//! - With the `engine` feature (on by default): [`build_client`] and [`resolve_model`] (the
//!   target), [`InProcessSimulator`], [`Interrupt`] and [`signals`], and run policy for
//!   rate-limited endpoints ([`RequestPacer`], [`AdaptiveConcurrency`], [`WaitBudget`]) and
//!   for sizing prompts in the server's tokens ([`fit_units`]).
//!
//! Without default features the crate needs no async runtime or HTTP stack, so the engines'
//! reading sides can use its error and policy types.
//!
//! ```
//! use std::path::Path;
//! use vernier_cli::Failure as _;
//! use vernier_run::{RunError, Setting, check_resume};
//!
//! let settings = [
//!     Setting::measurement("--reps", 3, Some(5)),
//!     Setting::operational("--base-url", "http://127.0.0.1:8000", Some("http://127.0.0.1:8001")),
//! ];
//! let error = check_resume(Path::new("out/journal.jsonl"), None, &settings).unwrap_err();
//! assert!(matches!(error, RunError::ConfigMismatch { .. }));
//! assert_eq!(error.exit_kind().code(), 2);
//! ```
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod clock;
mod error;
#[cfg(feature = "engine")]
mod gpu;
mod identity;
#[cfg(feature = "engine")]
mod interrupt;
#[cfg(feature = "engine")]
mod pacing;
mod part_figures;
#[cfg(feature = "engine")]
mod prompt_fit;
mod refusal;
mod refused;
mod resume;
mod run_path;
#[cfg(feature = "engine")]
mod simulator;
#[cfg(feature = "cli")]
mod study;
#[cfg(feature = "engine")]
mod target;
mod target_args;
mod verdict;
mod weights;

pub use clock::{
    ClockAnchor, MAX_SECONDS, instant_ahead, parse_rfc3339_ms, rfc3339_ms, seconds, unix_ms,
    utc_folder_name, utc_minute,
};
pub use error::{RunError, StopReason};
#[cfg(feature = "engine")]
pub use gpu::{OpenedGpu, finish_sampling};
pub use identity::{ServerFingerprint, check_same_server};
#[cfg(feature = "engine")]
pub use interrupt::{Interrupt, block_on, never, signals};
#[cfg(feature = "engine")]
pub use pacing::{
    AdaptiveConcurrency, RequestPacer, WaitBudget, WaitCause, rate_limit_wait, wait_for,
};
pub use part_figures::{Headline, PartPlan, Score};
#[cfg(feature = "engine")]
pub use prompt_fit::{FitError, Fitted, MAX_COUNTS, fit_units};
pub use refusal::{is_refusal, refusal_flag, refusal_hint};
pub use refused::{REFUSABLE, RefusedFields, guarantee_lost, refusable};
pub use resume::{Setting, SettingKind, TypedBeside, check_resume, typed_settings};
pub use run_path::{run_file_in, run_folder, write_atomically};
#[cfg(feature = "engine")]
pub use simulator::InProcessSimulator;
#[cfg(feature = "cli")]
pub use study::{PartContext, PartFailure, PartFuture, PartKind, PartOutcome, check_options};
#[cfg(feature = "engine")]
pub use target::{
    ClientOptions, DEFAULT_API_KEY_ENV, ResolvedModel, api_key_source, build_client, fingerprint,
    identity_changes, kind_name, loaded_weights, read_loaded_weights, resolve_model,
};
pub use target_args::{
    DEFAULT_BASE_URL, ExtraBody, Target, TargetArgs, parse_json_object, trim_base_url,
};
pub use verdict::{
    CLIENT_LAG_P99_US, COALESCED_FIRST_TOKEN_SHARE, INFRA_INVALID_SHARE, Reason, Verdict,
    VerdictLevel, share,
};
pub use weights::{
    LoadedWeights, file_type_precisions, name_mismatch, precisions_named, redact_secrets,
};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
