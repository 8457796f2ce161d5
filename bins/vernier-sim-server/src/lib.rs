//! Command line for running the Vernier simulator as a standalone server.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use vernier_sim::{
    CrashFault, CrashReport, Faults, Script, Sim, SimConfig, SimError, TokensPerEvent,
};

/// Serve a simulated vLLM-like OpenAI-compatible API on loopback.
#[derive(Debug, Parser)]
#[command(name = "vernier-sim-server", version)]
pub struct Args {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Served model id.
    #[arg(long, default_value = "vernier-sim")]
    pub model: String,
    /// More model ids served alike, as a swapping proxy lists the models it switches
    /// between (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
    pub alias: Vec<String>,
    /// The path `/v1/models` states as the model's `root` (what vLLM loaded under
    /// `--served-model-name`); default: the served id.
    #[arg(long, value_name = "PATH")]
    pub model_root: Option<String>,
    /// Context length.
    #[arg(long, default_value_t = 32_768)]
    pub max_model_len: u32,
    /// Tokens per engine step (each step sends one event).
    #[arg(long, default_value_t = 1, conflicts_with = "speculative")]
    pub tokens_per_event: u32,
    /// Speculative decoding with 4 draft tokens instead of a fixed count.
    #[arg(long, value_enum)]
    pub speculative: Option<SpeculativeMode>,
    /// Prefill speed in tokens per second.
    #[arg(long, default_value_t = 5000.0)]
    pub prefill_rate: f64,
    /// Fixed prefill overhead in milliseconds.
    #[arg(long, default_value_t = 5.0)]
    pub fixed_overhead_ms: f64,
    /// Decode step in milliseconds.
    #[arg(long, default_value_t = 10.0)]
    pub decode_step_ms: f64,
    /// Reasoning tokens before each generated answer.
    #[arg(long, default_value_t = 0)]
    pub reasoning_tokens: u32,
    /// Decode step grows by this factor per extra running request.
    #[arg(long, default_value_t = 0.0)]
    pub slowdown_per_running_request: f64,
    /// Requests running at once; the rest wait.
    #[arg(long)]
    pub max_num_seqs: Option<usize>,
    /// Send `: keepalive` comments after this many idle milliseconds.
    #[arg(long)]
    pub keepalive_ms: Option<u64>,
    /// Write every event in two writes, split mid-line.
    #[arg(long)]
    pub split_writes: bool,
    /// Turn the prefix cache off.
    #[arg(long)]
    pub no_prefix_cache: bool,
    /// Scripted replies (JSON, or TOML when the name ends in .toml).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Append one JSON line of ground truth per request to this file.
    #[arg(long)]
    pub ground_truth: Option<PathBuf>,
    /// Append every POST request as received (`{"path": …, "body": …}`) to this file.
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<PathBuf>,
    /// Seed for generated text and speculative acceptance.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Share (0 to 1) of the chat turns that offer tools answered with one call to the first
    /// tool, arguments `{"query":"<3 to 6 words>"}`; the draw depends on the prompt and the
    /// seed only.
    #[arg(long, default_value_t = 0.0, value_name = "SHARE", value_parser = share)]
    pub tool_call_share: f64,
    /// Generated chat replies end by themselves (`finish_reason: "stop"`) after this many
    /// tokens when the request does not force its length (`ignore_eos`) and allows more.
    #[arg(long, value_name = "TOKENS")]
    pub reply_tokens: Option<u32>,
    /// Answer every generation request with this HTTP status (a vLLM-shaped error body), while
    /// `/health`, `/metrics` and `/v1/models` answer as usual.
    #[arg(long)]
    pub http_status: Option<u16>,
    /// Crash fault: the whole server exits (status 1, an Xid-like line and a scheduler dump
    /// on stderr) when at least this many streams are each `--crash-depth` tokens deep.
    #[arg(long, requires = "crash_depth")]
    pub crash_streams: Option<usize>,
    /// Crash fault: tokens each of the `--crash-streams` streams must have sent.
    #[arg(long, requires = "crash_streams")]
    pub crash_depth: Option<u64>,
    /// Crash fault: crashes per second while the condition holds.
    #[arg(long, default_value_t = 1.0)]
    pub crash_rate: f64,
}

/// Speculative acceptance profile.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SpeculativeMode {
    /// About 2.3 tokens per step on every prompt.
    Prose,
    /// About 3.4 tokens per step on every prompt.
    Code,
    /// Prose rates for prose prompts, code rates for code prompts.
    Mixed,
}

/// A share between 0 and 1, as a command-line value.
fn share(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not between 0 and 1"))
    }
}

fn millis(value: f64, field: &'static str) -> Result<Duration, SimError> {
    Duration::try_from_secs_f64(value / 1e3).map_err(|_| SimError::InvalidConfig {
        field,
        reason: format!("{value} ms is not a valid duration"),
    })
}

