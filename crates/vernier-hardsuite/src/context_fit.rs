//! Fitting a context run to the server: its context length read, and the lengths that cannot
//! fit it left out.

use std::collections::HashSet;

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
async fn read_context_limit(client: &vernier_openai::Client, model: &str) -> Option<RecordedLimit> {
    let models = client.models().await.unwrap_or_default();
    let identity = client.server_identity().await;
    vernier_openai::context_limit(&models, model, &identity).map(|limit| RecordedLimit {
        tokens: limit.tokens,
        source: limit.source.to_owned(),
    })
}
