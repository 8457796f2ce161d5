//! An agent run from start to report: the server, model and machine read; each text sized in
//! the server's tokens; the passes (cache allowed, then defeated when asked, then the capacity
//! search over sessions); the server asked again at the end; the run file and report written
//! from the journal alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use vernier_journal::JournalWriter;
use vernier_openai::{ChatMessage, ChatRequest, Client};
use vernier_run::Interrupt;

use super::config::AgentConfig;
use super::conversation::{Sizing, Texts};
use super::exchange::Wire;
use super::journal::{self, AgentLine, Job, Pass, StartLine, TurnRecord};
use super::report::{AgentFiles, AgentRunFile, write_agent_reports};
use super::sessions::{Shared, run_pass};
use super::summary::SessionCapacity;
use crate::context::RunContext;
use crate::corpus::{Corpus, NonceSource};
use crate::error::SweepError;
use crate::observer::SweepObserver;
use vernier_run::TypedBeside;

/// Where an agent run's journal comes from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentStart {
    /// A new run of `config` into `out` (which must not hold a journal yet).
    New {
        /// The configuration.
        config: Box<AgentConfig>,
        /// The output folder.
        out: PathBuf,
    },
    /// Continue the run recorded in this journal.
    Resume {
        /// The journal (`journal.jsonl`; its folder is the output folder).
        journal: PathBuf,
        /// What was typed beside `--resume`: a measurement setting that differs from the
        /// journal's is refused by name; an operational one (`--capture`,
        /// `--idle-timeout-s`) is used from here on.
        typed: TypedBeside<AgentConfig>,
    },
}

/// What an agent run produced.
#[derive(Debug)]
#[non_exhaustive]
pub struct AgentOutcome {
    /// The run file's contents.
    pub run: AgentRunFile,
    /// The files written.
    pub files: AgentFiles,
    /// The journal.
    pub journal: PathBuf,
    /// Whether the run was interrupted (resume with `--resume JOURNAL`).
    pub interrupted: bool,
}

/// The folder, journal and earlier lines of a new or resumed run.
pub(crate) struct Opened {
    pub(crate) out: PathBuf,
    pub(crate) journal: PathBuf,
    pub(crate) lines: Vec<AgentLine>,
    /// The folder was made by this run (a new run whose start fails takes it away again, so
    /// the same `--out` can be given once more).
    pub(crate) made_folder: bool,
}

impl Opened {
    /// A new run that could not start leaves nothing behind: its journal (when no line was
    /// written) and the folder it made (when empty) are taken away.
    pub(crate) fn abandon(&self) {
        let empty_journal = std::fs::metadata(&self.journal).is_ok_and(|m| m.len() == 0);
        if empty_journal {
            let _ = std::fs::remove_file(&self.journal);
        }
        if self.made_folder {
            // Fails, as it should, unless the folder is empty.
            let _ = std::fs::remove_dir(&self.out);
        }
    }
}

/// Opens the output folder (new) or reads the journal (resumed).
pub(crate) fn open(out_or_journal: &Path, resume: bool) -> Result<Opened, SweepError> {
    if resume {
        let journal = out_or_journal.to_owned();
        let lines = journal::read_lines(&journal)?;
        journal::start_of(&lines, &journal)?;
        let out = journal
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return Ok(Opened {
            out,
            journal,
            lines,
            made_folder: false,
        });
    }
    let out = out_or_journal.to_owned();
    let made_folder = !out.exists();
    std::fs::create_dir_all(&out).map_err(|source| SweepError::Journal {
        what: "create the folder of",
        path: out.join("journal.jsonl"),
        source,
    })?;
    let journal = out.join("journal.jsonl");
    if journal.exists() {
        return Err(SweepError::invalid(
            "--out",
            format!(
                "{} already holds a journal: continue it with --resume {}, or choose another folder",
                out.display(),
                journal.display()
            ),
        ));
    }
    Ok(Opened {
        out,
        journal,
        lines: Vec::new(),
        made_folder,
    })
}

/// The server's count of prompt tokens for `messages` (one token asked).
pub(crate) async fn count(
    wire: &Wire,
    model: &str,
    messages: Vec<ChatMessage>,
    tools: &[vernier_openai::Tool],
) -> Result<u64, SweepError> {
    count_choosing(wire, model, messages, tools, None).await
}

