//! The headline figures of an agent run and of a replay, as a study's part reports them.

use vernier_run::Headline;

use super::{AgentRunFile, Pass, ReplayRunFile};

/// An agent run's headlines: the cached pass's prefix-cache hit ratio against a perfect cache
/// and its median TTFT, and the TTFT speed-up the cache gave over the defeated pass.
pub fn agent_headlines(run: &AgentRunFile) -> Vec<Headline> {
    let mut headlines = Vec::new();
    if let Some(cached) = run.passes.iter().find(|pass| pass.pass == Pass::Cached) {
        if let Some(ratio) = cached.hit_ratio {
            headlines.push(Headline::new(
                "prefix-cache hit ratio (cached over a perfect cache)",
                ratio * 100.0,
                "%",
            ));
        }
        if let Some(ttft) = &cached.ttft_ms {
            headlines.push(
                Headline::new("TTFT median, cache allowed", ttft.median, "ms").lower_is_better(),
            );
        }
    }
    if let Some(speedup) = &run.cache_speedup {
        headlines.push(Headline::new(
            "TTFT speed-up from the cache (mean)",
            speedup.ttft_mean,
            "×",
        ));
    }
    headlines
}

/// A replay's headlines: the share of records answered in full and the median TTFT.
pub fn replay_headlines(run: &ReplayRunFile) -> Vec<Headline> {
    let mut headlines = vec![Headline::new(
        "records answered in full",
        if run.records == 0 {
            0.0
        } else {
            run.ok as f64 / run.records as f64 * 100.0
        },
        "%",
    )];
    if let Some(ttft) = &run.ttft_ms {
        headlines.push(Headline::new("TTFT median", ttft.median, "ms").lower_is_better());
    }
    headlines
}
