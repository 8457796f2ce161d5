//! The terminal table and the Markdown report of one run.

use std::fmt::Write as _;

use vernier_stats::Interval;
use vernier_tasks::OutcomeKind;

use crate::results::{ResultsFile, Score, Scoreboard};
use crate::task_results::{SampleResult, TaskResult};

pub use vernier_cli::thousands;

/// A non-negative count held as `f64` (a median of token counts), rounded.
pub(crate) fn round_count(value: f64) -> u64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to [0, 2^53], where f64 holds every integer"
    )]
    let rounded = value.round().clamp(0.0, 9_007_199_254_740_992.0) as u64;
    rounded
}

/// A proportion interval in percent, e.g. `[52.4, 92.4]`.
pub(crate) fn percent_interval(interval: Option<Interval>) -> String {
    interval.map_or_else(
        || "-".to_owned(),
        |interval| {
            format!(
                "[{:.1}, {:.1}]",
                interval.low * 100.0,
                interval.high * 100.0
            )
        },
    )
}

fn rate(score: &Score) -> String {
    score
        .pass_rate()
        .map_or_else(|| "-".to_owned(), |rate| format!("{:.1}%", rate * 100.0))
}

/// The interval column's heading: Wilson with one sample per task, task-clustered with more.
fn interval_heading(results: &ResultsFile) -> &'static str {
    if results.samples > 1 {
        "95% task-clustered"
    } else {
        "95% Wilson"
    }
}

/// With K > 1 samples per task, what the rate and the interval are.
fn clustered_note(results: &ResultsFile) -> Option<String> {
    (results.samples > 1).then(|| {
        format!(
            "{} samples per task: the rate is the mean over tasks of each task's pass fraction, \
             and the 95% interval is that mean ± 1.96 standard errors from the spread of the \
             per-task fractions (errors clustered by task, Miller 2024), clipped to [0, 100]; \
             pass/scored counts samples.",
            results.samples
        )
    })
}

fn tokens(sample: &SampleResult) -> String {
    sample.completion_tokens.map_or_else(
        || "-".to_owned(),
        |tokens| {
            if sample.token_source.as_deref() == Some("event_count") {
                format!("≥{}", thousands(tokens))
            } else {
                thousands(tokens)
            }
        },
    )
}

fn seconds(sample: &SampleResult) -> String {
    sample
        .seconds
        .map_or_else(|| "-".to_owned(), |seconds| format!("{seconds:.1}"))
}

fn notes(sample: &SampleResult) -> String {
    let mut notes = Vec::new();
    if sample.ended_in_reasoning {
        notes.push("ended inside reasoning".to_owned());
    } else if sample.hit_budget {
        notes.push("hit the budget".to_owned());
    }
    if sample.n_tries > 1 {
        notes.push(format!("{} tries", sample.n_tries));
    }
    // A cut-off's detail is always `length`, already said above.
    if !sample.detail.is_empty() && sample.outcome != OutcomeKind::CutOff {
        notes.push(sample.detail.clone());
    }
    notes.join("; ")
}

fn sample_label(id: &str, sample: &SampleResult, n_samples: u32) -> String {
    if n_samples > 1 {
        format!("{id} #{}", sample.sample)
    } else {
        id.to_owned()
    }
}

/// The cells of one sample's row, shared by the terminal table and the Markdown report.
struct SampleRow {
    label: String,
    category: &'static str,
    outcome: &'static str,
    tokens: String,
    seconds: String,
    budget: String,
    notes: String,
}

impl SampleRow {
    fn new(task: &TaskResult, sample: &SampleResult, n_samples: u32) -> Self {
        Self {
            label: sample_label(&task.id, sample, n_samples),
            category: task.category.as_str(),
            outcome: sample.outcome.as_str(),
            tokens: tokens(sample),
            seconds: seconds(sample),
            budget: thousands(u64::from(sample.budget_tokens)),
            notes: notes(sample),
        }
    }
}