/// [`count`] with the tools offered under `tool_choice` (`None`: the server's default).
async fn count_choosing(
    wire: &Wire,
    model: &str,
    messages: Vec<ChatMessage>,
    tools: &[vernier_openai::Tool],
    tool_choice: Option<&str>,
) -> Result<u64, SweepError> {
    let mut request = ChatRequest::new(model, messages);
    request.max_tokens = Some(1);
    request.stream = Some(true);
    request.temperature = Some(0.0);
    if !tools.is_empty() {
        request.tools = Some(tools.to_vec());
        request.tool_choice = tool_choice.map(serde_json::Value::from);
    }
    let exchange = wire
        .send(&request, "probe")
        .await
        .map_err(|failure| match failure {
            // A refusal no retry fixes (a key, a model, a field): a setting to change.
            super::exchange::Unanswered::Fatal(message) => SweepError::ServerRejected {
                detail: format!(
                    "{message}{}",
                    tool_parser_hint(&super::exchange::Unanswered::Fatal(message.clone()))
                ),
            },
            failure => SweepError::Sizing {
                detail: format!(
                    "a one-token request to count the prompt's tokens got no answer: {failure}{}",
                    tool_parser_hint(&failure)
                ),
            },
        })?;
    exchange
        .measurement
        .prompt_tokens
        .ok_or_else(|| SweepError::Sizing {
            detail: "the server reported no prompt_tokens in its usage: the texts cannot be sized in its tokens".to_owned(),
        })
}

/// Whether a server's refusal says it parses no tool calls (vLLM started without
/// `--enable-auto-tool-choice` and `--tool-call-parser` answers 400 to the default
/// `tool_choice: "auto"`).
fn says_no_tool_parser(text: &str) -> bool {
    vernier_openai::says_tools_unsupported(text)
}

/// What to do when the server refuses tools for want of a tool-call parser (vLLM started
/// without one answers 400 to any request that offers tools).
fn tool_parser_hint(failure: &super::exchange::Unanswered) -> &'static str {
    if says_no_tool_parser(&failure.to_string()) {
        "; the server parses no tool calls: start it with --enable-auto-tool-choice and a --tool-call-parser for the model (vLLM), or run without tools (--tools 0)"
    } else {
        ""
    }
}

/// How the texts were sized: units per text, the shared prefix's tokens, and `Some("none")`
/// when the server parses no tool calls.
type Sized = (Sizing, u64, Option<String>);

/// Sizes the texts: the server's tokens per corpus unit from two counted probes (16 and 400
/// units, each opened by a nonce of its own), then the shared system prompt and tools counted
/// alone. A server that refuses the tools for want of a tool-call parser is asked again with
/// `tool_choice: "none"`: the tools stay in the prompt, and the run says no call is parsed.
async fn size(
    wire: &Wire,
    config: &AgentConfig,
    nonce: &str,
    observer: &dyn SweepObserver,
) -> Result<Sized, SweepError> {
    let corpus = Corpus::new(config.workload);
    let probe = |n: usize, tag: &str| {
        vec![ChatMessage::user(format!(
            "Probe {nonce}{tag}: {}",
            corpus.span(97, n)
        ))]
    };
    let short = count(wire, &config.model, probe(16, "a"), &[]).await?;
    let long = count(wire, &config.model, probe(400, "b"), &[]).await?;
    let tokens_per_unit = (long.saturating_sub(short) as f64 / 384.0).max(0.05);
    let sizing = Sizing {
        tokens_per_unit,
        system_units: Sizing::units(config.system_tokens, tokens_per_unit),
        user_units: Sizing::units(config.user_tokens, tokens_per_unit),
        tool_result_units: Sizing::units(config.tool_result_tokens, tokens_per_unit),
    };
    // The shared part counted alone, with a nonce of the same length as the passes' own.
    let texts = Texts::new(
        config.workload,
        sizing,
        config.seed,
        &format!("{nonce}p0000"),
        config.tools,
    );
    let system = vec![ChatMessage::system(texts.system.clone())];
    match count(wire, &config.model, system.clone(), &texts.tools).await {
        Ok(shared) => Ok((sizing, shared, None)),
        Err(SweepError::ServerRejected { detail })
            if !texts.tools.is_empty() && says_no_tool_parser(&detail) =>
        {
            observer.note(
                "the server parses no tool calls (vLLM without --enable-auto-tool-choice and a --tool-call-parser): \
                 the tools go with tool_choice \"none\", in every prompt as usual, and no answer is read as a call",
            );
            let shared =
                count_choosing(wire, &config.model, system, &texts.tools, Some("none")).await?;
            Ok((sizing, shared, Some("none".to_owned())))
        }
        Err(error) => Err(error),
    }
}

