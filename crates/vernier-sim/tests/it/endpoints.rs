use std::io::BufRead;
use std::time::Duration;

use serde_json::json;
use vernier_sim::{GroundTruth, TokensPerEvent, sim_chat_tokenize, sim_tokenize};

use crate::client::{get, post, request};
use crate::{chat, fast, post_chat, start, wait_for};

#[tokio::test]
async fn models_version_health_and_unknown_paths() {
    let sim = start(fast().model("tiny").max_model_len(4096).build()).await;
    let models = get(sim.addr(), "/v1/models").await;
    assert_eq!(models.status, 200);
    let models = models.json();
    assert_eq!(models["data"][0]["id"], "tiny");
    assert_eq!(models["data"][0]["max_model_len"], 4096);
    assert!(models["data"][0]["owned_by"].is_string());
    let version = get(sim.addr(), "/version").await.json();
    assert!(
        version["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("vernier-sim "))
    );
    assert_eq!(get(sim.addr(), "/health").await.status, 200);
    let missing = get(sim.addr(), "/no-such-path").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("server"), Some("vernier-sim"));
}

#[tokio::test]
async fn tokenize_counts_prompt_and_chat_template() {
    let sim = start(fast().build()).await;
    let plain = post(
        sim.addr(),
        "/tokenize",
        &json!({"model": "vernier-sim", "prompt": "Hello, world!"}),
    )
    .await
    .json();
    assert_eq!(plain["count"], 4);
    assert_eq!(plain["tokens"], json!(sim_tokenize("Hello, world!")));
    assert_eq!(plain["max_model_len"], 32768);
    let messages = json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}]);
    let templated = post(
        sim.addr(),
        "/tokenize",
        &json!({"model": "vernier-sim", "messages": messages}),
    )
    .await
    .json();
    // (3 + 4) + (2 + 4) + 3
    assert_eq!(templated["count"], 16);
    assert_eq!(
        templated["tokens"],
        json!(sim_chat_tokenize([
            ("system", "Be brief."),
            ("user", "Hi there")
        ]))
    );
}

#[tokio::test]
async fn tokenize_can_be_switched_off_like_a_server_without_it() {
    let sim = start(fast().tokenize_endpoint(false).build()).await;
    let missing = post(
        sim.addr(),
        "/tokenize",
        &json!({"model": "vernier-sim", "prompt": "Hello, world!"}),
    )
    .await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["detail"], "Not Found");
    // Generation still reports the prompt tokens, which is how clients count them instead.
    let answer = post(
        sim.addr(),
        "/v1/chat/completions",
        &json!({"model": "vernier-sim", "messages": [{"role": "user", "content": "Hi there"}], "max_tokens": 1}),
    )
    .await
    .json();
    assert_eq!(answer["usage"]["prompt_tokens"], 2 + 4 + 3);
}

#[tokio::test]
async fn errors_use_vllm_shape() {
    let sim = start(fast().max_model_len(64).build()).await;
    let unknown = post(
        sim.addr(),
        "/v1/chat/completions",
        &json!({"model": "nope", "messages": []}),
    )
    .await;
    assert_eq!(unknown.status, 404);
    // vLLM 0.32's shape: {"error": {...}} (fixtures/vllm/error-wrong-model.http).
    let body = unknown.json();
    assert_eq!(body["error"]["type"], "NotFoundError");
    assert_eq!(body["error"]["code"], 404);
    assert_eq!(body["error"]["param"], "model");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nope") && m.contains("Valid aliases: vernier-sim."))
    );
    let bad = request(
        sim.addr(),
        "POST",
        "/v1/chat/completions",
        Some("{\"model\": "),
    )
    .await;
    assert_eq!(bad.status, 400);
    // vLLM's request validation: "Bad Request", where the body broke off in `param`.
    assert_eq!(bad.json()["error"]["type"], "Bad Request");
    assert_eq!(bad.json()["error"]["param"], "body.10");
    let missing = post(
        sim.addr(),
        "/v1/chat/completions",
        &json!({"model": "vernier-sim"}),
    )
    .await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["error"]["param"], "body.messages");
    let too_long = post_chat(sim.addr(), "Hello", 100).await;
    assert_eq!(too_long.status, 400);
    assert!(
        too_long.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("maximum context length is 64"))
    );
    let zero = post(
        sim.addr(),
        "/v1/chat/completions",
        &json!({"model": "vernier-sim", "messages": [{"role": "user", "content": "Hi"}], "n": 0}),
    )
    .await;
    assert_eq!(zero.status, 400);
    assert_eq!(
        zero.json()["error"]["message"],
        "n must be at least 1, got 0."
    );
    assert!(
        sim.ground_truth().is_empty(),
        "refused requests leave no ground truth"
    );
}

