//! Command-line arguments, and their translation into the engine's configuration.

use std::path::PathBuf;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};
use vernier_hardsuite::{
    BudgetFlags, CompareOptions, ContextSelection, DEFAULT_OUT, DatasetKind, DatasetSampling,
    DatasetSelection, Draw, HardsuiteError, RunConfig, RunTarget, SamplingPreset, SuiteSelection,
    VideoAs,
};

/// Examples under `hardsuite --help`.
const EXAMPLES: &str = "\
Examples:
  hardsuite                                              the simulator, scripted answers (a demo)
  hardsuite run --base-url http://127.0.0.1:8000 --out runs/model-a
  hardsuite run --base-url http://127.0.0.1:8000 --suite context --lengths 4k,32k
  hardsuite run --base-url URL --dataset mmlu-pro --dataset-file test.jsonl --per-category 20
  hardsuite compare runs/model-a runs/model-b             paired, task by task
  hardsuite show runs/model-a --all-failures              the raw reply behind every failure

Every task's answer and tests are proved before any model sees them (the self-check runs
first and stops the run if a task cannot be proved).";

/// Run the hard suite (28 judge-free tasks: math, code in a sandbox, tool calls) against an
/// OpenAI-compatible server, or compare two runs.
///
/// With no `--base-url`, the suite runs against the in-process simulator with scripted answers.
/// Its 10 code tasks are still graded in a Docker sandbox: they need a Docker engine and the
/// grader image (from the repository: `docker/setup-engine.sh && docker/build-grader-image.sh`),
/// or leave them out with `--tasks` and the other task ids.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "hardsuite",
    version,
    args_conflicts_with_subcommands = true,
    after_help = vernier_cli::exit_code::with_help_lines(EXAMPLES)
)]
pub struct Args {
    /// What to do; `run` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Arguments of `run` when no subcommand is given.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The subcommands.
#[derive(Debug, Clone, Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// Self-check the suite, then run every task against a server and report.
    Run(RunArgs),
    /// Run a suite one request at a time, then N in flight, and compare the two item by item:
    /// the drop in quality under load with its interval, per suite and category.
    UnderLoad(UnderLoadArgs),
    /// Compare two runs (results.json or journal.jsonl files) task by task.
    Compare(CompareArgs),
    /// Only self-check the suite and print what was proved.
    SelfCheck(SelfCheckArgs),
    /// Print every task of a draw (id, family, level, parameters, prompt, gold) without
    /// calling any model.
    Tasks(TasksArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print one task's evidence from a run: the prompt, the raw reply of every try
    /// (reasoning apart from content, tool calls, finish reason, usage), the extracted answer,
    /// the gold and the outcome.
    Show(ShowArgs),
}

/// Arguments of `hardsuite under-load`.
#[derive(Debug, Clone, ClapArgs)]
pub struct UnderLoadArgs {
    /// Requests in flight in the second pass (the first sends one at a time); 2 or more.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub in_flight: u32,
    /// Every option of `hardsuite run`, but: `--concurrency` is 1 and then N; `--out DIR`
    /// (default `hardsuite-under-load`) holds `alone/`, `loaded/` and `load-quality.md`;
    /// `--resume DIR` continues both passes; `--samples` defaults to enough for N in flight
    /// (⌈N / tasks⌉).
    #[command(flatten)]
    pub run: RunArgs,
}

/// Arguments of `hardsuite show`.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct ShowArgs {
    /// The run's output folder (holding journal.jsonl and replies.jsonl), or any file in it.
    pub out: PathBuf,
    /// The task id; leave it out with --all-failures.
    #[arg(required_unless_present = "all_failures")]
    pub task: Option<String>,
    /// Which sample of the task (from 0).
    #[arg(long, default_value_t = 0)]
    pub sample: u32,
    /// Every task sample that did not pass.
    #[arg(long, conflicts_with = "task")]
    pub all_failures: bool,
}

/// Sampling presets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
#[non_exhaustive]
pub enum Preset {
    /// `temperature` 0.6, `top_p` 0.95 (the default).
    #[default]
    Default,
    /// Qwen's "thinking, general" preset: `temperature` 1.0, `top_k` 20, `presence_penalty` 1.5.
    QwenThinking,
}

