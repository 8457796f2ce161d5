//! What the caller hands the grader: engine configuration, submissions, cases, limits, guards.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The image the grader uses unless told otherwise; `docker/build-grader-image.sh` builds it.
pub const DEFAULT_IMAGE: &str = "vernier-grader-python:latest";

/// How to reach the Docker engine and what to run there.
///
/// ```
/// use vernier_grader::GraderConfig;
/// let config = GraderConfig::default()
///     .with_max_in_flight(4)
///     .with_label("org.example.run", "nightly");
/// assert_eq!(config.image, "vernier-grader-python:latest");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GraderConfig {
    /// Image name or ID with `python3` and a user 65534; default [`DEFAULT_IMAGE`].
    pub image: String,
    /// Containers allowed to run at once (at least 1); default 2.
    pub max_in_flight: usize,
    /// Engine address (`unix:///var/run/docker.sock`, `tcp://host:2375`); `None` reads
    /// `DOCKER_HOST`, else the local socket.
    pub docker_host: Option<String>,
    /// Extra labels put on every container and volume this grader creates, e.g. a run ID
    /// to find them later. The grader's own labels start with `org.vernier.grader`.
    pub labels: BTreeMap<String, String>,
}

impl Default for GraderConfig {
    fn default() -> Self {
        Self {
            image: DEFAULT_IMAGE.to_owned(),
            max_in_flight: 2,
            docker_host: None,
            labels: BTreeMap::new(),
        }
    }
}

impl GraderConfig {
    /// Sets the image (name or `sha256:` ID).
    #[must_use]
    pub fn with_image(mut self, image: impl Into<String>) -> Self {
        self.image = image.into();
        self
    }

    /// Sets how many containers may run at once (0 is taken as 1).
    #[must_use]
    pub fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight.max(1);
        self
    }

    /// Sets the engine address instead of `DOCKER_HOST`.
    #[must_use]
    pub fn with_docker_host(mut self, docker_host: impl Into<String>) -> Self {
        self.docker_host = Some(docker_host.into());
        self
    }

    /// Adds a label to every container and volume this grader creates.
    #[must_use]
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }
}

/// Resource limits of one submission's container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Limits {
    /// Wall-clock time of the whole container, from start to exit; then it is killed.
    /// Default 10 s.
    pub wall_time: Duration,
    /// Memory, and memory plus swap (no swap at all); default 256 MiB.
    pub memory_bytes: u64,
    /// Processes and threads; default 64.
    pub pids: i64,
    /// CPU quota in billionths of a CPU; default 1e9 (one core).
    pub nano_cpus: i64,
    /// Bytes kept of each of stdout and stderr, and the largest result record; default 1 MiB.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            wall_time: Duration::from_secs(10),
            memory_bytes: 256 << 20,
            pids: 64,
            nano_cpus: 1_000_000_000,
            output_bytes: 1 << 20,
        }
    }
}

impl Limits {
    /// Sets the wall-clock limit.
    #[must_use]
    pub fn with_wall_time(mut self, wall_time: Duration) -> Self {
        self.wall_time = wall_time;
        self
    }

    /// Sets the memory limit (swap is always off).
    #[must_use]
    pub fn with_memory_bytes(mut self, memory_bytes: u64) -> Self {
        self.memory_bytes = memory_bytes;
        self
    }

    /// Sets the process limit.
    #[must_use]
    pub fn with_pids(mut self, pids: i64) -> Self {
        self.pids = pids;
        self
    }

    /// Sets the CPU quota in billionths of a CPU.
    #[must_use]
    pub fn with_nano_cpus(mut self, nano_cpus: i64) -> Self {
        self.nano_cpus = nano_cpus;
        self
    }

    /// Sets the output bound.
    #[must_use]
    pub fn with_output_bytes(mut self, output_bytes: usize) -> Self {
        self.output_bytes = output_bytes;
        self
    }
}

/// A static check on the submission's source (never on the harness).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Guard {
    /// The name may not appear as an identifier, attribute or call, e.g. `eval`.
    /// Comments and string literals are ignored; identifiers are NFKC-normalised as
    /// Python does, so `ｅｖａｌ` counts as `eval`.
    ForbiddenName(String),
}

/// What a case must produce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Expected {
    /// `run_case` returns this value (compared on the Rust side, see the crate docs).
    Value(serde_json::Value),
    /// `run_case` raises this exception class or a subclass, e.g. `"ValueError"`.
    Raises(String),
}

/// One hidden test: an input for the harness and what it must give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Case {
    /// Name used in reports, e.g. `"empty_list"`.
    pub name: String,
    /// Handed to `run_case(solution, input)`; this is all the container sees of the case.
    pub input: serde_json::Value,
    /// Kept on the Rust side.
    pub expected: Expected,
}

impl Case {
    /// A case whose result must equal `expected`.
    pub fn new(
        name: impl Into<String>,
        input: serde_json::Value,
        expected: serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            input,
            expected: Expected::Value(expected),
        }
    }

    /// A case that must raise `exception` (a class name such as `"ValueError"`).
    pub fn raises(
        name: impl Into<String>,
        input: serde_json::Value,
        exception: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            input,
            expected: Expected::Raises(exception.into()),
        }
    }
}

/// Model-written code with its hidden harness and cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Submission {
    /// The model's Python source; it becomes `solution.py`.
    pub code: String,
    /// Hidden Python defining `def run_case(solution, case_input)`, which returns a
    /// JSON-able result or raises; `solution` is the imported submission module. It
    /// should return raw values and leave the verdict to the grader.
    pub harness: String,
    /// The cases, run in order.
    pub cases: Vec<Case>,
    /// Resource limits.
    pub limits: Limits,
    /// Static checks on `code`.
    pub guards: Vec<Guard>,
}

impl Submission {
    /// A submission with default limits and no guards.
    pub fn new(code: impl Into<String>, harness: impl Into<String>, cases: Vec<Case>) -> Self {
        Self {
            code: code.into(),
            harness: harness.into(),
            cases,
            limits: Limits::default(),
            guards: Vec::new(),
        }
    }

    /// Replaces the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Replaces the guards.
    #[must_use]
    pub fn with_guards(mut self, guards: Vec<Guard>) -> Self {
        self.guards = guards;
        self
    }
}
