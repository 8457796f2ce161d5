//! A sweep's three parts, each handed to what uses it: the [`Target`] (the server and what the
//! run learned about it), the [`Plan`] (what is sent, and the watchdog's waits) and the
//! [`Record`] (the journal, captures, progress and the resume command). Stream tasks hold the
//! three together as a [`Sweep`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use vernier_openai::{ChatRequest, Client};
use vernier_run::{ClockAnchor, RefusedFields, RequestPacer, RunError, StopReason, WaitBudget};

use crate::config::{CellKey, SweepConfig, Workload};
use crate::corpus::{Corpus, NonceSource};
use crate::error::SweepError;
use crate::journal::{Attempt, FieldDropped, JournalWriter, SweepJournalLine};
use crate::observer::SweepObserver;
use crate::runtimes::StreamRuntimes;

/// The server measured and what the run learned about it.
pub(crate) struct Target {
    pub(crate) client: Client,
    /// `/metrics` answered at the start.
    pub(crate) has_metrics: bool,
    /// The generated-tokens counter the watchdog reads; `None` when `/metrics` has no known one.
    pub(crate) generation_counter: Option<&'static str>,
    /// The kernel stamps received data (`vernier_openai::kernel_rx_available`): every event
    /// carries its receive time, so the scheduler probe can tick sparsely.
    pub(crate) kernel_rx: bool,
    /// Fields the server refused, dropped for the rest of the run.
    pub(crate) refused: RefusedFields,
    /// `--max-rps`.
    pub(crate) pacer: RequestPacer,
    /// What is left of the run's budget for waits on rate limits.
    pub(crate) wait_budget: WaitBudget,
    /// The measured streams' own single-threaded runtimes (`None`: the run's runtime).
    pub(crate) runtimes: Option<StreamRuntimes>,
    /// The GPUs to sample over each cell.
    pub(crate) gpu: vernier_run::OpenedGpu,
}

impl Target {
    /// The wait before trying again after the `n`-th rate-limited answer in a row, taken from
    /// the run's budget; `None` when the budget cannot cover it (the try then counts as a
    /// failure). Returns the wait, its cause and what the server asked for.
    pub(crate) fn rate_limit_wait(
        &self,
        error: &vernier_openai::ClientError,
        n: u32,
    ) -> Option<(Duration, vernier_run::WaitCause, Option<Duration>)> {
        let asked = match error {
            vernier_openai::ClientError::Http {
                status: 429 | 503,
                retry_after,
                ..
            } => *retry_after,
            _ => return None,
        };
        let (wait, cause) = self.wait_budget.take(asked, n)?;
        Some((wait, cause, asked))
    }
}

/// How long the watchdog waits on a silent stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watchdog {
    /// Silence before the server's generation counter is checked.
    pub(crate) idle_timeout: Duration,
    /// The longest wait on a silent stream while the server is busy elsewhere.
    pub(crate) busy_wait_cap: Duration,
}

/// What the run sends.
pub(crate) struct Plan {
    pub(crate) config: SweepConfig,
    pub(crate) corpora: BTreeMap<Workload, Corpus>,
    pub(crate) nonces: NonceSource,
    pub(crate) watchdog: Watchdog,
}

impl Plan {
    /// The plan of `config`: a corpus per workload and a fresh nonce source.
    pub(crate) fn new(config: SweepConfig, watchdog: Watchdog) -> Self {
        Self {
            corpora: config
                .workloads
                .iter()
                .map(|&workload| (workload, Corpus::new(workload)))
                .collect(),
            config,
            nonces: NonceSource::new(),
            watchdog,
        }
    }
}

/// What the run records.
pub(crate) struct Record {
    pub(crate) journal: JournalWriter,
    pub(crate) observer: Arc<dyn SweepObserver>,
    /// Converts the monotonic clock's instants to wall-clock nanoseconds.
    pub(crate) clock: ClockAnchor,
    pub(crate) resume_command: String,
    /// `--capture N`: how many streams each cell may still have captured.
    pub(crate) capture_streams: Option<u32>,
    /// `--capture`: streams captured so far per cell.
    pub(crate) captured: Mutex<BTreeMap<CellKey, u32>>,
    /// The measured attempts journaled by this session, per cell, kept so the capacity search
    /// reads its state from memory rather than from the journal.
    pub(crate) measured: Mutex<BTreeMap<CellKey, Vec<Attempt>>>,
}

