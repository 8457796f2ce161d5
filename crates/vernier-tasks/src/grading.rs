//! The grading of one reply: a literal answer against its checker, a tool call against the
//! tools on offer, and code in the sandbox, each to an [`Outcome`] with its evidence.

#[cfg(feature = "grader")]
use vernier_grader::{Grade, GradeReason, Grader};

use crate::answer::{extract_answer, gcd, parse_fraction, parse_integer, reduce};
#[cfg(feature = "grader")]
use crate::task::GradeEvidence;
use crate::task::{Checker, Outcome, OutcomeKind, Reply, Task};
use crate::tools::{check_no_call, check_tool_call};

impl Task {
    /// Grades the model's final turn. Code tasks need a grader (without one the outcome is
    /// `infra`); the reasoning is never graded.
    #[cfg(feature = "grader")]
    pub async fn check(&self, reply: &Reply, grader: Option<&Grader>) -> Outcome {
        let Checker::Code(code_check) = &self.checker else {
            return self
                .check_answer(reply)
                .unwrap_or_else(|| Outcome::new(OutcomeKind::Infra, "infra:no_grader"));
        };
        let code = vernier_grader::extract_code(&reply.content);
        if reply.finish_reason.as_deref() == Some("length") {
            return Outcome::cut_off(code);
        }
        let Some(code) = code else {
            return Outcome::new(OutcomeKind::NoAnswer, "no_code");
        };
        let Some(grader) = grader else {
            return Outcome::new(OutcomeKind::Infra, "infra:no_grader");
        };
        let grade = grader.grade(&code_check.submission(code.clone())).await;
        let mut outcome = outcome_from_grade(&grade);
        outcome.evidence = Some(GradeEvidence::of(&grade, code_check.graded_program(&code)));
        outcome
    }

    /// Grades the model's final turn of a task that needs no sandbox (math and tool tasks);
    /// `None` for a code task, which needs [`Task::check`] and a grader. The reasoning is
    /// never graded.
    pub fn check_answer(&self, reply: &Reply) -> Option<Outcome> {
        let cut_off = reply.finish_reason.as_deref() == Some("length");
        Some(match &self.checker {
            Checker::Integer(_)
            | Checker::Fraction { .. }
            | Checker::ExactString(_)
            | Checker::IntegerList(_)
            | Checker::Word(_)
            | Checker::WordList(_) => {
                let extracted = extract_answer(&reply.content);
                if cut_off {
                    return Some(Outcome::cut_off(extracted));
                }
                let Some(answer) = extracted else {
                    return Some(Outcome::new(OutcomeKind::NoAnswer, "no_answer_line"));
                };
                let mut outcome = check_literal(&self.checker, &answer);
                outcome.provisional_answer = Some(answer);
                outcome
            }
            Checker::ToolCall { name, check } => {
                if cut_off {
                    return Some(Outcome::cut_off(
                        reply.tool_calls.first().map(|c| c.name.clone()),
                    ));
                }
                check_tool_call(name, check, reply)
            }
            Checker::NoCall { must_mention } => {
                if cut_off {
                    return Some(Outcome::cut_off(None));
                }
                check_no_call(must_mention, reply)
            }
            Checker::Choice { gold, n_options } => check_choice(reply, *gold, *n_options),
            Checker::FinalAnswer(gold) => check_final(reply, gold),
            Checker::Instructions(constraints) => {
                crate::instructions::check_instructions(constraints, reply)
            }
            Checker::Structured { schema, truth } => {
                crate::structured::check_structured(schema, truth, reply)
            }
            Checker::Calls(expected) => crate::calls::check_calls(expected, &self.tools, reply),
            #[cfg(feature = "grader")]
            Checker::Code(_) => return None,
        })
    }
}