/// The folder, configuration and whether it resumes: a new run (`Ok`: its configuration,
/// checked, and folder) or the journal to continue (`Err`), whose start line's job must be
/// the one `config_of` reads (`command` names it in the refusal).
pub(crate) fn open_job<C: serde::Serialize + serde::de::DeserializeOwned>(
    start: Result<(C, PathBuf), (PathBuf, TypedBeside<C>)>,
    check: impl Fn(&C) -> Result<(), String>,
    command: &str,
    config_of: impl Fn(&Job) -> Option<C>,
) -> Result<(Opened, C, bool), SweepError> {
    match start {
        Ok((config, out)) => {
            check(&config).map_err(|detail| SweepError::invalid(command, detail))?;
            Ok((open(&out, false)?, config, false))
        }
        Err((journal, typed)) => {
            let opened = open(&journal, true)?;
            let start = journal::start_of(&opened.lines, &journal)?;
            let recorded = config_of(&start.job).ok_or_else(|| {
                SweepError::invalid(
                    "--resume",
                    format!(
                        "{} was written by the other command (`sweep agent` or `sweep replay`): continue it with that one, not `{command}`",
                        journal.display()
                    ),
                )
            })?;
            let config = resumed_config(&journal, start, &recorded, &typed)?;
            check(&config).map_err(|detail| SweepError::invalid(command, detail))?;
            Ok((opened, config, true))
        }
    }
}

/// Fields a resume may change without changing what is measured.
const OPERATIONAL: [&str; 2] = ["capture", "idle_timeout_s"];

/// The journal's configuration with the flags typed beside `--resume` checked against it: a
/// measurement setting that differs is refused by name (exit 2); an operational one is used.
fn resumed_config<C: serde::Serialize + serde::de::DeserializeOwned>(
    journal: &Path,
    start: &StartLine,
    recorded: &C,
    typed: &TypedBeside<C>,
) -> Result<C, SweepError> {
    let as_json = |config: &C| serde_json::to_value(config).unwrap_or(serde_json::Value::Null);
    let (recorded_json, typed_json) = (as_json(recorded), as_json(&typed.config));
    let settings =
        vernier_run::typed_settings(&recorded_json, &typed_json, &typed.fields, &OPERATIONAL);
    let original = (!start.command_line.is_empty()).then(|| start.command_line.join(" "));
    vernier_run::check_resume(journal, original.as_deref(), &settings)?;
    let mut session = recorded_json;
    for (field, _) in &typed.fields {
        if OPERATIONAL.contains(&field.as_str())
            && let (Some(object), Some(value)) = (session.as_object_mut(), typed_json.get(field))
        {
            object.insert(field.clone(), value.clone());
        }
    }
    serde_json::from_value(session).map_err(|error| {
        SweepError::invalid(
            "--resume",
            format!(
                "{} holds a configuration this version cannot read: {error}",
                journal.display()
            ),
        )
    })
}

/// The server as a run records it: the model resolved, the server, model and machine, and
/// the identity checked again at the end.
pub(crate) struct Connected {
    pub(crate) model: String,
    /// The tokens (prompt and reply) the server takes for the model, when it says.
    pub(crate) context_limit: Option<vernier_openai::ContextLimit>,
    pub(crate) environment: crate::environment::Environment,
    pub(crate) fingerprint: vernier_run::ServerFingerprint,
}

/// Resolves the model and reads the server, model and machine; a resumed run must find the
/// server its journal recorded (another one is refused as `ServerChanged`).
async fn connect(
    client: &Client,
    wanted: &str,
    (opened, resumed): (&Opened, bool),
    context: &RunContext,
    observer: &dyn SweepObserver,
) -> Result<Connected, SweepError> {
    let resumed_journal = resumed.then_some(opened.journal.as_path());
    let model = vernier_run::resolve_model(client, Some(wanted), resumed_journal).await?;
    let identity = client.server_identity().await;
    let limit = vernier_openai::context_limit(&model.listed, &model.id, &identity);
    let (served, gpu, kv_cache) =
        crate::engine::read_machine(client, context, &model, &identity, limit, observer).await;
    let environment = crate::engine::environment_of(
        client,
        context,
        &identity,
        (served, kv_cache),
        None,
        gpu.record.clone(),
    );
    if let (Some(journal), Some(AgentLine::Start(start))) = (resumed_journal, opened.lines.first())
    {
        vernier_run::check_same_server(
            journal,
            &crate::engine::fingerprint_of(&start.environment),
            &crate::engine::fingerprint_of(&environment),
        )?;
    }
    Ok(Connected {
        context_limit: limit,
        fingerprint: vernier_run::fingerprint(&model.id, &identity),
        model: model.id,
        environment,
    })
}

