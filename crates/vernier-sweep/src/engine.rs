//! The sweep's entry point: set-up checks, the journal (new or resumed), the run, the reports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use vernier_openai::{Client, Timeouts};
use vernier_run::{
    ClientOptions, ClockAnchor, Interrupt, RefusedFields, RequestPacer, RunError,
    ServerFingerprint, WaitBudget,
};
use vernier_sim::{SimConfig, TokensPerEvent};

use crate::config::SweepConfig;
pub use crate::context::{DEFAULT_GPU_SAMPLE_INTERVAL, RunContext};
use crate::corpus;
use crate::environment::{self, Environment, ServedModel, ServerInfo};
use crate::error::SweepError;
use crate::journal::{self, Header, IdentityChecked, JournalWriter, Resumed, SweepJournalLine};
use crate::observer::SweepObserver;
use crate::open_loop;
use crate::parts::{Plan, Record, Sweep, Target, Watchdog};
use crate::report::{self, ReportFiles};
use crate::resume::{ResumeState, read_resumable, resume_settings};
use crate::run_file::RunFile;
use crate::shard_grid::RepGrid;
use crate::summary;
use crate::watchdog::{busy_check_unavailable, watchdog_blind};

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

/// The simulator `sweep agent` and `sweep replay` start when no server is given: the demo's
/// speeds and prefix cache, and a tool call on 40% of the turns that offer tools.
pub fn agent_simulator_config() -> SimConfig {
    let mut config = demo_simulator_config();
    config.tool_call_share = 0.4;
    // The answers end by themselves, as a model's do, within the default --max-tokens 64.
    config.reply_tokens = Some(40);
    config
}

/// The banner shown when the simulator stands in for a server.
pub const SIMULATOR_BANNER: &str = "No --base-url given: measuring the bundled simulator in-process. \
These figures describe the simulator, not a real server; pass --base-url URL to measure one.";

/// A client set up as the sweep uses it: a 10 s connect timeout, no other timeout (the
/// watchdog handles silent streams), and the sweep's user agent; the API key is read from the
/// environment variable `api_key_env` when given, and the CA certificates in the PEM file
/// `ca_cert` are trusted beside the built-in roots (`HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` are honoured).
pub fn sweep_client(
    base_url: &str,
    api_key_env: Option<&str>,
    ca_cert: Option<&Path>,
) -> Result<Client, SweepError> {
    let options = ClientOptions::new(base_url)
        .timeouts(Timeouts::none().connect(Some(Duration::from_secs(10))))
        .user_agent(format!("vernier-sweep/{}", env!("CARGO_PKG_VERSION")))
        .api_key_env(api_key_env)
        .ca_cert(ca_cert);
    Ok(vernier_run::build_client(&options)?)
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
        /// What was typed beside `--resume`, checked against the journal's configuration.
        typed: Option<ResumeFlags>,
    },
}

impl SweepStart {
    /// Continue the run of `journal` as it was started (nothing typed beside it).
    pub fn resume(journal: impl Into<PathBuf>) -> Self {
        Self::Resume {
            journal: journal.into(),
            typed: None,
        }
    }
}

/// Settings typed beside `--resume`: the configuration those flags make, and the names of the
/// configuration's fields that were typed (only those are compared with the journal's).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResumeFlags {
    /// The configuration the flags make.
    pub config: Box<SweepConfig>,
    /// Its fields that were typed, by their names in the run file (`prompt_tokens`, ...).
    pub fields: BTreeSet<String>,
}

impl ResumeFlags {
    /// The flags' configuration and the fields typed.
    pub fn new(config: SweepConfig, fields: BTreeSet<String>) -> Self {
        Self {
            config: Box::new(config),
            fields,
        }
    }
}

/// The wait `flag` asks for (`default_s` when not given), checked as every engine checks
/// seconds ([`vernier_run::seconds`]).
fn wait(
    flag: &str,
    seconds: Option<f64>,
    default_s: f64,
    allow_zero: bool,
) -> Result<Duration, SweepError> {
    Ok(vernier_run::seconds(
        flag,
        seconds.unwrap_or(default_s),
        allow_zero,
    )?)
}

/// The journal a run writes into and what it continues from.
struct Opened {
    config: SweepConfig,
    out: PathBuf,
    /// A resumed run: the journal, what it holds, and the operational settings typed beside
    /// `--resume` that changed.
    resumed: Option<(
        PathBuf,
        crate::journal::LoadedSweepJournal,
        Header,
        Vec<String>,
    )>,
}