/// Which suite, and which of its tasks.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct SuiteArgs {
    /// `context` for the bundled long-context suite, `vision` for the generated-image suite,
    /// `video` for the generated-video suite, `instructions` for verifiable instructions at
    /// four levels, `structured` for JSON under `response_format` checked by a schema and the
    /// truth, `calls` for tool calls graded by structure, `probe` for vision, video, short context and tool tasks together, or a
    /// user-defined suite file (.toml or .json), instead of the bundled 28 tasks.
    #[arg(long, value_name = "context|vision|video|instructions|structured|calls|probe|FILE", value_parser = parse_suite, help_heading = "Suite")]
    pub suite: Option<PathBuf>,
    /// Video tasks: send each clip as a `video_url` part (`video`, the default: vLLM, `SGLang`),
    /// or as its frames, 2 per second, in `image_url` parts with their times (`frames`: servers
    /// without video input).
    #[arg(long, value_name = "video|frames", value_parser = parse_video_as, help_heading = "Suite")]
    pub video_as: Option<VideoAs>,
    /// Completion-token budget of vision tasks (default 2000).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_vision: Option<u32>,
    /// Completion-token budget of video tasks (default 2000).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_video: Option<u32>,
    /// Completion-token budget of instruction tasks (default 1024).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_instructions: Option<u32>,
    /// Completion-token budget of structured-output tasks (default 1024).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_structured: Option<u32>,
    /// Completion-token budget of the `calls` suite's tasks (default 1024).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_calls: Option<u32>,
    /// Context suite: target prompt lengths in the server's tokens, comma-separated (`k` is
    /// 1,024; default 1k,4k,16k,32k,64k,128k, less those that cannot fit the server's context).
    #[arg(long, value_name = "N,N", value_delimiter = ',', value_parser = vernier_cli::parse_tokens, help_heading = "Context suite")]
    pub lengths: Option<Vec<u32>>,
    /// Context suite: needle depths in percent of the haystack (default 0,25,50,75,100).
    #[arg(
        long,
        value_name = "PCT,PCT",
        value_delimiter = ',',
        help_heading = "Context suite"
    )]
    pub depths: Option<Vec<u8>>,
    /// Context suite: tasks per length and depth, each with its own needles and haystack
    /// (default 1).
    #[arg(long, value_name = "N", help_heading = "Context suite")]
    pub cell_samples: Option<u32>,
    /// Context suite: needles asked at once in each length's multi-needle task (default 3; 0
    /// for none).
    #[arg(long, value_name = "N", help_heading = "Context suite")]
    pub multi_needles: Option<u32>,
    /// Completion-token budget of context tasks (default 2000).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_context: Option<u32>,
    /// Only these task ids, comma-separated.
    #[arg(
        long,
        value_name = "ID,ID",
        value_delimiter = ',',
        help_heading = "Suite"
    )]
    pub tasks: Option<Vec<String>>,
    /// Grader image for code tasks.
    #[arg(long, value_name = "IMAGE", help_heading = "Suite")]
    pub grader_image: Option<String>,
    /// Completion-token budget of math tasks (default 16000).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_math: Option<u32>,
    /// Completion-token budget of code tasks (default 12000).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_code: Option<u32>,
    /// Completion-token budget of tool tasks (default 2000).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_tools: Option<u32>,
    /// Difficulty level 1-5 to draw the bundled suite at (default 2; with --seed 0 that is
    /// the bundled 28 tasks).
    #[arg(long, value_name = "L", value_parser = clap::value_parser!(u8).range(1..=5), help_heading = "Suite")]
    pub level: Option<u8>,
    /// Seed every parameter and generated hidden case is drawn from (default 0); with
    /// --dataset, the seed the questions are drawn with.
    #[arg(long, value_name = "S", help_heading = "Suite")]
    pub seed: Option<u64>,
    /// A standard dataset instead of the bundled suite: mmlu-pro, mmlu, gpqa, arc, gsm8k, math,
    /// humaneval, mbpp, or custom (a user's own JSONL); needs --dataset-file and one of
    /// --per-category, --sample, --all.
    #[arg(long, value_name = "KIND", value_parser = parse_dataset_kind, requires = "dataset_file", help_heading = "Dataset")]
    pub dataset: Option<DatasetKind>,
    /// The dataset file: JSON Lines or one JSON array, gzip-compressed or not.
    #[arg(
        long,
        value_name = "PATH",
        requires = "dataset",
        help_heading = "Dataset"
    )]
    pub dataset_file: Option<PathBuf>,
    /// Draw this many questions from each category (MMLU-Pro: 20 gives 20 x 14 = 280).
    #[arg(long, value_name = "N", requires = "dataset", conflicts_with_all = ["sample", "all"], help_heading = "Dataset")]
    pub per_category: Option<usize>,
    /// Draw this many questions from the whole file.
    #[arg(
        long,
        value_name = "N",
        requires = "dataset",
        conflicts_with = "all",
        help_heading = "Dataset"
    )]
    pub sample: Option<usize>,
    /// Ask every question of the file.
    #[arg(long, requires = "dataset", help_heading = "Dataset")]
    pub all: bool,
    /// A file of worked examples, of the same kind, to put before each question (same
    /// category first); without it, zero-shot.
    #[arg(
        long,
        value_name = "PATH",
        requires = "dataset",
        help_heading = "Dataset"
    )]
    pub examples: Option<PathBuf>,
    /// Examples before each question with --examples (default 5).
    #[arg(
        long,
        value_name = "K",
        requires = "examples",
        help_heading = "Dataset"
    )]
    pub shots: Option<usize>,
    /// Completion-token budget of each dataset question (default 8192).
    #[arg(long, value_name = "TOKENS", help_heading = "Budgets")]
    pub budget_dataset: Option<u32>,
}

