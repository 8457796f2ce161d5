//! Counters, exposed as [`SimMetrics`] and as vLLM-named Prometheus text.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::SimConfig;
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
    /// Prometheus text as `prometheus_client` writes it for vLLM 0.32: a counter's `# HELP`,
    /// `# TYPE` and sample all name `vllm:x_total` (fixtures/vllm/metrics-idle.http); values
    /// are floats; labels `engine` and `model_name`.
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
            let _ = writeln!(text, "# TYPE {sample} {kind}");
            let _ = writeln!(
                text,
                "{sample}{{engine=\"0\",model_name=\"{label}\"}} {:?}",
                value as f64
            );
        }
        text
    }
}

/// What `vllm:cache_config_info` states of the simulator's KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CacheStated {
    /// Tokens per prefix-cache block.
    pub(crate) block_size: usize,
    /// Whether the prefix cache is on.
    pub(crate) prefix_caching: bool,
    /// The cache's size in tokens (see [`kv_capacity`]).
    pub(crate) tokens: u64,
}

/// Requests of a whole context vLLM's default `--max-num-seqs` runs at once: the simulator's
/// KV cache holds this many when nothing else bounds it.
const DEFAULT_MAX_NUM_SEQS: u64 = 256;

/// The KV cache the simulator states, in tokens: the shared cache of
/// [`SimConfig::shared_kv_tokens`], else a whole context for each request it runs at once
/// ([`SimConfig::max_num_seqs`], else vLLM's default of 256).
pub(crate) fn kv_capacity(config: &SimConfig) -> u64 {
    config.shared_kv_tokens.map_or_else(
        || {
            let seqs = config
                .max_num_seqs
                .map_or(DEFAULT_MAX_NUM_SEQS, |n| n as u64);
            u64::from(config.max_model_len).saturating_mul(seqs)
        },
        u64::from,
    )
}

impl SimMetrics {
    /// [`to_prometheus`](Self::to_prometheus), then the gauges vLLM 0.32 states of its KV
    /// cache: `vllm:kv_cache_usage_perc` (a fraction, 1 = full) and `vllm:cache_config_info`
    /// (value 1, the configuration in its labels; no `model_name` label, as vLLM's).
    pub(crate) fn to_prometheus_with(
        self,
        model: &str,
        cache: &CacheStated,
        kv_usage: f64,
    ) -> String {
        let mut text = self.to_prometheus(model);
        let label = model.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(
            text,
            "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage."
        );
        let _ = writeln!(text, "# TYPE vllm:kv_cache_usage_perc gauge");
        let _ = writeln!(
            text,
            "vllm:kv_cache_usage_perc{{engine=\"0\",model_name=\"{label}\"}} {kv_usage:?}"
        );
        let _ = writeln!(
            text,
            "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig"
        );
        let _ = writeln!(text, "# TYPE vllm:cache_config_info gauge");
        let blocks = cache.tokens / cache.block_size.max(1) as u64;
        let _ = writeln!(
            text,
            "vllm:cache_config_info{{block_size=\"{}\",cache_dtype=\"auto\",enable_prefix_caching=\"{}\",engine=\"0\",kv_cache_size_tokens=\"{}\",num_gpu_blocks=\"{blocks}\"}} 1.0",
            cache.block_size,
            if cache.prefix_caching {
                "True"
            } else {
                "False"
            },
            cache.tokens,
        );
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
        // vLLM 0.32 names the counter's sample in its TYPE line (fixtures/vllm/metrics-idle.http).
        assert!(text.contains("# TYPE vllm:generation_tokens_total counter\n"));
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

    #[test]
    fn the_kv_cache_is_stated_as_vllm_states_it() {
        let config = SimConfig::builder()
            .max_model_len(2048)
            .max_num_seqs(Some(4))
            .build();
        let cache = CacheStated {
            block_size: 16,
            prefix_caching: config.prefix_cache,
            tokens: kv_capacity(&config),
        };
        let text = SimMetrics::default().to_prometheus_with("m", &cache, 0.25);
        assert!(
            text.contains("vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"0\",kv_cache_size_tokens=\"8192\",num_gpu_blocks=\"512\"} 1.0\n"
            ),
            "{text}"
        );
        let shared = SimConfig::builder().shared_kv_tokens(Some(1000)).build();
        assert_eq!(kv_capacity(&shared), 1000);
        assert_eq!(kv_capacity(&SimConfig::default()), 32_768 * 256);
    }
}
