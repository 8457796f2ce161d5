//! From the command line to the engine: flags into a configuration, the server or the
//! in-process simulator, the run.

use std::sync::Arc;

use vernier_sweep::{
    InProcessSimulator, LoadMode, ResumeFlags, RunContext, SIMULATOR_BANNER, SweepConfig,
    SweepError, SweepOutcome, SweepStart, demo_simulator_config, read_resumable, run_sweep,
    sweep_client,
};

use crate::cli::{Args, Cli, SweepCommand};
use crate::progress::Progress;

fn invalid(what: &str, detail: String) -> SweepError {
    SweepError::invalid(what, detail)
}

/// The configuration the flags ask for (model empty when `--model` is not given).
pub(crate) fn config_from(args: &Args) -> Result<SweepConfig, SweepError> {
    let defeat = !args.unsafe_allow_prefix_cache;
    let mut config = SweepConfig::default();
    config.model = args.server.model.clone().unwrap_or_default();
    config.workloads.clone_from(&args.workload);
    config.prompt_tokens.clone_from(&args.prompt_tokens);
    config.output_tokens.clone_from(&args.output_tokens);
    config.concurrency.clone_from(&args.concurrency);
    config.reps = args.reps;
    config.warmup = args.warmup;
    config.until_ci_percent = args.until_ci;
    config.max_reps = args.max_reps;
    config.retries = args.retries;
    config.temperature = args.temperature;
    config.seed = args.seed;
    config.extra_body = args.server.extra_body_object()?;
    config.force_length = !args.no_force_length;
    config.cache_salt = defeat && !args.no_cache_salt;
    config.cache_prompt_field = defeat && !args.no_cache_prompt_field;
    config.token_ids = !args.no_token_ids;
    config.continuous_usage = !args.no_continuous_usage;
    config.defeat_prefix_cache = defeat;
    config.nonce_as_suffix = args.unsafe_nonce_as_suffix;
    config.idle_timeout_s = Some(args.idle_timeout_s);
    config.busy_wait_cap_s = Some(args.busy_wait_cap_s);
    config.allow_busy = Some(args.allow_busy);
    config.label.clone_from(&args.label);
    config.load = match (args.rate.is_empty(), args.load) {
        (true, load) => load,
        (false, LoadMode::Burst) => LoadMode::Rate,
        (false, _) => {
            return Err(invalid(
                "--load",
                "--rate asks for open-loop load, which is neither burst nor steady; drop --load, or drop --rate for steady load"
                    .to_owned(),
            ));
        }
    };
    config.duration_s = args.duration;
    config.rates_per_s.clone_from(&args.rate);
    config.arrival = args.arrival;
    config.capacity_target.clone_from(&args.target);
    config.max_rps = args.max_rps;
    config.capture_streams = args.capture;
    config.max_wait_s = args.max_wait;
    config.max_load = args.max_load;
    config.label.clone_from(&args.label);
    config.shard = args.shard;
    config.check()?;
    Ok(config)
}

/// Runs a sweep as the command line says. `command_line` is recorded and used to print the
/// exact resume command.
pub async fn run(cli: Cli, command_line: Vec<String>) -> Result<SweepOutcome, SweepError> {
    run_continued_by(cli, command_line, None).await
}

/// [`run`], saying `resume_command` (a study's, say) wherever the run tells how to continue it,
/// instead of the sweep's own.
pub(crate) async fn run_continued_by(
    cli: Cli,
    command_line: Vec<String>,
    resume_command: Option<String>,
) -> Result<SweepOutcome, SweepError> {
    let args = &cli.args;
    // Everything is checked before any network or simulator work, so a typo fails at once.
    let (start, recorded_target) = if let Some(named) = &args.resume {
        // A run folder or its journal.
        let journal = vernier_run::run_file_in(named, "journal.jsonl");
        let (_, header) = read_resumable(&journal)?;
        let start = SweepStart::Resume {
            journal,
            typed: Some(resume_flags(&cli)?),
        };
        (start, Some(header.config.target))
    } else {
        let config = config_from(args)?;
        // Without --out each run gets its own folder, so the same command runs twice.
        let out = if cli.typed.contains("out") {
            args.out.clone()
        } else {
            args.out
                .join(vernier_run::utc_folder_name(vernier_run::unix_ms()))
        };
        let journal = vernier_sweep::journal_path(&out);
        if journal.exists() {
            if !args.overwrite {
                return Err(vernier_run::RunError::JournalExists { out, journal }.into());
            }
            remove_run(&out)?;
        }
        (
            SweepStart::New {
                config: Box::new(config),
                out,
            },
            None,
        )
    };
    let progress = Progress::new(args.quiet, "sweep", "requests");
    // The server: --base-url, else the one the journal recorded, else the simulator.
    let target = args.server.checked()?;
    for note in &target.notes {
        progress.note_line(note);
    }
    let base_url = target
        .base_url
        .clone()
        .or_else(|| recorded_target.filter(|recorded| recorded != "simulator"));
    let (client, simulator) = client_for(&target, base_url).await?;
    if simulator.is_some() {
        progress.note_line(SIMULATOR_BANNER);
    }
    let context = RunContext::new(command_line)
        .resume_command(resume_command)
        .simulator(simulator.is_some())
        .gpu_info_cmd(args.gpu_info_cmd.clone())
        .gpu_metrics_url(args.gpu.gpu_metrics_url.clone())
        .gpu_sample_interval(args.gpu.interval())
        .gpus(args.gpu.gpus.clone())
        .shard_start(
            args.start_at
                .map(|at| vernier_run::instant_ahead("--start-at", at, vernier_run::unix_ms()))
                .transpose()?,
            vernier_run::seconds("--start-tolerance", args.start_tolerance, true)?,
            vernier_run::seconds("--shard-gap", args.shard_gap, true)?,
        );
    let interrupt = vernier_run::signals();
    let result = run_sweep(client, start, context, Arc::new(progress), Some(interrupt)).await;
    if let Some(handle) = simulator {
        handle.shutdown().await;
    }
    result
}