fn median_tokens(board: &Scoreboard) -> String {
    board
        .median_tokens_solved
        .map_or_else(|| "-".to_owned(), |median| thousands(round_count(median)))
}

fn list_or_none(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    }
}

fn noise_sentence(results: &ResultsFile) -> String {
    let n_tasks = results.tasks.len();
    if results.samples > 1 {
        return format!(
            "With {n_tasks} tasks ({} samples each, averaged per task), the 95% interval on the \
             difference between two runs is about ±{:.0} points (assuming 15% of samples go \
             different ways; more samples per task can only narrow it): a gap of one or two \
             tasks is noise, not a win.",
            results.samples, results.difference_half_width_points
        );
    }
    format!(
        "With {n_tasks} items, the 95% interval on the difference between two runs is about ±{:.0} \
         points (assuming 15% of items go different ways): a gap of one or two tasks is noise, \
         not a win.",
        results.difference_half_width_points
    )
}

fn headline(results: &ResultsFile) -> String {
    let simulated = if results.simulated {
        " (in-process simulator, scripted answers: these figures measure the harness, not a model)"
    } else {
        ""
    };
    let checked = if results.self_checked {
        "self-check passed"
    } else {
        "self-check skipped"
    };
    format!(
        "{} on {} at {}{simulated}; sampling: {}; {} sample(s) per task; {checked}",
        results.suite, results.model, results.base_url, results.sampling, results.samples
    )
}

/// The plain-text table printed at the end of a run.
pub fn render_table(results: &ResultsFile) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(results));
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<24} {:<8} {:<11} {:>9} {:>8} {:>7}  notes",
        "task", "category", "outcome", "tokens", "seconds", "budget"
    );
    for task in &results.tasks {
        for sample in &task.samples {
            let row = SampleRow::new(task, sample, results.samples);
            let _ = writeln!(
                out,
                "{:<24} {:<8} {:<11} {:>9} {:>8} {:>7}  {}",
                row.label,
                row.category,
                row.outcome,
                row.tokens,
                row.seconds,
                row.budget,
                row.notes,
            );
        }
    }
    let _ = writeln!(out);
    let heading = interval_heading(results);
    write_scores_text(&mut out, &results.main, "main run", heading);
    if let Some(after) = &results.after_rerun {
        let _ = writeln!(out);
        write_rerun_text(&mut out, results);
        write_scores_text(&mut out, after, "after the re-run", heading);
    }
    let _ = writeln!(out);
    if let Some(note) = clustered_note(results) {
        let _ = writeln!(out, "{note}");
    }
    let _ = writeln!(out, "{}", noise_sentence(results));
    let _ = writeln!(out, "{}", results.validity.line());
    out
}

fn write_rerun_text(out: &mut String, results: &ResultsFile) {
    let budget = results
        .after_rerun
        .as_ref()
        .and_then(|board| board.rerun_budget)
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "Re-run of the cut-off tasks at {} tokens:",
        thousands(u64::from(budget))
    );
    let mut any = false;
    for task in &results.tasks {
        for sample in &task.rerun {
            any = true;
            let row = SampleRow::new(task, sample, results.samples);
            let _ = writeln!(
                out,
                "  {:<24} {:<11} {:>9} {:>8}  {}",
                row.label, row.outcome, row.tokens, row.seconds, row.notes,
            );
        }
    }
    if !any {
        let _ = writeln!(out, "  nothing was cut off");
    }
}

