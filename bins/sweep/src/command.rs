//! The `sweep` command: set-up, the run, and the reports.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use vernier_openai::{ClientBuilder, ServerKind, Timeouts};
use vernier_sim::{SimConfig, TokensPerEvent};

use crate::cli::Args;
use crate::config::SweepConfig;
use crate::corpus::{self, Corpus, NonceSource};
use crate::environment::{self, Environment, ModelInfo, ServerInfo};
use crate::error::SweepError;
use crate::journal::{self, Header, JournalLine, JournalWriter, Resumed};
use crate::progress::Progress;
use crate::report::{self, ReportFiles};
use crate::runner::{self, ResumeState, Shared};
use crate::server_metrics;
use crate::simulator::SimulatorThread;
use crate::summary::{self, RunFile};

/// What a finished (or interrupted) run leaves behind.
#[derive(Debug)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The run file as written.
    pub run: RunFile,
    /// The files written.
    pub files: ReportFiles,
    /// The journal.
    pub journal: PathBuf,
    /// The terminal table.
    pub table: String,
    /// True when Ctrl-C stopped the run early.
    pub interrupted: bool,
}

/// The simulator started when no `--base-url` is given: speculative decoding (about 2.3
/// tokens per event on prose, 3.4 on code), a prefix cache, and fast steps so the default
/// sweep finishes in under half a minute.
pub fn demo_simulator_config() -> SimConfig {
    SimConfig::builder()
        .tokens_per_event(TokensPerEvent::speculative())
        .prefix_cache(true)
        .decode_step(Duration::from_millis(2))
        .prefill_tokens_per_s(20_000.0)
        .fixed_overhead(Duration::from_millis(2))
        .build()
}

/// The banner printed when the simulator stands in for a server.
pub const SIMULATOR_BANNER: &str = "No --base-url given: measuring the bundled simulator in-process. \
These figures describe the simulator, not a real server; pass --base-url URL to measure one.";

fn parse_extra_body(
    text: Option<&str>,
) -> Result<serde_json::Map<String, serde_json::Value>, SweepError> {
    let Some(text) = text else {
        return Ok(serde_json::Map::new());
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(SweepError::InvalidArgument {
            what: "--extra-body".to_owned(),
            detail: "it must be a JSON object, e.g. '{\"chat_template_kwargs\":{\"enable_thinking\":false}}'".to_owned(),
        }),
        Err(error) => Err(SweepError::InvalidArgument { what: "--extra-body".to_owned(), detail: format!("not JSON: {error}") }),
    }
}

/// The longest `--idle-timeout-s` or `--busy-wait-cap-s`: seven days.
const MAX_WAIT_S: f64 = 7.0 * 24.0 * 3600.0;

/// What the arguments resolve to beyond clap's parsing, checked before any network or simulator
/// work so a typo fails at once.
#[derive(Debug)]
struct CheckedArgs {
    extra_body: serde_json::Map<String, serde_json::Value>,
    idle_timeout: Duration,
    busy_wait_cap: Duration,
}

fn invalid(what: &str, detail: &str) -> SweepError {
    SweepError::InvalidArgument {
        what: what.to_owned(),
        detail: detail.to_owned(),
    }
}

/// `seconds` as a duration, if it is positive (or zero, with `allow_zero`) and at most
/// [`MAX_WAIT_S`]; `flag` and `detail` name the fault otherwise.
fn wait_seconds(
    flag: &str,
    seconds: f64,
    allow_zero: bool,
    detail: &str,
) -> Result<Duration, SweepError> {
    let low_ok = if allow_zero {
        seconds >= 0.0
    } else {
        seconds > 0.0
    };
    if !(low_ok && seconds <= MAX_WAIT_S) {
        return Err(invalid(flag, detail));
    }
    Duration::try_from_secs_f64(seconds)
        .map_err(|error| invalid(flag, &format!("{detail} ({error})")))
}