/// Builds the simulator's configuration from the command line.
pub fn config(args: &Args) -> Result<SimConfig, SimError> {
    let tokens_per_event = match args.speculative {
        None => TokensPerEvent::Fixed(args.tokens_per_event),
        Some(SpeculativeMode::Prose) => TokensPerEvent::prose_like(),
        Some(SpeculativeMode::Code) => TokensPerEvent::code_like(),
        Some(SpeculativeMode::Mixed) => TokensPerEvent::speculative(),
    };
    let script = args.script.as_ref().map(Script::from_path).transpose()?;
    let mut faults = Faults::default();
    if let Some(status) = args.http_status {
        let body = serde_json::json!({
            "object": "error",
            "message": format!("simulated failure: every generation request is answered {status}"),
            "type": "InternalServerError",
            "param": null,
            "code": status,
        });
        faults.http_status = Some((status, body.to_string()));
    }
    if let (Some(streams), Some(depth)) = (args.crash_streams, args.crash_depth) {
        faults.crash = Some(CrashFault::new(streams, depth, args.crash_rate));
    }
    Ok(SimConfig::builder()
        .faults(faults)
        .bind(SocketAddr::new(args.host, args.port))
        .model(args.model.clone())
        .aliases(args.alias.clone())
        .model_root(args.model_root.clone())
        .max_model_len(args.max_model_len)
        .tokens_per_event(tokens_per_event)
        .prefill_tokens_per_s(args.prefill_rate)
        .fixed_overhead(millis(args.fixed_overhead_ms, "fixed_overhead")?)
        .decode_step(millis(args.decode_step_ms, "decode_step")?)
        .reasoning_tokens(args.reasoning_tokens)
        .slowdown_per_running_request(args.slowdown_per_running_request)
        .max_num_seqs(args.max_num_seqs)
        .keepalive_comment_every(args.keepalive_ms.map(Duration::from_millis))
        .split_writes(args.split_writes)
        .prefix_cache(!args.no_prefix_cache)
        .script(script)
        .ground_truth_path(args.ground_truth.clone())
        .request_log_path(args.request_log.clone())
        .seed(args.seed)
        .tool_call_share(args.tool_call_share)
        .reply_tokens(args.reply_tokens)
        .build())
}

/// Starts the simulator, hands its base URL to `on_ready` (the binary prints it), and
/// serves until `stop` completes (the binary passes Ctrl-C), or until the crash fault fires
/// (its report is returned; the binary writes its log lines and exits 1). Prints nothing
/// itself.
pub async fn run(
    args: &Args,
    on_ready: impl FnOnce(&str),
    stop: impl Future<Output = ()>,
) -> Result<Option<CrashReport>, SimError> {
    let sim = Sim::start(config(args)?).await?;
    on_ready(&sim.base_url());
    tokio::select! {
        () = stop => {}
        report = sim.crashed() => return Ok(Some(report)),
    }
    sim.shutdown().await;
    Ok(None)
}

/// Whether `error` comes from the command line's values (exit code 2) rather than from the
/// machine (a port taken, a file that cannot be written: exit code 1).
pub fn is_usage_error(error: &SimError) -> bool {
    !matches!(
        error,
        SimError::Bind { .. } | SimError::GroundTruthFile { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_map_to_the_config() {
        let args = Args::parse_from([
            "vernier-sim-server",
            "--port",
            "0",
            "--tokens-per-event",
            "3",
            "--decode-step-ms",
            "2.5",
            "--max-num-seqs",
            "4",
        ]);
        let config = config(&args).expect("valid arguments");
        assert_eq!(config.tokens_per_event, TokensPerEvent::Fixed(3));
        assert_eq!(config.decode_step, Duration::from_micros(2500));
        assert_eq!(config.max_num_seqs, Some(4));
        assert_eq!(config.bind.port(), 0);
        let bad = Args::parse_from(["vernier-sim-server", "--decode-step-ms=-1"]);
        assert!(config_error(&bad).contains("decode_step"));
        assert!(config.tool_call_share.abs() < 1e-12, "default 0");
        let share = Args::parse_from(["vernier-sim-server", "--tool-call-share", "0.25"]);
        let shared = super::config(&share).expect("valid share");
        assert!((shared.tool_call_share - 0.25).abs() < 1e-12);
        for bad in ["1.5", "-0.1", "NaN", "half"] {
            let refused = Args::try_parse_from(["vernier-sim-server", "--tool-call-share", bad]);
            assert!(refused.is_err(), "{bad}");
        }
    }

    fn config_error(args: &Args) -> String {
        config(args).expect_err("invalid").to_string()
    }
}
