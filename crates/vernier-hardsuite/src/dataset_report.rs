//! The dataset view of a run: per category pass / wrong / `no_answer` / `cut_off` with Wilson
//! intervals, how many answers each extraction rule read, and patterns that point at the
//! harness rather than the model.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use vernier_stats::{Interval, wilson};
use vernier_tasks::{CHOICE_RULES, DatasetKind, DatasetSampling, FINAL_RULES, OutcomeKind};

use crate::journal::RunHeader;
use crate::task_results::{CONFIDENCE, TaskResult};

/// The counts of one category (or of the whole run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubjectScore {
    /// The category (`total` for the run).
    pub name: String,
    /// Question samples.
    pub n: usize,
    /// Right.
    pub n_pass: usize,
    /// An answer read, not the gold.
    pub n_wrong: usize,
    /// Finished with no answer any rule could read.
    pub n_no_answer: usize,
    /// Stopped by the budget.
    pub n_cut_off: usize,
    /// Not scored: infrastructure, or the server could not take the prompt.
    pub n_unscored: usize,
    /// 95% Wilson interval on the pass rate over the scored samples.
    pub wilson: Option<Interval>,
}

impl SubjectScore {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            n: 0,
            n_pass: 0,
            n_wrong: 0,
            n_no_answer: 0,
            n_cut_off: 0,
            n_unscored: 0,
            wilson: None,
        }
    }

    fn add(&mut self, outcome: OutcomeKind) {
        self.n += 1;
        match outcome {
            OutcomeKind::Pass => self.n_pass += 1,
            OutcomeKind::CutOff => self.n_cut_off += 1,
            OutcomeKind::NoAnswer => self.n_no_answer += 1,
            kind if kind.is_scored() => self.n_wrong += 1,
            _ => self.n_unscored += 1,
        }
    }

    /// Samples that count in the score.
    pub fn n_scored(&self) -> usize {
        self.n - self.n_unscored
    }

    fn finish(&mut self) {
        self.wilson = wilson(self.n_pass as u64, self.n_scored() as u64, CONFIDENCE).ok();
    }
}

/// How many answers one extraction rule read, and how many of them were right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RuleCount {
    /// The rule (`answer_is`, `answer_label`, `bold_or_boxed`, `last_line_letter`; `boxed`,
    /// `final_answer_is`, `answer_label`, `gsm8k_hashes`).
    pub rule: String,
    /// Answers it read (cut-off replies' provisional answers included).
    pub n_answers: usize,
    /// Of them, right.
    pub n_pass: usize,
}

/// `results.json`'s `dataset`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetReport {
    /// The dataset's kind.
    pub kind: DatasetKind,
    /// The file.
    pub file: PathBuf,
    /// How the questions were drawn, and the seed.
    pub sampling: DatasetSampling,
    /// The draw's seed.
    pub seed: u64,
    /// Questions in the file.
    pub n_in_file: usize,
    /// Records of the file left out (not questions to ask).
    pub n_left_out: usize,
    /// Examples before each question (0: zero-shot).
    pub shots: usize,
    /// Per category, by name.
    pub subjects: Vec<SubjectScore>,
    /// The whole run.
    pub total: SubjectScore,
    /// Per extraction rule, strictest first (rules that read nothing included).
    pub rules: Vec<RuleCount>,
    /// Patterns that point at the harness rather than the model, as sentences.
    pub flags: Vec<String>,
}

impl DatasetReport {
    /// The dataset view of a run, when its header records a dataset.
    pub fn of(header: &RunHeader, tasks: &[TaskResult]) -> Option<Self> {
        let record = header.dataset.as_ref()?;
        let mut total = SubjectScore::new("total");
        let mut subjects: Vec<SubjectScore> = Vec::new();
        let choice = matches!(
            record.selection.kind,
            DatasetKind::MmluPro | DatasetKind::Mmlu | DatasetKind::Gpqa | DatasetKind::Arc
        ) || tasks.iter().any(|task| {
            task.samples
                .iter()
                .any(|s| s.rule.as_deref().is_some_and(|r| CHOICE_RULES.contains(&r)))
        });
        let names: &[&str] = if record.selection.kind.is_code() {
            &[]
        } else if choice {
            &CHOICE_RULES
        } else {
            &FINAL_RULES
        };
        let mut rules: Vec<RuleCount> = names
            .iter()
            .map(|rule| RuleCount {
                rule: (*rule).to_owned(),
                n_answers: 0,
                n_pass: 0,
            })
            .collect();
        for task in tasks {
            let subject = record
                .questions
                .iter()
                .find(|question| question.id == task.id)
                .map_or("unknown", |question| question.subject.as_str());
            let index = if let Some(index) = subjects.iter().position(|s| s.name == subject) {
                index
            } else {
                subjects.push(SubjectScore::new(subject));
                subjects.len() - 1
            };
            for sample in &task.samples {
                subjects[index].add(sample.outcome);
                total.add(sample.outcome);
                if let Some(rule) = sample.rule.as_deref()
                    && let Some(count) = rules.iter_mut().find(|count| count.rule == rule)
                {
                    count.n_answers += 1;
                    count.n_pass += usize::from(sample.outcome == OutcomeKind::Pass);
                }
            }
        }
        subjects.sort_by(|a, b| a.name.cmp(&b.name));
        for subject in &mut subjects {
            subject.finish();
        }
        total.finish();
        let flags = flags(&subjects, &total, &rules);
        Some(Self {
            kind: record.selection.kind,
            file: record.selection.file.clone(),
            sampling: record.selection.sampling,
            seed: record.selection.seed,
            n_in_file: record.n_in_file,
            n_left_out: record.left_out.len(),
            shots: if record.selection.examples.is_some() {
                record.selection.shots
            } else {
                0
            },
            subjects,
            total,
            rules,
            flags,
        })
    }
}

