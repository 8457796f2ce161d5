//! What a server's `/metrics` means: the names each server kind uses for requests in flight
//! (a busy check), generated tokens (telling a busy server from a hung one) and
//! speculative-decoding counters. A name no known server exposes is never read as 0: callers
//! get `None` and say so.

use std::collections::BTreeMap;

use crate::MetricsSnapshot;

/// Every non-bucket metric's value, summed over its label sets, by name.
pub fn metric_sums(snapshot: &MetricsSnapshot) -> BTreeMap<String, f64> {
    let mut sums = BTreeMap::new();
    for sample in snapshot.samples() {
        if sample.name.ends_with("_bucket") || !sample.value.is_finite() {
            continue;
        }
        *sums.entry(sample.name.clone()).or_insert(0.0) += sample.value;
    }
    sums
}

/// The metric names one server kind exposes.
#[derive(Debug)]
#[non_exhaustive]
pub struct MetricNames {
    /// Requests being generated now.
    pub running: &'static str,
    /// Requests queued behind them.
    pub waiting: &'static str,
    /// Generated tokens, a counter.
    pub generated_tokens: &'static str,
    /// Speculative decoding: verification steps, draft tokens, accepted draft tokens.
    pub spec_decode: Option<[&'static str; 3]>,
}

/// vLLM, llama.cpp (`llama-server --metrics`) and `SGLang` (`--enable-metrics`), in that order.
pub const KNOWN_METRICS: [MetricNames; 3] = [
    MetricNames {
        running: "vllm:num_requests_running",
        waiting: "vllm:num_requests_waiting",
        generated_tokens: "vllm:generation_tokens_total",
        spec_decode: Some([
            "vllm:spec_decode_num_drafts_total",
            "vllm:spec_decode_num_draft_tokens_total",
            "vllm:spec_decode_num_accepted_tokens_total",
        ]),
    },
    MetricNames {
        running: "llamacpp:requests_processing",
        waiting: "llamacpp:requests_deferred",
        generated_tokens: "llamacpp:tokens_predicted_total",
        spec_decode: Some([
            "llamacpp:spec_decode_num_drafts_total",
            "llamacpp:spec_decode_num_draft_tokens_total",
            "llamacpp:spec_decode_num_accepted_tokens_total",
        ]),
    },
    MetricNames {
        running: "sglang:num_running_reqs",
        waiting: "sglang:num_queue_reqs",
        generated_tokens: "sglang:generation_tokens_total",
        spec_decode: None,
    },
];

/// Requests in flight on the server, summed over every known name present.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ServerLoad {
    /// Requests being generated.
    pub running: f64,
    /// Requests queued.
    pub waiting: f64,
}

/// The server's load, or `None` when `/metrics` has none of the known names.
pub fn server_load(sums: &BTreeMap<String, f64>) -> Option<ServerLoad> {
    let mut seen = false;
    let mut load = ServerLoad {
        running: 0.0,
        waiting: 0.0,
    };
    for names in &KNOWN_METRICS {
        if let Some(value) = sums.get(names.running) {
            seen = true;
            load.running += value;
        }
        if let Some(value) = sums.get(names.waiting) {
            seen = true;
            load.waiting += value;
        }
    }
    seen.then_some(load)
}

/// The first known generated-tokens counter `/metrics` has.
pub fn generation_counter(sums: &BTreeMap<String, f64>) -> Option<&'static str> {
    KNOWN_METRICS
        .iter()
        .map(|names| names.generated_tokens)
        .find(|name| sums.contains_key(*name))
}

/// The first known set of speculative-decoding counters `/metrics` has in full.
pub fn spec_decode_counters(sums: &BTreeMap<String, f64>) -> Option<[&'static str; 3]> {
    KNOWN_METRICS
        .iter()
        .filter_map(|names| names.spec_decode)
        .find(|counters| counters.iter().all(|name| sums.contains_key(*name)))
}

/// The load names of every known server, comma-separated (for messages).
pub fn load_metric_names() -> String {
    KNOWN_METRICS
        .iter()
        .flat_map(|names| [names.running, names.waiting])
        .collect::<Vec<_>>()
        .join(", ")
}

/// The generated-tokens counters of every known server, comma-separated (for messages).
pub fn generation_metric_names() -> String {
    KNOWN_METRICS
        .iter()
        .map(|names| names.generated_tokens)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The KV cache a server states in its `/metrics`: vLLM's `vllm:cache_config_info` labels
/// (the cache's size in tokens, its data type, block size and whether prefix caching is on).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct KvCacheStated {
    /// Tokens the cache holds (`kv_cache_size_tokens`, else `num_gpu_blocks` × `block_size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Its data type (`cache_dtype`: `auto` follows the model's, `fp8` is an FP8 cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// Tokens per block (`block_size`): prefix-cache hits come in whole blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// Whether prefix caching is on (`enable_prefix_caching`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_caching: Option<bool>,
    /// Where it was read: `vllm:cache_config_info`.
    pub source: String,
}

