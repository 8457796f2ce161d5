//! The parts of a run that are not its configuration: the command line, the simulator, the
//! GPUs to read and a shard's start.

use std::time::Duration;

/// The lateness to `--start-at` allowed unless asked otherwise.
pub const DEFAULT_START_TOLERANCE: Duration = Duration::from_secs(2);
/// The pause between one measured repetition's sending and the next one's start on the grid,
/// unless asked otherwise: room for the last requests' answers and the next cell's warm-up.
pub const DEFAULT_SHARD_GAP: Duration = Duration::from_secs(10);

/// How often the GPUs are sampled unless asked otherwise.
pub const DEFAULT_GPU_SAMPLE_INTERVAL: Duration = Duration::from_millis(500);

/// The parts of a run that are not its configuration.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunContext {
    /// The command line as typed (recorded, and used for the resume command).
    pub command_line: Vec<String>,
    /// The client points at the in-process simulator.
    pub simulator: bool,
    /// A shell command whose output describes the server's GPU.
    pub gpu_info_cmd: Option<String>,
    /// `--gpu-metrics-url`: a DCGM exporter (or the server's Prometheus text) to read the
    /// server's GPUs from; without it, NVML on this machine when the server runs here.
    pub gpu_metrics_url: Option<String>,
    /// The interval between GPU samples; zero turns GPU reading off.
    pub gpu_sample_interval: Duration,
    /// `--gpus`: the server's GPUs by index, on a machine whose other GPUs serve others
    /// (`None`: every GPU read).
    pub gpus: Option<Vec<u32>>,
    /// `--start-at`: a shard's measured work starts at this instant, ms since the Unix epoch.
    pub start_at_unix_ms: Option<u64>,
    /// `--start-tolerance`: how late a shard may reach `start_at` before it fails.
    pub start_tolerance: Duration,
    /// `--shard-gap`: the pause between a shard's measured repetitions on the shared grid.
    pub shard_gap: Duration,
    /// The command that continues the run, when the run is part of another tool's (a
    /// battery's: `battery run ... --resume FOLDER`); `None`: the command line with
    /// `--resume JOURNAL`.
    pub resume_command: Option<String>,
}

impl Default for RunContext {
    /// No command line, a server (not the simulator), GPUs sampled every
    /// [`DEFAULT_GPU_SAMPLE_INTERVAL`].
    fn default() -> Self {
        Self {
            command_line: Vec::new(),
            simulator: false,
            gpu_info_cmd: None,
            gpu_metrics_url: None,
            gpu_sample_interval: DEFAULT_GPU_SAMPLE_INTERVAL,
            gpus: None,
            start_at_unix_ms: None,
            start_tolerance: DEFAULT_START_TOLERANCE,
            shard_gap: DEFAULT_SHARD_GAP,
            resume_command: None,
        }
    }
}

impl RunContext {
    /// A context with the command line `command_line`.
    pub fn new(command_line: Vec<String>) -> Self {
        Self {
            command_line,
            ..Self::default()
        }
    }

    /// Reads the server's GPUs from the DCGM exporter (or Prometheus text) at `url`.
    #[must_use]
    pub fn gpu_metrics_url(mut self, url: Option<String>) -> Self {
        self.gpu_metrics_url = url;
        self
    }

    /// Reads only the GPUs `gpus` names (by index); `None` reads every GPU.
    #[must_use]
    pub fn gpus(mut self, gpus: Option<Vec<u32>>) -> Self {
        self.gpus = gpus;
        self
    }

    /// Samples the GPUs every `interval`; zero reads no GPU at all.
    #[must_use]
    pub fn gpu_sample_interval(mut self, interval: Duration) -> Self {
        self.gpu_sample_interval = interval;
        self
    }

    /// Marks the client as pointing at the in-process simulator.
    #[must_use]
    pub fn simulator(mut self, simulator: bool) -> Self {
        self.simulator = simulator;
        self
    }

    /// A shard's start (`--start-at`, ms since the Unix epoch), the lateness it may have
    /// (`--start-tolerance`) and the pause between its repetitions (`--shard-gap`).
    #[must_use]
    pub fn shard_start(
        mut self,
        start_at_unix_ms: Option<u64>,
        tolerance: Duration,
        gap: Duration,
    ) -> Self {
        self.start_at_unix_ms = start_at_unix_ms;
        self.start_tolerance = tolerance;
        self.shard_gap = gap;
        self
    }

    /// Says `command` where the run says how to continue it (a battery's own resume command
    /// for its sweep part).
    #[must_use]
    pub fn resume_command(mut self, command: Option<String>) -> Self {
        self.resume_command = command;
        self
    }

    /// The command that continues the run of `journal`: the one set with
    /// [`RunContext::resume_command`], else the command line as typed with `--resume JOURNAL`.
    pub(crate) fn resume_with(&self, journal: &std::path::Path) -> String {
        self.resume_command.clone().unwrap_or_else(|| {
            vernier_cli::resume_command(
                vernier_cli::program_name(&self.command_line, "sweep"),
                &self.command_line,
                "--resume",
                &journal.display().to_string(),
            )
        })
    }

    /// Records the output of `command` as the GPU's description.
    #[must_use]
    pub fn gpu_info_cmd(mut self, command: Option<String>) -> Self {
        self.gpu_info_cmd = command;
        self
    }
}