#[tokio::test]
async fn lengths_over_the_context_are_refused_or_cut_as_vllm_032_does() {
    let sim = start(fast().max_model_len(64).build()).await;
    // A prompt over the context: vLLM 0.32's words, naming `input_tokens`
    // (fixtures/vllm/error-prompt-too-long.http).
    let words = vec!["word"; 80].join(" ");
    let refused = post_chat(sim.addr(), &words, 4).await;
    assert_eq!(refused.status, 400);
    let error = &refused.json()["error"];
    assert_eq!(error["param"], "input_tokens");
    assert!(
        error["message"].as_str().is_some_and(|m| m.starts_with(
            "This model's maximum context length is 64 tokens. However, your prompt contains 87 input tokens"
        )),
        "{error}"
    );
    // A prompt and max_tokens that fit apart but not together: answered, cut at the end of
    // the context (fixtures/vllm/max-tokens-clamped-to-context.http).
    let words = vec!["word"; 40].join(" ");
    let answered = post(
        sim.addr(),
        "/v1/chat/completions",
        &json!({"model": "vernier-sim", "messages": [{"role": "user", "content": words}], "max_tokens": 60}),
    )
    .await;
    assert_eq!(answered.status, 200);
    let usage = &answered.json()["usage"];
    assert_eq!(usage["prompt_tokens"], 47);
    assert_eq!(usage["completion_tokens"], 64 - 47);
    assert_eq!(answered.json()["choices"][0]["finish_reason"], "length");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_state_the_kv_cache_and_its_use_as_vllm_does() {
    let sim = start(
        fast()
            .max_model_len(1000)
            .max_num_seqs(Some(2))
            .decode_step(Duration::from_millis(5))
            .build(),
    )
    .await;
    let gauge = |text: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix("vllm:kv_cache_usage_perc{"))
            .and_then(|rest| rest.split_once("} "))
            .and_then(|(_, value)| value.parse().ok())
            .expect("a vllm:kv_cache_usage_perc sample")
    };
    let idle = get(sim.addr(), "/metrics").await;
    // prometheus_client's type for vLLM 0.32 (fixtures/vllm/metrics-idle.http).
    assert_eq!(
        idle.header("content-type"),
        Some("text/plain; version=1.0.0; charset=utf-8")
    );
    let text = String::from_utf8_lossy(&idle.body).into_owned();
    assert!(
        text.contains("kv_cache_size_tokens=\"2000\",num_gpu_blocks=\"125\"} 1.0"),
        "{text}"
    );
    assert!(gauge(&text).abs() < f64::EPSILON, "{text}");
    let addr = sim.addr();
    let running = tokio::spawn(async move { post_chat(addr, "Hello there", 200).await });
    // The request holds its cells from the moment it runs until it ends.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let busy = loop {
        let text = String::from_utf8_lossy(&get(sim.addr(), "/metrics").await.body).into_owned();
        if gauge(&text) > 0.0 {
            break text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the gauge never moved: {text}"
        );
    };
    // "Hello there" is 2 + 4 + 3 = 9 prompt tokens, held with its 200-token budget.
    assert!((gauge(&busy) - 209.0 / 2000.0).abs() < 1e-9, "{busy}");
    assert_eq!(running.await.expect("the stream").status, 200);
    wait_for("the request to end", || {
        sim.metrics().num_requests_running == 0
    })
    .await;
    let after = String::from_utf8_lossy(&get(sim.addr(), "/metrics").await.body).into_owned();
    assert!(gauge(&after).abs() < f64::EPSILON, "{after}");
}

