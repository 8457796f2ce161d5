//! `sweep agent` and `sweep replay`: their flags, and the runs they start.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use vernier_sweep::agent::{
    AgentConfig, AgentOutcome, AgentStart, ReplayConfig, ReplayOutcome, ReplayStart, Think,
    TypedBeside,
};
use vernier_sweep::{
    InProcessSimulator, Interrupt, RunContext, SIMULATOR_BANNER, SweepError, SweepObserver, Target,
    Workload,
};

use crate::progress::Progress;

/// Examples under `sweep agent --help`.
const AGENT_EXAMPLES: &str = "\
Examples:
  sweep agent                                          four 6-turn sessions against the bundled simulator
  sweep agent --base-url http://127.0.0.1:8000 --sessions 4 --turns 12 --baseline-no-cache
  sweep agent --base-url http://127.0.0.1:8000 --target 'ttft_p90<=800ms' --find-capacity 64
  sweep agent --resume agent-out/2026-12-04T20-00-00/journal.jsonl";

/// Examples under `sweep replay --help`.
const REPLAY_EXAMPLES: &str = "\
Examples:
  sweep replay                                         the bundled Mooncake-format trace, simulator
  sweep replay --base-url http://127.0.0.1:8000 --trace mooncake_trace.jsonl --time-scale 10
  sweep replay --base-url http://127.0.0.1:8000 --trace AzureLLMInferenceTrace_conv.csv --limit 500
The trace formats are in docs/trace-format.md; prompts are synthesised at the recorded
lengths (no recorded text is ever sent).";

/// Flags both commands share: the server, the output and the run's life.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// The server: `--base-url`, `--model`, `--api-key-env`, `--ca-cert`, `--extra-body`.
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// Output folder [default: a dated folder under agent-out/ or replay-out/].
    #[arg(long, help_heading = "Output")]
    pub out: Option<PathBuf>,
    /// Continue the run of this journal (or run folder).
    #[arg(long, help_heading = "Output")]
    pub resume: Option<PathBuf>,
    /// Keep every response byte for byte under OUT/captures/.
    #[arg(long, help_heading = "Output")]
    pub capture: bool,
    /// Goodput target, e.g. `ttft_p90<=800ms,decode_p10>=20`: a turn meets it when each part's
    /// bound holds for that turn.
    #[arg(long, value_parser = Target::parse, help_heading = "Workload")]
    pub target: Option<Target>,
    /// Seconds without a stream event before a request counts as hung; the server is then
    /// asked whether it still answers, and a server that does not ends the run (exit 4) with
    /// the command that continues it.
    #[arg(long, default_value_t = 60.0, help_heading = "Server")]
    pub idle_timeout_s: f64,
    /// Print the run file as JSON instead of the summary.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// No progress on stderr: no notes, no bar on a terminal and no heartbeat line elsewhere
    /// (warnings are still printed).
    #[arg(long, short, help_heading = "Output")]
    pub quiet: bool,
}

/// `sweep agent`: concurrent multi-turn sessions with the prefix cache on purpose.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = vernier_cli::exit_code::with_help_lines(AGENT_EXAMPLES))]
pub struct AgentArgs {
    /// Server, output and target.
    #[command(flatten)]
    pub common: Common,
    /// Concurrent sessions.
    #[arg(long, default_value_t = 4, help_heading = "Workload")]
    pub sessions: u32,
    /// Turns per session (each one request carrying the whole conversation).
    #[arg(long, default_value_t = 6, help_heading = "Workload")]
    pub turns: u32,
    /// The shared system prompt's length, in the server's tokens (k suffix allowed).
    #[arg(long, default_value = "1000", value_parser = vernier_cli::parse_tokens, help_heading = "Workload")]
    pub system_tokens: u32,
    /// Tools offered with every turn (0: none).
    #[arg(long, default_value_t = 4, help_heading = "Workload")]
    pub tools: u32,
    /// Each user message's length, in the server's tokens.
    #[arg(long, default_value = "60", value_parser = vernier_cli::parse_tokens, help_heading = "Workload")]
    pub user_tokens: u32,
    /// Each tool result's length, in the server's tokens.
    #[arg(long, default_value = "150", value_parser = vernier_cli::parse_tokens, help_heading = "Workload")]
    pub tool_result_tokens: u32,
    /// The most tokens one answer may have.
    #[arg(long, default_value = "64", value_parser = vernier_cli::parse_tokens, help_heading = "Workload")]
    pub max_tokens: u32,
    /// The pause between turns: `0.2s`, `500ms`, or `exp:2s` (drawn, 2 s mean).
    #[arg(long, default_value = "0.2s", value_parser = parse_think, help_heading = "Workload")]
    pub think: Think,
    /// The corpus of the texts: prose or code.
    #[arg(long, default_value = "code", value_parser = parse_workload, help_heading = "Workload")]
    pub workload: Workload,
    /// Seed of the texts' places in the corpus and of drawn pauses.
    #[arg(long, default_value_t = 0, help_heading = "Workload")]
    pub seed: u64,
    /// After the run, the same sessions with the prefix cache defeated (`cache_salt`,
    /// `cache_prompt: false`): the speed-up the cache gives this workload.
    #[arg(long, help_heading = "Cache")]
    pub baseline_no_cache: bool,
    /// Search the largest number of sessions (up to N) whose turns meet `--target`.
    #[arg(long, value_name = "N", help_heading = "Capacity")]
    pub find_capacity: Option<u32>,
}

