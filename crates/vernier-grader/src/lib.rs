//! Grades model-written Python against hidden cases, one throwaway Docker container per
//! submission.
//!
//! A [`Grader`] talks to a Docker engine through its API (`bollard`). Each
//! [`Submission`] (the model's code, a hidden harness, [`Case`]s, [`Limits`] and
//! [`Guard`]s) gets its own container and volume, removed on every path, and comes back
//! as a [`Grade`]: a [`GradeReason`], one [`CaseOutcome`] per case, bounded output
//! excerpts, wall time, exit code, the OOM flag, and the image ID it ran in.
//! [`extract_code`] finds the code in a model's reply; [`compare`] and [`violated_guard`]
//! are the grader's value comparison and static guard check, for callers that check
//! results without a container.
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
//! solution and `inputs.json` (the case inputs alone). The channel is unforgeable by
//! construction, because the only process that can write a record never runs submitted
//! code. The runner (uploaded with each submission, see the README for why it is not in
//! the image):
//!
//! 1. reads a random 128-bit nonce from stdin, then puts `/dev/null` in its place; the
//!    nonce is in no file, argument or environment variable;
//! 2. makes itself non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): with every capability
//!    dropped, no other process can then read or write its memory (`/proc/1/mem`,
//!    `process_vm_*`), trace it, or open its descriptors through `/proc/1/fd`; as the
//!    container's PID 1 it cannot be killed from inside, and it ignores `SIGINT`; without
//!    `ctypes` it refuses to run (`infra`);
//! 3. imports the harness, never the submission;
//! 4. for each case creates two pipes and forks a case process, which keeps stdin
//!    (`/dev/null`), stderr, a pipe as its stdout and a result pipe, closes every other
//!    descriptor (it holds none that reaches the container's stdout), imports the
//!    submission, calls `run_case(solution, input)` for that one case, catching
//!    `BaseException`, and sends one length-prefixed JSON message: the value, or the
//!    exception's class names and message, or why the value could not be serialised
//!    (JSON is written with `allow_nan=False`, so only true JSON data passes, and an
//!    object whose `__eq__` always returns `True` cannot be serialised);
//! 5. copies the case process's stdout to its own with every `0x1E` byte shown as `␞`,
//!    so no copied line can begin a record, and reads the message bounded, parses it
//!    with its own JSON reader, keeps only the known shapes and writes the one record of
//!    that case, `\n\x1evernier-result NONCE INDEX JSON\n`, with the index it assigned;
//! 6. ends with `os._exit(0)`, so threads, `atexit` hooks and children change nothing.
//!
//! A case process can therefore only influence its own case's value, and only as
//! returning that value would: even one that digs the nonce out of its memory (a copy of
//! the runner's) has no descriptor on which a record would be read, and a process it
//! leaves behind holds only that case's pipes, which the runner has stopped reading. A
//! case process that dies before sending fails its case only, with the reason:
//! `exited with status 0 before returning` (`sys.exit` is an exception and is reported as
//! raised; `os._exit` is not), `killed by signal 11 (SIGSEGV)`, and so on. A `SIGKILL`
//! while the memory cgroup's `oom_kill` count rose (or, where that count cannot be read,
//! with a peak resident set near the memory limit) is the kernel's OOM killer: the case
//! reads `out of memory`, later cases are not run, and the grade is `out_of_memory`
//! whether or not Docker sets its OOM flag for a child. The kernel kills the largest
//! process, a case process (each starts as a copy of the runner and grows); if it ever
//! kills the runner, the container dies and Docker's flag gives `out_of_memory` as before.
//! A case that hangs is ended by the wall-clock limit (`timeout`). An `import` that raises
//! (a syntax error, `SystemExit`) is reported by the case process and ends the run as
//! `crashed`, with the exception. Forking after the harness import costs a few
//! milliseconds per case.
//!
//! The grader keeps output lines without the nonce as plain output, requires exactly one
//! well-formed record per case index (missing or duplicated ones fail that case) and
//! compares values on the Rust side: integers exactly, an integer and a float or two
//! floats with relative tolerance 1e-9, booleans apart from numbers, strings and lists
//! exactly (tuples arrive as lists), objects key by key. Records survive an output flood:
//! stdout is read line by line and only the non-record bytes count against the output
//! bound. The runner does not touch the recursion limit.
//!
//! What the channel does not claim: the harness runs in the case process with the
//! submission, so checks a harness makes there can be bypassed (the submission can send
//! any JSON value as its result). Harnesses should therefore return raw values and leave
//! the verdict to the grader. Guards are a cheap static check, not the boundary.
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
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod compare;
mod config;
mod error;
mod extract;
mod grade;
mod guard;
mod protocol;
mod sandbox;
mod verdict;

pub use compare::compare;
pub use config::{Case, DEFAULT_IMAGE, Expected, GraderConfig, Guard, Limits, Submission};
pub use error::GraderError;
pub use extract::extract_code;
pub use grade::{CaseOutcome, Grade, GradeReason};
pub use guard::violated_guard;
pub use sandbox::{GRADER_LABEL, Grader};