/// What a run needs once its folder is open: the server read (a resumed run's checked against
/// its journal) and the model it serves written into `model`, the wire (capturing when asked,
/// `extra_body` merged) and the journal's writer.
pub(crate) async fn begin(
    client: Client,
    (model, capture, extra_body, idle_timeout): (
        &mut String,
        bool,
        &serde_json::Map<String, serde_json::Value>,
        std::time::Duration,
    ),
    (opened, resumed): (&Opened, bool),
    context: &RunContext,
    observer: &dyn SweepObserver,
) -> Result<(Connected, Wire, JournalWriter), SweepError> {
    let connected = connect(&client, model, (opened, resumed), context, observer).await?;
    model.clone_from(&connected.model);
    let wire = Wire::new(client, &opened.out, capture, extra_body, idle_timeout);
    let writer = writer_for(opened, resumed, context)?;
    Ok((connected, wire, writer))
}

/// The journal's writer: a new journal, or the old one with a `resumed` line.
fn writer_for(
    opened: &Opened,
    resumed: bool,
    context: &RunContext,
) -> Result<JournalWriter, SweepError> {
    if resumed {
        let writer = JournalWriter::open_append(&opened.journal)?;
        writer.append(&AgentLine::Resumed {
            at_unix_ms: vernier_run::unix_ms(),
            command_line: context.command_line.clone(),
        })?;
        Ok(writer)
    } else {
        Ok(JournalWriter::create_new(&opened.journal)?)
    }
}

/// The nonce, sizing and shared prefix: from the journal's start line, or (a new run) sized
/// now and written as the start line.
async fn first_line(
    opened: &Opened,
    wire: &Wire,
    writer: &JournalWriter,
    config: &AgentConfig,
    environment: crate::environment::Environment,
    context: &RunContext,
    observer: &dyn SweepObserver,
) -> Result<(String, Sized), SweepError> {
    if let Some(AgentLine::Start(start)) = opened.lines.first() {
        return match &start.job {
            Job::Agent {
                sizing,
                shared_prefix_tokens,
                tool_choice,
                ..
            } => Ok((
                start.nonce.clone(),
                (*sizing, *shared_prefix_tokens, tool_choice.clone()),
            )),
            Job::Replay { .. } => unreachable_job(),
        };
    }
    let nonce = NonceSource::new().next();
    let (sizing, shared, tool_choice) = size(wire, config, &nonce, observer).await?;
    let job = Job::Agent {
        config: Box::new(config.clone()),
        sizing,
        shared_prefix_tokens: shared,
        tool_choice: tool_choice.clone(),
    };
    write_start(writer, job, &nonce, environment, context)?;
    Ok((nonce, (sizing, shared, tool_choice)))
}

/// Writes and syncs a new run's start line: its job, nonce, server, model and machine, the
/// instant and the command line.
pub(crate) fn write_start(
    writer: &JournalWriter,
    job: Job,
    nonce: &str,
    environment: crate::environment::Environment,
    context: &RunContext,
) -> Result<(), SweepError> {
    writer.append(&AgentLine::Start(Box::new(StartLine {
        version: journal::AGENT_JOURNAL_VERSION,
        job,
        nonce: nonce.to_owned(),
        environment: Box::new(environment),
        started_unix_ms: vernier_run::unix_ms(),
        command_line: context.command_line.clone(),
    })))?;
    Ok(writer.sync()?)
}