/// `sweep replay`: a recorded trace's arrivals and lengths, sent at their times.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = vernier_cli::exit_code::with_help_lines(REPLAY_EXAMPLES))]
pub struct ReplayArgs {
    /// Server, output and target.
    #[command(flatten)]
    pub common: Common,
    /// The trace: a file, or `bundled:mini-mooncake` / `bundled:mini-azure`.
    #[arg(
        long,
        default_value = "bundled:mini-mooncake",
        help_heading = "Workload"
    )]
    pub trace: String,
    /// The trace's format: jsonl, mooncake or azure [default: from the file].
    #[arg(long, help_heading = "Workload")]
    pub format: Option<String>,
    /// Send arrivals this many times faster than recorded (10: ten times faster).
    #[arg(long, default_value_t = 1.0, help_heading = "Workload")]
    pub time_scale: f64,
    /// Only the first N records (0: all).
    #[arg(long, default_value_t = 0, help_heading = "Workload")]
    pub limit: usize,
    /// Leave output lengths as budgets instead of forcing them (`ignore_eos`, `min_tokens`).
    #[arg(long, help_heading = "Workload")]
    pub no_force_length: bool,
    /// Journal the records the server's context cannot hold as `too_long` without sending
    /// them (without it such a trace is refused before any request).
    #[arg(long, help_heading = "Workload")]
    pub skip_over_context: bool,
}

/// Flags of `sweep agent` that set a field of its configuration: (flag id, field).
const AGENT_FIELDS: [(&str, &str); 17] = [
    ("model", "model"),
    ("sessions", "sessions"),
    ("turns", "turns"),
    ("system_tokens", "system_tokens"),
    ("tools", "tools"),
    ("user_tokens", "user_tokens"),
    ("tool_result_tokens", "tool_result_tokens"),
    ("max_tokens", "max_tokens"),
    ("think", "think"),
    ("workload", "workload"),
    ("seed", "seed"),
    ("baseline_no_cache", "baseline_no_cache"),
    ("find_capacity", "capacity_up_to"),
    ("target", "target"),
    ("capture", "capture"),
    ("extra_body", "extra_body"),
    ("idle_timeout_s", "idle_timeout_s"),
];

/// Flags of `sweep replay` that set a field of its configuration: (flag id, field).
const REPLAY_FIELDS: [(&str, &str); 11] = [
    ("model", "model"),
    ("trace", "trace"),
    ("format", "format"),
    ("time_scale", "time_scale"),
    ("limit", "limit"),
    ("no_force_length", "force_length"),
    ("skip_over_context", "skip_over_context"),
    ("target", "target"),
    ("capture", "capture"),
    ("extra_body", "extra_body"),
    ("idle_timeout_s", "idle_timeout_s"),
];

/// The configuration fields whose flags were typed, each with its flag (`--max-tokens`).
fn typed_fields(typed: &BTreeSet<String>, fields: &[(&str, &str)]) -> Vec<(String, String)> {
    fields
        .iter()
        .filter(|(id, _)| typed.contains(*id))
        .map(|(id, field)| ((*field).to_owned(), format!("--{}", id.replace('_', "-"))))
        .collect()
}

/// `--out` beside `--resume` must name the journal's folder: a resumed run writes next to its
/// journal.
fn check_out(common: &Common, journal: &Path) -> Result<(), SweepError> {
    let Some(out) = &common.out else {
        return Ok(());
    };
    let folder = journal.parent().unwrap_or_else(|| Path::new("."));
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(out, folder) {
        Ok(())
    } else {
        Err(SweepError::invalid(
            "--out",
            format!(
                "{} is not the folder of {}: a resumed run writes next to its journal; leave --out out",
                out.display(),
                journal.display()
            ),
        ))
    }
}

fn parse_think(text: &str) -> Result<Think, String> {
    text.parse()
}

fn parse_workload(text: &str) -> Result<Workload, String> {
    text.parse()
}

/// The client and, without `--base-url`, the simulator it points at (a resumed run without it
/// goes back to the server its journal recorded).
async fn target(
    common: &Common,
    progress: &Progress,
) -> Result<(vernier_openai::Client, Option<InProcessSimulator>), SweepError> {
    let server = common.server.checked()?;
    for note in &server.notes {
        progress.note_line(note);
    }
    let recorded = match (&server.base_url, &common.resume) {
        (None, Some(named)) => vernier_sweep::agent::recorded_server(&vernier_run::run_file_in(
            named,
            "journal.jsonl",
        ))?,
        _ => None,
    };
    let (base_url, simulator) = if let Some(url) = server.base_url.clone().or(recorded) {
        (url, None)
    } else {
        let handle = InProcessSimulator::start(vernier_sweep::agent_simulator_config()).await?;
        progress.note_line(SIMULATOR_BANNER);
        (handle.base_url().to_owned(), Some(handle))
    };
    let client = vernier_sweep::sweep_client(
        &base_url,
        server.api_key_env.as_deref(),
        server.ca_cert.as_deref(),
    )?;
    Ok((client, simulator))
}