/// Checks the journal before any network work: a new run must not overwrite one; a resumed
/// run continues one this version can read, with the settings typed beside `--resume` checked
/// against it (`vernier_run`'s one resume policy).
fn open_start(start: SweepStart) -> Result<Opened, SweepError> {
    match start {
        SweepStart::New { config, out } => {
            let path = journal::journal_path(&out);
            if path.exists() {
                return Err(RunError::JournalExists { out, journal: path }.into());
            }
            config.check()?;
            Ok(Opened {
                config: *config,
                out,
                resumed: None,
            })
        }
        SweepStart::Resume { journal, typed } => {
            let (loaded, header) = read_resumable(&journal)?;
            let mut config = header.config.clone();
            let mut changed = Vec::new();
            if let Some(typed) = typed {
                let settings = resume_settings(&header.config, &typed.config, &typed.fields);
                changed = vernier_run::check_resume(
                    &journal,
                    Some(&header.command_line.join(" ")),
                    &settings,
                )?;
                // Operational settings typed beside --resume win for this session.
                if typed.fields.contains("allow_busy") {
                    config.allow_busy = typed.config.allow_busy;
                }
            }
            let out = journal
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            Ok(Opened {
                config,
                out,
                resumed: Some((journal, loaded, header, changed)),
            })
        }
    }
}

/// Cells whose prompt and output cannot fit the server's context, with the reason; refused
/// when no cell fits.
fn cells_too_long(
    config: &SweepConfig,
    limit: Option<vernier_openai::ContextLimit>,
) -> Result<BTreeMap<(u32, u32), String>, SweepError> {
    let mut too_long = BTreeMap::new();
    let Some(limit) = limit else {
        return Ok(too_long);
    };
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
        return Err(SweepError::invalid(
            "--prompt-tokens with --output-tokens",
            format!(
                "no cell fits the server's context of {} tokens ({}); ask for less",
                limit.tokens, limit.source
            ),
        ));
    }
    Ok(too_long)
}

/// What `/metrics` says before the run: its sums (none without `/metrics`), the set-up
/// warnings, and the generation counter the watchdog can read.
type ServerLoad = (
    Option<BTreeMap<String, f64>>,
    Vec<String>,
    Option<&'static str>,
);

/// Reads the [`ServerLoad`]. A busy server is refused unless `allow_busy`; a server whose
/// `/metrics` has none of the known names is not taken for idle (the run file says so).
async fn read_server_load(
    client: &Client,
    allow_busy: bool,
    observer: &dyn SweepObserver,
) -> Result<ServerLoad, SweepError> {
    let metrics = crate::cells::metric_sums(client).await;
    let mut warnings = Vec::new();
    match metrics.as_ref().and_then(vernier_openai::server_load) {
        Some(load) if load.running + load.waiting > 0.0 => {
            let (running, waiting) = (load.running, load.waiting);
            if !allow_busy {
                return Err(RunError::ServerBusy { running, waiting }.into());
            }
            observer.note(&format!("the server has {running} running and {waiting} waiting requests; measuring anyway (--allow-busy)"));
        }
        Some(_) => {}
        None if allow_busy => {}
        None => warnings.push(busy_check_unavailable(metrics.is_some())),
    }
    let generation_counter = metrics
        .as_ref()
        .and_then(vernier_openai::generation_counter);
    if generation_counter.is_none() {
        warnings.push(watchdog_blind(metrics.is_some()));
    }
    for warning in &warnings {
        observer.warn(warning);
    }
    Ok((metrics, warnings, generation_counter))
}

/// The identity a run checks on resume, read from what its environment recorded.
pub(crate) fn fingerprint_of(environment: &Environment) -> ServerFingerprint {
    ServerFingerprint::new(
        environment.model.id.clone(),
        environment.server.kind.clone(),
        environment.server.version.as_ref().map(ToString::to_string),
    )
}

