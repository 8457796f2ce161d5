//! The sweep's entry point: set-up checks, the journal (new or resumed), the run, the reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use vernier_openai::{Client, ClientBuilder, ServerKind, Timeouts};
use vernier_sim::{SimConfig, TokensPerEvent};

use crate::config::SweepConfig;
use crate::corpus::{self, Corpus, NonceSource};
use crate::environment::{self, Environment, ServedModel, ServerInfo};
use crate::error::SweepError;
use crate::journal::{self, Header, JournalWriter, LoadedSweepJournal, Resumed, SweepJournalLine};
use crate::observer::SweepObserver;
use crate::report::{self, ReportFiles};
use crate::runner::{self, ResumeState, Shared};
use crate::summary::{self, RunFile};

/// What a finished (or interrupted) run leaves behind.
#[derive(Debug)]
#[non_exhaustive]
pub struct SweepOutcome {
    /// The run file as written.
    pub run: RunFile,
    /// The files written.
    pub files: ReportFiles,
    /// The journal.
    pub journal: PathBuf,
    /// True when the interrupt future fired and the run stopped early.
    pub interrupted: bool,
}

/// The simulator started when no server is given: speculative decoding (about 2.3 tokens per
/// event on prose, 3.4 on code), a prefix cache, and fast steps so the default sweep finishes
/// in under half a minute.
pub fn demo_simulator_config() -> SimConfig {
    SimConfig::builder()
        .tokens_per_event(TokensPerEvent::speculative())
        .prefix_cache(true)
        .decode_step(Duration::from_millis(2))
        .prefill_tokens_per_s(20_000.0)
        .fixed_overhead(Duration::from_millis(2))
        .build()
}

/// The banner shown when the simulator stands in for a server.
pub const SIMULATOR_BANNER: &str = "No --base-url given: measuring the bundled simulator in-process. \
These figures describe the simulator, not a real server; pass --base-url URL to measure one.";

/// A client set up as the sweep uses it: a 10 s connect timeout, no other timeout (the
/// watchdog handles silent streams), and the sweep's user agent; the API key is read from the
/// environment variable `api_key_env` when given, and the CA certificates in the PEM file
/// `ca_cert` are trusted beside the built-in roots (`HTTPS_PROXY` and `NO_PROXY` are honoured).
pub fn sweep_client(
    base_url: &str,
    api_key_env: Option<&str>,
    ca_cert: Option<&Path>,
) -> Result<Client, SweepError> {
    let mut builder = ClientBuilder::new(base_url)
        .timeouts(Timeouts::none().connect(Some(Duration::from_secs(10))))
        .user_agent(format!("vernier-sweep/{}", env!("CARGO_PKG_VERSION")));
    if let Some(var) = api_key_env {
        builder = builder.api_key_from_env(var);
    }
    if let Some(path) = ca_cert {
        let pem = std::fs::read(path).map_err(|error| SweepError::InvalidArgument {
            what: "--ca-cert".to_owned(),
            detail: format!(
                "cannot read {}: {error}; give a PEM file with the server's CA certificate",
                path.display()
            ),
        })?;
        builder = builder.ca_cert_pem(path.display().to_string(), pem);
    }
    builder.build().map_err(|source| SweepError::Client {
        what: format!("set up a client for {base_url}"),
        source,
    })
}

/// Where the run's journal comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SweepStart {
    /// A new run of `config` into the folder `out` (which must not hold a journal yet).
    New {
        /// The configuration. An empty `model` is taken from `/v1/models`; `target` and
        /// `prompt_set_sha256` are filled in by the run.
        config: Box<SweepConfig>,
        /// The output folder.
        out: PathBuf,
    },
    /// Continue the run recorded in this journal, with the configuration it records.
    Resume {
        /// The journal (its folder is the output folder).
        journal: PathBuf,
    },
}