/// A dataset reply: `cut_off` when the budget stopped it (with what was read so far),
/// `no_answer` when no rule read an answer, else `judge`'s verdict on what was read; the
/// answer and the rule that read it kept either way.
fn dataset_outcome(
    reply: &Reply,
    read: Option<crate::dataset::Extracted>,
    judge: impl FnOnce(&crate::dataset::Extracted) -> (bool, String),
) -> Outcome {
    let mut outcome = match &read {
        _ if reply.finish_reason.as_deref() == Some("length") => {
            Outcome::cut_off(read.as_ref().map(|read| read.answer.clone()))
        }
        None => Outcome::new(OutcomeKind::NoAnswer, "no_answer"),
        Some(read) => {
            let (right, detail) = judge(read);
            let kind = if right {
                OutcomeKind::Pass
            } else {
                OutcomeKind::Wrong
            };
            let mut outcome = Outcome::new(kind, format!("{detail} by {}", read.rule));
            outcome.provisional_answer = Some(read.answer.clone());
            outcome
        }
    };
    outcome.rule = read.map(|read| read.rule.to_owned());
    outcome
}

/// A multiple-choice reply: the option read by the first rule that matches.
fn check_choice(reply: &Reply, gold: usize, n_options: usize) -> Outcome {
    let read = crate::dataset::extract_choice(&reply.content);
    dataset_outcome(reply, read, |read| {
        let expected = crate::dataset::choice_letter(gold);
        let index = read
            .answer
            .bytes()
            .next()
            .map_or(usize::MAX, |letter| usize::from(letter - b'A'));
        if index == gold {
            (true, expected.to_string())
        } else if index >= n_options {
            (
                false,
                format!(
                    "expected {expected} got {} (not one of the {n_options} options)",
                    read.answer
                ),
            )
        } else {
            (false, format!("expected {expected} got {}", read.answer))
        }
    })
}

/// A final-answer reply: the answer read, normalised, against the normalised gold.
fn check_final(reply: &Reply, gold: &str) -> Outcome {
    let read = crate::dataset::extract_final(&reply.content);
    dataset_outcome(reply, read, |read| {
        if crate::dataset::final_answers_agree(&read.answer, gold) {
            (true, read.answer.clone())
        } else {
            (false, format!("expected {gold:?} got {:?}", read.answer))
        }
    })
}

#[cfg(feature = "grader")]
/// Maps a sandbox grade to an outcome.
pub(crate) fn outcome_from_grade(grade: &Grade) -> Outcome {
    let kind = match &grade.reason {
        GradeReason::Passed => OutcomeKind::Pass,
        GradeReason::Infra(_) => OutcomeKind::Infra,
        GradeReason::NoCode => OutcomeKind::NoAnswer,
        _ => OutcomeKind::Wrong,
    };
    let detail = match &grade.reason {
        GradeReason::Infra(why) => format!("infra:{why}"),
        // `crashed:SyntaxError` when an exception stopped the submission on import.
        GradeReason::Crashed(why) => why
            .strip_prefix("solution.py raised on import: ")
            .and_then(|raised| raised.split(':').next())
            .map_or_else(
                || "crashed".to_owned(),
                |class| format!("crashed:{}", class.trim()),
            ),
        other => other.detail(),
    };
    Outcome::new(kind, detail)
}

/// The longest case detail and stderr excerpt kept as evidence, in characters.
#[cfg(feature = "grader")]
const EVIDENCE_CUT: usize = 2000;
/// The failing cases kept as evidence.
#[cfg(feature = "grader")]
const EVIDENCE_CASES: usize = 5;

#[cfg(feature = "grader")]
fn cut(text: &str) -> String {
    if text.chars().count() <= EVIDENCE_CUT {
        return text.to_owned();
    }
    let mut kept: String = text.chars().take(EVIDENCE_CUT).collect();
    kept.push_str(" [cut]");
    kept
}