/// Opens the journal: a new one with its header, or the resumed one with a `resumed` line
/// (refused when the server is not the one it measured).
fn open_journal(
    opened: &mut Opened,
    context: &RunContext,
    environment: Environment,
    warnings: Vec<String>,
    observer: &dyn SweepObserver,
) -> Result<(PathBuf, JournalWriter, ResumeState), SweepError> {
    if let Some((path, loaded, header, changed)) = opened.resumed.take() {
        vernier_run::check_same_server(
            &path,
            &fingerprint_of(&header.environment),
            &fingerprint_of(&environment),
        )?;
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
            unix_ms: vernier_run::unix_ms(),
            command_line: context.command_line.clone(),
            environment,
            warnings,
            changed_settings: changed,
        })))?;
        let state = ResumeState::from_journal(&loaded);
        return Ok((path, writer, state));
    }
    let out = &opened.out;
    std::fs::create_dir_all(out).map_err(|source| SweepError::WriteReport {
        path: out.clone(),
        source,
    })?;
    let path = journal::journal_path(out);
    let writer = JournalWriter::create(&path)?;
    writer.append(&SweepJournalLine::Header(Box::new(Header {
        journal_version: journal::SWEEP_JOURNAL_VERSION,
        started_unix_ms: vernier_run::unix_ms(),
        command_line: context.command_line.clone(),
        config: opened.config.clone(),
        environment,
        warnings,
    })))?;
    writer.sync()?;
    Ok((path, writer, ResumeState::default()))
}

/// The watchdog's waits, checked (`--idle-timeout-s` above 0, `--busy-wait-cap-s` from 0,
/// both at most seven days).
fn watchdog_of(config: &SweepConfig) -> Result<Watchdog, SweepError> {
    Ok(Watchdog {
        idle_timeout: wait("--idle-timeout-s", config.idle_timeout_s, 60.0, false)?,
        busy_wait_cap: wait("--busy-wait-cap-s", config.busy_wait_cap_s, 900.0, true)?,
    })
}

/// The model as served (with the weights the server states) and the server's GPUs, each said
/// in one line where it matters: the GPUs always, a name that hides its weights as a warning.
pub(crate) async fn read_machine(
    client: &Client,
    context: &RunContext,
    model: &vernier_run::ResolvedModel,
    identity: &vernier_openai::ServerIdentity,
    limit: Option<vernier_openai::ContextLimit>,
    observer: &dyn SweepObserver,
) -> (
    ServedModel,
    vernier_run::OpenedGpu,
    Option<crate::environment::KvCacheStated>,
) {
    let gpu = vernier_run::OpenedGpu::open(
        vernier_gpu::GpuChoice::for_server(
            &client.base_url(),
            context.simulator,
            context.gpu_metrics_url.clone(),
            context.gpu_sample_interval,
        )
        .only(context.gpus.clone()),
    )
    .await;
    observer.note(&gpu.record.summary_line());
    let weights = vernier_run::read_loaded_weights(client, model, identity).await;
    let kv_cache = client
        .metrics()
        .await
        .ok()
        .and_then(|snapshot| vernier_openai::kv_cache_stated(&snapshot))
        .map(|stated| crate::environment::KvCacheStated {
            tokens: stated.tokens,
            dtype: stated.dtype,
            block_size: stated.block_size,
            prefix_caching: stated.prefix_caching,
            source: stated.source,
        });
    if let Some(warning) = weights.warning() {
        observer.warn(&warning);
    }
    let served = ServedModel {
        id: model.id.clone(),
        max_model_len: limit.map(|limit| limit.tokens),
        weights: Some(weights),
    };
    (served, gpu, kv_cache)
}

/// What a run records about where it happened.
pub(crate) fn environment_of(
    client: &Client,
    context: &RunContext,
    identity: &vernier_openai::ServerIdentity,
    (model, kv_cache): (ServedModel, Option<crate::environment::KvCacheStated>),
    metrics: Option<&BTreeMap<String, f64>>,
    gpu: vernier_gpu::GpuRecord,
) -> Environment {
    Environment {
        server: ServerInfo {
            base_url: client.base_url().clone(),
            simulator: context.simulator,
            kind: vernier_run::kind_name(identity.kind).to_owned(),
            server_header: identity.server_header.clone(),
            version: identity.version_json.clone(),
            props: identity.props_json.clone(),
            kv_cache,
        },
        model,
        metrics_at_start: metrics.cloned().unwrap_or_default(),
        client: environment::client_machine(),
        tool: environment::tool_info(),
        gpu_info: context.gpu_info_cmd.as_deref().map(environment::gpu_info),
        gpu: Some(gpu),
    }
}

/// What a shard cannot do: start at an instant without being a shard, or measure a
/// simulator of its own.
fn check_shard_context(config: &SweepConfig, context: &RunContext) -> Result<(), SweepError> {
    if context.start_at_unix_ms.is_some() && config.shard.is_none() {
        return Err(SweepError::invalid(
            "--start-at",
            "it starts a shard at an agreed instant; give --shard I/N as well, or drop --start-at",
        ));
    }
    if let Some(shard) = config.shard
        && context.simulator
    {
        return Err(SweepError::invalid(
            "--shard",
            format!(
                "shard {shard} would measure a simulator of its own: shards must share one server; give --base-url (start vernier-sim-server for a simulator they share)"
            ),
        ));
    }
    Ok(())
}