impl Record {
    /// Whether the next measured stream of `cell` is one of the first `--capture N`.
    pub(crate) fn capture_turn(&self, cell: CellKey) -> bool {
        let Some(wanted) = self.capture_streams.filter(|n| *n > 0) else {
            return false;
        };
        let Ok(mut captured) = self.captured.lock() else {
            return false;
        };
        let count = captured.entry(cell).or_default();
        if *count >= wanted {
            return false;
        }
        *count += 1;
        true
    }

    /// Writes a captured response below the output folder; returns its relative path.
    pub(crate) fn write_capture(
        &self,
        place: (CellKey, u32, u32),
        attempt: u32,
        request: &ChatRequest,
        capture: vernier_openai::Capture,
    ) -> Result<String, SweepError> {
        let (cell, rep, stream) = place;
        let out = self.journal.path().parent().map_or_else(
            || std::path::PathBuf::from("."),
            std::path::Path::to_path_buf,
        );
        let name = format!(
            "captures/{}-p{}-o{}-{}-rep{rep}-stream{stream}-try{attempt}.json",
            cell.workload,
            cell.prompt_tokens_target,
            cell.output_tokens,
            cell.load_label().replace('/', "per"),
        );
        let record = crate::journal::StreamCapture {
            cell,
            rep,
            stream,
            attempt,
            request: serde_json::to_value(request).unwrap_or_default(),
            status: capture.status,
            headers: capture.headers,
            frames: capture
                .reads
                .iter()
                .map(|read| crate::journal::CapturedFrame::new(read.offset_ns, &read.bytes))
                .collect(),
        };
        let path = out.join(&name);
        let write = |path: &std::path::Path| -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let text = serde_json::to_string(&record).map_err(std::io::Error::other)?;
            std::fs::write(path, text)
        };
        write(&path).map_err(|source| SweepError::WriteReport { path, source })?;
        Ok(name)
    }

    /// Journals an attempt, and keeps a measured one in memory for the capacity search.
    pub(crate) fn attempt(&self, attempt: Attempt) -> Result<(), SweepError> {
        if attempt.phase == crate::journal::RepPhase::Measured
            && attempt.status == crate::journal::Status::Ok
            && let Ok(mut measured) = self.measured.lock()
        {
            measured
                .entry(attempt.cell)
                .or_default()
                .push(attempt.clone());
        }
        self.journal
            .append(&SweepJournalLine::Attempt(Box::new(attempt)))
    }

    /// Drops `field` for the rest of the run and journals it; `false` when it was dropped
    /// already (the server refuses the request for another reason).
    pub(crate) fn drop_field(
        &self,
        refused: &RefusedFields,
        field: &'static str,
        server_said: &str,
    ) -> Result<bool, SweepError> {
        let newly = refused.refuse(field);
        if newly {
            let lost = vernier_run::guarantee_lost(field);
            self.observer.warn(&format!(
                "the server refuses `{field}`: going on without it ({lost})"
            ));
            self.journal
                .append(&SweepJournalLine::FieldDropped(FieldDropped {
                    field: field.to_owned(),
                    guarantee_lost: lost.to_owned(),
                    server_said: server_said.to_owned(),
                    unix_ms: vernier_run::unix_ms(),
                }))?;
        }
        Ok(newly)
    }

    /// The error that stops the run for `reason`, with the journal and the resume command.
    pub(crate) fn stopped(&self, reason: StopReason, detail: String) -> SweepError {
        SweepError::Run(RunError::ServerStopped {
            reason,
            detail,
            journal: self.journal.path().to_owned(),
            resume_command: self.resume_command.clone(),
        })
    }
}

/// The three parts together, for the tasks that run streams.
pub(crate) struct Sweep {
    pub(crate) target: Target,
    pub(crate) plan: Plan,
    pub(crate) record: Record,
    /// A shard's measured repetitions start on this grid (empty on one machine).
    pub(crate) grid: crate::shard_grid::RepGrid,
}

impl std::fmt::Debug for Sweep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sweep")
            .field("config", &self.plan.config)
            .finish_non_exhaustive()
    }
}

/// Fields refused so far, for a request being built.
pub(crate) fn dropped_fields(target: &Target) -> BTreeSet<&'static str> {
    target.refused.snapshot()
}
