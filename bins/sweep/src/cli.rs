//! Command-line arguments.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{CommandFactory as _, FromArgMatches as _};
use vernier_sweep::{Arrival, LoadMode, Workload};

/// `sweep`: measure prefill and decode speed of an OpenAI-compatible server.
///
/// With no `--base-url` the bundled simulator runs in-process (the figures then describe the
/// simulator, and a banner says so).
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "sweep", version, about, long_about = None, args_conflicts_with_subcommands = true)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one command-line switch"
)]
pub struct Args {
    /// `show`: one measured request of a finished run (without a subcommand: run a sweep).
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// Server root or `/v1` URL, e.g. `http://127.0.0.1:8000`. Omit to run the simulator.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model id; taken from `/v1/models` when omitted.
    #[arg(long)]
    pub model: Option<String>,
    /// Prompt lengths in the server's own tokens.
    #[arg(long, value_delimiter = ',', default_values_t = [111_u32, 364, 5378, 10714])]
    pub prompt_tokens: Vec<u32>,
    /// Output lengths in tokens (forced where the server allows).
    #[arg(long, value_delimiter = ',', default_values_t = [512_u32])]
    pub output_tokens: Vec<u32>,
    /// Measured repetitions per cell (the minimum with `--until-ci`).
    #[arg(long, default_value_t = 5)]
    pub reps: u32,
    /// Discarded warm-up repetitions per cell, on their own prompts.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Concurrent streams per repetition, e.g. `1,2,4,8`.
    #[arg(long, value_delimiter = ',', default_values_t = [1_u32])]
    pub concurrency: Vec<u32>,
    /// How load is applied: `burst` starts `--concurrency` streams at once per repetition;
    /// `steady` keeps them in flight for `--duration` seconds, replacing each finished stream
    /// at once, and measures the steady window.
    #[arg(long, default_value = "burst", value_parser = parse_load)]
    pub load: LoadMode,
    /// Seconds of steady load (`--load steady`) or of open-loop sending (`--rate`) per
    /// repetition.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Open loop: request rates per second, e.g. `0.5,2,8`; requests go out on schedule
    /// whatever the server does (`--arrival`), for `--duration` seconds per repetition.
    #[arg(long, value_delimiter = ',')]
    pub rate: Vec<f64>,
    /// Open-loop arrivals: `poisson` (seeded exponential gaps) or `constant`.
    #[arg(long, value_parser = parse_arrival)]
    pub arrival: Option<Arrival>,
    /// Capacity at a target, e.g. `ttft_p90<=1000ms,decode_p10>=20`: searches the concurrency
    /// (or with `--rate R`, the rate from R) upward and then by bisection for the largest load
    /// meeting every part (figures ttft, itl, decode; quantiles p1-p99 or median).
    #[arg(long)]
    pub target: Option<String>,
    /// The highest concurrency (or rate) the capacity search tries.
    #[arg(long)]
    pub max_load: Option<f64>,
    /// Workloads: natural prose and natural code.
    #[arg(long, value_delimiter = ',', default_values_t = [Workload::Prose, Workload::Code], value_parser = parse_workload)]
    pub workload: Vec<Workload>,
    /// Sampling temperature (0 is greedy).
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// Sampling seed sent with every request.
    #[arg(long)]
    pub seed: Option<u64>,
    /// A JSON object merged into every request body.
    #[arg(long)]
    pub extra_body: Option<String>,
    /// Environment variable holding the API key (never written to any file or message).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// A PEM file of CA certificates to trust beside the built-in roots, for a self-hosted
    /// HTTPS server with a private CA or a self-signed certificate. `HTTPS_PROXY` and
    /// `NO_PROXY` are honoured.
    #[arg(long)]
    pub ca_cert: Option<PathBuf>,
    /// Keep the first N measured streams of each cell byte for byte, every body frame with its
    /// arrival (`OUT/captures/`), for `sweep show` and for replay.
    #[arg(long, value_name = "N")]
    pub capture: Option<u32>,
    /// The most requests per second to send, for endpoints with a request-rate limit.
    #[arg(long)]
    pub max_rps: Option<f64>,
    /// The longest the run waits on rate limits (`429`/`503`, as long as the server asks, or
    /// backing off), in seconds, in all; past it a rate-limited try counts as a failure.
    #[arg(long)]
    pub max_wait: Option<f64>,
    /// A free-form label recorded in the run file and reports.
    #[arg(long)]
    pub label: Option<String>,
    /// Output folder for the journal, run file and reports.
    #[arg(long, default_value = "sweep-out")]
    pub out: PathBuf,
    /// Continue the run recorded in this journal (its folder becomes the output folder). The
    /// configuration comes from the journal: `--resume JOURNAL` alone is enough; flags given
    /// beside it must agree with the journal, except `--base-url` (a server that came back at
    /// another address), `--api-key-env`, `--label`, `--quiet` and `--allow-busy`.
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Run even if the server already has requests running or waiting, or its `/metrics`
    /// cannot say (this also silences the warning that the busy check is unavailable).
    #[arg(long)]
    pub allow_busy: bool,
    /// Repeat each cell until the 95% interval on the median decode rate is narrower than
    /// this percentage of the median.
    #[arg(long)]
    pub until_ci: Option<f64>,
    /// Cap on repetitions per cell with `--until-ci`.
    #[arg(long, default_value_t = 30)]
    pub max_reps: u32,
    /// Retries of a failed request (each attempt is journaled as infra).
    #[arg(long, default_value_t = 2)]
    pub retries: u32,
    /// Do not send `ignore_eos` / `min_tokens` (for servers that reject them).
    #[arg(long)]
    pub no_force_length: bool,
    /// Do not send `cache_salt` (for servers that reject it).
    #[arg(long)]
    pub no_cache_salt: bool,
    /// Do not send `cache_prompt: false` (for servers that reject it).
    #[arg(long)]
    pub no_cache_prompt_field: bool,
    /// Do not ask for per-chunk token ids (`return_token_ids`).
    #[arg(long)]
    pub no_token_ids: bool,
    /// Do not ask for per-chunk usage (`stream_options.continuous_usage_stats`).
    #[arg(long)]
    pub no_continuous_usage: bool,
    /// A shell command whose output describes the server's GPU, e.g. `nvidia-smi -q`.
    #[arg(long)]
    pub gpu_info_cmd: Option<String>,
    /// Seconds without a stream event before the server's generation counter is checked.
    #[arg(long, default_value_t = 60.0)]
    pub idle_timeout_s: f64,
    /// Longest wait, in seconds, on a silent stream while the server is busy elsewhere.
    #[arg(long, default_value_t = 900.0)]
    pub busy_wait_cap_s: f64,
    /// No progress bar and no notes on stderr (warnings are still printed).
    #[arg(long)]
    pub quiet: bool,
    /// Testing only: send prompts without the opening nonce and without cache defeats, so a
    /// prefix cache can hit.
    #[arg(long, hide = true)]
    pub unsafe_allow_prefix_cache: bool,
    /// Testing only: put the nonce at the end of each prompt instead of the start, a control
    /// showing that a suffix nonce leaves the prefix cache free to hit.
    #[arg(long, hide = true)]
    pub unsafe_nonce_as_suffix: bool,
}

