//! Standard datasets as suites: MMLU-Pro, MMLU, ARC, GSM8K, MATH- and AIME-style final
//! answers, and a documented JSONL for a user's own questions.
//!
//! [`load_dataset`] reads a file of one [`DatasetKind`] (JSON Lines, a JSON array, GPQA's CSV or
//! Parquet; gzip is read transparently) into
//! [`Question`]s, refusing a record that does not match its kind by line and field.
//! [`draw_questions`] picks the questions to run (`--per-category N`, `--sample N`, `--all`)
//! from a seed, so a second model gets exactly the same ones. [`dataset_suite`] turns them into
//! tasks whose prompt is the dataset's own instruction (MMLU-Pro's "think step by step, then
//! finish with 'the answer is (X)'"), zero-shot unless examples are given. No stop sequence is
//! ever part of a task; the answer is read from the final content only.
//!
//! Grading ([`extract_choice`], [`extract_final`]) reads the strict form first, then named
//! fallbacks, and says which rule produced the answer: a reply with no extractable answer is
//! `no_answer`, one cut by the budget `cut_off`, never `wrong`.

mod draw;
mod extract;
mod files;
mod load;
mod normalise;
#[cfg(feature = "grader")]
mod program;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

pub use draw::{DatasetSampling, draw_questions};
pub use extract::{
    CHOICE_RULES, Extracted, FINAL_RULES, choice_letter, extract_choice, extract_final,
};
pub use load::{DatasetError, LeftOut, LoadedDataset, load_dataset, load_dataset_bytes};
pub use normalise::{FinalValue, final_answers_agree, normalise_final};
#[cfg(feature = "grader")]
pub use program::ProgramTests;

use crate::suite::Suite;
use crate::task::{Category, Checker, Task};

/// The default completion budget of a dataset question: enough for a reasoning model's chain
/// of thought on MMLU-Pro; pass `--budget-dataset` for more or less.
pub const DEFAULT_DATASET_BUDGET: u32 = 8_192;

/// The most options a multiple-choice question may have (MMLU-Pro's ten, A to J).
pub const MAX_OPTIONS: usize = 10;

/// The examples placed before each question when an examples file is given.
pub const DEFAULT_SHOTS: usize = 5;

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
    /// The final answer as the dataset writes it (compared after [`normalise_final`]).
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

/// The instruction of a multiple-choice question: MMLU-Pro's own (its authors'
/// `evaluate_from_api.py`), used for every multiple-choice kind.
fn choice_instruction(subject: &str) -> String {
    format!(
        "The following are multiple choice questions (with answers) about {subject}. Think step \
         by step and then finish your answer with \"the answer is (X)\" where X is the correct \
         letter choice."
    )
}

/// The instruction of a final-answer question.
fn final_instruction(subject: &str) -> String {
    format!(
        "Solve the following {subject} problem. Think step by step, then finish your answer \
         with \"The final answer is \\boxed{{X}}\" where X is the final answer alone."
    )
}

fn question_block(question: &Question) -> String {
    let mut block = format!("Question:\n{}\n", question.text.trim_end());
    if !question.options.is_empty() {
        block.push_str("Options:\n");
        for (index, option) in question.options.iter().enumerate() {
            let _ = writeln!(block, "{}. {}", choice_letter(index), option.trim());
        }
    }
    block
}

fn example_answer(example: &Question) -> String {
    let conclusion = match &example.gold {
        Gold::Choice(index) => format!("The answer is ({}).", choice_letter(*index)),
        Gold::Final(answer) => format!("The final answer is \\boxed{{{answer}}}."),
        #[cfg(feature = "grader")]
        Gold::Program(tests) => format!("```python\n{}```", tests.reference),
    };
    match &example.explanation {
        Some(worked) if !worked.trim().is_empty() => {
            let worked = worked.trim();
            // MMLU-Pro's `cot_content` opens with "A: Let's think step by step." already.
            let worked = worked.strip_prefix("A:").map_or(worked, str::trim_start);
            if worked.contains("answer is") {
                worked.to_owned()
            } else {
                format!("{worked}\n{conclusion}")
            }
        }
        _ => conclusion,
    }
}

