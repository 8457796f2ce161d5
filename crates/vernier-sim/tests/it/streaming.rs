use std::time::Duration;

use serde_json::json;
use vernier_sim::{Script, ScriptReply, ScriptRule, ScriptToolCall, TokensPerEvent, sim_tokenize};

use crate::client::post;
use crate::{chat, fast, post_chat, start, streamed_content, token_chunks};

#[tokio::test]
async fn stream_has_vllm_shape() {
    let sim = start(fast().tokens_per_event(TokensPerEvent::Fixed(3)).build()).await;
    let response = post_chat(sim.addr(), "Tell me about rivers.", 10).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("server"), Some("vernier-sim"));
    assert!(
        response
            .header("content-type")
            .is_some_and(|v| v.starts_with("text/event-stream"))
    );
    assert!(!response.truncated);
    let data = response.data_events();
    assert_eq!(data.last().map(|e| e.data.as_str()), Some("[DONE]"));
    let chunks = response.chunks();
    // Role-only first chunk, not token-bearing.
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    let tokens = token_chunks(&chunks);
    assert_eq!(tokens.len(), 4, "10 tokens at 3 per event: 3+3+3+1");
    let text = streamed_content(&chunks);
    assert_eq!(sim_tokenize(&text).len(), 10, "{text}");
    for chunk in &tokens[..3] {
        assert!(chunk["choices"][0]["finish_reason"].is_null());
    }
    assert_eq!(tokens[3]["choices"][0]["finish_reason"], "length");
    let usage_chunk = chunks.last().expect("usage chunk");
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(usage_chunk["usage"]["completion_tokens"], 10);
    let prompt_tokens = sim_tokenize("Tell me about rivers.").len() + 4 + 3;
    assert_eq!(usage_chunk["usage"]["prompt_tokens"], prompt_tokens);
    assert_eq!(usage_chunk["usage"]["total_tokens"], prompt_tokens + 10);
    let truth = sim.ground_truth();
    assert_eq!(truth.len(), 1);
    assert_eq!(truth[0].tokens_per_event, vec![3, 3, 3, 1]);
    assert_eq!(truth[0].request_id, chunks[0]["id"].as_str().expect("id"));
    assert!(truth[0].completed);
}

#[tokio::test]
async fn no_usage_chunk_without_include_usage() {
    let sim = start(fast().build()).await;
    let mut body = chat("Hello", 5, &json!({}));
    body.as_object_mut()
        .expect("object")
        .remove("stream_options");
    let response = post(sim.addr(), "/v1/chat/completions", &body).await;
    let chunks = response.chunks();
    assert_eq!(chunks.len(), 6, "role + 5 tokens");
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
}

#[tokio::test]
async fn continuous_usage_token_ids_and_logprobs_agree_per_chunk() {
    let sim = start(
        fast()
            .tokens_per_event(TokensPerEvent::speculative())
            .seed(5)
            .build(),
    )
    .await;
    let extra = json!({
        "stream_options": {"include_usage": true, "continuous_usage_stats": true},
        "return_token_ids": true,
        "logprobs": true,
    });
    let response = post(
        sim.addr(),
        "/v1/chat/completions",
        &chat("Describe a market.", 40, &extra),
    )
    .await;
    let chunks = response.chunks();
    assert!(chunks[0]["prompt_token_ids"].is_array());
    assert_eq!(chunks[0]["usage"]["completion_tokens"], 0);
    let mut previous = 0;
    let mut per_event = Vec::new();
    for chunk in token_chunks(&chunks) {
        let choice = &chunk["choices"][0];
        let ids = choice["token_ids"].as_array().expect("token_ids").len();
        let logprobs = choice["logprobs"]["content"]
            .as_array()
            .expect("logprobs")
            .len();
        let cumulative =
            usize::try_from(chunk["usage"]["completion_tokens"].as_u64().expect("usage"))
                .expect("small");
        assert_eq!(ids, logprobs);
        assert_eq!(cumulative - previous, ids);
        let content = choice["delta"]["content"].as_str().expect("content");
        assert_eq!(sim_tokenize(content).len(), ids);
        previous = cumulative;
        per_event.push(u32::try_from(ids).expect("small"));
    }
    assert_eq!(previous, 40);
    assert!(
        per_event.iter().any(|n| *n > 1),
        "speculative steps carry several tokens"
    );
    assert_eq!(sim.ground_truth()[0].tokens_per_event, per_event);
}

#[tokio::test]
async fn reasoning_comes_before_content() {
    let sim = start(
        fast()
            .reasoning_tokens(6)
            .tokens_per_event(TokensPerEvent::Fixed(4))
            .build(),
    )
    .await;
    let response = post_chat(sim.addr(), "Think first.", 12).await;
    let chunks = response.chunks();
    let tokens = token_chunks(&chunks);
    let kinds: Vec<&str> = tokens
        .iter()
        .map(|c| {
            if c["choices"][0]["delta"].get("reasoning_content").is_some() {
                "r"
            } else {
                "c"
            }
        })
        .collect();
    assert_eq!(kinds, ["r", "r", "c", "c"]);
    let usage = &chunks.last().expect("usage")["usage"];
    assert_eq!(usage["completion_tokens"], 12);
    assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 6);
    assert_eq!(sim.ground_truth()[0].tokens_per_event, vec![4, 2, 4, 2]);
}