fn check_args(args: &Args) -> Result<CheckedArgs, SweepError> {
    if args.reps == 0 {
        return Err(invalid(
            "--reps",
            "at least one measured repetition is needed",
        ));
    }
    if args.prompt_tokens.is_empty() || args.prompt_tokens.contains(&0) {
        return Err(invalid(
            "--prompt-tokens",
            "give positive lengths, e.g. 111,364",
        ));
    }
    if args.output_tokens.is_empty() || args.output_tokens.iter().any(|&t| t < 2) {
        return Err(invalid(
            "--output-tokens",
            "a decode rate needs at least 2 output tokens",
        ));
    }
    if args.concurrency.is_empty() || args.concurrency.contains(&0) {
        return Err(invalid(
            "--concurrency",
            "give positive stream counts, e.g. 1,2,4,8",
        ));
    }
    if args.workload.is_empty() {
        return Err(invalid("--workload", "give prose, code or both"));
    }
    if args
        .until_ci
        .is_some_and(|pct| !(pct > 0.0 && pct.is_finite()))
    {
        return Err(invalid("--until-ci", "give a positive percentage, e.g. 2"));
    }
    if !(args.temperature >= 0.0 && args.temperature.is_finite()) {
        return Err(invalid(
            "--temperature",
            "give a temperature of 0 or more, e.g. 0",
        ));
    }
    let idle_timeout = wait_seconds(
        "--idle-timeout-s",
        args.idle_timeout_s,
        false,
        "give a positive number of seconds, at most 604800 (7 days)",
    )?;
    let busy_wait_cap = wait_seconds(
        "--busy-wait-cap-s",
        args.busy_wait_cap_s,
        true,
        "give a number of seconds from 0 to 604800 (7 days)",
    )?;
    Ok(CheckedArgs {
        extra_body: parse_extra_body(args.extra_body.as_deref())?,
        idle_timeout,
        busy_wait_cap,
    })
}