fn parse_dataset_kind(text: &str) -> Result<DatasetKind, String> {
    DatasetKind::parse(text).ok_or_else(|| {
        let names: Vec<&str> = DatasetKind::ALL.iter().map(|kind| kind.as_str()).collect();
        match vernier_cli::closest(text, &names) {
            Some(name) => format!(
                "no dataset kind {text:?}: did you mean {name}? (one of {})",
                names.join(", ")
            ),
            None => format!("no dataset kind {text:?}: one of {}", names.join(", ")),
        }
    })
}

/// Arguments of `hardsuite run`.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one command-line switch"
)]
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct RunArgs {
    /// The server: `--base-url`, `--model`, `--api-key-env`, `--ca-cert`, `--extra-body`
    /// (which may not set `stop`). Without `--base-url` the in-process simulator answers with
    /// scripted replies; the code tasks still need a Docker engine and the grader image
    /// (docker/setup-engine.sh && docker/build-grader-image.sh), or leave them out with
    /// --tasks.
    #[command(flatten)]
    pub server: vernier_run::TargetArgs,
    /// The server's GPUs: `--gpu-metrics-url`, `--gpu-sample-ms`, `--gpus`.
    #[command(flatten)]
    pub gpu: vernier_gpu::GpuArgs,
    /// The most requests per second to start, for endpoints with a request-rate limit.
    #[arg(long, value_name = "N", help_heading = "Hosted endpoints")]
    pub max_rps: Option<f64>,
    /// The longest the run waits on rate limits (`429`/`503`: as long as the server asks, or
    /// backing off) in all, in seconds (default 900); such waits use up no try.
    #[arg(long, value_name = "SECONDS", help_heading = "Hosted endpoints")]
    pub max_wait: Option<f64>,
    /// Lower the concurrency while the server answers `429`, and raise it again while it does
    /// not.
    #[arg(long, help_heading = "Hosted endpoints")]
    pub adaptive_concurrency: bool,
    /// Suite and task selection.
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Samples per task (default 1); with K > 1 scores are means of per-task pass fractions
    /// with task-clustered intervals.
    #[arg(long, value_name = "K", help_heading = "Sampling")]
    pub samples: Option<u32>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 3, help_heading = "Sampling")]
    pub concurrency: usize,
    /// Sampling preset (default: `default`); explicit flags below override it.
    #[arg(long, value_enum, help_heading = "Sampling")]
    pub preset: Option<Preset>,
    /// Sampling temperature.
    #[arg(long, help_heading = "Sampling")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[arg(long, help_heading = "Sampling")]
    pub top_p: Option<f64>,
    /// Top-k sampling.
    #[arg(long, help_heading = "Sampling")]
    pub top_k: Option<i64>,
    /// Presence penalty.
    #[arg(long, help_heading = "Sampling")]
    pub presence_penalty: Option<f64>,
    /// Re-run the tasks that were cut off with this larger budget; both scores are reported.
    #[arg(long, value_name = "BUDGET", help_heading = "Budgets")]
    pub rerun_cut_off: Option<u32>,
    /// Output directory (journal.jsonl, results.json, report.md; default `hardsuite-out`). A new
    /// run refuses a directory that already holds a journal.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub out: Option<PathBuf>,
    /// Run a ladder: one instance set per level (e.g. `1-5`, `1,3,5`), each into
    /// OUT/level-L/, then OUT/ladder.json, ladder.md and ladder.svg with the pass rate per
    /// level and its interval. Takes --seed; not --level or --resume.
    #[arg(long, value_name = "RANGE", conflicts_with_all = ["resume", "level"], help_heading = "Output")]
    pub levels: Option<String>,
    /// Continue the run recorded in this journal (or in this run folder's) without redoing
    /// finished attempts; the
    /// suite, tasks, model, sampling, extra body, budgets, samples and re-run budget come from
    /// the journal, and those flags are refused when they differ from it.
    #[arg(long, value_name = "JOURNAL", help_heading = "Output")]
    pub resume: Option<PathBuf>,
    /// Tries per attempt when the server or the grader fails (never scored).
    #[arg(long, default_value_t = 3, value_name = "N", help_heading = "Server")]
    pub max_tries: u32,
    /// Seconds one request may take in all (at most 604800, 7 days).
    #[arg(
        long,
        default_value_t = 3600,
        value_name = "SECONDS",
        help_heading = "Server"
    )]
    pub request_timeout: u64,
    /// Seconds a stream may go without an event (keep-alive comments do not count) before it
    /// counts as dropped (at most 604800, 7 days).
    #[arg(
        long,
        default_value_t = 300,
        value_name = "SECONDS",
        help_heading = "Server"
    )]
    pub idle_timeout: u64,
    /// No progress on stderr: no per-task lines and no heartbeat line (warnings are still
    /// printed). Without a terminal a line saying where the run is comes at least every 10 s
    /// (`VERNIER_PROGRESS_EVERY_S` sets the seconds).
    #[arg(long, help_heading = "Output")]
    pub quiet: bool,
    /// For a dataset run, one row and one progress line per question; without it the run
    /// ends with a table per category and shows a count while it runs (`hardsuite show OUT`
    /// gives any question's evidence).
    #[arg(long, short = 'v', help_heading = "Output")]
    pub per_task: bool,
    /// Skip the self-check (results are marked unchecked; code time limits stay at their
    /// floors). Meant for debugging the harness, not for reported runs.
    #[arg(long, hide = true)]
    pub skip_self_check: bool,
}

