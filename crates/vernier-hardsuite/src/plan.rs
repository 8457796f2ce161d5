//! What a suite run will do before it runs (a study's plan): its tasks and samples, the tokens
//! it asks for, and what cannot run here (code tasks without a Docker engine or grader image,
//! a budget over the server's context, lengths beyond it).

use crate::config::RunConfig;
use crate::context_fit::{check_budgets_fit, read_context_limit};
use crate::error::HardsuiteError;

/// A suite run's plan.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SuitePlan {
    /// Tasks it runs.
    pub tasks: usize,
    /// Samples per task.
    pub samples: u32,
    /// Requests it sends at least (one per task and sample; retries and re-runs add more).
    pub requests: u64,
    /// Prompt tokens, estimated from the prompts' characters (four per token).
    pub prompt_tokens: u64,
    /// The most completion tokens the budgets allow.
    pub budget_tokens: u64,
    /// Tasks per category, in report order.
    pub categories: Vec<(String, usize)>,
    /// What cannot run here, each with its fix.
    pub cannot_run: Vec<String>,
    /// What will run otherwise than written (lengths over the server's context left out).
    pub notes: Vec<String>,
    /// The context the server states (tokens, where), when a server answered.
    pub server_context: Option<(u64, String)>,
}

/// The plan of `config`'s run: the suite loaded as it will run, the grader tried when it has
/// code tasks, and the server (when one is named and answers) asked for its context.
pub async fn plan_suite(config: &RunConfig) -> Result<SuitePlan, HardsuiteError> {
    let suite = crate::selection::load_suite(&config.suite)?;
    let samples = config.samples.unwrap_or(1).max(1);
    let mut categories: Vec<(String, usize)> = Vec::new();
    for task in &suite.tasks {
        let name = task.category.to_string();
        match categories.iter_mut().find(|(known, _)| *known == name) {
            Some((_, n)) => *n += 1,
            None => categories.push((name, 1)),
        }
    }
    let per_sample = |value: u64| value * u64::from(samples);
    let mut plan = SuitePlan {
        tasks: suite.tasks.len(),
        samples,
        requests: per_sample(suite.tasks.len() as u64),
        prompt_tokens: per_sample(
            suite
                .tasks
                .iter()
                .map(|task| {
                    task.messages
                        .iter()
                        .map(|message| message.content.chars().count() as u64)
                        .sum::<u64>()
                        / 4
                })
                .sum(),
        ),
        budget_tokens: per_sample(
            suite
                .tasks
                .iter()
                .map(|task| u64::from(task.budget_tokens))
                .sum(),
        ),
        categories,
        ..SuitePlan::default()
    };
    if let Err(error) =
        crate::selection::connect_grader(&suite, config.suite.grader_image.as_deref()).await
    {
        plan.cannot_run.push(vernier_cli::one_line(&error));
    }
    if let Some(base_url) = config.base_url.as_deref()
        && let Ok(client) = crate::engine::client_for(config, base_url)
        && let Ok(model) = vernier_run::resolve_model(&client, config.model.as_deref(), None).await
    {
        let limit = read_context_limit(&client, &model.id).await;
        if let Some(limit) = &limit {
            plan.server_context = Some((limit.tokens, limit.source.clone()));
        }
        if let Err(error) = check_budgets_fit(&suite, config.rerun_cut_off, limit.as_ref()) {
            plan.cannot_run.push(vernier_cli::one_line(&error));
        }
        if let (Some(limit), Some(context)) = (&limit, &config.suite.context) {
            let over: Vec<String> = context
                .plan
                .lengths
                .iter()
                .filter(|length| u64::from(**length) > limit.tokens)
                .map(|length| vernier_tasks::length_label(*length))
                .collect();
            if !over.is_empty() {
                plan.notes.push(format!(
                    "lengths {} are over the server's context of {} tokens ({}): they will be left out",
                    over.join(", "),
                    limit.tokens,
                    limit.source
                ));
            }
        }
    }
    Ok(plan)
}