/// The journal's header, or an error saying the file is not a sweep journal.
fn journal_header<'a>(
    loaded: &'a journal::LoadedJournal,
    path: &std::path::Path,
) -> Result<&'a Header, SweepError> {
    loaded.header().ok_or_else(|| SweepError::JournalParse {
        path: path.to_path_buf(),
        line: 1,
        detail: "the first line is not a sweep header".to_owned(),
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

/// Runs a sweep as the command line says. `command_line` is recorded and used to print the
/// exact resume command.
#[expect(
    clippy::too_many_lines,
    reason = "the set-up reads best in order, step by step"
)]
pub async fn run(args: Args, command_line: Vec<String>) -> Result<RunOutcome, SweepError> {
    let checked = check_args(&args)?;
    // The program as the user ran it (`sweep`, or `target/release/sweep` under `cargo run`),
    // so the printed resume command runs as shown.
    let program = command_line
        .first()
        .filter(|word| !word.is_empty())
        .map_or("sweep", String::as_str)
        .to_owned();
    // The journal is checked before any network or simulator work, too.
    let resumed = if let Some(path) = &args.resume {
        let loaded = journal::read_journal(path)?;
        journal_header(&loaded, path)?;
        Some(loaded)
    } else {
        let path = runner::journal_path(&args.out);
        if path.exists() {
            return Err(SweepError::JournalExists {
                out: args.out.clone(),
                journal: path,
            });
        }
        None
    };
    let progress = Progress::new(args.quiet);
    let mut simulator: Option<SimulatorThread> = None;
    let base_url = if let Some(url) = &args.base_url {
        url.clone()
    } else {
        let handle = SimulatorThread::start(demo_simulator_config()).await?;
        let url = handle.base_url().to_owned();
        simulator = Some(handle);
        progress.note(SIMULATOR_BANNER);
        url
    };
    let mut builder = ClientBuilder::new(&base_url)
        .timeouts(Timeouts::none().connect(Some(Duration::from_secs(10))))
        .user_agent(format!("vernier-sweep/{}", env!("CARGO_PKG_VERSION")));
    if let Some(var) = &args.api_key_env {
        builder = builder.api_key_from_env(var);
    }
    let client = builder.build().map_err(|source| SweepError::Client {
        what: format!("set up a client for {base_url}"),
        source,
    })?;

    let models = client.models().await.map_err(|source| SweepError::Client {
        what: format!(
            "list models at {}/v1/models (or pass --model)",
            client.base_url()
        ),
        source,
    });
    let (model, max_model_len) = match (&args.model, models) {
        (Some(model), Ok(list)) => {
            let max = list
                .iter()
                .find(|m| &m.id == model)
                .and_then(|m| m.max_model_len);
            (model.clone(), max)
        }
        (Some(model), Err(_)) => (model.clone(), None),
        (None, Ok(list)) => match list.first() {
            Some(first) => (first.id.clone(), first.max_model_len),
            None => {
                return Err(SweepError::InvalidArgument {
                    what: "the server's model list".to_owned(),
                    detail: "/v1/models is empty; pass --model".to_owned(),
                });
            }
        },
        (None, Err(error)) => return Err(error),
    };
    if let Some(max) = max_model_len {
        for &prompt in &args.prompt_tokens {
            for &output in &args.output_tokens {
                if u64::from(prompt) + u64::from(output) > max {
                    return Err(SweepError::InvalidArgument {
                        what: format!("--prompt-tokens {prompt} with --output-tokens {output}"),
                        detail: format!(
                            "together they exceed the model's context of {max} tokens; ask for less"
                        ),
                    });
                }
            }
        }
    }

    // Refuse a busy server: its requests would share the GPU with ours. A server whose
    // /metrics has none of the known names is not taken for idle: the run file says so.
    let metrics = runner::metric_sums(&client).await;
    let mut warnings = Vec::new();
    match metrics.as_ref().and_then(server_metrics::load) {
        Some(load) if load.running + load.waiting > 0.0 => {
            let (running, waiting) = (load.running, load.waiting);
            if !args.allow_busy {
                return Err(SweepError::ServerBusy { running, waiting });
            }
            progress.note(&format!("the server has {running} running and {waiting} waiting requests; measuring anyway (--allow-busy)"));
        }
        Some(_) => {}
        None if args.allow_busy => {}
        None => warnings.push(server_metrics::busy_check_unavailable(metrics.is_some())),
    }
    let generation_counter = metrics
        .as_ref()
        .and_then(server_metrics::generation_counter);
    if generation_counter.is_none() {
        warnings.push(server_metrics::watchdog_blind(metrics.is_some()));
    }
    for warning in &warnings {
        progress.warn(warning);
    }

    let identity = client.server_identity().await;
    let environment = Environment {
        server: ServerInfo {
            base_url: base_url.clone(),
            simulator: simulator.is_some(),
            kind: kind_name(identity.kind).to_owned(),
            server_header: identity.server_header.clone(),
            version: identity.version_json.clone(),
            props: identity.props_json.clone(),
        },
        model: ModelInfo {
            id: model.clone(),
            max_model_len,
        },
        metrics_at_start: metrics.clone().unwrap_or_default(),
        client: environment::client_machine(),
        tool: environment::tool_info(),
        gpu_info: args.gpu_info_cmd.as_deref().map(environment::gpu_info),
    };
    let defeat = !args.unsafe_allow_prefix_cache;
    let config = SweepConfig {
        target: if simulator.is_some() {
            "simulator".to_owned()
        } else {
            base_url.clone()
        },
        model,
        workloads: args.workload.clone(),
        prompt_tokens: args.prompt_tokens.clone(),
        output_tokens: args.output_tokens.clone(),
        concurrency: args.concurrency.clone(),
        reps: args.reps,
        warmup: args.warmup,
        until_ci_percent: args.until_ci,
        max_reps: args.max_reps,
        retries: args.retries,
        temperature: args.temperature,
        seed: args.seed,
        extra_body: checked.extra_body,
        force_length: !args.no_force_length,
        cache_salt: defeat && !args.no_cache_salt,
        cache_prompt_field: defeat && !args.no_cache_prompt_field,
        token_ids: !args.no_token_ids,
        continuous_usage: !args.no_continuous_usage,
        defeat_prefix_cache: defeat,
        nonce_as_suffix: args.unsafe_nonce_as_suffix,
        idle_timeout_s: Some(args.idle_timeout_s),
        busy_wait_cap_s: Some(args.busy_wait_cap_s),
        allow_busy: Some(args.allow_busy),
        prompt_set_sha256: corpus::prompt_set_sha256(),
        label: args.label.clone(),
    };

    // Open or continue the journal.
    let (journal_path, writer, mut state, original_command) = if let (Some(path), Some(loaded)) =
        (&args.resume, &resumed)
    {
        let header = journal_header(loaded, path)?;
        let differences = header.config.differences(&config);
        if !differences.is_empty() {
            return Err(SweepError::ConfigMismatch {
                path: path.clone(),
                differences: differences.join("; "),
                original_command: runner::resume_command(&program, &header.command_line, path),
            });
        }
        if loaded.torn_tail {
            progress.note("the journal's last line was torn by a crash; it is cut and that request will be redone");
        }
        let writer = JournalWriter::reopen(path)?;
        writer.append(&JournalLine::Resumed(Box::new(Resumed {
            unix_ms: runner::unix_ms(),
            command_line: command_line.clone(),
            environment: environment.clone(),
            warnings,
        })))?;
        let state = ResumeState::from_journal(loaded);
        (path.clone(), writer, state, header.command_line.clone())
    } else {
        std::fs::create_dir_all(&args.out).map_err(|source| SweepError::WriteReport {
            path: args.out.clone(),
            source,
        })?;
        let path = runner::journal_path(&args.out);
        let writer = JournalWriter::create(&path)?;
        writer.append(&JournalLine::Header(Box::new(Header {
            journal_version: journal::JOURNAL_VERSION,
            started_unix_ms: runner::unix_ms(),
            command_line: command_line.clone(),
            config: config.clone(),
            environment,
            warnings,
        })))?;
        writer.sync()?;
        (path, writer, ResumeState::default(), command_line)
    };
    let out_dir = journal_path
        .parent()
        .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf);
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
        idle_timeout: checked.idle_timeout,
        busy_wait_cap: checked.busy_wait_cap,
        has_metrics: metrics.is_some(),
        generation_counter,
        resume_command: runner::resume_command(&program, &original_command, &journal_path),
        progress: progress.clone(),
    });

    let work = async {
        runner::calibrate_all(&shared, &mut state).await?;
        runner::run_cells(&shared, &mut state).await
    };
    let (result, interrupted) = tokio::select! {
        result = work => (result, false),
        _ = tokio::signal::ctrl_c() => (Ok(()), true),
    };
    progress.finish();
    if interrupted {
        progress.note(&format!(
            "interrupted: writing the report of what was measured; continue with: {}",
            shared.resume_command
        ));
    }
    // Reports come from the journal alone, also after a failure.
    let loaded = journal::read_journal(&journal_path)?;
    let written = summary::summarise(&loaded)
        .map(|run| report::write_reports(&run, &out_dir).map(|files| (run, files)));
    if let Some(handle) = simulator {
        handle.shutdown().await;
    }
    result?;
    let (run, files) = written.ok_or_else(|| SweepError::JournalParse {
        path: journal_path.clone(),
        line: 1,
        detail: "the journal has no header".to_owned(),
    })??;
    let table = report::render_table(&run);
    Ok(RunOutcome {
        run,
        files,
        journal: journal_path,
        table,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn args(extra: &[&str]) -> Args {
        let mut words = vec!["sweep"];
        words.extend_from_slice(extra);
        Args::parse_from(words)
    }

    fn rejected_flag(extra: &[&str]) -> String {
        match check_args(&args(extra)) {
            Err(SweepError::InvalidArgument { what, .. }) => what,
            other => panic!("{extra:?} was not refused as an argument: {other:?}"),
        }
    }

    #[test]
    fn waits_beyond_seven_days_are_refused_not_a_panic() {
        assert_eq!(
            rejected_flag(&["--idle-timeout-s", "1e20"]),
            "--idle-timeout-s"
        );
        assert_eq!(
            rejected_flag(&["--busy-wait-cap-s", "1e20"]),
            "--busy-wait-cap-s"
        );
        assert_eq!(
            rejected_flag(&["--idle-timeout-s", "0"]),
            "--idle-timeout-s"
        );
        assert_eq!(
            rejected_flag(&["--idle-timeout-s", "NaN"]),
            "--idle-timeout-s"
        );
        assert_eq!(
            rejected_flag(&["--busy-wait-cap-s", "inf"]),
            "--busy-wait-cap-s"
        );
        let checked = check_args(&args(&[
            "--idle-timeout-s",
            "604800",
            "--busy-wait-cap-s",
            "0",
        ]))
        .expect("seven days and zero are allowed");
        assert_eq!(checked.idle_timeout, Duration::from_secs(604_800));
        assert_eq!(checked.busy_wait_cap, Duration::ZERO);
    }

    #[test]
    fn extra_body_and_temperature_are_checked_with_the_rest() {
        assert_eq!(rejected_flag(&["--extra-body", "{oops"]), "--extra-body");
        assert_eq!(rejected_flag(&["--extra-body", "[1]"]), "--extra-body");
        assert_eq!(rejected_flag(&["--temperature=-1"]), "--temperature");
        let checked = check_args(&args(&["--extra-body", r#"{"top_k": 1}"#]))
            .expect("a JSON object is accepted");
        assert_eq!(checked.extra_body["top_k"], 1);
    }
}