/// The prompt of one question: the instruction, the examples with their answers, then the
/// question, ending "Answer: Let's think step by step." as MMLU-Pro's authors end it.
pub fn question_prompt(question: &Question, examples: &[&Question]) -> String {
    let mut prompt = if question.options.is_empty() {
        final_instruction(&question.subject)
    } else {
        choice_instruction(&question.subject)
    };
    prompt.push_str("\n\n");
    for example in examples {
        prompt.push_str(&question_block(example));
        prompt.push_str("Answer: ");
        prompt.push_str(&example_answer(example));
        prompt.push_str("\n\n");
    }
    prompt.push_str(&question_block(question));
    prompt.push_str("Answer: Let's think step by step.");
    prompt
}

/// The examples put before `question`: up to `shots` of the same subject from `examples`
/// (in file order), else up to `shots` of any subject; never the question itself.
pub fn examples_for<'a>(
    question: &Question,
    examples: &'a [Question],
    shots: usize,
) -> Vec<&'a Question> {
    let same: Vec<&Question> = examples
        .iter()
        .filter(|example| example.subject == question.subject && example.id != question.id)
        .take(shots)
        .collect();
    if !same.is_empty() {
        return same;
    }
    examples
        .iter()
        .filter(|example| example.id != question.id)
        .take(shots)
        .collect()
}

/// The task of one question.
pub fn question_task(
    kind: DatasetKind,
    question: &Question,
    examples: &[&Question],
    budget_tokens: u32,
) -> Task {
    let (category, checker, prompt) = match &question.gold {
        Gold::Choice(index) => (
            Category::Dataset,
            Checker::Choice {
                gold: *index,
                n_options: question.options.len(),
            },
            question_prompt(question, examples),
        ),
        Gold::Final(answer) => (
            Category::Dataset,
            Checker::FinalAnswer(answer.clone()),
            question_prompt(question, examples),
        ),
        // Graded in the sandbox like the bundled code tasks, so the self-check proves the
        // canonical program passes and a broken one fails.
        #[cfg(feature = "grader")]
        Gold::Program(tests) => (
            Category::Code,
            Checker::Code(program::program_check(tests)),
            program::program_prompt(kind, &question.text, tests),
        ),
    };
    let mut task = Task::new(
        question.id.clone(),
        category,
        prompt,
        budget_tokens,
        checker,
    );
    task.dataset = Some(DatasetSpec {
        kind,
        question: question.clone(),
        n_shots: examples.len(),
    });
    task
}

/// The suite of drawn questions, named `dataset-KIND`, each with up to `shots` examples from
/// `examples`.
pub fn dataset_suite(
    kind: DatasetKind,
    questions: &[Question],
    examples: &[Question],
    shots: usize,
    budget_tokens: u32,
) -> Suite {
    let tasks = questions
        .iter()
        .map(|question| {
            let chosen = examples_for(question, examples, shots);
            question_task(kind, question, &chosen, budget_tokens)
        })
        .collect();
    Suite::new(format!("dataset-{kind}"), tasks)
}

