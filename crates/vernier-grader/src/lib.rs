//! Grades model-written Python against hidden cases, one throwaway Docker container per
//! submission.
//!
//! A [`Grader`] talks to a Docker engine through its API (`bollard`). Each
//! [`Submission`] (the model's code, a hidden harness, [`Case`]s, [`Limits`] and
//! [`Guard`]s) gets its own container and volume, removed on every path, and comes back
//! as a [`Grade`]: a [`GradeReason`], one [`CaseOutcome`] per case, bounded output
//! excerpts, wall time, exit code, the OOM flag, and the image ID it ran in.
//! [`extract_code`] finds the code in a model's reply.
//!
//! # The sandbox
//!
//! Network `none`; memory capped with swap equal to it (no swap); a pids limit; a CPU
//! quota; read-only root; a 16 MiB `noexec` tmpfs at `/tmp`; all capabilities dropped;
//! `no-new-privileges`; user `65534:65534`; IPC mode `none` (no `/dev/shm`); log driver
//! `none` (a flood never reaches the engine's disk); no socket or host path mounted.
//! The files go in by tar upload into a fresh volume at `/work` (a read-only root
//! refuses uploads), owned by root with mode 0444, so the sandbox user can read but not
//! write them. A wall-clock limit kills the container. The exit code and the OOM flag come
//! from inspecting the container. A semaphore bounds containers in flight.
//!
//! # The result channel
//!
//! Expected values never enter the container: `/work` holds the runner, the harness, the
//! solution and `inputs.json` (the case inputs alone). The runner (uploaded with each
//! submission, see the README for why it is not in the image):
//!
//! 1. reads a random 128-bit nonce from stdin before any untrusted code runs, then puts
//!    `/dev/null` in its place; the nonce is in no file, argument or environment variable;
//! 2. duplicates stdout to a private descriptor (not inherited by child processes);
//! 3. imports the harness, then the submission, catching `BaseException` (`SystemExit`
//!    included);
//! 4. for each case calls `run_case(solution, input)`, catching `BaseException` per case
//!    and going on, and writes one line `\n\x1evernier-result NONCE INDEX JSON\n` with
//!    the value, or the exception's class names and message; JSON is written with
//!    `allow_nan=False`, so only true JSON data passes, and an object whose `__eq__`
//!    always returns `True` simply cannot be serialised;
//! 5. ends with `os._exit(0)`, so threads, `atexit` hooks and children change nothing.
//!
//! The grader keeps output lines without the nonce as plain output (forged result lines
//! printed by the submission do nothing), requires exactly one well-formed record per case
//! index (missing or duplicated ones fail that case; a `sys.exit(0)` or `os._exit(0)`
//! before the cases leaves them missing) and compares values on the Rust side: integers
//! exactly, an integer and a float or two floats with relative tolerance 1e-9, booleans
//! apart from numbers, strings and lists exactly (tuples arrive as lists), objects key by
//! key. Records survive an output flood: stdout is read line by line and only the
//! non-record bytes count against the output bound. The runner does not touch the
//! recursion limit.
//!
//! What the channel does not claim: code running in the runner's own interpreter could dig
//! the nonce out of memory and write records. It still cannot learn the expected values,
//! so a forged record only claims a value it would have had to compute. Harnesses should
//! therefore return raw values and leave the verdict to the grader, never return a
//! verdict computed in the container. Guards are a cheap static check, not the boundary.
//!
//! # Example
//!
//! ```no_run
//! use serde_json::json;
//! use vernier_grader::{Case, Grader, GraderConfig, Guard, Submission, extract_code};
//!
//! # async fn example() -> Result<(), vernier_grader::GraderError> {
//! let grader = Grader::connect(GraderConfig::default()).await?;
//! let reply = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```";
//! let code = extract_code(reply).unwrap_or_default();
//! let harness = "def run_case(solution, case_input):\n    return solution.add(*case_input)\n";
//! let cases = vec![Case::new("small", json!([1, 2]), json!(3)), Case::new("negative", json!([-1, -2]), json!(-3))];
//! let submission =
//!     Submission::new(code, harness, cases).with_guards(vec![Guard::ForbiddenName("eval".into())]);
//! let grade = grader.grade(&submission).await;
//! assert!(grade.reason.is_passed(), "{}", grade.reason.detail());
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod compare;
mod config;
mod error;
mod extract;
mod grade;
mod guard;
mod protocol;
mod sandbox;
mod verdict;

pub use config::{Case, DEFAULT_IMAGE, Expected, GraderConfig, Guard, Limits, Submission};
pub use error::GraderError;
pub use extract::extract_code;
pub use grade::{CaseOutcome, Grade, GradeReason};
pub use sandbox::{GRADER_LABEL, Grader};