#[cfg(feature = "grader")]
impl GradeEvidence {
    pub(crate) fn of(grade: &Grade, submission: String) -> Self {
        let failed: Vec<&vernier_grader::CaseOutcome> =
            grade.cases.iter().filter(|case| !case.passed).collect();
        Self {
            submission,
            failing_cases: failed
                .iter()
                .take(EVIDENCE_CASES)
                .map(|case| (case.name.clone(), cut(&case.detail)))
                .collect(),
            n_failed_cases: failed.len(),
            crash: match &grade.reason {
                GradeReason::Crashed(why) => Some(why.clone()),
                _ => None,
            },
            guard: match &grade.reason {
                GradeReason::GuardViolation(name) => Some(name.clone()),
                _ => None,
            },
            timed_out: grade.reason == GradeReason::Timeout,
            oom_killed: grade.oom_killed,
            exit_code: grade.exit_code,
            stderr_excerpt: cut(&grade.stderr_excerpt),
            wall_time_ms: u64::try_from(grade.wall_time.as_millis()).unwrap_or(u64::MAX),
            image_digest: grade.image_digest.clone(),
        }
    }
}

/// Compares an extracted answer with a literal checker.
fn check_literal(checker: &Checker, answer: &str) -> Outcome {
    match checker {
        Checker::Integer(gold) => match parse_integer(answer) {
            None => Outcome::new(
                OutcomeKind::Wrong,
                format!("unparseable_integer {answer:?}"),
            ),
            Some(value) if value == *gold => Outcome::new(OutcomeKind::Pass, value.to_string()),
            Some(value) => Outcome::new(OutcomeKind::Wrong, format!("expected {gold} got {value}")),
        },
        Checker::Fraction {
            num,
            den,
            allow_unreduced,
        } => match parse_fraction(answer) {
            None => Outcome::new(
                OutcomeKind::Wrong,
                format!("unparseable_fraction {answer:?}"),
            ),
            Some((n, d)) if !allow_unreduced && gcd(n, d) > 1 => {
                Outcome::new(OutcomeKind::Wrong, format!("unreduced {n}/{d}"))
            }
            // Both sides reduced with a positive denominator: equal values, equal pairs.
            Some((n, d)) if reduce(n, d) == (*num, *den) => {
                Outcome::new(OutcomeKind::Pass, format!("{n}/{d}"))
            }
            Some((n, d)) => Outcome::new(
                OutcomeKind::Wrong,
                format!("expected {num}/{den} got {n}/{d}"),
            ),
        },
        Checker::ExactString(gold) => {
            if answer == gold.trim() {
                Outcome::new(OutcomeKind::Pass, answer.to_owned())
            } else {
                Outcome::new(
                    OutcomeKind::Wrong,
                    format!("expected {gold:?} got {answer:?}"),
                )
            }
        }
        Checker::Word(gold) => {
            let word = answer.trim().trim_end_matches('.').trim_matches('`').trim();
            if word.eq_ignore_ascii_case(gold) {
                Outcome::new(OutcomeKind::Pass, word.to_owned())
            } else {
                Outcome::new(
                    OutcomeKind::Wrong,
                    format!("expected {gold:?} got {word:?}"),
                )
            }
        }
        Checker::WordList(gold) => {
            let words: Vec<&str> = answer
                .trim()
                .trim_end_matches('.')
                .split(',')
                .map(|word| word.trim().trim_matches('`').trim())
                .collect();
            let same = words.len() == gold.len()
                && words
                    .iter()
                    .zip(gold)
                    .all(|(word, gold)| word.eq_ignore_ascii_case(gold));
            if same {
                Outcome::new(OutcomeKind::Pass, words.join(", "))
            } else {
                Outcome::new(
                    OutcomeKind::Wrong,
                    format!("expected {gold:?} got {words:?}"),
                )
            }
        }
        Checker::IntegerList(gold) => match crate::context::parse_integer_list(answer) {
            None => Outcome::new(OutcomeKind::Wrong, format!("unparseable_list {answer:?}")),
            Some(values) if values == *gold => Outcome::new(OutcomeKind::Pass, answer.to_owned()),
            Some(values) => {
                let found = gold.iter().filter(|value| values.contains(value)).count();
                let detail = if found == gold.len() && values.len() == gold.len() {
                    "order".to_owned()
                } else {
                    format!("{found}_of_{}", gold.len())
                };
                Outcome::new(
                    OutcomeKind::Wrong,
                    format!("expected {gold:?} got {values:?} ({detail})"),
                )
            }
        },
        _ => Outcome::new(OutcomeKind::Infra, "infra:not_a_literal_checker"),
    }
}