/// Subcommands of `sweep`.
#[derive(Debug, Clone, clap::Subcommand)]
#[non_exhaustive]
pub enum SweepCommand {
    /// Print one measured request of a run: its figures and, with `--capture`, every event with
    /// its arrival time and tokens.
    Show {
        /// The run's output folder.
        out: PathBuf,
        /// The cell: its index in the run file (from 0), or its name as the report writes it.
        cell: String,
        /// The measured repetition (from 0).
        rep: u32,
        /// The stream within the repetition.
        #[arg(long, default_value_t = 0)]
        stream: u32,
    },
}

fn parse_workload(text: &str) -> Result<Workload, String> {
    text.parse()
}

fn parse_load(text: &str) -> Result<LoadMode, String> {
    match text.parse()? {
        LoadMode::Rate => Err("open loop is asked with --rate R1,R2".to_owned()),
        mode => Ok(mode),
    }
}

fn parse_arrival(text: &str) -> Result<Arrival, String> {
    text.parse()
}

/// The parsed command line, and which flags were typed (not defaulted).
#[derive(Debug, Clone)]
pub struct Cli {
    /// The arguments.
    pub args: Args,
    /// Ids of the arguments given on the command line.
    pub typed: BTreeSet<String>,
}

impl Cli {
    /// Parses `words` (the program first), exiting with clap's message and code 2 on a usage
    /// error, as the binary does.
    pub fn parse_from<I, T>(words: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = Args::command().get_matches_from(words);
        let args = match Args::from_arg_matches(&matches) {
            Ok(args) => args,
            Err(error) => error.exit(),
        };
        let typed = matches
            .ids()
            .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
            .map(|id| id.as_str().to_owned())
            .collect();
        Self { args, typed }
    }
}
