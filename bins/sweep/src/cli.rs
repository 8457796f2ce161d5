//! Command-line arguments.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{CommandFactory as _, FromArgMatches as _};
use vernier_sweep::{Arrival, LoadMode, Workload};

/// Examples under `sweep --help`.
const EXAMPLES: &str = "\
Examples:
  sweep                                              the bundled simulator, every default (a demo)
  sweep --base-url http://127.0.0.1:8000 --prompt-tokens 1k,8k --output-tokens 256 --concurrency 1,4,16
  sweep --base-url https://api.example.com --model m --max-rps 2 --reps 3   (key from OPENAI_API_KEY)
  sweep --base-url http://127.0.0.1:8080 --target 'ttft_p90<=1s,decode_p10>=20'   capacity at a target
  sweep --resume sweep-out/2026-12-03T09-30-00/journal.jsonl                 continue an interrupted run
  sweep --base-url http://10.0.0.5:8000 --rate 4000 --duration 60 --shard 0/4 --start-at 2026-12-04T18:00:00Z
                                                     shard 0 of 4 (one per load machine); then
  sweep merge merged/ shard-0/ shard-1/ shard-2/ shard-3/                   one run from the shards

The default prompt lengths (111, 364, 5378 and 10714 tokens) are those of a published
prefill/decode comparison of two models on one machine: from a chat turn to a long document,
because short prompts alone hide how far apart two setups are on prefill. Token counts take
a k suffix (4k = 4096).";