#[tokio::test]
async fn scripted_tool_call_streams_in_fragments() {
    let arguments = r#"{"city": "Paris", "unit": "celsius"}"#;
    let script = Script::new(vec![ScriptRule::new(
        "(?i)weather",
        ScriptReply::text("").with_tool_call(ScriptToolCall::new("get_weather", arguments)),
    )])
    .expect("valid script");
    let sim = start(
        fast()
            .script(Some(script))
            .tokens_per_event(TokensPerEvent::Fixed(2))
            .build(),
    )
    .await;
    let response = post_chat(sim.addr(), "What is the weather in Paris?", 50).await;
    let chunks = response.chunks();
    let fragments: Vec<&serde_json::Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0)?["delta"].get("tool_calls"))
        .collect();
    let first = &fragments[0][0];
    assert_eq!(first["index"], 0);
    assert!(
        first["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("chatcmpl-tool-"))
    );
    assert_eq!(first["type"], "function");
    assert_eq!(first["function"]["name"], "get_weather");
    assert_eq!(first["function"]["arguments"], "");
    assert!(fragments.len() > 3);
    let mut joined = String::new();
    for fragment in &fragments[1..] {
        assert!(fragment[0].get("id").is_none());
        assert!(fragment[0]["function"].get("name").is_none());
        joined.push_str(
            fragment[0]["function"]["arguments"]
                .as_str()
                .expect("arguments"),
        );
    }
    assert_eq!(joined, arguments);
    let last_choice = token_chunks(&chunks)
        .last()
        .map(|c| c["choices"][0]["finish_reason"].clone());
    assert_eq!(last_choice, Some(json!("tool_calls")));
    let expected_tokens = sim_tokenize("get_weather").len() + sim_tokenize(arguments).len();
    assert_eq!(
        chunks.last().expect("usage")["usage"]["completion_tokens"],
        expected_tokens
    );
    assert_eq!(sim.ground_truth()[0].script_rule, Some(0));
}

#[tokio::test]
async fn split_writes_and_keepalives_keep_events_intact() {
    let sim = start(
        fast()
            .split_writes(true)
            .decode_step(Duration::from_millis(30))
            .keepalive_comment_every(Some(Duration::from_millis(10)))
            .build(),
    )
    .await;
    let response = post_chat(sim.addr(), "Hello", 20).await;
    let chunks = response.chunks();
    let text = streamed_content(&chunks);
    assert_eq!(sim_tokenize(&text).len(), 20);
    assert_eq!(token_chunks(&chunks).len(), 20);
    let comments = response.events.iter().filter(|e| e.comment).count();
    assert!(
        comments >= 19,
        "a 30 ms step with a 10 ms keep-alive sends comments: {comments}"
    );
    assert!(
        response
            .events
            .iter()
            .filter(|e| e.comment)
            .all(|e| e.data == "keepalive")
    );
}

#[tokio::test]
async fn completions_endpoint_streams_text() {
    let sim = start(fast().build()).await;
    let body = json!({
        "model": "vernier-sim",
        "prompt": "def add(a, b):",
        "max_tokens": 7,
        "stream": true,
        "stream_options": {"include_usage": true},
        "return_token_ids": true,
    });
    let response = post(sim.addr(), "/v1/completions", &body).await;
    let chunks = response.chunks();
    assert_eq!(
        chunks.len(),
        8,
        "7 text chunks and a usage chunk, no role chunk"
    );
    assert!(chunks.iter().all(|c| c["object"] == "text_completion"));
    let text: String = chunks[..7]
        .iter()
        .map(|c| c["choices"][0]["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(sim_tokenize(&text).len(), 7);
    assert!(text.starts_with("def"), "a code prompt gets code: {text}");
    assert_eq!(chunks[6]["choices"][0]["finish_reason"], "length");
    assert_eq!(
        chunks[7]["usage"]["prompt_tokens"],
        sim_tokenize("def add(a, b):").len()
    );
}

#[tokio::test]
async fn non_streamed_answers_carry_usage() {
    let sim = start(fast().build()).await;
    let mut body = chat("Hello there", 9, &json!({"stream": false}));
    body.as_object_mut()
        .expect("object")
        .remove("stream_options");
    let response = post(sim.addr(), "/v1/chat/completions", &body).await;
    assert_eq!(response.status, 200);
    let answer = response.json();
    assert_eq!(answer["object"], "chat.completion");
    let content = answer["choices"][0]["message"]["content"]
        .as_str()
        .expect("content");
    assert_eq!(sim_tokenize(content).len(), 9);
    assert_eq!(answer["usage"]["completion_tokens"], 9);
    assert_eq!(answer["choices"][0]["finish_reason"], "length");
    assert!(!sim.ground_truth()[0].stream);
}
