//! A standard dataset as the run's suite (`--dataset KIND --dataset-file PATH`): the questions
//! drawn, the file's digest and the drawn ids recorded in the journal header, so a resume and a
//! second model ask exactly the same questions.

#[cfg(feature = "engine")]
use std::fmt::Write as _;
#[cfg(feature = "engine")]
use std::path::Path;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
#[cfg(feature = "engine")]
use sha2::{Digest as _, Sha256};
use vernier_tasks::{DEFAULT_SHOTS, DatasetKind, DatasetSampling, LeftOut};
#[cfg(feature = "engine")]
use vernier_tasks::{Question, Suite, dataset_suite, draw_questions, load_dataset};

#[cfg(feature = "engine")]
use crate::error::HardsuiteError;

/// Which dataset, which of its questions, and the examples before each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetSelection {
    /// How the file is read and graded.
    pub kind: DatasetKind,
    /// The dataset file (JSON Lines or a JSON array, gzip or not).
    pub file: PathBuf,
    /// All, a sample, or a number per category.
    pub sampling: DatasetSampling,
    /// The seed of the draw (`--seed`).
    pub seed: u64,
    /// A file of worked examples of the same kind (`--examples`); none: zero-shot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<PathBuf>,
    /// Examples before each question when `examples` is given (`--shots`, default 5).
    #[serde(default = "default_shots")]
    pub shots: usize,
}

fn default_shots() -> usize {
    DEFAULT_SHOTS
}

impl DatasetSelection {
    /// A selection of `kind` from `file`, drawn with `sampling` from `seed`, zero-shot.
    pub fn new(
        kind: DatasetKind,
        file: impl Into<PathBuf>,
        sampling: DatasetSampling,
        seed: u64,
    ) -> Self {
        Self {
            kind,
            file: file.into(),
            sampling,
            seed,
            examples: None,
            shots: DEFAULT_SHOTS,
        }
    }
}

/// What the journal header keeps of a dataset run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetRecord {
    /// The selection as given.
    pub selection: DatasetSelection,
    /// SHA-256 of the dataset file's bytes: a resume, and `compare`, require the same.
    pub file_sha256: String,
    /// SHA-256 of the examples file, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples_sha256: Option<String>,
    /// Questions the file holds.
    pub n_in_file: usize,
    /// Records of the file that are no questions to ask, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// The drawn questions, in file order.
    pub questions: Vec<DrawnQuestion>,
}

/// One drawn question: its id and category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DrawnQuestion {
    /// The question's id (the task id).
    pub id: String,
    /// Its category.
    pub subject: String,
}

impl DatasetRecord {
    /// The drawn ids, in order.
    pub fn ids(&self) -> Vec<&str> {
        self.questions.iter().map(|q| q.id.as_str()).collect()
    }
}

#[cfg(feature = "engine")]
fn digest(path: &Path) -> Result<String, HardsuiteError> {
    let bytes = std::fs::read(path).map_err(|source| HardsuiteError::io("read", path, source))?;
    let mut hex = String::with_capacity(64);
    for byte in Sha256::digest(&bytes) {
        let _ = write!(hex, "{byte:02x}");
    }
    Ok(hex)
}

#[cfg(feature = "engine")]
/// The suite a selection names, and what the header keeps of it. `budget` is each question's
/// completion budget.
pub(crate) fn dataset_suite_of(
    selection: &DatasetSelection,
    budget: u32,
) -> Result<(Suite, DatasetRecord), HardsuiteError> {
    let loaded = load_dataset(&selection.file, selection.kind)?;
    let drawn = draw_questions(&loaded.questions, selection.sampling, selection.seed)?;
    let questions: Vec<Question> = drawn
        .iter()
        .map(|index| loaded.questions[*index].clone())
        .collect();
    let (examples, examples_sha256) = match &selection.examples {
        Some(path) => (
            load_dataset(path, selection.kind)?.questions,
            Some(digest(path)?),
        ),
        None => (Vec::new(), None),
    };
    let suite = dataset_suite(
        selection.kind,
        &questions,
        &examples,
        selection.shots,
        budget,
    );
    let record = DatasetRecord {
        selection: selection.clone(),
        file_sha256: digest(&selection.file)?,
        examples_sha256,
        n_in_file: loaded.questions.len(),
        left_out: loaded.left_out,
        questions: questions
            .iter()
            .map(|question| DrawnQuestion {
                id: question.id.clone(),
                subject: question.subject.clone(),
            })
            .collect(),
    };
    Ok((suite, record))
}

#[cfg(feature = "engine")]
/// What the header keeps of a dataset run: the record of its selection, with the ids of the
/// questions it runs (after `--tasks`).
pub(crate) fn record_of(
    selection: Option<&DatasetSelection>,
    budget: Option<u32>,
    suite: &Suite,
) -> Result<Option<DatasetRecord>, HardsuiteError> {
    let Some(selection) = selection else {
        return Ok(None);
    };
    let budget = budget.unwrap_or(vernier_tasks::DEFAULT_DATASET_BUDGET);
    let (_, mut record) = dataset_suite_of(selection, budget)?;
    record
        .questions
        .retain(|question| suite.task(&question.id).is_some());
    Ok(Some(record))
}

#[cfg(feature = "engine")]
/// A resumed dataset run reads the same file it started with.
pub(crate) fn check_unchanged(record: &DatasetRecord) -> Result<(), HardsuiteError> {
    if let (Some(path), Some(then)) = (&record.selection.examples, &record.examples_sha256) {
        let now = digest(path)?;
        if &now != then {
            return Err(HardsuiteError::invalid(
                "--examples",
                format!(
                    "{} changed since the run started (sha256 {then} then, {now} now); point the \
                     run at the examples it started with",
                    path.display()
                ),
            ));
        }
    }
    let now = digest(&record.selection.file)?;
    if now != record.file_sha256 {
        return Err(HardsuiteError::invalid(
            "--dataset-file",
            format!(
                "{} changed since the run started (sha256 {} then, {now} now); point the run at \
                 the file it started with",
                record.selection.file.display(),
                record.file_sha256
            ),
        ));
    }
    Ok(())
}

/// What differs between two dataset runs' questions, for `compare` (empty: the same draw).
pub fn dataset_differences(a: Option<&DatasetRecord>, b: Option<&DatasetRecord>) -> Vec<String> {
    match (a, b) {
        (None, None) => Vec::new(),
        (Some(_), None) | (None, Some(_)) => {
            vec!["one run asked dataset questions and the other did not".to_owned()]
        }
        (Some(a), Some(b)) => {
            let mut differences = Vec::new();
            if a.selection.kind != b.selection.kind {
                differences.push(format!(
                    "datasets {} and {}",
                    a.selection.kind, b.selection.kind
                ));
            }
            if a.file_sha256 != b.file_sha256 {
                differences.push("different dataset files (sha256 differs)".to_owned());
            }
            if a.examples_sha256 != b.examples_sha256 || a.selection.shots != b.selection.shots {
                differences.push("different examples before the questions".to_owned());
            }
            let (ids_a, ids_b) = (a.ids(), b.ids());
            if ids_a != ids_b {
                let only_a = ids_a.iter().filter(|id| !ids_b.contains(id)).count();
                let only_b = ids_b.iter().filter(|id| !ids_a.contains(id)).count();
                differences.push(format!(
                    "different questions drawn ({only_a} only in A, {only_b} only in B; draw \
                     with the same --per-category/--sample and --seed from the same file)"
                ));
            }
            differences
        }
    }
}
