//! What a dataset question is: its kind, its gold, the question as read, and the spec a task
//! carries.

use serde::{Deserialize, Serialize};

use super::extract::choice_letter;

#[cfg(feature = "grader")]
use super::program::ProgramTests;

/// The most options a multiple-choice question may have (MMLU-Pro's ten, A to J).
pub const MAX_OPTIONS: usize = 10;

/// The kind of a dataset file: how its records are read and how its answers are graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DatasetKind {
    /// MMLU-Pro (TIGER-Lab): `question_id`, `question`, `options` (up to 10), `answer` (a
    /// letter), `answer_index`, `category`; `cot_content` in its validation split.
    MmluPro,
    /// MMLU (Hendrycks et al.): `question`, `choices` (4), `answer` (index or letter),
    /// `subject`.
    Mmlu,
    /// ARC (AI2): `id`, `question` (a string, or `{stem, choices}`), `choices` `{text, label}`,
    /// `answerKey`.
    Arc,
    /// GPQA (its CSV): `Question`, `Correct Answer`, `Incorrect Answer 1` to `3`, `Record ID`,
    /// `High-level domain`; the four options in an order fixed by the record id.
    Gpqa,
    /// GSM8K: `question`, `answer` ending in `#### N`.
    Gsm8k,
    /// MATH-500, AIME and the like: `problem`, `answer` (else the last `\boxed{}` of
    /// `solution`), optional `unique_id`/`id`, `subject`/`type`.
    Math,
    /// A user's own questions: `id`, `question`, `answer`, optional `options` (then `answer` is
    /// a letter), `category`, `explanation`.
    Custom,
    /// HumanEval: `task_id`, `prompt`, `canonical_solution`, `test` (a `check(candidate)`),
    /// `entry_point`; graded in the sandbox by its own test.
    HumanEval,
    /// MBPP: `task_id`, `text` (or `prompt`), `code`, `test_list` (asserts),
    /// `test_setup_code`/`test_imports`; graded in the sandbox by its own asserts.
    Mbpp,
}

impl DatasetKind {
    /// Every kind, in the order `--dataset` lists them.
    pub const ALL: [Self; 9] = [
        Self::MmluPro,
        Self::Mmlu,
        Self::Gpqa,
        Self::Arc,
        Self::Gsm8k,
        Self::Math,
        Self::HumanEval,
        Self::Mbpp,
        Self::Custom,
    ];

    /// The name on the command line and in files: `mmlu-pro`, `mmlu`, `arc`, `gsm8k`, `math`,
    /// `custom`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MmluPro => "mmlu-pro",
            Self::Mmlu => "mmlu",
            Self::Arc => "arc",
            Self::Gsm8k => "gsm8k",
            Self::Math => "math",
            Self::Custom => "custom",
            Self::Gpqa => "gpqa",
            Self::HumanEval => "humaneval",
            Self::Mbpp => "mbpp",
        }
    }

    /// Whether its questions are answered by a program graded in the sandbox.
    pub fn is_code(self) -> bool {
        matches!(self, Self::HumanEval | Self::Mbpp)
    }

    /// The kind of a name (`mmlu_pro` and upper case read too).
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl std::fmt::Display for DatasetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The gold answer of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Gold {
    /// The index of the right option (0 is `A`).
    Choice(usize),
    /// The final answer as the dataset writes it (compared after [`super::normalise::normalise_final`]).
    Final(String),
    /// A program, graded by the dataset's own tests in the sandbox.
    #[cfg(feature = "grader")]
    Program(ProgramTests),
}

impl Gold {
    /// The gold as a reader sees it: `C`, or the final answer.
    pub fn display(&self) -> String {
        match self {
            Self::Choice(index) => choice_letter(*index).to_string(),
            Self::Final(answer) => answer.clone(),
            #[cfg(feature = "grader")]
            Self::Program(_) => "(the dataset's tests)".to_owned(),
        }
    }
}

/// One question of a dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Question {
    /// The id tasks and pairs use, unique in its file (e.g. `mmlu-pro-70`).
    pub id: String,
    /// Its category (MMLU-Pro's `category`, MMLU's `subject`, ...; the kind's name when the
    /// dataset has none).
    pub subject: String,
    /// The question text.
    pub text: String,
    /// The options, in order (empty for a final-answer question).
    pub options: Vec<String>,
    /// The gold answer.
    pub gold: Gold,
    /// A worked answer (MMLU-Pro's `cot_content`, GSM8K's solution), used when the question
    /// is an example before another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Its 1-based line (record) in the file.
    pub line: usize,
}

/// What a dataset task was made from: kept on the task for the self-check and for `show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetSpec {
    /// The file's kind.
    pub kind: DatasetKind,
    /// The question.
    pub question: Question,
    /// How many examples precede it in the prompt.
    pub n_shots: usize,
}