/// Patterns in the counts that point at the harness: a category whose every reply hit the
/// budget or gave no answer, a run where most replies gave no readable answer, answers read
/// mostly by the loosest rule.
fn flags(subjects: &[SubjectScore], total: &SubjectScore, rules: &[RuleCount]) -> Vec<String> {
    let mut flags = Vec::new();
    for subject in subjects.iter().filter(|s| s.n_scored() >= 2) {
        if subject.n_cut_off == subject.n_scored() {
            flags.push(format!(
                "every reply in {} hit the budget ({} of {}): the budget, not the model, ended \
                 them; raise --budget-dataset (a reasoning model may need 16,000 or more)",
                subject.name, subject.n_cut_off, subject.n
            ));
        } else if subject.n_no_answer == subject.n_scored() {
            flags.push(format!(
                "every reply in {} ended without an answer any rule reads ({} of {}): check \
                 the chat template and read them with `hardsuite show OUT --all-failures`",
                subject.name, subject.n_no_answer, subject.n
            ));
        }
    }
    if total.n_scored() >= 4 && total.n_no_answer * 2 > total.n_scored() {
        flags.push(format!(
            "{} of {} replies gave no answer any rule reads: suspect the prompt format or the \
             template, not the model",
            total.n_no_answer,
            total.n_scored()
        ));
    }
    let read: usize = rules.iter().map(|count| count.n_answers).sum();
    if let Some(loosest) = rules.last()
        && read >= 4
        && loosest.n_answers * 2 > read
    {
        flags.push(format!(
            "{} of {read} answers were read only by the loosest rule ({}): the model does not \
             follow the answer instruction; its score leans on the fallback",
            loosest.n_answers, loosest.rule
        ));
    }
    flags
}

fn sampling_words(sampling: DatasetSampling) -> String {
    match sampling {
        DatasetSampling::All => "every question".to_owned(),
        DatasetSampling::Sample(n) => format!("a sample of {n}"),
        DatasetSampling::PerCategory(n) => format!("{n} per category"),
    }
}

/// The report's "Dataset" section.
pub fn render_dataset_markdown(report: &DatasetReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Dataset: {}", report.kind);
    let _ = writeln!(out);
    let shots = if report.shots == 0 {
        "zero-shot".to_owned()
    } else {
        format!("{}-shot", report.shots)
    };
    let _ = writeln!(
        out,
        "{} questions drawn from `{}` ({} questions; {} drawn with seed {}), {shots}, no stop \
         sequence sent; the answer is read from the final content only.",
        report.total.n,
        report.file.display(),
        report.n_in_file,
        sampling_words(report.sampling),
        report.seed,
    );
    if report.n_left_out > 0 {
        let _ = writeln!(
            out,
            "{} records of the file are no questions to ask and were left out (the journal \
             header lists them).",
            report.n_left_out
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| category | pass | wrong | no_answer | cut_off | unscored | pass rate | 95% Wilson |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    );
    for score in report.subjects.iter().chain([&report.total]) {
        let rate = if score.n_scored() == 0 {
            "-".to_owned()
        } else {
            format!(
                "{:.1}%",
                100.0 * score.n_pass as f64 / score.n_scored() as f64
            )
        };
        let name = if score.name == "total" {
            "**total**".to_owned()
        } else {
            score.name.clone()
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {rate} | {} |",
            score.n_pass,
            score.n_wrong,
            score.n_no_answer,
            score.n_cut_off,
            score.n_unscored,
            score.wilson.map_or_else(
                || "-".to_owned(),
                |w| format!("[{:.1}, {:.1}]", w.low * 100.0, w.high * 100.0)
            ),
        );
    }
    if report.rules.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Each reply's last fenced Python block was graded in the sandbox by the dataset's own \
             tests; a reply without one is `no_answer`."
        );
    } else {
        write_rules(&mut out, &report.rules);
    }
    if !report.flags.is_empty() {
        let _ = writeln!(out);
        for flag in &report.flags {
            let _ = writeln!(out, "- {flag}");
        }
    }
    out
}

fn write_rules(out: &mut String, rules: &[RuleCount]) {
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Answers read by each rule (strictest first; a reply no rule reads is `no_answer`, never \
         a guess):"
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "| rule | answers | of them right |");
    let _ = writeln!(out, "| --- | ---: | ---: |");
    for count in rules {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            count.rule, count.n_answers, count.n_pass
        );
    }
}
