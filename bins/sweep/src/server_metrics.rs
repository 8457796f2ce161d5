//! The `/metrics` names the sweep reads, per server kind: requests in flight (the pre-run busy
//! check), generated tokens (the watchdog's hung-or-busy test) and speculative-decoding
//! counters. A name no known server exposes is never read as 0: callers get `None` and say so.

use std::collections::BTreeMap;

use vernier_openai::MetricsSnapshot;

/// Every non-bucket metric's value, summed over its label sets, by name.
pub(crate) fn sums(snapshot: &MetricsSnapshot) -> BTreeMap<String, f64> {
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
pub(crate) struct MetricNames {
    /// Requests being generated now.
    pub(crate) running: &'static str,
    /// Requests queued behind them.
    pub(crate) waiting: &'static str,
    /// Generated tokens, a counter.
    pub(crate) generated_tokens: &'static str,
    /// Speculative decoding: verification steps, draft tokens, accepted draft tokens.
    pub(crate) spec_decode: Option<[&'static str; 3]>,
}

/// vLLM, llama.cpp (`llama-server --metrics`) and `SGLang` (`--enable-metrics`), in that order.
pub(crate) const KNOWN: [MetricNames; 3] = [
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
pub(crate) struct Load {
    pub(crate) running: f64,
    pub(crate) waiting: f64,
}

/// The server's load, or `None` when `/metrics` has none of the known names.
pub(crate) fn load(sums: &BTreeMap<String, f64>) -> Option<Load> {
    let mut seen = false;
    let mut load = Load {
        running: 0.0,
        waiting: 0.0,
    };
    for names in &KNOWN {
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
pub(crate) fn generation_counter(sums: &BTreeMap<String, f64>) -> Option<&'static str> {
    KNOWN
        .iter()
        .map(|names| names.generated_tokens)
        .find(|name| sums.contains_key(*name))
}

/// The first known set of speculative-decoding counters `/metrics` has in full.
pub(crate) fn spec_decode_counters(sums: &BTreeMap<String, f64>) -> Option<[&'static str; 3]> {
    KNOWN
        .iter()
        .filter_map(|names| names.spec_decode)
        .find(|counters| counters.iter().all(|name| sums.contains_key(*name)))
}

fn load_names() -> String {
    KNOWN
        .iter()
        .flat_map(|names| [names.running, names.waiting])
        .collect::<Vec<_>>()
        .join(", ")
}

fn generation_names() -> String {
    KNOWN
        .iter()
        .map(|names| names.generated_tokens)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The warning when the busy check cannot run; `has_metrics` is false when `/metrics` itself
/// did not answer.
pub(crate) fn busy_check_unavailable(has_metrics: bool) -> String {
    let source = if has_metrics {
        "/metrics has none of"
    } else {
        "the server has no /metrics (llama.cpp serves it only with --metrics), so none of"
    };
    format!(
        "busy check unavailable: {source} {}; pass --allow-busy to silence",
        load_names()
    )
}

/// Why the watchdog cannot tell a hung server from a busy one.
pub(crate) fn watchdog_blind(has_metrics: bool) -> String {
    let source = if has_metrics {
        "/metrics has none of"
    } else {
        "the server has no /metrics, so none of"
    };
    format!(
        "the watchdog cannot tell hung from busy: {source} {}; a stream silent for --idle-timeout-s is abandoned and retried",
        generation_names()
    )
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
        super::sums(&MetricsSnapshot::parse(text).expect("the exposition text parses"))
    }

    #[test]
    fn llama_cpp_names_from_the_recorded_server_are_read() {
        let sums = sums(LLAMA_CPP);
        assert_eq!(
            load(&sums),
            Some(Load {
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
            load(&sums(&busy)),
            Some(Load {
                running: 2.0,
                waiting: 5.0
            })
        );
    }

    #[test]
    fn sglang_names_are_read_and_summed_over_label_sets() {
        let sums = sums(SGLANG);
        assert_eq!(
            load(&sums),
            Some(Load {
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
        assert_eq!(load(&sums), None);
        assert_eq!(generation_counter(&sums), None);
        assert_eq!(spec_decode_counters(&sums), None);
        let warning = busy_check_unavailable(true);
        assert!(
            warning.starts_with("busy check unavailable: /metrics has none of vllm:num_requests_running, vllm:num_requests_waiting, llamacpp:requests_processing, llamacpp:requests_deferred, sglang:num_running_reqs, sglang:num_queue_reqs; pass --allow-busy to silence"),
            "{warning}"
        );
        assert!(
            watchdog_blind(true).contains("cannot tell hung from busy"),
            "{}",
            watchdog_blind(true)
        );
    }
}