fn write_scores_text(out: &mut String, board: &Scoreboard, title: &str, heading: &str) {
    let width = heading.len().max(14);
    let _ = writeln!(
        out,
        "{:<17} {:>11} {:>7} {:>width$} {:>6} {:>8} {:>10} {:>12} {:>9}",
        title,
        "pass/scored",
        "rate",
        heading,
        "wrong",
        "cut_off",
        "no_answer",
        "extra_calls",
        "unscored"
    );
    for score in board.categories.iter().chain(std::iter::once(&board.total)) {
        let _ = writeln!(
            out,
            "{:<17} {:>11} {:>7} {:>width$} {:>6} {:>8} {:>10} {:>12} {:>9}",
            score.name,
            format!("{}/{}", score.n_pass, score.n_scored),
            rate(score),
            percent_interval(score.interval()),
            score.n_wrong,
            score.n_cut_off,
            score.n_no_answer,
            score.n_extra_calls,
            score.n_unscored,
        );
    }
    let _ = writeln!(
        out,
        "median completion tokens per solved task: {}",
        median_tokens(board)
    );
    let _ = writeln!(
        out,
        "ended inside reasoning (cut off, no content): {}",
        list_or_none(&board.ended_in_reasoning)
    );
    let _ = writeln!(out, "hit the budget: {}", list_or_none(&board.hit_budget));
    if board.total.n_unsupported > 0 {
        let _ = writeln!(
            out,
            "refused by the server for their images, videos or tools (unsupported, not scored): {}; the server or model cannot take them",
            board.total.n_unsupported
        );
    }
    if board.total.n_context_exceeded > 0 {
        let _ = writeln!(
            out,
            "refused by the server for their length (context_exceeded, not scored): {}",
            board.total.n_context_exceeded
        );
    }
}

/// The long-context section, for a run with context tasks; once per media suite (vision,
/// video), what the server said when it refused its media; and what the media cost in prompt
/// tokens.
fn push_refusal_and_context_sections(out: &mut String, results: &ResultsFile) {
    let tools_refused: Vec<&crate::task_results::SampleResult> = results
        .tasks
        .iter()
        .filter(|task| task.category == vernier_tasks::Category::TOOLS)
        .flat_map(|task| task.samples.iter())
        .filter(|sample| sample.outcome == OutcomeKind::Unsupported)
        .collect();
    if let Some(sample) = tools_refused.first() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "> **The server parses no tool calls:** {} tool task sample(s) were refused for their tools and are `unsupported`, not scored and not the model's failure (start vLLM with `--enable-auto-tool-choice` and a `--tool-call-parser` for the model, llama.cpp with `--jinja`). It said: {}",
            tools_refused.len(),
            sample.server_message.as_deref().unwrap_or("(no message)")
        );
    }
    for (category, kind) in [
        (vernier_tasks::Category::VISION, "images"),
        (vernier_tasks::Category::VIDEO, "videos"),
    ] {
        let samples: Vec<&crate::task_results::SampleResult> = results
            .tasks
            .iter()
            .filter(|task| task.category == category)
            .flat_map(|task| task.samples.iter())
            .collect();
        let refused: Vec<_> = samples
            .iter()
            .filter(|sample| sample.outcome == OutcomeKind::Unsupported)
            .collect();
        if let Some(sample) = refused.first() {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "> **The server cannot take {kind}:** {} {category} task sample(s) were refused for their {kind} and are `unsupported`, not scored and not the model's failure. It said: {}",
                refused.len(),
                sample.server_message.as_deref().unwrap_or("(no message)")
            );
        }
        let prompt: Vec<f64> = samples
            .iter()
            .filter_map(|sample| sample.prompt_tokens)
            .map(|tokens| tokens as f64)
            .collect();
        if let Ok(median) = vernier_stats::median(&prompt) {
            let media: Vec<f64> = samples
                .iter()
                .filter_map(|sample| sample.media_tokens)
                .map(|tokens| tokens as f64)
                .collect();
            let cached = samples
                .iter()
                .filter_map(|sample| sample.cached_tokens)
                .max();
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "{category}: median prompt tokens {} ({} samples, the server's count, {kind} included){}; cached prompt tokens at most {}.",
                thousands(round_count(median)),
                prompt.len(),
                vernier_stats::median(&media).map_or(String::new(), |m| format!(
                    ", of which {} for the {kind} as the server counts them",
                    thousands(round_count(m))
                )),
                cached.map_or("not reported".to_owned(), |c| c.to_string()),
            );
        }
    }
    if let Some(context) = &results.context {
        let _ = writeln!(out);
        out.push_str(&crate::context_report::render_context_markdown(context));
    }
    if let Some(dataset) = &results.dataset {
        let _ = writeln!(out);
        out.push_str(&crate::dataset_report::render_dataset_markdown(dataset));
    }
    if let Some(breakdown) = crate::structure_report::structure_breakdown(results) {
        let _ = writeln!(out);
        out.push_str(&crate::structure_report::render_structure_markdown(
            &breakdown,
        ));
    }
    if let Some(breakdown) = crate::instructions_report::instructions_breakdown(results) {
        let _ = writeln!(out);
        out.push_str(&crate::instructions_report::render_instructions_markdown(
            &breakdown,
        ));
    }
}

