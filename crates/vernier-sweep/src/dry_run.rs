//! `sweep --dry-run`'s probes: a short and a long streamed request that measure the decode
//! rate, the prefill rate and the per-request overhead the plan's duration estimate uses.

use vernier_openai::{ChatMessage, ChatRequest, Client, StreamOptions};

use crate::error::SweepError;
use crate::plan::ProbeRates;

const SENTENCE: &str = "The keeper trimmed the wick, wrote the wind and the sea in the log book, \
                        and watched the lights of a ship pass slowly to the north. ";

/// Prompt tokens and seconds to the first token of one probe, and its decode rate.
async fn probe(
    client: &Client,
    model: &str,
    sentences: usize,
    max_tokens: u64,
) -> Result<Option<(u64, f64, Option<f64>)>, SweepError> {
    // A fresh opening per request, so no prefix cache shortens the long probe.
    let prompt = format!(
        "[{:x}-{sentences}] {}Describe the rest of that night in plain prose.",
        vernier_run::unix_ms(),
        SENTENCE.repeat(sentences)
    );
    let mut request = ChatRequest::new(model, vec![ChatMessage::user(prompt)]);
    request.max_tokens = Some(max_tokens);
    request.temperature = Some(0.0);
    request.stream_options = Some(StreamOptions::usage(false));
    let (metered, _) = client.measure_chat(&request).await.map_err(|source| {
        SweepError::Run(vernier_run::RunError::Client {
            what: format!("send the --dry-run probe to {}", client.base_url()),
            source,
        })
    })?;
    let m = &metered.measurement;
    Ok(match (m.prompt_tokens, m.ttft_ms) {
        (Some(prompt), Some(ttft_ms)) => Some((prompt, ttft_ms / 1000.0, m.decode_tokens_per_s)),
        _ => None,
    })
}

/// Sends a short probe (64 tokens out) and a long one (about 1,000 prompt tokens, 4 out) to
/// `model` (the first model listed when `None`); `None` when the replies do not give a decode
/// rate and both prompt counts (a server without usage, say).
pub async fn probe_rates(
    client: &Client,
    model: Option<&str>,
) -> Result<Option<ProbeRates>, SweepError> {
    let model = vernier_run::resolve_model(client, model, None).await?;
    let short = probe(client, &model.id, 1, 64).await?;
    let long = probe(client, &model.id, 40, 4).await?;
    Ok(match (short, long) {
        (Some((short_tokens, short_s, Some(decode))), Some((long_tokens, long_s, _))) => {
            ProbeRates::from_probes((short_tokens, short_s), (long_tokens, long_s), decode)
        }
        _ => None,
    })
}