/// [`read_server_load`] as the configuration asks: a shard does not refuse a busy server (the
/// other shards' requests look like another user's), and says so.
async fn read_load_for(
    client: &Client,
    config: &SweepConfig,
    observer: &dyn SweepObserver,
) -> Result<ServerLoad, SweepError> {
    let allow_busy = config.allow_busy.unwrap_or(false);
    // The other shards' requests look like another user's: a shard cannot refuse them.
    let (metrics, mut warnings, generation_counter) =
        read_server_load(client, allow_busy || config.shard.is_some(), observer).await?;
    if let Some(shard) = config.shard.filter(|_| !allow_busy) {
        warnings.push(format!(
            "shard {shard}: the busy check cannot tell the other shards' requests from another user's, so it was not applied; nothing else should use the server during the run"
        ));
    }
    Ok((metrics, warnings, generation_counter))
}

/// Runs a sweep: a new run or a resumed one ([`SweepStart`]) against `client`, reporting
/// progress to `observer`; `interrupt`, when it completes, stops the run early (what was
/// measured is reported). The journal is the source of truth; the run file and reports are
/// written from it at the end, also after a failure.
pub async fn run_sweep(
    client: Client,
    start: SweepStart,
    context: RunContext,
    observer: Arc<dyn SweepObserver>,
    interrupt: Option<Interrupt>,
) -> Result<SweepOutcome, SweepError> {
    // The journal is checked before any network work.
    let mut opened = open_start(start)?;
    let watchdog = watchdog_of(&opened.config)?;
    check_shard_context(&opened.config, &context)?;
    let resumed_journal = opened.resumed.as_ref().map(|(path, ..)| path.clone());
    let model = vernier_run::resolve_model(
        &client,
        Some(opened.config.model.as_str()),
        resumed_journal.as_deref(),
    )
    .await?;
    let identity = client.server_identity().await;
    let limit = vernier_openai::context_limit(&model.listed, &model.id, &identity);
    // Cells that cannot fit the server's context are named and left out before anything is
    // sent; the rest is measured.
    let too_long = cells_too_long(&opened.config, limit)?;
    let (metrics, warnings, generation_counter) =
        read_load_for(&client, &opened.config, observer.as_ref()).await?;
    let (served, gpu, kv_cache) = read_machine(
        &client,
        &context,
        &model,
        &identity,
        limit,
        observer.as_ref(),
    )
    .await;
    let environment = environment_of(
        &client,
        &context,
        &identity,
        (served, kv_cache),
        metrics.as_ref(),
        gpu.record.clone(),
    );
    if opened.resumed.is_none() {
        let config = &mut opened.config;
        config.model.clone_from(&model.id);
        config.target = if context.simulator {
            "simulator".to_owned()
        } else {
            client.base_url().clone()
        };
        config.prompt_set_sha256 = corpus::prompt_set_sha256();
    }
    let started_as = fingerprint_of(&environment);
    let (journal_path, writer, state) = open_journal(
        &mut opened,
        &context,
        environment,
        warnings,
        observer.as_ref(),
    )?;
    let config = opened.config;
    let max_wait = Duration::try_from_secs_f64(config.max_wait_s.unwrap_or(900.0))
        .unwrap_or(Duration::from_secs(900));
    let resume_command = context.resume_with(&journal_path);
    let sweep = Arc::new(Sweep {
        target: Target {
            client,
            has_metrics: metrics.is_some(),
            generation_counter,
            kernel_rx: vernier_openai::kernel_rx_available(),
            refused: RefusedFields::new(state.dropped_fields.clone()),
            pacer: RequestPacer::new(config.max_rps),
            wait_budget: WaitBudget::new(max_wait, vernier_run::unix_ms()),
            runtimes: crate::runtimes::StreamRuntimes::per_core(),
            gpu,
        },
        record: Record {
            journal: writer,
            observer: Arc::clone(&observer),
            clock: ClockAnchor::now(),
            resume_command,
            capture_streams: config.capture_streams,
            captured: Mutex::new(BTreeMap::new()),
            measured: Mutex::new(BTreeMap::new()),
        },
        grid: RepGrid::new(open_loop::duration(&config), context.shard_gap),
        plan: Plan::new(config, watchdog),
    });
    finish(
        sweep,
        state,
        Ends {
            too_long,
            start_plan: crate::shard_clock::StartPlan::of(&context, resumed_journal.is_some()),
            started_as: &started_as,
            journal_path: &journal_path,
            out: &opened.out,
        },
        interrupt,
    )
    .await
}