/// The server's GPUs, the weights it states it loaded (and a disagreement with the served
/// name), and the GPUs' energy over the run; nothing for results written before they were read.
fn write_machine_markdown(out: &mut String, results: &ResultsFile) {
    let mut lines = Vec::new();
    if let Some(weights) = &results.weights {
        lines.push(format!("- Weights: {}", weights.describe()));
        if let Some(mismatch) = &weights.mismatch {
            lines.push(format!(
                "- **Served name and weights disagree:** {mismatch}"
            ));
        }
    }
    if let Some(gpu) = &results.gpu {
        lines.push(format!("- {}", gpu.summary_line()));
    }
    if let Some(energy) = &results.energy {
        lines.push(format!(
            "- GPU energy over the run (every try, retried or not; all GPUs): {}",
            energy.describe()
        ));
        for warning in energy.warnings() {
            lines.push(format!("- GPU: {warning}"));
        }
    }
    for line in &lines {
        let _ = writeln!(out, "{line}");
    }
    if !lines.is_empty() {
        let _ = writeln!(out);
    }
}

/// The Markdown report (`report.md`).
pub fn render_markdown(results: &ResultsFile) -> String {
    let mut out = format!(
        "# hardsuite: {}\n\n**{}**\n\n{}.\n\n> {}\n\n",
        results.model,
        results.validity.line(),
        headline(results),
        noise_sentence(results)
    );
    write_machine_markdown(&mut out, results);
    let _ = writeln!(out, "## Scores");
    let _ = writeln!(out);
    if let Some(note) = clustered_note(results) {
        let _ = writeln!(out, "{note}");
        let _ = writeln!(out);
    }
    let heading = interval_heading(results);
    write_scores_markdown(&mut out, &results.main, heading);
    if let Some(after) = &results.after_rerun {
        let budget = after.rerun_budget.unwrap_or_default();
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "## After re-running the cut-off tasks at {} tokens",
            thousands(u64::from(budget))
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Main run: {}/{} passed; with the re-run's results in place of its cut-offs: {}/{}.",
            results.main.total.n_pass,
            results.main.total.n_scored,
            after.total.n_pass,
            after.total.n_scored
        );
        let _ = writeln!(out);
        write_scores_markdown(&mut out, after, heading);
    }
    push_refusal_and_context_sections(&mut out, results);
    let _ = writeln!(out);
    let _ = writeln!(out, "## Tasks");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| task | category | outcome | completion tokens | seconds | budget | notes |"
    );
    let _ = writeln!(out, "| --- | --- | --- | ---: | ---: | ---: | --- |");
    for task in &results.tasks {
        for (sample, phase) in task
            .samples
            .iter()
            .map(|sample| (sample, ""))
            .chain(task.rerun.iter().map(|sample| (sample, " (re-run)")))
        {
            let row = SampleRow::new(task, sample, results.samples);
            // With the replies on file, every row that did not pass links to its evidence.
            let evidence = if results.audit.is_some() && sample.outcome != OutcomeKind::Pass {
                format!(
                    " [evidence](replies.jsonl) (`hardsuite show OUT {}`)",
                    task.id
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {}{phase} | {} | {} | {} | {} | {} | {}{evidence} |",
                row.label,
                row.category,
                row.outcome,
                row.tokens,
                row.seconds,
                row.budget,
                row.notes.replace('|', "\\|"),
            );
        }
    }
    if results.n_infra_tries > 0 {
        let _ = writeln!(out);
        let (tries, were, they_are) = if results.n_infra_tries == 1 {
            ("try", "was", "it is")
        } else {
            ("tries", "were", "they are")
        };
        let _ = writeln!(
            out,
            "{} {tries} failed on infrastructure (server or grader) and {were} retried; {they_are} \
             not scored.",
            results.n_infra_tries
        );
    }
    write_shared_cache(&mut out, results);
    write_audit(&mut out, results);
    if let Some(waits) = results.rate_limit_waits {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "The run waited {:.1} s on rate limits ({} answers of 429/503, {} of the waits as long as the \
             server asked, the rest backing off); those tries used up no retry and are not scored.",
            waits.waited_s, waits.n_waits, waits.n_server_asked
        );
    }
    out
}