/// Runs `run` against the server `common` names (or the simulator, started here and stopped
/// after), with progress (`label` and what it counts, `noun`, name it in a heartbeat line) and
/// Ctrl-C or SIGTERM as the interrupt.
async fn with_target<T, F, Fut>(
    common: &Common,
    command_line: Vec<String>,
    (label, noun): (&str, &'static str),
    run: F,
) -> Result<T, SweepError>
where
    F: FnOnce(vernier_openai::Client, RunContext, Arc<dyn SweepObserver>, Option<Interrupt>) -> Fut,
    Fut: std::future::Future<Output = Result<T, SweepError>>,
{
    let progress = Progress::new(common.quiet, label, noun);
    let (client, simulator) = target(common, &progress).await?;
    let context = RunContext::new(command_line).simulator(simulator.is_some());
    let result = run(
        client,
        context,
        Arc::new(progress),
        Some(vernier_run::signals()),
    )
    .await;
    if let Some(handle) = simulator {
        handle.shutdown().await;
    }
    result
}

/// Where a new run goes: `--out`, else a dated folder under `default`.
fn out_of(common: &Common, default: &str) -> PathBuf {
    common.out.clone().unwrap_or_else(|| {
        PathBuf::from(default).join(vernier_run::utc_folder_name(vernier_run::unix_ms()))
    })
}

/// The agent run `args` ask for.
pub(crate) fn agent_config(args: &AgentArgs) -> Result<AgentConfig, SweepError> {
    let common = &args.common;
    Ok(AgentConfig {
        model: common.server.model.clone().unwrap_or_default(),
        sessions: args.sessions,
        turns: args.turns,
        system_tokens: args.system_tokens,
        tools: args.tools,
        user_tokens: args.user_tokens,
        tool_result_tokens: args.tool_result_tokens,
        max_tokens: args.max_tokens,
        think: args.think,
        workload: args.workload,
        seed: args.seed,
        baseline_no_cache: args.baseline_no_cache,
        target: common.target.clone(),
        capacity_up_to: args.find_capacity,
        capture: common.capture,
        extra_body: common.server.extra_body_object()?,
        idle_timeout_s: common.idle_timeout_s,
        ..AgentConfig::default()
    })
}

/// Runs `sweep agent`; `typed` holds the flags typed (clap ids), which beside `--resume` must
/// agree with the journal's run.
pub async fn run_agent(
    args: AgentArgs,
    typed: &BTreeSet<String>,
    command_line: Vec<String>,
) -> Result<AgentOutcome, SweepError> {
    let common = &args.common;
    let config = agent_config(&args)?;
    let start = if let Some(named) = &common.resume {
        let journal = vernier_run::run_file_in(named, "journal.jsonl");
        check_out(common, &journal)?;
        AgentStart::Resume {
            journal,
            typed: TypedBeside::new(config, typed_fields(typed, &AGENT_FIELDS)),
        }
    } else {
        AgentStart::New {
            config: Box::new(config),
            out: out_of(common, "agent-out"),
        }
    };
    with_target(
        common,
        command_line,
        ("sweep agent", "turns"),
        |client, context, observer, interrupt| {
            vernier_sweep::agent::run_agent(client, start, context, observer, interrupt)
        },
    )
    .await
}

/// Runs `sweep replay`; `typed` holds the flags typed (clap ids), which beside `--resume` must
/// agree with the journal's run.
pub async fn run_replay(
    args: ReplayArgs,
    typed: &BTreeSet<String>,
    command_line: Vec<String>,
) -> Result<ReplayOutcome, SweepError> {
    let common = &args.common;
    let config = ReplayConfig {
        model: common.server.model.clone().unwrap_or_default(),
        trace: args.trace.clone(),
        format: args.format.clone().unwrap_or_default(),
        time_scale: args.time_scale,
        limit: args.limit,
        force_length: !args.no_force_length,
        target: common.target.clone(),
        capture: common.capture,
        extra_body: common.server.extra_body_object()?,
        skip_over_context: args.skip_over_context,
        idle_timeout_s: common.idle_timeout_s,
    };
    let start = if let Some(named) = &common.resume {
        let journal = vernier_run::run_file_in(named, "journal.jsonl");
        check_out(common, &journal)?;
        ReplayStart::Resume {
            journal,
            typed: TypedBeside::new(config, typed_fields(typed, &REPLAY_FIELDS)),
        }
    } else {
        ReplayStart::New {
            config: Box::new(config),
            out: out_of(common, "replay-out"),
        }
    };
    with_target(
        common,
        command_line,
        ("sweep replay", "requests"),
        |client, context, observer, interrupt| {
            vernier_sweep::agent::run_replay(client, start, context, observer, interrupt)
        },
    )
    .await
}
