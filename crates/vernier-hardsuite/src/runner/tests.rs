//! Unit tests of the runner: the request it builds and how a try ends.
use serde_json::json;
use vernier_tasks::Suite;

use super::media::base64;
use super::*;

fn body(request: &ChatRequest) -> Value {
    serde_json::to_value(request).expect("request serialises")
}

#[test]
fn base64_matches_rfc_4648_test_vectors() {
    // RFC 4648 §10.
    for (plain, encoded) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64(plain.as_bytes()), encoded);
    }
}

#[test]
fn request_carries_budget_sampling_tools_and_never_stop() {
    let suite = Suite::bundled();
    let task = suite.task("tool-weather").expect("bundled task");
    let mut extra = Map::new();
    extra.insert(
        "chat_template_kwargs".to_owned(),
        json!({"enable_thinking": true}),
    );
    extra.insert("temperature".to_owned(), json!(0.2));
    extra.insert("stop".to_owned(), json!(["\n\n"]));
    let request =
        build_request(task, "m", &Sampling::qwen_thinking(), &extra, 2000).expect("request");
    let sent = body(&request);
    assert_eq!(sent["max_tokens"], 2000);
    assert_eq!(sent["top_k"], 20);
    assert_eq!(sent["presence_penalty"], 1.5);
    // The extra body wins over the preset, and is merged, not nested.
    assert_eq!(sent["temperature"], 0.2);
    assert_eq!(sent["chat_template_kwargs"]["enable_thinking"], true);
    assert!(sent.get("stop").is_none(), "{sent}");
    assert_eq!(sent["stream_options"]["include_usage"], true);
    let tools = sent["tools"].as_array().expect("tools offered");
    assert_eq!(tools.len(), task.tools.len());
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(sent["messages"][0]["content"], task.messages[0].content);
}

#[test]
fn math_requests_offer_no_tools_and_the_seed_sampling() {
    let suite = Suite::bundled();
    let task = suite.task("crt").expect("bundled task");
    let sent = body(
        &build_request(
            task,
            "m",
            &Sampling::seed_default(),
            &Map::new(),
            task.budget_tokens,
        )
        .expect("request"),
    );
    assert!(sent.get("tools").is_none());
    assert_eq!(
        (sent["temperature"].as_f64(), sent["top_p"].as_f64()),
        (Some(0.6), Some(0.95))
    );
    assert!(sent.get("top_k").is_none() && sent.get("presence_penalty").is_none());
    assert_eq!(sent["max_tokens"], 16_000);
}

#[test]
fn structured_and_tool_call_requests_carry_their_fields_and_history() {
    let structured = vernier_tasks::structured_suite(2, 512);
    let sent = body(
        &build_request(
            &structured.tasks[0],
            "m",
            &Sampling::seed_default(),
            &Map::new(),
            512,
        )
        .expect("request"),
    );
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(
        sent["response_format"]["json_schema"]["schema"]["additionalProperties"],
        false
    );
    let calls = vernier_tasks::calls_suite(2, 512);
    let named = calls.task("calls-named-1").expect("a named task");
    let sent = body(
        &build_request(named, "m", &Sampling::seed_default(), &Map::new(), 512).expect("request"),
    );
    assert_eq!(sent["tool_choice"]["function"]["name"], "search_flights");
    let result = calls.task("calls-result-1").expect("a task with a result");
    let sent = body(
        &build_request(result, "m", &Sampling::seed_default(), &Map::new(), 512).expect("request"),
    );
    let messages = sent["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3);
    assert!(messages[1]["content"].is_null(), "{}", messages[1]);
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(
        messages[2]["tool_call_id"],
        messages[1]["tool_calls"][0]["id"]
    );
}