/// The self-audit: the replies on file per outcome, and patterns that point at the setup.
fn write_audit(out: &mut String, results: &ResultsFile) {
    if let Some(audit) = &results.audit {
        let _ = writeln!(out);
        let _ = writeln!(out, "## Self-audit");
        let _ = writeln!(out);
        let counts: Vec<String> = audit
            .evidence
            .iter()
            .map(|e| format!("{} {}/{}", e.outcome, e.n_with_reply, e.n_samples))
            .collect();
        let _ = writeln!(
            out,
            "Replies on file (`replies.jsonl`), by outcome: {}.",
            counts.join(", ")
        );
        if audit.flags.is_empty() {
            let _ = writeln!(
                out,
                "No pattern that points at the harness rather than the model."
            );
        }
        for flag in &audit.flags {
            let _ = writeln!(out);
            let _ = writeln!(out, "> **Check the setup:** {flag}.");
        }
        for note in &audit.notes {
            let _ = writeln!(out);
            let _ = writeln!(out, "{note}.");
        }
    }
}

fn write_scores_markdown(out: &mut String, board: &Scoreboard, heading: &str) {
    let _ = writeln!(
        out,
        "| category | pass / scored | rate | {heading} | wrong | cut off | no answer | extra calls | unscored |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
    );
    for score in board.categories.iter().chain(std::iter::once(&board.total)) {
        let _ = writeln!(
            out,
            "| {} | {}/{} | {} | {} | {} | {} | {} | {} | {} |",
            score.name,
            score.n_pass,
            score.n_scored,
            rate(score),
            percent_interval(score.interval()),
            score.n_wrong,
            score.n_cut_off,
            score.n_no_answer,
            score.n_extra_calls,
            score.n_unscored,
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "- Median completion tokens per solved task: {}",
        median_tokens(board)
    );
    let _ = writeln!(
        out,
        "- Ended inside reasoning (cut off with no content): {}",
        list_or_none(&board.ended_in_reasoning)
    );
    let _ = writeln!(out, "- Hit the budget: {}", list_or_none(&board.hit_budget));
}

/// How the run kept its requests within the cache the server's slots share, and which
/// attempts ran alone after the server failed a try for it.
fn write_shared_cache(out: &mut String, results: &ResultsFile) {
    if let Some(cache) = results.shared_cache {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "The requests in flight were kept within {} tokens, the context each of the server's {} slots \
             reports (llama-server's slots share one cache of that size by default): {} {} waited {:.1} s \
             in all for room, running one after another where their prompts and answer budgets did not \
             fit together.",
            cache.tokens,
            cache.slots,
            cache.n_waited,
            if cache.n_waited == 1 { "try" } else { "tries" },
            cache.waited_s
        );
    }
    if let Some(alone) = &results.ran_alone {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{} {} ran alone, with nothing else in flight: the server failed a try for shared capacity \
             though the prompt fits its context alone (first: {}). Those failed tries used up no retry \
             and are not scored. Ran alone: {}.",
            alone.attempts.len(),
            if alone.attempts.len() == 1 {
                "attempt"
            } else {
                "attempts"
            },
            alone.why,
            alone.attempts.join(", ")
        );
    }
}
