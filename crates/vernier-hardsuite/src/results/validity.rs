//! A suite run's verdict (`validity` in `results.json`, the first line of `report.md`): whether
//! its scores describe the model as asked, and each reason when they might not.

use vernier_run::{Reason, Verdict, VerdictLevel};
use vernier_tasks::{Category, OutcomeKind};

use super::schema::ResultsFile;

/// The verdict of a suite run. `invalid`: the server changed during the run, samples failed on
/// infrastructure past [`vernier_run::INFRA_INVALID_SHARE`], or a long-context prompt hit the
/// prefix cache (its timing and its "found in context" both rest on a cold read).
/// `questionable`: fewer infrastructure failures, retried tries, rate limits,
/// inputs the server could not take (fewer tasks scored), the run's own audit flags, replies
/// missing from the evidence, the self-check skipped, the simulator.
pub fn validity(results: &ResultsFile) -> Verdict {
    let mut reasons = Vec::new();
    run_reasons(results, &mut reasons);
    evidence_reasons(results, &mut reasons);
    Verdict::from_reasons(reasons)
}

/// What the server and the infrastructure did: changed, failed, served a long prompt from
/// cache, were retried or throttled, could not take an input.
fn run_reasons(results: &ResultsFile, reasons: &mut Vec<Reason>) {
    let mut push = |code: &str, level: VerdictLevel, detail: String| {
        reasons.push(Reason::new(code, level, detail));
    };
    for change in &results.identity_changes {
        push(
            "server_changed",
            VerdictLevel::Invalid,
            format!("the server changed during the run: {change}"),
        );
    }
    let total = &results.main.total;
    if total.n_unscored > 0 {
        let all = total.n_unscored + total.n_scored;
        let level = if vernier_run::share(total.n_unscored, all) > vernier_run::INFRA_INVALID_SHARE
        {
            VerdictLevel::Invalid
        } else {
            VerdictLevel::Questionable
        };
        push(
            "infra_failures",
            level,
            format!(
                "{} of {all} samples failed on infrastructure on every try (unscored)",
                total.n_unscored
            ),
        );
    }
    let long_hits = long_cache_hits(results);
    if long_hits > 0 {
        push(
            "prefix_cache_hit",
            VerdictLevel::Invalid,
            format!(
                "{} of a long-context task reported cached prompt tokens: the prompt was not read cold",
                vernier_cli::counted(long_hits as u64, "sample", "samples")
            ),
        );
    }
    let scored_tries: usize = results
        .tasks
        .iter()
        .flat_map(|task| task.samples.iter().chain(&task.rerun))
        .map(|sample| sample.n_tries as usize)
        .sum();
    if results.n_infra_tries > 0 && total.n_unscored == 0 {
        push(
            "retries",
            VerdictLevel::Questionable,
            format!(
                "{} of {scored_tries} tries failed on infrastructure and were tried again",
                results.n_infra_tries
            ),
        );
    }
    if let Some(waits) = &results.rate_limit_waits {
        push(
            "throttled",
            VerdictLevel::Questionable,
            format!(
                "rate-limited {} times, {:.1} s waited",
                waits.n_waits, waits.waited_s
            ),
        );
    }
    let refused = total.n_context_exceeded + total.n_unsupported;
    if refused > 0 {
        push(
            "input_not_taken",
            VerdictLevel::Questionable,
            format!(
                "{refused} samples the server could not take (too long, or media it cannot see) are left out of the score"
            ),
        );
    }
}

/// What the run's own evidence says: the audit's flags, replies missing, the self-check
/// skipped, the simulator.
fn evidence_reasons(results: &ResultsFile, reasons: &mut Vec<Reason>) {
    let mut push = |code: &str, detail: String| {
        reasons.push(Reason::new(code, VerdictLevel::Questionable, detail));
    };
    if let Some(audit) = &results.audit {
        for flag in &audit.flags {
            push("harness_suspect", flag.clone());
        }
        let missing: usize = audit
            .evidence
            .iter()
            .map(|count| count.n_samples.saturating_sub(count.n_with_reply))
            .sum();
        if missing > 0 {
            push(
                "evidence_missing",
                format!("{missing} samples have no reply on file in replies.jsonl"),
            );
        }
    }
    if !results.self_checked {
        push(
            "self_check_skipped",
            "the suite's own answers and tests were not proven before the run (--skip-self-check)"
                .to_owned(),
        );
    }
    if results.simulated {
        push(
            "simulated",
            "the scores describe the bundled simulator's scripted answers".to_owned(),
        );
    }
}

/// Scored samples of long-context tasks that reported cached prompt tokens. Short tasks share
/// their instructions, so a server's prefix cache serves those openings by design and their
/// grade does not depend on it: they are no reason.
fn long_cache_hits(results: &ResultsFile) -> usize {
    results
        .tasks
        .iter()
        .filter(|task| task.category == Category::CONTEXT)
        .flat_map(|task| task.samples.iter().chain(&task.rerun))
        .filter(|sample| {
            sample.outcome != OutcomeKind::Infra && sample.cached_tokens.unwrap_or(0) > 0
        })
        .count()
}