/// The parts of a run that are not its configuration.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunContext {
    /// The command line as typed (recorded, and used for the resume command).
    pub command_line: Vec<String>,
    /// The client points at the in-process simulator.
    pub simulator: bool,
    /// A shell command whose output describes the server's GPU.
    pub gpu_info_cmd: Option<String>,
}

impl RunContext {
    /// A context with the command line `command_line`.
    pub fn new(command_line: Vec<String>) -> Self {
        Self {
            command_line,
            ..Self::default()
        }
    }

    /// Marks the client as pointing at the in-process simulator.
    #[must_use]
    pub fn simulator(mut self, simulator: bool) -> Self {
        self.simulator = simulator;
        self
    }

    /// Records the output of `command` as the GPU's description.
    #[must_use]
    pub fn gpu_info_cmd(mut self, command: Option<String>) -> Self {
        self.gpu_info_cmd = command;
        self
    }
}

/// A future that, when it completes, interrupts the run (the reports are still written).
pub type Interrupt = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Reads a sweep journal and checks that it is one this version can continue.
pub fn read_resumable(path: &Path) -> Result<(LoadedSweepJournal, Header), SweepError> {
    let loaded = journal::read_sweep_journal(path)?;
    let header = loaded
        .header()
        .ok_or_else(|| SweepError::JournalParse {
            path: path.to_path_buf(),
            line: 1,
            detail: "the first line is not a sweep header".to_owned(),
        })?
        .clone();
    if header.journal_version != journal::SWEEP_JOURNAL_VERSION {
        return Err(SweepError::JournalVersion {
            path: path.to_path_buf(),
            found: header.journal_version,
            supported: journal::SWEEP_JOURNAL_VERSION,
        });
    }
    Ok((loaded, header))
}

/// The longest watchdog wait a configuration may ask for: seven days.
const MAX_WAIT_S: f64 = 7.0 * 24.0 * 3600.0;

fn wait(
    what: &str,
    seconds: Option<f64>,
    default_s: f64,
    allow_zero: bool,
) -> Result<Duration, SweepError> {
    let seconds = seconds.unwrap_or(default_s);
    let low_ok = if allow_zero {
        seconds >= 0.0
    } else {
        seconds > 0.0
    };
    if !(low_ok && seconds <= MAX_WAIT_S) {
        return Err(SweepError::InvalidArgument {
            what: what.to_owned(),
            detail: format!(
                "give a number of seconds {} 604800 (7 days)",
                if allow_zero {
                    "from 0 to"
                } else {
                    "above 0, at most"
                }
            ),
        });
    }
    Duration::try_from_secs_f64(seconds).map_err(|error| SweepError::InvalidArgument {
        what: what.to_owned(),
        detail: error.to_string(),
    })
}

const fn kind_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Vllm => "vllm",
        ServerKind::LlamaCpp => "llama_cpp",
        ServerKind::SgLang => "sglang",
        _ => "unknown",
    }
}

/// The model to measure and its context: `wanted` when given (checked against the list when
/// the server has one), else the first model listed.
async fn resolve_model(
    client: &Client,
    wanted: &str,
    resumed_journal: Option<&Path>,
) -> Result<(String, Vec<vernier_openai::ModelInfo>), SweepError> {
    let models = client.models().await.map_err(|source| SweepError::Client {
        what: format!(
            "list models at {}/v1/models (or pass --model)",
            client.base_url()
        ),
        source,
    });
    match (wanted.is_empty(), models) {
        (false, Ok(list)) => {
            let found = list.iter().find(|m| m.id == wanted);
            if let (None, Some(journal), false) = (found, resumed_journal, list.is_empty()) {
                let served: Vec<&str> = list.iter().map(|m| m.id.as_str()).collect();
                return Err(SweepError::ServerChanged {
                    path: journal.to_path_buf(),
                    differences: format!(
                        "model: journal {wanted:?}, the server lists {}",
                        served.join(", ")
                    ),
                });
            }
            Ok((wanted.to_owned(), list))
        }
        (false, Err(_)) => Ok((wanted.to_owned(), Vec::new())),
        (true, Ok(list)) => match list.first() {
            Some(first) => Ok((first.id.clone(), list.clone())),
            None => Err(SweepError::InvalidArgument {
                what: "the server's model list".to_owned(),
                detail: "/v1/models is empty; pass --model".to_owned(),
            }),
        },
        (true, Err(error)) => Err(error),
    }
}