/// The self-check of a dataset task: its prompt is the one its question renders and holds every
/// option; the gold is one of the options (or a final answer that reads as itself); the checker
/// passes the gold in its strict form and in each fallback, refuses every other option, and
/// calls the gold `cut_off` when the budget stopped the reply and `no_answer` when it stands
/// only in the reasoning.
#[cfg(feature = "grader")]
pub(crate) fn prove_dataset_task(task: &Task) -> (usize, Vec<String>) {
    use crate::proof::Proof;

    let mut proof = Proof::default();
    let Some(spec) = &task.dataset else {
        proof.require(false, "a dataset task without its question");
        return proof.finish();
    };
    let question = &spec.question;
    let prompt = task
        .messages
        .iter()
        .map(|message| message.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    proof.require(
        prompt.contains(question.text.trim_end()),
        "the prompt does not hold the question",
    );
    match &question.gold {
        Gold::Choice(gold) => prove_choice(&mut proof, task, question, *gold, &prompt),
        Gold::Final(answer) => prove_final(&mut proof, task, answer),
        #[cfg(feature = "grader")]
        Gold::Program(_) => proof.require(false, "a code question is proved in the sandbox"),
    }
    proof.finish()
}

/// The checks of a multiple-choice task.
#[cfg(feature = "grader")]
fn prove_choice(
    proof: &mut crate::proof::Proof,
    task: &Task,
    question: &Question,
    gold: usize,
    prompt: &str,
) {
    use crate::task::{OutcomeKind, Reply};
    proof.require(
        (2..=MAX_OPTIONS).contains(&question.options.len()),
        format!(
            "{} options; a question needs 2 to {MAX_OPTIONS}",
            question.options.len()
        ),
    );
    proof.require(
        gold < question.options.len(),
        format!("the gold {} is not an option", choice_letter(gold)),
    );
    for (index, option) in question.options.iter().enumerate() {
        proof.require(
            prompt.contains(&format!("{}. {}", choice_letter(index), option.trim())),
            format!("option {} is not in the prompt", choice_letter(index)),
        );
    }
    let letter = choice_letter(gold);
    for (rule, reply) in [
        ("answer_is", format!("So the answer is ({letter}).")),
        ("answer_label", format!("Answer: {letter}")),
        ("bold_or_boxed", format!("I pick **{letter}**")),
        ("last_line_letter", format!("Thinking done.\n({letter})")),
    ] {
        proof.grades(task, rule, &Reply::stopped(reply), OutcomeKind::Pass);
    }
    for other in (0..question.options.len()).filter(|index| *index != gold) {
        proof.grades(
            task,
            &format!("option {}", choice_letter(other)),
            &Reply::stopped(format!("the answer is ({})", choice_letter(other))),
            OutcomeKind::Wrong,
        );
    }
    let strict = format!("the answer is ({letter})");
    let mut cut = Reply::stopped(strict.clone());
    cut.finish_reason = Some("length".to_owned());
    proof.grades(task, "the gold cut off", &cut, OutcomeKind::CutOff);
    let mut reasoning_only = Reply::stopped("I cannot tell.");
    reasoning_only.reasoning = Some(strict);
    proof.grades(
        task,
        "the gold only in the reasoning",
        &reasoning_only,
        OutcomeKind::NoAnswer,
    );
}

/// The checks of a final-answer task.
#[cfg(feature = "grader")]
fn prove_final(proof: &mut crate::proof::Proof, task: &Task, answer: &str) {
    use crate::task::{OutcomeKind, Reply};
    proof.require(
        !normalise_final(answer).is_empty(),
        "the gold final answer is empty once normalised",
    );
    proof.grades(
        task,
        "the gold boxed",
        &Reply::stopped(format!("The final answer is \\boxed{{{answer}}}.")),
        OutcomeKind::Pass,
    );
    proof.grades(
        task,
        "the gold after 'the final answer is'",
        &Reply::stopped(format!("The final answer is {answer}")),
        OutcomeKind::Pass,
    );
    proof.grades(
        task,
        "another value boxed",
        &Reply::stopped("The final answer is \\boxed{not-the-answer}."),
        OutcomeKind::Wrong,
    );
    let mut cut = Reply::stopped(format!("\\boxed{{{answer}}}"));
    cut.finish_reason = Some("length".to_owned());
    proof.grades(task, "the gold cut off", &cut, OutcomeKind::CutOff);
    let mut reasoning_only = Reply::stopped("I cannot tell.");
    reasoning_only.reasoning = Some(format!("\\boxed{{{answer}}}"));
    proof.grades(
        task,
        "the gold only in the reasoning",
        &reasoning_only,
        OutcomeKind::NoAnswer,
    );
}