/// Runs an agent run (or continues one) and writes its run file and report.
pub async fn run_agent(
    client: Client,
    start: AgentStart,
    context: RunContext,
    observer: Arc<dyn SweepObserver>,
    interrupt: Option<Interrupt>,
) -> Result<AgentOutcome, SweepError> {
    let start = match start {
        AgentStart::New { config, out } => Ok((*config, out)),
        AgentStart::Resume { journal, typed } => Err((journal, typed)),
    };
    let (opened, mut config, resumed) =
        open_job(start, AgentConfig::check, "sweep agent", |job| match job {
            Job::Agent { config, .. } => Some((**config).clone()),
            Job::Replay { .. } => None,
        })?;
    let started = async {
        let idle_timeout = config.idle_timeout();
        let (connected, wire, writer) = begin(
            client,
            (
                &mut config.model,
                config.capture,
                &config.extra_body,
                idle_timeout,
            ),
            (&opened, resumed),
            &context,
            observer.as_ref(),
        )
        .await?;
        observer.status("sizing the texts in the server's tokens");
        let first = first_line(
            &opened,
            &wire,
            &writer,
            &config,
            connected.environment.clone(),
            &context,
            observer.as_ref(),
        )
        .await?;
        Ok::<_, SweepError>((connected, wire, writer, first))
    }
    .await;
    let (connected, wire, writer, (nonce, (sizing, prefix_tokens, tool_choice))) = match started {
        Ok(started) => started,
        Err(error) => {
            if !resumed {
                opened.abandon();
            }
            return Err(error);
        }
    };
    let done: Vec<TurnRecord> = journal::turns_of(&opened.lines);
    observer.planned(planned_turns(&config), done.len() as u64);
    let shared = Arc::new(Shared {
        wire,
        config,
        sizing,
        nonce,
        prefix_tokens,
        tool_choice,
        journal: writer,
        observer: Arc::clone(&observer),
        stop: tokio::sync::watch::channel(false).0,
        stopped_by: std::sync::Mutex::new(None),
    });
    let work = passes(&shared, &done);
    tokio::pin!(work);
    let mut interrupt = interrupt.unwrap_or_else(vernier_run::never);
    let (result, interrupted) = tokio::select! {
        result = &mut work => (result, false),
        () = &mut interrupt => {
            shared.request_stop();
            observer.note("interrupted: finishing the turns in flight");
            ((&mut work).await, true)
        }
    };
    let capacity = result?;
    let stopped_by = shared.take_stopped_by();
    let lines = end_run(
        &shared.wire.client,
        &connected.fingerprint,
        (&shared.journal, &opened.journal),
        (interrupted, stopped_by.is_some()),
        observer.as_ref(),
    )
    .await?;
    let (run, files) = write_agent_reports(&opened.out, &lines, capacity).inspect_err(|error| {
        reports_failed(error, &opened.journal, &context, observer.as_ref());
    })?;
    if let Some(detail) = stopped_by {
        return Err(server_stopped(detail, &opened.journal, &context));
    }
    Ok(AgentOutcome {
        run,
        files,
        journal: opened.journal,
        interrupted,
    })
}

/// The run's end: the server asked again (unless it stopped answering: a frozen server would
/// hold the question for ever), the `end` line synced, the observer told; returns the whole
/// journal, which the reports are derived from.
pub(crate) async fn end_run(
    client: &Client,
    fingerprint: &vernier_run::ServerFingerprint,
    (writer, journal): (&JournalWriter, &Path),
    (interrupted, server_stopped): (bool, bool),
    observer: &dyn SweepObserver,
) -> Result<Vec<AgentLine>, SweepError> {
    let server_changes = if server_stopped {
        Vec::new()
    } else {
        vernier_run::identity_changes(client, fingerprint).await
    };
    writer.append(&AgentLine::End {
        at_unix_ms: vernier_run::unix_ms(),
        interrupted: interrupted || server_stopped,
        server_changes,
    })?;
    writer.sync()?;
    observer.finished();
    journal::read_lines(journal)
}

/// Says, when a run file or report cannot be written (a full disk), that the journal holds
/// every measurement and how to continue once there is room (the command line as typed, with
/// `--resume JOURNAL`).
pub(crate) fn reports_failed(
    error: &SweepError,
    journal: &Path,
    context: &RunContext,
    observer: &dyn SweepObserver,
) {
    let program = vernier_cli::program_name(&context.command_line, "sweep");
    observer.warn(&format!(
        "failed to {}; everything measured is safe in {}; once there is room, continue with: {}",
        vernier_cli::one_line(error),
        journal.display(),
        vernier_cli::resume_command(
            program,
            &context.command_line,
            "--resume",
            &journal.display().to_string(),
        )
    ));
}