/// `sweep`: measure prefill and decode speed of an OpenAI-compatible server.
///
/// With no `--base-url` the bundled simulator runs in-process (the figures then describe the
/// simulator, and a banner says so).
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "sweep",
    version,
    about,
    long_about = None,
    args_conflicts_with_subcommands = true,
    after_help = vernier_cli::exit_code::with_help_lines(EXAMPLES)
)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one command-line switch"
)]
pub struct Args {
    /// `show`: one measured request of a finished run (without a subcommand: run a sweep).
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// The server: `--base-url`, `--model`, `--api-key-env`, `--ca-cert`, `--extra-body`.
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// Prompt lengths in the server's own tokens.
    #[arg(long, value_delimiter = ',', default_values_t = [111_u32, 364, 5378, 10714], value_parser = vernier_cli::parse_tokens, help_heading = "Workload")]
    pub prompt_tokens: Vec<u32>,
    /// Output lengths in tokens (forced where the server allows).
    #[arg(long, value_delimiter = ',', default_values_t = [512_u32], value_parser = vernier_cli::parse_tokens, help_heading = "Workload")]
    pub output_tokens: Vec<u32>,
    /// Measured repetitions per cell (the minimum with `--until-ci`).
    #[arg(long, default_value_t = 5, help_heading = "Repetitions")]
    pub reps: u32,
    /// Discarded warm-up repetitions per cell, on their own prompts.
    #[arg(long, default_value_t = 1, help_heading = "Repetitions")]
    pub warmup: u32,
    /// Concurrent streams per repetition, e.g. `1,2,4,8`.
    #[arg(long, value_delimiter = ',', default_values_t = [1_u32], help_heading = "Load")]
    pub concurrency: Vec<u32>,
    /// How load is applied: `burst` starts `--concurrency` streams at once per repetition;
    /// `steady` keeps them in flight for `--duration` seconds, replacing each finished stream
    /// at once, and measures the steady window.
    #[arg(long, default_value = "burst", value_parser = parse_load, help_heading = "Load")]
    pub load: LoadMode,
    /// Seconds of steady load (`--load steady`) or of open-loop sending (`--rate`) per
    /// repetition.
    #[arg(long, help_heading = "Load")]
    pub duration: Option<f64>,
    /// Open loop: request rates per second, e.g. `0.5,2,8`; requests go out on schedule
    /// whatever the server does (`--arrival`), for `--duration` seconds per repetition.
    #[arg(long, value_delimiter = ',', help_heading = "Load")]
    pub rate: Vec<f64>,
    /// Open-loop arrivals: `poisson` (seeded exponential gaps) or `constant`.
    #[arg(long, value_parser = parse_arrival, help_heading = "Load")]
    pub arrival: Option<Arrival>,
    /// Capacity at a target, e.g. `ttft_p90<=1000ms,decode_p10>=20`: searches the concurrency
    /// (or with `--rate R`, the rate from R) upward and then by bisection for the largest load
    /// meeting every part (figures ttft, itl, decode; quantiles p1-p99 or median).
    #[arg(long, help_heading = "Load")]
    pub target: Option<String>,
    /// The highest concurrency (or rate) the capacity search tries.
    #[arg(long, help_heading = "Load")]
    pub max_load: Option<f64>,
    /// Workloads: natural prose and natural code.
    #[arg(long, value_delimiter = ',', default_values_t = [Workload::Prose, Workload::Code], value_parser = parse_workload, help_heading = "Workload")]
    pub workload: Vec<Workload>,
    /// Sampling temperature (0 is greedy).
    #[arg(long, default_value_t = 0.0, help_heading = "Workload")]
    pub temperature: f64,
    /// Sampling seed sent with every request.
    #[arg(long, help_heading = "Workload")]
    pub seed: Option<u64>,
    /// Keep the first N measured streams of each cell byte for byte, every body frame with its
    /// arrival (`OUT/captures/`), for `sweep show` and for replay.
    #[arg(long, value_name = "N", help_heading = "Output")]
    pub capture: Option<u32>,
    /// The most requests per second to send, for endpoints with a request-rate limit.
    #[arg(long, help_heading = "Hosted endpoints")]
    pub max_rps: Option<f64>,
    /// The longest the run waits on rate limits (`429`/`503`, as long as the server asks, or
    /// backing off), in seconds, in all; past it a rate-limited try counts as a failure.
    #[arg(long, help_heading = "Hosted endpoints")]
    pub max_wait: Option<f64>,
    /// A free-form label recorded in the run file and reports.
    #[arg(long, help_heading = "Output")]
    pub label: Option<String>,
    /// Output folder for the journal, run file and reports [default: sweep-out/DATE-TIME, a
    /// new folder each run, named by the UTC start time].
    #[arg(
        long,
        default_value = "sweep-out",
        hide_default_value = true,
        help_heading = "Output"
    )]
    pub out: PathBuf,
    /// Replace the run already in `--out` (its journal, run file, reports, charts and
    /// captures; nothing else in the folder is touched) instead of refusing.
    #[arg(long, help_heading = "Output")]
    pub overwrite: bool,
    /// Continue the run recorded in this journal, or in this run folder's journal (the folder
    /// stays the output folder). The
    /// configuration comes from the journal: `--resume JOURNAL` alone is enough; flags given
    /// beside it must agree with the journal, except `--base-url` (a server that came back at
    /// another address), `--api-key-env`, `--label`, `--quiet` and `--allow-busy`.
    #[arg(long, help_heading = "Output")]
    pub resume: Option<PathBuf>,
    /// Run even if the server already has requests running or waiting, or its `/metrics`
    /// cannot say (this also silences the warning that the busy check is unavailable).
    #[arg(long, help_heading = "Server")]
    pub allow_busy: bool,
    /// Repeat each cell until the 95% interval on the median decode rate is narrower than
    /// this percentage of the median.
    #[arg(long, help_heading = "Repetitions")]
    pub until_ci: Option<f64>,
    /// Cap on repetitions per cell with `--until-ci`.
    #[arg(long, default_value_t = 30, help_heading = "Repetitions")]
    pub max_reps: u32,
    /// Retries of a failed request (each attempt is journaled as infra).
    #[arg(long, default_value_t = 2, help_heading = "Repetitions")]
    pub retries: u32,
    /// Do not send `ignore_eos` / `min_tokens` (for servers that reject them).
    #[arg(long, help_heading = "Workload")]
    pub no_force_length: bool,
    /// Do not send `cache_salt` (for servers that reject it).
    #[arg(long, help_heading = "Workload")]
    pub no_cache_salt: bool,
    /// Do not send `cache_prompt: false` (for servers that reject it).
    #[arg(long, help_heading = "Workload")]
    pub no_cache_prompt_field: bool,
    /// Do not ask for per-chunk token ids (`return_token_ids`).
    #[arg(long, help_heading = "Workload")]
    pub no_token_ids: bool,
    /// Do not ask for per-chunk usage (`stream_options.continuous_usage_stats`).
    #[arg(long, help_heading = "Workload")]
    pub no_continuous_usage: bool,
    /// A shell command whose output describes the server's GPU, e.g. `nvidia-smi -q`.
    #[arg(long, help_heading = "Server")]
    pub gpu_info_cmd: Option<String>,
    /// The server's GPUs: `--gpu-metrics-url`, `--gpu-sample-ms`, `--gpus`.
    #[command(flatten)]
    pub gpu: vernier_gpu::GpuArgs,
    /// Seconds without a stream event before the server's generation counter is checked.
    #[arg(long, default_value_t = 60.0, help_heading = "Server")]
    pub idle_timeout_s: f64,
    /// Longest wait, in seconds, on a silent stream while the server is busy elsewhere.
    #[arg(long, default_value_t = 900.0, help_heading = "Server")]
    pub busy_wait_cap_s: f64,
    /// Print the plan (cells, requests, tokens to generate) and a duration estimate from one
    /// probe request, then stop: nothing is written and nothing else is sent.
    #[arg(long, help_heading = "Output", conflicts_with = "resume")]
    pub dry_run: bool,
    /// Print the run file (`run.json`) to stdout instead of the tables, for pipes such as
    /// `sweep --json | jq`.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// No progress on stderr: no notes, no bar on a terminal and no heartbeat line elsewhere
    /// (warnings are still printed).
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
    /// Run shard I of N of this configuration (from 0, e.g. `0/4`): the open-loop arrivals
    /// numbered I mod N of the seeded schedule, or the steady slots numbered I mod N; the
    /// shards' union is the one-machine run. Merge the shards with `sweep merge`.
    #[arg(long, value_name = "I/N", help_heading = "Shards")]
    pub shard: Option<vernier_sweep::Shard>,
    /// The instant every shard starts its measured work (RFC 3339, e.g.
    /// `2026-12-04T18:00:00Z`); each shard waits for it after its set-up.
    #[arg(long, value_name = "INSTANT", value_parser = vernier_run::parse_rfc3339_ms, help_heading = "Shards")]
    pub start_at: Option<u64>,
    /// How late, in seconds, a shard may reach `--start-at` before it fails.
    #[arg(long, default_value_t = 2.0, help_heading = "Shards")]
    pub start_tolerance: f64,
    /// Seconds between one measured repetition's sending and the next one's start: every
    /// shard starts its repetitions on one grid (one gap after `--start-at`, for the
    /// warm-ups, then every duration plus gap).
    #[arg(long, default_value_t = 10.0, help_heading = "Shards")]
    pub shard_gap: f64,
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
        /// The run's output folder, or any file in it.
        out: PathBuf,
        /// The cell: its place in the run file (from 1), or its name as the report writes it.
        cell: String,
        /// The measured repetition (from 1).
        rep: u32,
        /// The stream within the repetition (from 1).
        #[arg(long, default_value_t = 1)]
        stream: u32,
    },
    /// Merge the run folders of one configuration's shards (`--shard I/N`) into one run in
    /// OUT: every request pooled, throughput over the union of the shards' windows, each
    /// shard's lateness; a shard missing, failed or of another run makes the run invalid.
    Merge {
        /// The merged run's folder (new).
        out: PathBuf,
        /// The shards' run folders (or journals).
        #[arg(required = true, value_name = "SHARD_DIR")]
        shards: Vec<PathBuf>,
        /// Print the merged run file to stdout instead of the tables.
        #[arg(long)]
        json: bool,
    },
    /// Print a Kubernetes Indexed Job that runs N shards of a sweep together (one pod per
    /// shard, its completion index the shard), e.g. `sweep shard-job --shards 4 --image
    /// vernier-sweep:0.1.0 --claim sweep-results -- --base-url http://vllm:8000 --rate 4000
    /// --duration 60 | kubectl apply -f -`.
    ShardJob {
        /// How many shards (pods).
        #[arg(long)]
        shards: u32,
        /// The image holding sweep as its entry point (deploy/k8s/build-image.sh).
        #[arg(long)]
        image: String,
        /// The persistent volume claim the shards write their run folders to.
        #[arg(long)]
        claim: String,
        /// The Job's name.
        #[arg(long, default_value = "vernier-sweep")]
        name: String,
        /// The namespace [default: the current one].
        #[arg(long)]
        namespace: Option<String>,
        /// The agreed start (RFC 3339) [default: now plus `--start-in`].
        #[arg(long, value_parser = vernier_run::parse_rfc3339_ms)]
        start_at: Option<u64>,
        /// Seconds from now to the start, when `--start-at` is not given: time for the pods to
        /// be scheduled, pull the image and set up.
        #[arg(long, default_value_t = 120)]
        start_in: u64,
        /// CPU per shard, in cores (its request and limit).
        #[arg(long, default_value = "1")]
        cpu: String,
        /// Memory per shard (its request and limit).
        #[arg(long, default_value = "512Mi")]
        memory: String,
        /// The sweep's own flags, after `--`, the same for every shard.
        #[arg(last = true, required = true)]
        sweep_args: Vec<String>,
    },
    /// Agent-shaped load: concurrent multi-turn sessions sharing a system prompt and tools,
    /// tool calls answered by the harness, the prefix cache allowed and measured against a
    /// perfect one; `--baseline-no-cache` for its speed-up, `--find-capacity N` for the most
    /// sessions meeting `--target`.
    Agent(Box<crate::agent_cli::AgentArgs>),
    /// Replay a recorded trace (Vernier JSONL, Mooncake or Azure): each record sent at its
    /// recorded offset (`--time-scale` faster) with a synthesised prompt of its length; shared
    /// prefix blocks become shared text; lateness, cache hits and goodput.
    Replay(Box<crate::agent_cli::ReplayArgs>),
    /// Print a shell completion script, e.g. `sweep completions bash >
    /// ~/.local/share/bash-completion/completions/sweep`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
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
        Self::try_parse_from(words).unwrap_or_else(|error| error.exit())
    }

    /// Parses `words` (the program first); `Err` is clap's usage error (a study reports it
    /// against its file).
    pub fn try_parse_from<I, T>(words: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = Args::command().try_get_matches_from(words)?;
        let args = Args::from_arg_matches(&matches)?;
        // The flags typed, the subcommand's (`sweep agent --turns 5`) with the top level's.
        let mut typed: BTreeSet<String> = BTreeSet::new();
        let mut level = Some(&matches);
        while let Some(current) = level {
            typed.extend(
                current
                    .ids()
                    .filter(|id| {
                        current.value_source(id.as_str()) == Some(ValueSource::CommandLine)
                    })
                    .map(|id| id.as_str().to_owned()),
            );
            level = current.subcommand().map(|(_, sub)| sub);
        }
        Ok(Self { args, typed })
    }
}
