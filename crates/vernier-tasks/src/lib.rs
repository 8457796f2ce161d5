//! The hard suite: tasks, answer checking, user-defined suites and the self-check.
//!
//! A [`Task`] is a prompt (chat [`Message`]s, optional [`ToolSpec`]s), a completion-token
//! budget and a [`Checker`]. [`Task::check`] grades the model's final turn (a [`Reply`]) into
//! an [`Outcome`]: `pass`, `wrong`, `cut_off`, `no_answer`, `extra_calls` or `infra`, with a
//! short machine-readable detail. Only the final content is graded, never the reasoning; a
//! reply stopped by the budget (`finish_reason` `length`) is always `cut_off`.
//!
//! [`Suite::bundled`] builds the 28 tasks of the catalogue (14 math, 10 code, 4 tools). Every
//! math gold answer is computed when the suite is built, from the same [`Problem`] parameters
//! that are rendered into the prompt. [`self_check`] proves every task before a model sees it
//! and calibrates the code tasks' time limits; a failure names the task and the reason.
//!
//! [`Suite::drawn`] draws the same 28 families at a [`Draw`] (level 1–5, seed): fresh math
//! parameters and freshly generated hidden cases, each task recording its [`Instance`]
//! (family, level, seed, parameters, redraws). `Draw::BUNDLED` (level 2, seed 0) is the
//! bundled suite byte for byte. Every math gold is computed twice, by [`Problem::gold`] and
//! by the independent [`Problem::cross_check`], and the self-check requires them to agree.
//!
//! ```
//! use vernier_tasks::{Category, OutcomeKind, Reply, Suite};
//!
//! # tokio_test_block_on(async {
//! let suite = Suite::bundled();
//! let task = suite.task("domino-tiling").expect("bundled task");
//! assert_eq!(task.category, Category::MATH);
//! let outcome = task.check(&Reply::stopped("...\nANSWER: 2,131"), None).await;
//! assert_eq!(outcome.kind, OutcomeKind::Pass);
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(future: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(future)
//! # }
//! ```
//!
//! # Suite files
//!
//! [`Suite::from_path`] reads a user-defined suite from a `.toml` or `.json` file. Math tasks
//! carry a literal answer (`integer`, `fraction` given reduced as `"p/q"`, or `exact` string).
//! The model's fraction must be reduced unless the task sets `allow_unreduced = true`, which makes
//! any form of the same value pass (`6/36` for `1/6`); the key applies to fraction answers only.
//! Code tasks point at their own files, relative to the suite file: a harness defining
//! `run_case(solution, case_input)`, a JSON list of cases (`{"name", "input", "expected"}` or
//! `{"name", "input", "raises": "ValueError"}`), a reference solution and optional negative
//! controls. Budgets default to math 16,000, code 12,000, tools 2,000 tokens.
//!
//! ```toml
//! name = "my-suite"
//!
//! [budgets]            # optional, per category
//! math = 8000
//!
//! [[tasks]]
//! id = "sum-of-squares"
//! category = "math"
//! prompt = "What is 1^2 + 2^2 + ... + 10^2? End with a line `ANSWER: <integer>`."
//! answer = { integer = 385 }
//! positive = true      # the self-check requires a positive gold answer
//!
//! [[tasks]]
//! id = "two-dice-seven"
//! category = "math"
//! prompt = "P(two dice sum to 7) as a fraction p/q, not necessarily reduced? `ANSWER: p/q`."
//! answer = { fraction = "1/6" }
//! allow_unreduced = true   # `6/36` passes too (default false: `6/36` is wrong)
//!
//! [[tasks]]
//! id = "reverse-words"
//! category = "code"
//! prompt = "Write `reverse_words(text: str) -> str` ... in one final ```python block."
//! budget_tokens = 6000 # overrides the category budget
//! [tasks.code]
//! harness = "reverse_words/harness.py"
//! cases = "reverse_words/cases.json"
//! reference = "reverse_words/reference.py"
//! guards = ["eval", "exec"]
//! time_floor_seconds = 5.0
//! [[tasks.code.negative_controls]]
//! name = "identity"
//! path = "reverse_words/identity.py"
//! must_fail_with = "failed_cases"   # or timeout, out_of_memory, guard_violation, any_failure
//! ```
//!
//! A complete example lives in the crate's `examples/suite.toml`.
//!
//! # Time limits
//!
//! The self-check runs each code task's reference in the sandbox and sets the task's limit to
//! the larger of its floor and [`TIME_LIMIT_FACTOR`] (10) times the reference's measured wall
//! time; [`SelfCheckReport::apply`] writes the limits into the suite. A control that must fail
//! other than by the clock (a memory bomb, a network call) gets at least
//! [`CONTROL_WALL_FLOOR`], so a loaded machine cannot turn its end into a timeout.
#![warn(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod answer;
mod budgets;
mod bundled;
mod calls;
mod canvas;
mod code;
#[cfg(feature = "grader")]
mod code_check;
mod context;
mod dataset;
mod draw;
mod error;
mod family;
mod grading;
mod instructions;
mod kind;
mod kinds;
mod math;
mod math_check;
mod movie;
mod proof;
#[cfg(feature = "grader")]
mod selfcheck;
mod structured;
mod suite;
mod suite_file;
mod task;
mod tools;
mod values;
mod video;
mod vision;

pub use answer::{extract_answer, parse_fraction, parse_integer};
pub use budgets::{Budgets, FALLBACK_BUDGET};
pub use bundled::{PROBE_CONTEXT_DEPTHS, PROBE_CONTEXT_LENGTHS};
pub use calls::{
    CallsKind, CallsSpec, DEFAULT_CALLS_BUDGET, ExpectedCall, calls_reply, calls_suite, calls_task,
    calls_with_wrong_type, calls_with_wrong_value, prove_calls_task,
};
pub use canvas::{Image, PALETTE, Rgb, TextBox};
#[cfg(feature = "grader")]
pub use code_check::{CodeCheck, CodeControl, ExpectedFailure};
pub use context::{
    ContextPlan, ContextSpec, DEFAULT_CONTEXT_BUDGET, DEFAULT_DEPTHS, DEFAULT_LENGTHS,
    DEPTH_TOLERANCE_POINTS, Haystack, Needle, Rendered, UNITS_PER_TOKEN_GUESS, context_suite,
    context_task, context_task_ids, find_needles, length_label, prove_context_task,
};
#[cfg(feature = "grader")]
pub use dataset::ProgramTests;
pub use dataset::{
    CHOICE_RULES, DEFAULT_DATASET_BUDGET, DEFAULT_SHOTS, DatasetError, DatasetKind,
    DatasetSampling, DatasetSpec, Extracted, FINAL_RULES, FinalValue, Gold, LeftOut, LoadedDataset,
    MAX_OPTIONS, Question, choice_letter, dataset_suite, draw_questions, examples_for,
    extract_choice, extract_final, final_answers_agree, load_dataset, load_dataset_bytes,
    normalise_final, question_prompt, question_task,
};
pub use draw::{Draw, Instance, MAX_LEVEL, MIN_LEVEL, Redraw};
pub use error::{SelfCheckError, SelfCheckFailure, SuiteError};
pub use instructions::{
    Constraint, DEFAULT_INSTRUCTIONS_BUDGET, INSTRUCTIONS_LEVELS, INSTRUCTIONS_PER_LEVEL,
    InstructionsSpec, instruction_results, instructions_reply, instructions_suite,
    instructions_task, prove_instructions_task, read_instruction_detail,
};
pub use kind::{Kind, Prove};
pub use kinds::{KINDS, categories, category_named, kind};
pub use math::{
    BracketDepth, CoinChange, Collatz, Crt, DiceProbability, DigitSum, DominoTiling, FixedPoints,
    Friday13, KnightPath, LastDigits, LatticePaths, Problem, RoundTable, SubsetSum,
};
pub use movie::{Decoded, decode_mp4, encode_mp4};
#[cfg(feature = "grader")]
pub use selfcheck::{
    CONTROL_WALL_FLOOR, SelfCheckReport, TIME_LIMIT_FACTOR, TaskSelfCheck, self_check,
};
pub use structured::{
    DEFAULT_STRUCTURED_BUDGET, JsonMode, STRUCTURED_LEVELS, STRUCTURED_PER_LEVEL, Shipment,
    StructuredSource, StructuredSpec, prove_structured_task, structured_leaves, structured_reply,
    structured_suite, structured_task,
};
pub use suite::Suite;
pub use task::{
    ArgCheck, ArgField, ArgRule, Category, Checker, GradeEvidence, HistoryCall, Message, Outcome,
    OutcomeKind, Reply, ReplyToolCall, Task, TaskSpec, ToolSpec,
};
pub use video::{
    DEFAULT_VIDEO_BUDGET, DIRECTIONS, FRAMES_PER_SECOND_SAMPLED, TimedFrame, VIDEO_FAMILIES,
    VIDEO_FPS, VIDEO_FRAMES, VIDEO_HEIGHT, VIDEO_SAMPLES, VIDEO_WIDTH, VideoSpec, prove_video,
    prove_video_task, render_videos, sampled_indices, unique_frames, unique_videos, video_suite,
    video_task,
};
pub use vision::{
    DEFAULT_VISION_BUDGET, VISION_FAMILIES, VISION_SAMPLES, VisionGold, VisionSpec, prove_vision,
    prove_vision_task, unique_images, vision_suite, vision_task,
};

/// The README's example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