/// The KV cache `snapshot` states, if the server exposes it (vLLM's `vllm:cache_config_info`).
pub fn kv_cache_stated(snapshot: &MetricsSnapshot) -> Option<KvCacheStated> {
    let info = snapshot
        .samples()
        .iter()
        .find(|sample| sample.name == "vllm:cache_config_info")?;
    let number = |label: &str| info.label(label).and_then(|v| v.parse::<u64>().ok());
    let tokens = number("kv_cache_size_tokens").or_else(|| {
        number("num_gpu_blocks")
            .zip(number("block_size"))
            .map(|(blocks, size)| blocks * size)
    });
    Some(KvCacheStated {
        tokens,
        dtype: info.label("cache_dtype").map(str::to_owned),
        block_size: number("block_size"),
        prefix_caching: info.label("enable_prefix_caching").and_then(|v| match v {
            "True" | "true" => Some(true),
            "False" | "false" => Some(false),
            _ => None,
        }),
        source: "vllm:cache_config_info".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LLAMA_CPP: &str =
        include_str!("../../../fixtures/real-transcripts/llama-server-b11434/metrics.body");

    /// A `/metrics` excerpt with `SGLang`'s names (gauges and counters, with its label set).
    const SGLANG: &str = "\
# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name=\"qwen\",engine_type=\"unified\",tp_rank=\"0\"} 3.0
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name=\"qwen\",engine_type=\"unified\",tp_rank=\"0\"} 2.0
# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name=\"qwen\"} 4096.0
# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{model_name=\"qwen\",engine_type=\"unified\",tp_rank=\"0\"} 88.5
";

    fn sums(text: &str) -> BTreeMap<String, f64> {
        super::metric_sums(&MetricsSnapshot::parse(text).expect("the exposition text parses"))
    }

    #[test]
    fn llama_cpp_names_from_the_recorded_server_are_read() {
        let sums = sums(LLAMA_CPP);
        assert_eq!(
            server_load(&sums),
            Some(ServerLoad {
                running: 0.0,
                waiting: 0.0
            })
        );
        assert_eq!(
            generation_counter(&sums),
            Some("llamacpp:tokens_predicted_total")
        );
        assert_eq!(
            spec_decode_counters(&sums),
            Some([
                "llamacpp:spec_decode_num_drafts_total",
                "llamacpp:spec_decode_num_draft_tokens_total",
                "llamacpp:spec_decode_num_accepted_tokens_total",
            ])
        );
    }

    #[test]
    fn a_busy_llama_cpp_server_is_seen_as_busy() {
        let busy = LLAMA_CPP
            .replace(
                "llamacpp:requests_processing 0",
                "llamacpp:requests_processing 2",
            )
            .replace(
                "llamacpp:requests_deferred 0",
                "llamacpp:requests_deferred 5",
            );
        assert_eq!(
            server_load(&sums(&busy)),
            Some(ServerLoad {
                running: 2.0,
                waiting: 5.0
            })
        );
    }

    #[test]
    fn sglang_names_are_read_and_summed_over_label_sets() {
        let sums = sums(SGLANG);
        assert_eq!(
            server_load(&sums),
            Some(ServerLoad {
                running: 3.0,
                waiting: 2.0
            })
        );
        assert_eq!(
            generation_counter(&sums),
            Some("sglang:generation_tokens_total")
        );
        assert_eq!(spec_decode_counters(&sums), None);
    }

    #[test]
    fn unknown_names_are_not_read_as_idle() {
        let sums = sums("# TYPE other_requests gauge\nother_requests_running 4\n");
        assert_eq!(server_load(&sums), None);
        assert_eq!(generation_counter(&sums), None);
        assert_eq!(spec_decode_counters(&sums), None);
        assert!(load_metric_names().starts_with(
            "vllm:num_requests_running, vllm:num_requests_waiting, llamacpp:requests_processing"
        ));
        assert!(generation_metric_names().contains("sglang:generation_tokens_total"));
    }

    #[test]
    fn vllms_cache_config_info_states_its_kv_cache() {
        // The line vLLM 0.32's CPU build served (fixtures/vllm/metrics-idle.http), trimmed.
        let text = "# TYPE vllm:cache_config_info gauge\n\
            vllm:cache_config_info{block_size=\"128\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"0\",kv_cache_size_tokens=\"524288\",num_gpu_blocks=\"4096\"} 1.0\n";
        let snapshot = MetricsSnapshot::parse(text).expect("parses");
        let stated = kv_cache_stated(&snapshot).expect("stated");
        assert_eq!(stated.tokens, Some(524_288));
        assert_eq!(stated.block_size, Some(128));
        assert_eq!(stated.dtype.as_deref(), Some("auto"));
        assert_eq!(stated.prefix_caching, Some(true));
        // An older vLLM without kv_cache_size_tokens: blocks times block size.
        let older = MetricsSnapshot::parse(
            "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"fp8\",num_gpu_blocks=\"234599\"} 1.0\n",
        )
        .expect("parses");
        let stated = kv_cache_stated(&older).expect("stated");
        assert_eq!(stated.tokens, Some(3_753_584));
        assert_eq!(stated.dtype.as_deref(), Some("fp8"));
        assert!(kv_cache_stated(&MetricsSnapshot::default()).is_none());
    }
}
