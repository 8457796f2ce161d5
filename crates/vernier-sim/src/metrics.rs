//! Counters, exposed as [`SimMetrics`] and as vLLM-named Prometheus text.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::plan::SpecCounts;

/// A snapshot of the simulator's counters (the same numbers `/metrics` serves).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimMetrics {
    /// Generation requests received (parsed, for a served model).
    pub requests_total: u64,
    /// Requests holding a slot now.
    pub num_requests_running: u64,
    /// Requests waiting for a slot now.
    pub num_requests_waiting: u64,
    /// Tokens handed to connections (streams) or produced (non-streamed answers).
    pub generation_tokens_total: u64,
    /// Prompt tokens of requests that started.
    pub prompt_tokens_total: u64,
    /// Speculative steps (one draft each).
    pub spec_decode_num_drafts_total: u64,
    /// Draft tokens proposed.
    pub spec_decode_num_draft_tokens_total: u64,
    /// Draft tokens accepted.
    pub spec_decode_num_accepted_tokens_total: u64,
    /// Prompt tokens looked up in the prefix cache.
    pub prefix_cache_queries_total: u64,
    /// Prompt tokens found in the prefix cache.
    pub prefix_cache_hits_total: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) requests_total: AtomicU64,
    pub(crate) running: AtomicU64,
    pub(crate) waiting: AtomicU64,
    pub(crate) generation_tokens: AtomicU64,
    pub(crate) prompt_tokens: AtomicU64,
    pub(crate) drafts: AtomicU64,
    pub(crate) draft_tokens: AtomicU64,
    pub(crate) accepted_tokens: AtomicU64,
    pub(crate) cache_queries: AtomicU64,
    pub(crate) cache_hits: AtomicU64,
}

pub(crate) fn add(counter: &AtomicU64, value: u64) {
    counter.fetch_add(value, Ordering::Relaxed);
}

impl Counters {
    /// Counts one engine step's tokens and speculative-decoding numbers.
    pub(crate) fn count_step(&self, tokens: u32, spec: SpecCounts) {
        add(&self.generation_tokens, u64::from(tokens));
        add(&self.drafts, spec.drafts);
        add(&self.draft_tokens, spec.draft_tokens);
        add(&self.accepted_tokens, spec.accepted_tokens);
    }

    pub(crate) fn snapshot(&self) -> SimMetrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SimMetrics {
            requests_total: get(&self.requests_total),
            num_requests_running: get(&self.running),
            num_requests_waiting: get(&self.waiting),
            generation_tokens_total: get(&self.generation_tokens),
            prompt_tokens_total: get(&self.prompt_tokens),
            spec_decode_num_drafts_total: get(&self.drafts),
            spec_decode_num_draft_tokens_total: get(&self.draft_tokens),
            spec_decode_num_accepted_tokens_total: get(&self.accepted_tokens),
            prefix_cache_queries_total: get(&self.cache_queries),
            prefix_cache_hits_total: get(&self.cache_hits),
        }
    }
}

impl SimMetrics {
    /// Prometheus text as `prometheus_client` writes it for vLLM: a counter family
    /// `vllm:x` has the sample `vllm:x_total`; values are floats; labels `engine` and
    /// `model_name`.
    pub fn to_prometheus(&self, model: &str) -> String {
        let families: [(&str, &str, &str, u64); 9] = [
            (
                "vllm:num_requests_running",
                "gauge",
                "Number of requests in model execution batches.",
                self.num_requests_running,
            ),
            (
                "vllm:num_requests_waiting",
                "gauge",
                "Number of requests waiting to be processed.",
                self.num_requests_waiting,
            ),
            (
                "vllm:prompt_tokens",
                "counter",
                "Number of prefill tokens processed.",
                self.prompt_tokens_total,
            ),
            (
                "vllm:generation_tokens",
                "counter",
                "Number of generation tokens processed.",
                self.generation_tokens_total,
            ),
            (
                "vllm:spec_decode_num_drafts",
                "counter",
                "Number of spec decoding drafts.",
                self.spec_decode_num_drafts_total,
            ),
            (
                "vllm:spec_decode_num_draft_tokens",
                "counter",
                "Number of draft tokens.",
                self.spec_decode_num_draft_tokens_total,
            ),
            (
                "vllm:spec_decode_num_accepted_tokens",
                "counter",
                "Number of accepted tokens.",
                self.spec_decode_num_accepted_tokens_total,
            ),
            (
                "vllm:prefix_cache_queries",
                "counter",
                "Prefix cache queries, in terms of number of queried tokens.",
                self.prefix_cache_queries_total,
            ),
            (
                "vllm:prefix_cache_hits",
                "counter",
                "Prefix cache hits, in terms of number of cached tokens.",
                self.prefix_cache_hits_total,
            ),
        ];
        let label = model.replace('\\', "\\\\").replace('"', "\\\"");
        let mut text = String::new();
        for (name, kind, help, value) in families {
            let sample = if kind == "counter" {
                format!("{name}_total")
            } else {
                name.to_owned()
            };
            let _ = writeln!(text, "# HELP {sample} {help}");
            let _ = writeln!(text, "# TYPE {name} {kind}");
            let _ = writeln!(
                text,
                "{sample}{{engine=\"0\",model_name=\"{label}\"}} {:?}",
                value as f64
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_text_uses_vllm_names() {
        let metrics = SimMetrics {
            generation_tokens_total: 12,
            num_requests_running: 2,
            ..SimMetrics::default()
        };
        let text = metrics.to_prometheus("m\"x");
        assert!(text.contains("# TYPE vllm:generation_tokens counter\n"));
        assert!(
            text.contains(
                "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\\\"x\"} 12.0\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("vllm:num_requests_running{engine=\"0\",model_name=\"m\\\"x\"} 2.0\n")
        );
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 9);
    }
}