/// A resumed run must measure the same model on the same kind and version of server; a new
/// address alone is an operational change.
fn check_same_server(
    journal: &Path,
    recorded: &Environment,
    now: &Environment,
) -> Result<(), SweepError> {
    let mut differences = Vec::new();
    if recorded.model.id != now.model.id {
        differences.push(format!(
            "model: journal {:?}, now {:?}",
            recorded.model.id, now.model.id
        ));
    }
    if recorded.server.kind != now.server.kind {
        differences.push(format!(
            "server kind: journal {}, now {}",
            recorded.server.kind, now.server.kind
        ));
    }
    if let (Some(before), Some(after)) = (&recorded.server.version, &now.server.version)
        && before != after
    {
        differences.push(format!("server /version: journal {before}, now {after}"));
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(SweepError::ServerChanged {
            path: journal.to_path_buf(),
            differences: differences.join("; "),
        })
    }
}

/// Runs a sweep: a new run or a resumed one ([`SweepStart`]) against `client`, reporting
/// progress to `observer`; `interrupt`, when it completes, stops the run early (what was
/// measured is reported). The journal is the source of truth; the run file and reports are
/// written from it at the end, also after a failure.
#[expect(
    clippy::too_many_lines,
    reason = "the set-up reads best in order, step by step"
)]
pub async fn run_sweep(
    client: Client,
    start: SweepStart,
    context: RunContext,
    observer: Arc<dyn SweepObserver>,
    interrupt: Option<Interrupt>,
) -> Result<SweepOutcome, SweepError> {
    let program = vernier_cli::program_name(&context.command_line, "sweep").to_owned();
    // The journal is checked before any network work.
    let (mut config, resumed, new_out) = match start {
        SweepStart::New { config, out } => {
            let path = journal::journal_path(&out);
            if path.exists() {
                return Err(SweepError::JournalExists { out, journal: path });
            }
            config.check()?;
            (*config, None, out)
        }
        SweepStart::Resume { journal } => {
            let (loaded, header) = read_resumable(&journal)?;
            let out = journal
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            (header.config.clone(), Some((journal, loaded, header)), out)
        }
    };
    let idle_timeout = wait("--idle-timeout-s", config.idle_timeout_s, 60.0, false)?;
    let busy_wait_cap = wait("--busy-wait-cap-s", config.busy_wait_cap_s, 900.0, true)?;
    let allow_busy = config.allow_busy.unwrap_or(false);

    let resumed_journal = resumed.as_ref().map(|(path, _, _)| path.as_path());
    let (model, models) = resolve_model(&client, &config.model, resumed_journal).await?;
    let identity = client.server_identity().await;
    let limit = vernier_openai::context_limit(&models, &model, &identity);
    let max_model_len = limit.map(|limit| limit.tokens);
    // Cells that cannot fit the server's context are named and left out before anything is
    // sent; the rest is measured.
    let mut too_long = BTreeMap::new();
    if let Some(limit) = limit {
        for &prompt in &config.prompt_tokens {
            for &output in &config.output_tokens {
                if u64::from(prompt) + u64::from(output) > limit.tokens {
                    too_long.insert(
                        (prompt, output),
                        format!(
                            "prompt {prompt} + output {output} tokens exceed the server's context of {} tokens ({})",
                            limit.tokens, limit.source
                        ),
                    );
                }
            }
        }
        if too_long.len() == config.prompt_tokens.len() * config.output_tokens.len() {
            return Err(SweepError::InvalidArgument {
                what: "--prompt-tokens with --output-tokens".to_owned(),
                detail: format!(
                    "no cell fits the server's context of {} tokens ({}); ask for less",
                    limit.tokens, limit.source
                ),
            });
        }
    }

    // Refuse a busy server: its requests would share the GPU with ours. A server whose
    // /metrics has none of the known names is not taken for idle: the run file says so.
    let metrics = runner::metric_sums(&client).await;
    let mut warnings = Vec::new();
    match metrics.as_ref().and_then(vernier_openai::server_load) {
        Some(load) if load.running + load.waiting > 0.0 => {
            let (running, waiting) = (load.running, load.waiting);
            if !allow_busy {
                return Err(SweepError::ServerBusy { running, waiting });
            }
            observer.note(&format!("the server has {running} running and {waiting} waiting requests; measuring anyway (--allow-busy)"));
        }
        Some(_) => {}
        None if allow_busy => {}
        None => warnings.push(runner::busy_check_unavailable(metrics.is_some())),
    }
    let generation_counter = metrics
        .as_ref()
        .and_then(vernier_openai::generation_counter);
    if generation_counter.is_none() {
        warnings.push(runner::watchdog_blind(metrics.is_some()));
    }
    for warning in &warnings {
        observer.warn(warning);
    }

    let environment = Environment {
        server: ServerInfo {
            base_url: client.base_url().clone(),
            simulator: context.simulator,
            kind: kind_name(identity.kind).to_owned(),
            server_header: identity.server_header.clone(),
            version: identity.version_json.clone(),
            props: identity.props_json.clone(),
        },
        model: ServedModel {
            id: model.clone(),
            max_model_len,
        },
        metrics_at_start: metrics.clone().unwrap_or_default(),
        client: environment::client_machine(),
        tool: environment::tool_info(),
        gpu_info: context.gpu_info_cmd.as_deref().map(environment::gpu_info),
    };

    // Open or continue the journal.
    let (journal_path, writer, mut state) = if let Some((path, loaded, header)) = resumed {
        check_same_server(&path, &header.environment, &environment)?;
        if loaded.torn_tail {
            observer.note("the journal's last line was torn by a crash; it is cut and that request will be redone");
        }
        if header.environment.server.base_url != environment.server.base_url && !context.simulator {
            observer.note(&format!(
                "the server now answers at {} (the journal recorded {}); the new address is recorded",
                environment.server.base_url, header.environment.server.base_url
            ));
        }
        let writer = JournalWriter::reopen(&path)?;
        writer.append(&SweepJournalLine::Resumed(Box::new(Resumed {
            unix_ms: runner::unix_ms(),
            command_line: context.command_line.clone(),
            environment,
            warnings,
        })))?;
        (path, writer, ResumeState::from_journal(&loaded))
    } else {
        let out = &new_out;
        config.model.clone_from(&model);
        config.target = if context.simulator {
            "simulator".to_owned()
        } else {
            client.base_url().clone()
        };
        config.prompt_set_sha256 = corpus::prompt_set_sha256();
        std::fs::create_dir_all(out).map_err(|source| SweepError::WriteReport {
            path: out.clone(),
            source,
        })?;
        let path = journal::journal_path(out);
        let writer = JournalWriter::create(&path)?;
        writer.append(&SweepJournalLine::Header(Box::new(Header {
            journal_version: journal::SWEEP_JOURNAL_VERSION,
            started_unix_ms: runner::unix_ms(),
            command_line: context.command_line.clone(),
            config: config.clone(),
            environment,
            warnings,
        })))?;
        writer.sync()?;
        (path, writer, ResumeState::default())
    };
    let out_dir = new_out;
    let max_rps = config.max_rps;
    let max_wait = Duration::try_from_secs_f64(config.max_wait_s.unwrap_or(900.0))
        .unwrap_or(Duration::from_secs(900));
    let resume_command = vernier_cli::resume_command(
        &program,
        &context.command_line,
        "--resume",
        &journal_path.display().to_string(),
    );
    let shared = Arc::new(Shared {
        client,
        corpora: config
            .workloads
            .iter()
            .map(|&w| (w, Corpus::new(w)))
            .collect::<BTreeMap<_, _>>(),
        config,
        journal: writer,
        nonces: NonceSource::new(),
        idle_timeout,
        busy_wait_cap,
        has_metrics: metrics.is_some(),
        generation_counter,
        resume_command,
        observer: Arc::clone(&observer),
        clock: runner::ClockAnchor::now(),
        rate_cap: runner::RateCap::new(max_rps),
        dropped: std::sync::Mutex::new(state.dropped_fields.clone()),
        wait_budget: vernier_openai::WaitBudget::new(max_wait, runner::unix_ms()),
        captured: std::sync::Mutex::new(BTreeMap::new()),
        kernel_rx: vernier_openai::kernel_rx_available(),
        pool: crate::pool::StreamPool::per_core(),
    });

    let work = async {
        for cell in shared.config.cells() {
            if let Some(reason) = too_long.get(&(cell.prompt_tokens_target, cell.output_tokens)) {
                runner::skip_cell(&shared, &mut state, cell, reason.clone())?;
            }
        }
        runner::calibrate_all(&shared, &mut state).await?;
        runner::run_cells(&shared, &mut state).await
    };
    let interrupt = interrupt.unwrap_or_else(|| Box::pin(std::future::pending()));
    let (result, interrupted) = tokio::select! {
        result = work => (result, false),
        () = interrupt => (Ok(()), true),
    };
    observer.finished();
    if interrupted {
        observer.note(&format!(
            "interrupted: writing the report of what was measured; continue with: {}",
            shared.resume_command
        ));
    }
    // Reports come from the journal alone, also after a failure.
    let loaded = journal::read_sweep_journal(&journal_path)?;
    let written = summary::summarise(&loaded)
        .map(|run| report::write_reports(&run, &out_dir).map(|files| (run, files)));
    result?;
    let (run, files) = written.ok_or_else(|| SweepError::JournalParse {
        path: journal_path.clone(),
        line: 1,
        detail: "the journal has no header".to_owned(),
    })??;
    Ok(SweepOutcome {
        run,
        files,
        journal: journal_path,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_of_another_version_is_refused_naming_both_versions() {
        let folder = tempfile::tempdir().expect("temporary folder");
        let path = folder.path().join("journal.jsonl");
        let header = Header {
            journal_version: journal::SWEEP_JOURNAL_VERSION + 1,
            started_unix_ms: 0,
            command_line: vec!["sweep".to_owned()],
            config: SweepConfig::default(),
            environment: Environment::default(),
            warnings: Vec::new(),
        };
        let line = serde_json::to_string(&SweepJournalLine::Header(Box::new(header)))
            .expect("serialise the header");
        std::fs::write(&path, line + "\n").expect("write the journal");
        match read_resumable(&path) {
            Err(SweepError::JournalVersion {
                found, supported, ..
            }) => {
                assert_eq!(
                    (found, supported),
                    (supported + 1, journal::SWEEP_JOURNAL_VERSION)
                );
            }
            other => panic!("not refused for its version: {other:?}"),
        }
    }

    #[test]
    fn waits_beyond_seven_days_or_not_positive_are_refused() {
        assert!(wait("--idle-timeout-s", Some(1e20), 60.0, false).is_err());
        assert!(wait("--idle-timeout-s", Some(0.0), 60.0, false).is_err());
        assert!(wait("--idle-timeout-s", Some(f64::NAN), 60.0, false).is_err());
        assert!(wait("--busy-wait-cap-s", Some(f64::INFINITY), 900.0, true).is_err());
        assert_eq!(
            wait("--idle-timeout-s", Some(604_800.0), 60.0, false).ok(),
            Some(Duration::from_secs(604_800))
        );
        assert_eq!(
            wait("--busy-wait-cap-s", Some(0.0), 900.0, true).ok(),
            Some(Duration::ZERO)
        );
        assert_eq!(
            wait("--idle-timeout-s", None, 60.0, false).ok(),
            Some(Duration::from_secs(60))
        );
    }
}
