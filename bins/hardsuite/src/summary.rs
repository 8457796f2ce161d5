//! What a dataset run prints at its end: a row per category with its pass rate and interval,
//! not a row per question (`--per-task` prints those; `hardsuite show OUT` gives any
//! question's evidence).

use std::fmt::Write as _;

use vernier_hardsuite::{DatasetReport, HardsuiteOutcome, SubjectScore};

/// The per-category summary of a dataset run: the engine table's headline, a row per category
/// and the total (`pass/scored`, rate, 95% Wilson interval, the other outcomes), the answers
/// each extraction rule read, the patterns that point at the harness, the score after a
/// re-run and the verdict.
pub fn dataset_summary(outcome: &HardsuiteOutcome, dataset: &DatasetReport) -> String {
    let results = &outcome.results;
    let mut out = String::new();
    if let Some(headline) = outcome.table.lines().next() {
        let _ = writeln!(out, "{headline}");
        let _ = writeln!(out);
    }
    let width = dataset
        .subjects
        .iter()
        .map(|subject| subject.name.chars().count())
        .max()
        .unwrap_or(0)
        .max("category".len());
    let _ = writeln!(
        out,
        "{:<width$} {:>11} {:>7} {:>14} {:>6} {:>10} {:>8} {:>9}",
        "category",
        "pass/scored",
        "rate",
        "95% Wilson",
        "wrong",
        "no_answer",
        "cut_off",
        "unscored"
    );
    for score in dataset.subjects.iter().chain([&dataset.total]) {
        let _ = writeln!(out, "{}", row(score, width));
    }
    let read: Vec<String> = dataset
        .rules
        .iter()
        .filter(|count| count.n_answers > 0)
        .map(|count| {
            format!(
                "{} {} ({} right)",
                count.rule, count.n_answers, count.n_pass
            )
        })
        .collect();
    let _ = writeln!(out);
    if !read.is_empty() {
        let _ = writeln!(
            out,
            "answers read by rule (strictest first): {}",
            read.join(", ")
        );
    }
    for flag in &dataset.flags {
        let _ = writeln!(out, "- {flag}");
    }
    if let Some(after) = &results.after_rerun {
        let total = &after.total;
        let _ = writeln!(
            out,
            "after the re-run of the cut-off questions: {}/{} pass, {}",
            total.n_pass,
            total.n_scored,
            rate_and_interval(
                total.pass_rate(),
                total.interval().map(|bounds| (bounds.low, bounds.high))
            )
        );
    }
    let _ = writeln!(
        out,
        "{} in {}; one row per question with --per-task; `hardsuite show {} --all-failures` \
         gives the reply behind every miss.",
        vernier_cli::counted(dataset.total.n as u64, "sample", "samples"),
        vernier_cli::counted(dataset.subjects.len() as u64, "category", "categories"),
        vernier_cli::shell_quote(
            &outcome
                .files
                .results
                .parent()
                .unwrap_or(&outcome.files.results)
                .display()
                .to_string()
        ),
    );
    let _ = writeln!(out, "{}", results.validity.line());
    out
}

/// One category's row.
fn row(score: &SubjectScore, width: usize) -> String {
    let scored = score.n_scored();
    let rate = (scored > 0).then(|| score.n_pass as f64 / scored as f64);
    format!(
        "{:<width$} {:>11} {:>7} {:>14} {:>6} {:>10} {:>8} {:>9}",
        score.name,
        format!("{}/{scored}", score.n_pass),
        rate.map_or_else(|| "-".to_owned(), |rate| format!("{:.1}%", rate * 100.0)),
        interval(score.wilson.map(|bounds| (bounds.low, bounds.high))),
        score.n_wrong,
        score.n_no_answer,
        score.n_cut_off,
        score.n_unscored,
    )
}

/// `60.0% [38.7, 78.1]`.
fn rate_and_interval(rate: Option<f64>, bounds: Option<(f64, f64)>) -> String {
    format!(
        "{} {}",
        rate.map_or_else(|| "-".to_owned(), |rate| format!("{:.1}%", rate * 100.0)),
        interval(bounds)
    )
}

/// A proportion's interval (low, high) in percent, `[38.7, 78.1]`, or `-`.
fn interval(bounds: Option<(f64, f64)>) -> String {
    bounds.map_or_else(
        || "-".to_owned(),
        |(low, high)| format!("[{:.1}, {:.1}]", low * 100.0, high * 100.0),
    )
}