/// The error a run ends with when its server stopped: what was seen, where everything measured
/// is, and the command that continues it (the command line as typed, with `--resume JOURNAL`).
pub(crate) fn server_stopped(detail: String, journal: &Path, context: &RunContext) -> SweepError {
    let program = vernier_cli::program_name(&context.command_line, "sweep");
    SweepError::Run(vernier_run::RunError::ServerStopped {
        reason: vernier_run::StopReason::ServerUnreachable,
        detail,
        journal: journal.to_path_buf(),
        resume_command: vernier_cli::resume_command(
            program,
            &context.command_line,
            "--resume",
            &journal.display().to_string(),
        ),
    })
}

fn unreachable_job() -> Result<(String, Sized), SweepError> {
    Err(SweepError::invalid(
        "--resume",
        "the journal is a replay's: continue it with `sweep replay --resume`",
    ))
}

fn planned_turns(config: &AgentConfig) -> u64 {
    let per_pass = u64::from(config.sessions) * u64::from(config.turns);
    per_pass * if config.baseline_no_cache { 2 } else { 1 }
}

/// The passes: cache allowed, defeated when asked, then the capacity search when asked.
async fn passes(
    shared: &Arc<Shared>,
    done: &[TurnRecord],
) -> Result<Option<SessionCapacity>, SweepError> {
    let config = &shared.config;
    shared.observer.status(&format!(
        "{} sessions of {} turns, cache allowed",
        config.sessions, config.turns
    ));
    run_pass(shared, Pass::Cached, config.sessions, done).await?;
    if config.baseline_no_cache && !shared.stopped() {
        shared
            .observer
            .status("the same sessions with the cache defeated");
        run_pass(shared, Pass::Baseline, config.sessions, done).await?;
    }
    match (config.capacity_up_to, &config.target) {
        (Some(up_to), Some(target)) if !shared.stopped() => {
            Ok(Some(capacity_search(shared, done, up_to, target).await?))
        }
        _ => Ok(None),
    }
}

/// The largest number of sessions whose turns meet `target`: doubling from one session until
/// a step misses it (or `up_to` is reached), then halving the gap between the last step that
/// met it and the first that missed.
async fn capacity_search(
    shared: &Arc<Shared>,
    done: &[TurnRecord],
    up_to: u32,
    target: &crate::capacity_target::Target,
) -> Result<SessionCapacity, SweepError> {
    let mut steps: Vec<(u32, bool, f64)> = Vec::new();
    let step = |n: u32| async move {
        shared.observer.status(&format!(
            "capacity: {n} sessions against {}",
            target_text(target)
        ));
        let turns = run_pass(shared, Pass::Capacity, n, done).await?;
        let refs: Vec<&TurnRecord> = turns.iter().collect();
        let planned = n as usize * shared.config.turns as usize;
        let summary =
            super::summary::summarise_pass((Pass::Capacity, n, planned), &refs, Some(target));
        let goodput = summary.goodput.map_or((false, 0.0), |g| (g.holds, g.share));
        Ok::<_, SweepError>(goodput)
    };
    let (mut good, mut bad) = (None, None);
    let mut n = 1;
    loop {
        let (holds, share) = step(n).await?;
        if shared.stopped() {
            // An interrupted step is judged on part of its turns: left out.
            break;
        }
        steps.push((n, holds, share));
        if !holds {
            bad = Some(n);
            break;
        }
        good = Some(n);
        if n >= up_to {
            break;
        }
        n = n.saturating_mul(2).min(up_to);
    }
    while let (Some(g), Some(b)) = (good, bad) {
        if b - g <= 1 || shared.stopped() {
            break;
        }
        let mid = g + (b - g) / 2;
        let (holds, share) = step(mid).await?;
        if shared.stopped() {
            break;
        }
        steps.push((mid, holds, share));
        if holds {
            good = Some(mid);
        } else {
            bad = Some(mid);
        }
    }
    Ok(SessionCapacity {
        target: target_text(target),
        up_to,
        steps,
        largest: good,
        at_limit: good == Some(up_to),
        complete: !shared.stopped(),
    })
}

fn target_text(target: &crate::capacity_target::Target) -> String {
    target
        .parts
        .iter()
        .map(|part| part.text.as_str())
        .collect::<Vec<_>>()
        .join(",")
}
