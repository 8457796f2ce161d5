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
mod error;
mod extract;
mod files;
mod load;
mod normalise;
#[cfg(feature = "grader")]
mod program;
mod question;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

pub use draw::{DatasetSampling, draw_questions};
pub use error::DatasetError;
pub use extract::{
    CHOICE_RULES, Extracted, FINAL_RULES, choice_letter, extract_choice, extract_final,
};
pub use load::{LeftOut, LoadedDataset, load_dataset, load_dataset_bytes};
pub use normalise::{FinalValue, final_answers_agree, normalise_final};
#[cfg(feature = "grader")]
pub use program::ProgramTests;
pub use question::{DatasetKind, DatasetSpec, Gold, MAX_OPTIONS, Question};

use crate::kind::Kind;
use crate::suite::Suite;
use crate::task::{Category, Checker, Task};

impl Category {
    /// Questions of a standard dataset (MMLU-Pro, GSM8K, ...) or a user's own file.
    pub const DATASET: Self = Self::new("dataset");
}

/// The dataset family: questions with their authors' gold, the prompt, options and checker
/// proved around it.
pub(crate) const KIND: Kind = Kind {
    category: Category::DATASET,
    description: "questions of a standard dataset or a user's own file",
    default_budget: DEFAULT_DATASET_BUDGET,
    fits: |checker| matches!(checker, Checker::Choice { .. } | Checker::FinalAnswer(_)),
    prove: Some(prove_dataset_task),
};

/// The default completion budget of a dataset question: enough for a reasoning model's chain
/// of thought on MMLU-Pro; pass `--budget-dataset` for more or less.
pub const DEFAULT_DATASET_BUDGET: u32 = 8_192;

/// The examples placed before each question when an examples file is given.
pub const DEFAULT_SHOTS: usize = 5;

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
            Category::DATASET,
            Checker::Choice {
                gold: *index,
                n_options: question.options.len(),
            },
            question_prompt(question, examples),
        ),
        Gold::Final(answer) => (
            Category::DATASET,
            Checker::FinalAnswer(answer.clone()),
            question_prompt(question, examples),
        ),
        // Graded in the sandbox like the bundled code tasks, so the self-check proves the
        // canonical program passes and a broken one fails.
        #[cfg(feature = "grader")]
        Gold::Program(tests) => (
            Category::CODE,
            Checker::Code(program::program_check(tests)),
            program::program_prompt(kind == DatasetKind::Mbpp, &question.text, tests),
        ),
    };
    Task::new(
        question.id.clone(),
        category,
        prompt,
        budget_tokens,
        checker,
    )
    .with_spec(DatasetSpec {
        kind,
        question: question.clone(),
        n_shots: examples.len(),
    })
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
pub(crate) fn prove_dataset_task(task: &Task) -> (usize, Vec<String>) {
    use crate::proof::Proof;

    let mut proof = Proof::default();
    let Some(spec) = task.spec::<DatasetSpec>() else {
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