/// Arguments of `hardsuite compare`.
#[derive(Debug, Clone, ClapArgs)]
pub struct CompareArgs {
    /// The first run: its folder, its results.json or its journal.jsonl.
    pub a: PathBuf,
    /// The second run: its folder, its results.json or its journal.jsonl.
    pub b: PathBuf,
    /// Also write the comparison as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the comparison as JSON to this file (schema in docs/hardsuite.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Bootstrap resamples for the cross-check.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Bootstrap seed.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Compare runs drawn from different instances (levels, seeds or parameters) as
    /// independent samples; without it they are refused.
    #[arg(long)]
    pub unpaired: bool,
    /// Differences in points to plan a larger run for: the questions per arm that detect each
    /// with 80% power at the discordance the two runs show (default 2,5).
    #[arg(long, value_name = "POINTS,...", value_delimiter = ',', value_parser = parse_points)]
    pub detect: Option<Vec<f64>>,
}

fn parse_points(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(points) if points > 0.0 && points < 100.0 => Ok(points),
        _ => Err(format!(
            "{text:?}: give a difference in points between 0 and 100, e.g. 2"
        )),
    }
}

/// Arguments of `hardsuite tasks`.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct TasksArgs {
    /// Suite and task selection.
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Print JSON (a list of {id, category, family, level, seed, parameters, redraws,
    /// prompt, gold}) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `hardsuite self-check`.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct SelfCheckArgs {
    /// Suite and task selection.
    #[command(flatten)]
    pub suite: SuiteArgs,
}

impl From<Preset> for SamplingPreset {
    fn from(preset: Preset) -> Self {
        match preset {
            Preset::Default => Self::Default,
            Preset::QwenThinking => Self::QwenThinking,
        }
    }
}

/// A length in tokens: `4096` or `4k` (k = 1,024).
fn parse_video_as(text: &str) -> Result<VideoAs, String> {
    match text {
        "video" => Ok(VideoAs::Video),
        "frames" => Ok(VideoAs::Frames),
        other => Err(format!("{other:?}: write video or frames")),
    }
}

/// The bundled suites by name.
const SUITES: [&str; 8] = [
    "hardsuite",
    "context",
    "vision",
    "video",
    "instructions",
    "structured",
    "calls",
    "probe",
];

/// A suite name, or a suite file; a word that is neither, and is close to a name, is refused
/// with the name it was probably meant to be (it was read as a missing file before). A known
/// name is the bundled suite even when a file or folder of that name is here (`./context` for
/// that one).
fn parse_suite(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    let is_file_name =
        path.extension().is_some_and(|e| e == "toml" || e == "json") || text.contains('/');
    if SUITES.contains(&text) || path.exists() || is_file_name {
        return Ok(path);
    }
    let known = "the bundled suites are hardsuite, context, vision, video, instructions, structured, calls and probe; a suite file ends in .toml or .json";
    Err(match vernier_cli::closest(text, &SUITES) {
        Some(name) => format!("no suite {text:?}: did you mean {name}? ({known})"),
        None => format!("no suite {text:?}: {known}"),
    })
}

impl SuiteArgs {
    /// The `--budget-*` flags, a budget of 0 refused by its flag.
    fn budgets(&self) -> Result<BudgetFlags, HardsuiteError> {
        let mut budgets = BudgetFlags::default();
        budgets.math = self.budget_math;
        budgets.code = self.budget_code;
        budgets.tools = self.budget_tools;
        budgets.context = self.budget_context;
        budgets.vision = self.budget_vision;
        budgets.instructions = self.budget_instructions;
        budgets.structured = self.budget_structured;
        budgets.calls = self.budget_calls;
        budgets.video = self.budget_video;
        budgets.dataset = self.budget_dataset;
        for (flag, budget) in [
            ("--budget-math", self.budget_math),
            ("--budget-code", self.budget_code),
            ("--budget-tools", self.budget_tools),
            ("--budget-context", self.budget_context),
            ("--budget-vision", self.budget_vision),
            ("--budget-video", self.budget_video),
            ("--budget-instructions", self.budget_instructions),
            ("--budget-structured", self.budget_structured),
            ("--budget-calls", self.budget_calls),
            ("--budget-dataset", self.budget_dataset),
        ] {
            if budget == Some(0) {
                return Err(HardsuiteError::invalid(
                    flag,
                    "0 tokens leaves no room for an answer; give a budget of at least 1 token (e.g. 2000), or leave the flag out for the suite's own",
                ));
            }
        }
        Ok(budgets)
    }

    /// The engine's suite selection; a dataset without a draw (`--per-category`, `--sample`
    /// or `--all`) is refused.
    pub fn selection(&self) -> Result<SuiteSelection, HardsuiteError> {
        let budgets = self.budgets()?;
        let mut selection = SuiteSelection::default();
        if let (Some(kind), Some(file)) = (self.dataset, &self.dataset_file) {
            let sampling = match (self.per_category, self.sample, self.all) {
                (Some(n), _, _) => DatasetSampling::PerCategory(n),
                (None, Some(n), _) => DatasetSampling::Sample(n),
                (None, None, true) => DatasetSampling::All,
                (None, None, false) => {
                    return Err(HardsuiteError::invalid(
                        "--dataset",
                        "say how many questions to ask: --per-category N, --sample N or --all",
                    ));
                }
            };
            let mut dataset =
                DatasetSelection::new(kind, file.clone(), sampling, self.seed.unwrap_or(0));
            dataset.examples.clone_from(&self.examples);
            if let Some(shots) = self.shots {
                dataset.shots = shots;
            }
            selection.dataset = Some(dataset);
            selection.tasks.clone_from(&self.tasks);
            selection.budgets = budgets;
            if let Some(level) = self.level {
                selection.draw = Draw::new(level, 0).ok();
            }
            if self.suite.is_some() {
                // Refused by the engine, naming both.
                selection.suite.clone_from(&self.suite);
            }
            return Ok(selection);
        }
        // A known suite name wins over a folder of that name in the working directory; a path
        // is written as one (`./context`).
        let named = |name: &str| {
            self.suite
                .as_deref()
                .is_some_and(|path| path.as_os_str() == name)
        };
        if named("context") {
            let mut context = ContextSelection::with_seed(self.seed.unwrap_or(0));
            if let Some(lengths) = &self.lengths {
                context.plan.lengths.clone_from(lengths);
                context.lengths_given = true;
            }
            if let Some(depths) = &self.depths {
                context.plan.depths.clone_from(depths);
            }
            if let Some(samples) = self.cell_samples {
                context.plan.samples_per_cell = samples;
            }
            if let Some(needles) = self.multi_needles {
                context.plan.multi_needles = needles;
            }
            selection.context = Some(context);
            selection.tasks.clone_from(&self.tasks);
            selection.grader_image.clone_from(&self.grader_image);
            selection.budgets = budgets;
            if let Some(level) = self.level {
                selection.draw = Draw::new(level, 0).ok();
            }
            return Ok(selection);
        }
        selection.video_as = self.video_as.unwrap_or_default();
        let seed = self.seed.unwrap_or(0);
        let generated = [
            ("vision", &mut selection.vision),
            ("instructions", &mut selection.instructions),
            ("structured", &mut selection.structured),
            ("calls", &mut selection.calls),
            ("video", &mut selection.video),
            ("probe", &mut selection.probe),
        ]
        .into_iter()
        .find(|(name, _)| named(name));
        if let Some((_, slot)) = generated {
            *slot = Some(seed);
            selection.tasks.clone_from(&self.tasks);
            selection.budgets = budgets;
            return Ok(selection);
        }
        if !named("hardsuite") {
            selection.suite.clone_from(&self.suite);
        }
        selection.tasks.clone_from(&self.tasks);
        selection.grader_image.clone_from(&self.grader_image);
        selection.budgets = budgets;
        if self.level.is_some() || self.seed.is_some() {
            selection.draw = Draw::new(self.level.unwrap_or(2), self.seed.unwrap_or(0)).ok();
        }
        Ok(selection)
    }
}

impl RunArgs {
    /// The engine's configuration and where the run writes. `--extra-body` must be JSON here;
    /// the engine checks the rest.
    pub fn to_config(&self) -> Result<(RunConfig, RunTarget), HardsuiteError> {
        let server = self.server.checked()?;
        for note in &server.notes {
            vernier_cli::note(note);
        }
        let mut config = RunConfig::default();
        config.base_url.clone_from(&server.base_url);
        config.model.clone_from(&server.model);
        config.api_key_env.clone_from(&server.api_key_env);
        config.suite = self.suite.selection()?;
        config.samples = self.samples;
        config.concurrency = self.concurrency;
        config.preset = self.preset.map(SamplingPreset::from);
        config.temperature = self.temperature;
        config.top_p = self.top_p;
        config.top_k = self.top_k;
        config.presence_penalty = self.presence_penalty;
        config.extra_body = self
            .server
            .extra_body
            .is_some()
            .then(|| serde_json::Value::Object(server.extra_body.clone()));
        config.rerun_cut_off = self.rerun_cut_off;
        config.max_tries = self.max_tries;
        config.request_timeout_secs = self.request_timeout;
        config.idle_timeout_secs = self.idle_timeout;
        config.skip_self_check = self.skip_self_check;
        config.ca_cert.clone_from(&server.ca_cert);
        config.max_rps = self.max_rps;
        config.gpu_metrics_url.clone_from(&self.gpu.gpu_metrics_url);
        config.gpu_sample_ms = self.gpu.gpu_sample_ms;
        config.gpus.clone_from(&self.gpu.gpus);
        config.max_wait_secs = self.max_wait;
        config.adaptive_concurrency = self.adaptive_concurrency;
        let target = match &self.resume {
            Some(journal) => RunTarget::Resume {
                journal: vernier_run::run_file_in(journal, "journal.jsonl"),
                out_dir: self.out.clone(),
            },
            None => RunTarget::new_run(
                self.out
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(DEFAULT_OUT)),
            ),
        };
        Ok((config, target))
    }
}

impl CompareArgs {
    /// The engine's comparison options.
    pub fn options(&self) -> CompareOptions {
        let mut options = CompareOptions::default();
        options.markdown.clone_from(&self.markdown);
        options.json.clone_from(&self.json);
        options.resamples = self.resamples;
        options.seed = self.seed;
        options.unpaired = self.unpaired;
        if let Some(points) = &self.detect {
            options.detect_points.clone_from(points);
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Args::command().debug_assert();
        let args = Args::parse_from(["hardsuite", "--base-url", "http://h:1", "--tasks", "a,b"]);
        assert!(args.command.is_none());
        assert_eq!(
            args.run.suite.tasks,
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
        let args = Args::parse_from([
            "hardsuite",
            "run",
            "--preset",
            "qwen-thinking",
            "--samples",
            "3",
        ]);
        let Some(Command::Run(run)) = args.command else {
            panic!("run subcommand");
        };
        assert_eq!(
            (run.preset, run.samples, run.concurrency),
            (Some(Preset::QwenThinking), Some(3), 3)
        );
    }
}