fn long_prompt() -> String {
    "The harbour lamps were lit one by one as the ships came in. ".repeat(8)
}

#[tokio::test]
async fn prefix_cache_hits_unless_salt_differs() {
    let sim = start(fast().build()).await;
    let prompt = long_prompt();
    let cached_tokens = |response: &crate::client::RawResponse| {
        response.chunks().last().expect("usage")["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .expect("cached_tokens")
    };
    let first = post_chat(sim.addr(), &prompt, 2).await;
    assert_eq!(cached_tokens(&first), 0);
    let second = post_chat(sim.addr(), &prompt, 2).await;
    let prompt_tokens = sim_tokenize(&prompt).len() as u64 + 7;
    let hit = cached_tokens(&second);
    assert_eq!(
        hit,
        (prompt_tokens - 1) / 16 * 16,
        "every full block before the last token"
    );
    let salted = post(
        sim.addr(),
        "/v1/chat/completions",
        &chat(&prompt, 2, &json!({"cache_salt": "run-2"})),
    )
    .await;
    assert_eq!(cached_tokens(&salted), 0);
    let nonce_first = format!("nonce 81723 {prompt}");
    let unique = post_chat(sim.addr(), &nonce_first, 2).await;
    assert_eq!(
        cached_tokens(&unique),
        0,
        "a nonce that opens the prompt defeats the cache"
    );
    let truth = sim.ground_truth();
    let hits: Vec<bool> = truth.iter().map(|t| t.cache_hit).collect();
    assert_eq!(hits, [false, true, false, false]);
    assert_eq!(truth[2].cache_salt.as_deref(), Some("run-2"));
    assert!(truth[1].prefill_ms < truth[0].prefill_ms);
    let metrics = sim.metrics();
    assert_eq!(metrics.prefix_cache_hits_total, hit);
    assert_eq!(metrics.prefix_cache_queries_total, prompt_tokens * 4 + 2);
}

/// The sample's value as written (vLLM writes floats: `18.0`).
fn sample<'a>(metrics: &'a str, name: &str) -> &'a str {
    metrics
        .lines()
        .find(|line| line.starts_with(&format!("{name}{{")))
        .and_then(|line| line.rsplit(' ').next())
        .unwrap_or_else(|| panic!("{name} missing from:\n{metrics}"))
}

#[tokio::test]
async fn metrics_counters_move() {
    let sim = start(fast().tokens_per_event(TokensPerEvent::Fixed(3)).build()).await;
    let before = String::from_utf8(get(sim.addr(), "/metrics").await.body).expect("text");
    assert_eq!(sample(&before, "vllm:generation_tokens_total"), "0.0");
    assert!(before.contains("model_name=\"vernier-sim\""));
    post_chat(sim.addr(), "Hello", 9).await;
    post_chat(sim.addr(), "Hello", 9).await;
    let after = String::from_utf8(get(sim.addr(), "/metrics").await.body).expect("text");
    assert_eq!(sample(&after, "vllm:generation_tokens_total"), "18.0");
    assert_eq!(
        sample(&after, "vllm:prompt_tokens_total"),
        "16.0",
        "two prompts of 1 + 4 + 3 tokens"
    );
    assert_eq!(sample(&after, "vllm:spec_decode_num_drafts_total"), "6.0");
    assert_eq!(
        sample(&after, "vllm:spec_decode_num_draft_tokens_total"),
        "12.0"
    );
    assert_eq!(
        sample(&after, "vllm:spec_decode_num_accepted_tokens_total"),
        "12.0"
    );
    assert_eq!(sample(&after, "vllm:num_requests_running"), "0.0");
    assert_eq!(sample(&after, "vllm:num_requests_waiting"), "0.0");
    assert_eq!(sample(&after, "vllm:prefix_cache_queries_total"), "16.0");
    assert_eq!(sim.metrics().requests_total, 2);
}

