//! Fitting a context run to the server: its context length read, and the lengths that cannot
//! fit it left out.

use std::collections::HashSet;

use crate::error::HardsuiteError;
use crate::journal::{DroppedLength, RecordedLimit};
use crate::observer::RunObserver;
use crate::settings::Settings;

/// Below the server's context, this many tokens are kept free beside the answer budget when
/// the longest length that fits is added (chat templates differ by a few tokens per request).
const CONTEXT_MARGIN: u64 = 64;

/// For a new context run with default lengths: reads the server's context and leaves out every
/// length whose prompt and answer budget cannot fit it, adding the longest length that does
/// (a multiple of 256). Gives whether the plan changed.
pub(crate) async fn fit_context(
    settings: &mut Settings,
    client: &vernier_openai::Client,
    model: &str,
    observer: &dyn RunObserver,
) -> bool {
    let budget = settings
        .flags
        .context
        .unwrap_or(vernier_tasks::DEFAULT_CONTEXT_BUDGET);
    let Some((plan, final_lengths)) = &mut settings.context else {
        return false;
    };
    if *final_lengths {
        if settings.context_fit.limit.is_none() {
            settings.context_fit.limit = read_context_limit(client, model).await;
        }
        return false;
    }
    *final_lengths = true;
    let Some(limit) = read_context_limit(client, model).await else {
        observer.note(
            "the server does not say its context length; every length is sent, and any it refuses is context_exceeded",
        );
        return false;
    };
    let room = limit.tokens.saturating_sub(u64::from(budget));
    let (kept, dropped): (Vec<u32>, Vec<u32>) = plan
        .lengths
        .iter()
        .partition(|length| u64::from(**length) <= room);
    if dropped.is_empty() {
        settings.context_fit.limit = Some(limit);
        return false;
    }
    for length in &dropped {
        settings.context_fit.dropped.push(DroppedLength {
            tokens: *length,
            reason: format!(
                "{} prompt tokens and a {budget}-token answer budget exceed the server's context of {} tokens ({})",
                length, limit.tokens, limit.source
            ),
        });
    }
    let longest = room.saturating_sub(CONTEXT_MARGIN) / 256 * 256;
    let largest_kept = kept.iter().copied().max().unwrap_or(0);
    plan.lengths = kept;
    if let Ok(longest) = u32::try_from(longest)
        && longest >= 256
        && f64::from(longest) > f64::from(largest_kept) * 1.2
    {
        plan.lengths.push(longest);
    }
    observer.note(&format!(
        "context: lengths {} left out (the server's context is {} tokens, {}); running {}",
        dropped
            .iter()
            .map(|l| vernier_tasks::length_label(*l))
            .collect::<Vec<_>>()
            .join(", "),
        limit.tokens,
        limit.source,
        plan.lengths
            .iter()
            .map(|l| vernier_tasks::length_label(*l))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    settings.context_fit.limit = Some(limit);
    // A selection by id keeps the tasks whose lengths are still run.
    if let Some(selected) = &mut settings.selected {
        let ids: HashSet<String> = vernier_tasks::context_task_ids(plan).into_iter().collect();
        selected.retain(|id| ids.contains(id));
    }
    true
}

/// The server's context, from whatever it offers.
pub(crate) async fn read_context_limit(
    client: &vernier_openai::Client,
    model: &str,
) -> Option<RecordedLimit> {
    let models = client.models().await.unwrap_or_default();
    let identity = client.server_identity().await;
    vernier_openai::context_limit(&models, model, &identity).map(|limit| RecordedLimit {
        tokens: limit.tokens,
        source: limit.source.to_owned(),
    })
}

/// Refuses, before anything is sent, a budget that is not below the server's context: every
/// category the suite runs, and the cut-off re-run's budget. A budget under the context is
/// sent as it is (a server clamps it to what the prompt leaves, and an answer that reaches it
/// is cut off, not wrong). Nothing is refused when the server states no context.
pub(crate) fn check_budgets_fit(
    suite: &vernier_tasks::Suite,
    rerun_budget: Option<u32>,
    limit: Option<&RecordedLimit>,
) -> Result<(), HardsuiteError> {
    let Some(limit) = limit else {
        return Ok(());
    };
    let over = |category: String, budget: u32, flag: String| HardsuiteError::BudgetOverContext {
        category,
        budget,
        limit: limit.tokens,
        stated_by: limit.source.clone(),
        flag,
        suggested: suggested_budget(limit.tokens),
    };
    let mut budgets: Vec<(vernier_tasks::Category, u32)> = suite
        .tasks
        .iter()
        .map(|task| (task.category, task.budget_tokens))
        .collect();
    budgets.sort_unstable();
    budgets.dedup();
    if let Some((category, budget)) = budgets
        .iter()
        .find(|(_, budget)| u64::from(*budget) >= limit.tokens)
    {
        return Err(over(
            category.to_string(),
            *budget,
            format!("--budget-{category}"),
        ));
    }
    match rerun_budget {
        Some(budget) if u64::from(budget) >= limit.tokens => Err(over(
            "re-run".to_owned(),
            budget,
            "--rerun-cut-off".to_owned(),
        )),
        _ => Ok(()),
    }
}

/// Half the context, in whole 256s (at least 256, and never the context itself).
fn suggested_budget(context: u64) -> u64 {
    (context / 2 / 256 * 256)
        .max(256)
        .min(context.saturating_sub(1))
}

/// The server's context for `model`, recorded in the settings when not read yet.
pub(crate) async fn server_context(
    settings: &mut Settings,
    client: &vernier_openai::Client,
    model: &str,
) -> Option<RecordedLimit> {
    if settings.context_fit.limit.is_none() {
        settings.context_fit.limit = read_context_limit(client, model).await;
    }
    settings.context_fit.limit.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite_with(budgets: &[(vernier_tasks::Category, u32)]) -> vernier_tasks::Suite {
        let mut suite = vernier_tasks::Suite::bundled();
        let template = suite.tasks.remove(0);
        suite.tasks.clear();
        for (category, budget) in budgets {
            let mut task = template.clone();
            task.category = *category;
            task.budget_tokens = *budget;
            suite.tasks.push(task);
        }
        suite
    }

    fn limit(tokens: u64) -> RecordedLimit {
        RecordedLimit {
            tokens,
            source: "max_model_len".to_owned(),
        }
    }

    #[test]
    fn a_budget_at_or_over_the_context_is_refused_naming_its_flag() {
        use vernier_tasks::Category;
        // vLLM answers 400 "max_tokens=16000 cannot be greater than max_model_len=4096".
        let suite = suite_with(&[(Category::TOOLS, 2000), (Category::MATH, 16_000)]);
        let error = check_budgets_fit(&suite, None, Some(&limit(4096))).expect_err("refused");
        let text = error.to_string();
        assert!(text.contains("--budget-math 2048"), "{text}");
        assert!(text.contains("4096 tokens (max_model_len)"), "{text}");
        assert!(check_budgets_fit(&suite, None, Some(&limit(16_001))).is_ok());
        assert!(check_budgets_fit(&suite, None, None).is_ok());
        let equal = check_budgets_fit(&suite, None, Some(&limit(16_000)));
        assert!(
            equal.is_err(),
            "a budget equal to the context leaves no prompt"
        );
    }

    #[test]
    fn the_re_run_budget_is_held_to_the_context_too() {
        use vernier_tasks::Category;
        let suite = suite_with(&[(Category::TOOLS, 1000)]);
        let error = check_budgets_fit(&suite, Some(8000), Some(&limit(4096))).expect_err("refused");
        assert!(
            error.to_string().contains("--rerun-cut-off 2048"),
            "{error}"
        );
    }

    #[test]
    fn the_suggestion_leaves_half_the_context() {
        assert_eq!(suggested_budget(4096), 2048);
        assert_eq!(suggested_budget(2048), 1024);
        assert_eq!(suggested_budget(300), 256);
        assert_eq!(suggested_budget(100), 99);
    }
}