/// What a run's end needs beside the sweep: the cells left out, a shard's start, the identity
/// to check again, and where the journal and reports go.
struct Ends<'a> {
    too_long: BTreeMap<(u32, u32), String>,
    start_plan: crate::shard_clock::StartPlan,
    started_as: &'a ServerFingerprint,
    journal_path: &'a Path,
    out: &'a Path,
}

/// Runs the cells (or the capacity search) until done or interrupted, then writes the run file
/// and reports from the journal alone, also after a failure.
async fn finish(
    sweep: Arc<Sweep>,
    mut state: ResumeState,
    ends: Ends<'_>,
    interrupt: Option<Interrupt>,
) -> Result<SweepOutcome, SweepError> {
    let Ends {
        too_long,
        start_plan,
        started_as,
        journal_path,
        out,
    } = ends;
    let observer = Arc::clone(&sweep.record.observer);
    let work = async {
        for cell in sweep.plan.config.cells() {
            if let Some(reason) = too_long.get(&(cell.prompt_tokens_target, cell.output_tokens)) {
                crate::cells::skip_cell(&sweep.record, &mut state, cell, reason.clone())?;
            }
        }
        crate::calibrate::calibrate_all(&sweep.target, &sweep.plan, &sweep.record, &mut state)
            .await?;
        crate::shard_clock::start_shard(&sweep, start_plan).await?;
        if sweep.plan.config.is_search() {
            crate::capacity_search::search(&sweep, &mut state).await?;
        } else {
            crate::cells::run_cells(&sweep, &mut state).await?;
        }
        // Who answered at the end: a server swapped or upgraded during the run makes it
        // invalid (the verdict reads this line).
        let changes = vernier_run::identity_changes(&sweep.target.client, started_as).await;
        sweep
            .record
            .journal
            .append(&SweepJournalLine::IdentityChecked(IdentityChecked::new(
                changes,
                vernier_run::unix_ms(),
            )))
    };
    let interrupt = interrupt.unwrap_or_else(vernier_run::never);
    let (result, interrupted) = tokio::select! {
        result = work => (result, false),
        () = interrupt => (Ok(()), true),
    };
    observer.finished();
    if interrupted {
        // Also when quiet: the command is what the user needs next.
        observer.warn(&format!(
            "interrupted: writing the report of what was measured; continue with: {}",
            sweep.record.resume_command
        ));
    }
    // Reports come from the journal alone, also after a failure.
    let loaded = journal::read_sweep_journal(journal_path)?;
    let written = summary::summarise(&loaded)
        .map(|run| report::write_reports(&run, out).map(|files| (run, files)));
    if let Some(Err(error)) = &written {
        // A full disk: the journal holds every measurement; the reports can be made again.
        observer.warn(&format!(
            "failed to {}; everything measured is safe in {}; once there is room, continue with: {}",
            vernier_cli::one_line(error),
            journal_path.display(),
            sweep.record.resume_command
        ));
    }
    result?;
    let (run, files) = written.ok_or_else(|| SweepError::JournalParse {
        path: journal_path.to_path_buf(),
        line: 1,
        detail: "the journal has no header".to_owned(),
    })??;
    if !interrupted && run.cells.iter().all(|cell| cell.n_ok == 0) {
        let reasons: Vec<String> = run
            .cells
            .iter()
            .map(|cell| {
                let why = cell.context_exceeded.clone().unwrap_or_else(|| {
                    format!(
                        "{} failed",
                        vernier_cli::counted(u64::from(cell.n_failed), "request", "requests")
                    )
                });
                format!(
                    "{} p{} o{}: {why}",
                    cell.workload, cell.prompt_tokens_target, cell.output_tokens
                )
            })
            .collect();
        return Err(SweepError::NothingMeasured {
            reasons: if reasons.is_empty() {
                "the run has no cell".to_owned()
            } else {
                reasons.join("; ")
            },
        });
    }
    Ok(SweepOutcome {
        run,
        files,
        journal: journal_path.to_path_buf(),
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
            Err(SweepError::Run(RunError::JournalVersion {
                found, supported, ..
            })) => {
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