#[tokio::test]
async fn max_num_seqs_makes_requests_wait() {
    let sim = start(
        fast()
            .max_num_seqs(Some(1))
            .decode_step(Duration::from_millis(5))
            .build(),
    )
    .await;
    let addr = sim.addr();
    // 200 steps of 5 ms: the first request holds the only slot for about a second, long
    // enough for the second to be queued behind it on any machine.
    let first = tokio::spawn(async move { post_chat(addr, "one", 200).await });
    wait_for("the first request to hold the only slot", || {
        sim.metrics().num_requests_running == 1
    })
    .await;
    let second = tokio::spawn(async move { post_chat(addr, "two", 5).await });
    // The waiting must be observed at least once, within the deadline.
    wait_for("the second request to wait", || {
        let metrics = sim.metrics();
        metrics.num_requests_waiting == 1 && metrics.num_requests_running == 1
    })
    .await;
    // The first request still has most of its second to run, so /metrics shows the same.
    let metrics = String::from_utf8(get(addr, "/metrics").await.body).expect("text");
    assert_eq!(sample(&metrics, "vllm:num_requests_waiting"), "1.0");
    assert_eq!(sample(&metrics, "vllm:num_requests_running"), "1.0");
    first.await.expect("first");
    second.await.expect("second");
    let truth = sim.ground_truth();
    let waited = truth
        .iter()
        .find(|t| t.completion_tokens == 5)
        .expect("second request");
    // It waited for the first request's 40 steps of 5 ms, at the very least most of them.
    assert!(waited.queue_ms > 100.0, "queue_ms = {}", waited.queue_ms);
}

#[tokio::test]
async fn ground_truth_file_has_one_line_per_request() {
    let folder = tempfile::tempdir().expect("temp dir");
    let path = folder.path().join("truth.jsonl");
    let sim = start(fast().ground_truth_path(Some(path.clone())).build()).await;
    for n in [3, 5] {
        post_chat(sim.addr(), "Hi", n).await;
    }
    let file = std::fs::File::open(&path).expect("ground truth file exists");
    let lines: Vec<GroundTruth> = std::io::BufReader::new(file)
        .lines()
        .map(|line| serde_json::from_str(&line.expect("line")).expect("each line is a GroundTruth"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].completion_tokens, 3);
    assert_eq!(lines[1].tokens_per_event, vec![1; 5]);
    assert_eq!(lines[1].event_offsets_ns.len(), 5);
    assert_eq!(
        lines[1].first_token_event_ns,
        lines[1].event_offsets_ns.first().copied()
    );
    assert!(lines[1].true_decode_tokens_per_s.is_some());
    let in_memory = sim.ground_truth();
    for (line, record) in lines.iter().zip(&in_memory) {
        assert_eq!(line.request_id, record.request_id);
        assert_eq!(line.event_offsets_ns, record.event_offsets_ns);
    }
}

#[tokio::test]
async fn shutdown_drops_streams_and_the_port_can_be_reused() {
    let sim = start(fast().decode_step(Duration::from_millis(20)).build()).await;
    let addr = sim.addr();
    let in_flight = tokio::spawn(async move { post_chat(addr, "long", 500).await });
    wait_for("three generated tokens", || {
        sim.metrics().generation_tokens_total >= 3
    })
    .await;
    sim.shutdown().await;
    let cut = in_flight.await.expect("client task");
    assert!(cut.truncated, "the stream ended without its final chunk");
    assert!(cut.data_events().last().is_some_and(|e| e.data != "[DONE]"));
    let restarted = start(fast().bind(addr).build()).await;
    assert_eq!(restarted.addr(), addr);
    let response = post_chat(addr, "again", 3).await;
    assert_eq!(response.status, 200);
}