/// The client for `base_url`, or for the in-process simulator (started here) when there is
/// none.
async fn client_for(
    target: &vernier_run::Target,
    base_url: Option<String>,
) -> Result<(vernier_openai::Client, Option<InProcessSimulator>), SweepError> {
    let (base_url, simulator) = if let Some(url) = base_url {
        (url, None)
    } else {
        let handle = InProcessSimulator::start(demo_simulator_config()).await?;
        (handle.base_url().to_owned(), Some(handle))
    };
    let client = sweep_client(
        &base_url,
        target.api_key_env.as_deref(),
        target.ca_cert.as_deref(),
    )?;
    Ok((client, simulator))
}

/// `--dry-run`: the plan the flags make, with a duration estimate from two probe requests to
/// the server (or the simulator). Nothing is written.
pub async fn dry_run(cli: &Cli) -> Result<String, SweepError> {
    let args = &cli.args;
    let config = config_from(args)?;
    let target = args.server.checked()?;
    let (client, simulator) = client_for(&target, target.base_url.clone()).await?;
    let rates = vernier_sweep::probe_rates(&client, target.model.as_deref()).await;
    if let Some(handle) = simulator {
        handle.shutdown().await;
    }
    let mut text = vernier_sweep::render_plan(&config, rates?.as_ref());
    if target.base_url.is_none() {
        text.push_str(
            "  (against the bundled simulator: give --base-url for your server's figures)\n",
        );
    }
    Ok(text)
}

/// Removes the files a sweep writes in `out` (for `--overwrite`), and nothing else.
fn remove_run(out: &std::path::Path) -> Result<(), SweepError> {
    let cannot = |path: &std::path::Path, error: std::io::Error| {
        invalid(
            "--overwrite",
            format!(
                "cannot remove {}: {error}; remove the old run by hand or pick another --out",
                path.display()
            ),
        )
    };
    let entries = std::fs::read_dir(out).map_err(|error| cannot(out, error))?;
    for entry in entries {
        let path = entry.map_err(|error| cannot(out, error))?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ours = matches!(
            name.as_str(),
            "journal.jsonl" | "run.json" | "report.md" | "report.csv"
        ) || path.extension().is_some_and(|e| e == "svg");
        if ours {
            std::fs::remove_file(&path).map_err(|error| cannot(&path, error))?;
        } else if name == "captures" && path.is_dir() {
            std::fs::remove_dir_all(&path).map_err(|error| cannot(&path, error))?;
        }
    }
    Ok(())
}

/// Flags that are not configuration fields: how to reach the server and where to write.
/// Typed beside `--resume` they are used as given (the journal records the new address).
const NOT_CONFIGURATION: [&str; 16] = [
    "start_at",
    "start_tolerance",
    "shard_gap",
    "dry_run",
    "json",
    "overwrite",
    "base_url",
    "api_key_env",
    "ca_cert",
    "quiet",
    "resume",
    "out",
    "gpu_info_cmd",
    "gpu_metrics_url",
    "gpu_sample_ms",
    "gpus",
];

/// The configuration field each configuration flag sets (when the names differ).
fn field_of(flag_id: &str) -> &str {
    match flag_id {
        "workload" => "workloads",
        "until_ci" => "until_ci_percent",
        "no_force_length" => "force_length",
        "no_cache_salt" => "cache_salt",
        "no_cache_prompt_field" => "cache_prompt_field",
        "no_token_ids" => "token_ids",
        "no_continuous_usage" => "continuous_usage",
        "unsafe_allow_prefix_cache" => "defeat_prefix_cache",
        "unsafe_nonce_as_suffix" => "nonce_as_suffix",
        "rate" => "rates_per_s",
        "duration" => "duration_s",
        "target" => "capacity_target",
        "max_wait" => "max_wait_s",
        "capture" => "capture_streams",
        other => other,
    }
}

/// What was typed beside `--resume`, for the engine's resume policy: the configuration the
/// flags make and the configuration fields typed.
fn resume_flags(cli: &Cli) -> Result<ResumeFlags, SweepError> {
    let config = config_from(&cli.args)?;
    let fields = cli
        .typed
        .iter()
        .filter(|flag| !NOT_CONFIGURATION.contains(&flag.as_str()))
        .map(|flag| field_of(flag).to_owned())
        .collect();
    Ok(ResumeFlags::new(config, fields))
}

/// `sweep shard-job`: the Kubernetes Indexed Job for the shards, as YAML.
pub fn shard_job(args: &Args) -> Result<String, SweepError> {
    let Some(SweepCommand::ShardJob {
        shards,
        image,
        claim,
        name,
        namespace,
        start_at,
        start_in,
        cpu,
        memory,
        sweep_args,
    }) = &args.command
    else {
        return Err(invalid("shard-job", "not the shard-job command".to_owned()));
    };
    let now = vernier_run::unix_ms();
    let start = match start_at {
        Some(at) => vernier_run::instant_ahead("--start-at", *at, now)?,
        None => vernier_run::instant_ahead(
            "--start-in",
            now.saturating_add(start_in.saturating_mul(1000)),
            now,
        )?,
    };
    let mut job = vernier_sweep::ShardJob::new(name, image, *shards, start, claim);
    job.namespace.clone_from(namespace);
    job.sweep_args.clone_from(sweep_args);
    job.cpu.clone_from(cpu);
    job.memory.clone_from(memory);
    vernier_sweep::render_shard_job(&job)
}
