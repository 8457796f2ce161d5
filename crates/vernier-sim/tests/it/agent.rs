//! Agent-shaped load: tools offered, tool calls in the history, drawn tool calls, and the
//! prefix cache across the turns of a conversation.

use serde_json::{Value, json};
use vernier_sim::{
    TokensPerEvent, sim_assistant_content, sim_chat_tokenize, sim_tokenize, sim_tools_content,
};

use crate::client::post;
use crate::{fast, start, token_chunks};

/// The prefix cache's block size (vLLM's default), as the simulator documents it.
const BLOCK: usize = 16;

fn tools() -> Value {
    json!([
        {"type": "function", "function": {
            "name": "web_search",
            "description": "Search the web for a query.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        }},
        {"type": "function", "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }},
    ])
}

fn tool_list() -> Vec<Value> {
    tools().as_array().cloned().expect("an array")
}

/// A non-streamed chat request with these messages and extra fields.
/// The token ids `/tokenize` gives `messages` with [`tools`] offered.
async fn tokenized_with_tools(sim: &vernier_sim::SimHandle, messages: &Value) -> Value {
    post(
        sim.addr(),
        "/tokenize",
        &json!({"model": "vernier-sim", "messages": messages, "tools": tools()}),
    )
    .await
    .json()["tokens"]
        .clone()
}

fn request(messages: &Value, max_tokens: u32, extra: &Value) -> Value {
    let mut body = json!({
        "model": "vernier-sim",
        "messages": messages,
        "max_tokens": max_tokens,
    });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        for (key, value) in extra {
            body.insert(key.clone(), value.clone());
        }
    }
    body
}

fn cached_tokens(usage: &Value) -> usize {
    usage["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .expect("cached_tokens")
}

/// What turn 2 should find cached, from the token lists alone: every full block within both
/// what turn 1 computed (its prompt and reply, less the reply's last token) and turn 2's
/// prompt less its last token.
fn expected_hit(turn_1_prompt: &[u32], reply: &[u32], turn_2_prompt: &[u32]) -> usize {
    let computed = turn_1_prompt.len() + reply.len() - 1;
    computed.min(turn_2_prompt.len() - 1) / BLOCK * BLOCK
}

#[tokio::test]
async fn tools_parse_and_add_prompt_tokens() {
    let sim = start(fast().build()).await;
    let messages = json!([{"role": "user", "content": "Find the harbour timetable."}]);
    let plain = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&messages, 2, &json!({})),
    )
    .await
    .json();
    let with_tools = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(
            &messages,
            2,
            &json!({"tools": tools(), "tool_choice": "auto"}),
        ),
    )
    .await;
    assert_eq!(with_tools.status, 200);
    let with_tools = with_tools.json();
    let user = "Find the harbour timetable.";
    // The rendering rule, counted by hand: one `tools` message (content + 4) holding each
    // tool's name, description and compact parameters.
    let mut tools_tokens = 0;
    for tool in tool_list() {
        let function = &tool["function"];
        tools_tokens += sim_tokenize(function["name"].as_str().expect("name")).len();
        tools_tokens += sim_tokenize(function["description"].as_str().expect("text")).len();
        tools_tokens += sim_tokenize(&function["parameters"].to_string()).len();
    }
    let expected = sim_chat_tokenize([
        ("tools", sim_tools_content(&tool_list()).as_str()),
        ("user", user),
    ]);
    assert_eq!(
        expected.len(),
        (tools_tokens + 4) + (sim_tokenize(user).len() + 4) + 3
    );
    assert_eq!(with_tools["usage"]["prompt_tokens"], expected.len());
    assert_eq!(
        plain["usage"]["prompt_tokens"],
        sim_chat_tokenize([("user", user)]).len()
    );
    // /tokenize agrees when given the same tools.
    assert_eq!(tokenized_with_tools(&sim, &messages).await, json!(expected));
    let truth = sim.ground_truth();
    assert_eq!(truth[0].tools_offered, 0);
    assert_eq!(truth[1].tools_offered, 2);
    assert_eq!(truth[1].tool_calls, 0);
}

#[tokio::test]
async fn tool_calls_with_null_content_and_tool_messages_parse() {
    let sim = start(fast().build()).await;
    let arguments = r#"{"query":"harbour timetable"}"#;
    let messages = json!([
        {"role": "user", "content": "Find the harbour timetable."},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "web_search", "arguments": arguments}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "name": "web_search", "content": "Ships leave at noon."},
    ]);
    let answer = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&messages, 3, &json!({"tools": tools()})),
    )
    .await;
    assert_eq!(answer.status, 200);
    let tools_content = sim_tools_content(&tool_list());
    let expected = sim_chat_tokenize([
        ("tools", tools_content.as_str()),
        ("user", "Find the harbour timetable."),
        ("assistant", &format!("web_search {arguments}")),
        ("tool", "Ships leave at noon."),
    ]);
    assert_eq!(answer.json()["usage"]["prompt_tokens"], expected.len());
    // The helper renders an assistant message the same way, content first.
    assert_eq!(
        sim_tokenize(&sim_assistant_content(
            "Let me look.",
            [("web_search", arguments)]
        )),
        sim_tokenize(&format!("Let me look. web_search {arguments}"))
    );
    assert_eq!(tokenized_with_tools(&sim, &messages).await, json!(expected));
}

#[tokio::test]
async fn share_one_streams_a_call_to_the_first_tool() {
    let sim = start(
        fast()
            .tool_call_share(1.0)
            .tokens_per_event(TokensPerEvent::Fixed(2))
            .build(),
    )
    .await;
    let messages = json!([{"role": "user", "content": "Find the harbour timetable."}]);
    let extra = json!({
        "tools": tools(),
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let response = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&messages, 50, &extra),
    )
    .await;
    let chunks = response.chunks();
    let fragments: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0)?["delta"].get("tool_calls"))
        .collect();
    let header = &fragments[0][0];
    assert_eq!(header["function"]["name"], "web_search");
    assert_eq!(header["type"], "function");
    assert!(
        header["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("chatcmpl-tool-"))
    );
    let arguments: String = fragments[1..]
        .iter()
        .map(|f| f[0]["function"]["arguments"].as_str().expect("arguments"))
        .collect();
    let parsed: Value = serde_json::from_str(&arguments).expect("arguments are JSON");
    let words = parsed["query"].as_str().expect("query").split(' ').count();
    assert!((3..=6).contains(&words), "{arguments}");
    assert_eq!(
        parsed.as_object().map(serde_json::Map::len),
        Some(1),
        "{arguments}"
    );
    let tokens = token_chunks(&chunks);
    assert_eq!(
        tokens.last().map(|c| &c["choices"][0]["finish_reason"]),
        Some(&json!("tool_calls"))
    );
    let completion_tokens = sim_tokenize("web_search").len() + sim_tokenize(&arguments).len();
    let usage = &chunks.last().expect("usage")["usage"];
    assert_eq!(usage["completion_tokens"], completion_tokens);
    let truth = sim.ground_truth();
    assert_eq!(truth[0].tool_calls, 1);
    assert_eq!(truth[0].tools_offered, 2);
    assert_eq!(truth[0].finish_reason, "tool_calls");
    assert_eq!(truth[0].script_rule, None);
    assert_eq!(
        usize::try_from(truth[0].completion_tokens).ok(),
        Some(completion_tokens)
    );

    // Not streamed: the call is in the message, with no content.
    let answer = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&messages, 50, &json!({"tools": tools()})),
    )
    .await
    .json();
    let message = &answer["choices"][0]["message"];
    assert!(message["content"].is_null(), "{message}");
    assert_eq!(message["tool_calls"][0]["function"]["name"], "web_search");
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"], arguments,
        "the same prompt draws the same call"
    );
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");

    // A turn that offers no tool gets text, whatever the share.
    let text = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&messages, 5, &json!({})),
    )
    .await
    .json();
    assert_eq!(text["choices"][0]["finish_reason"], "length");
    assert_eq!(sim.ground_truth()[2].tool_calls, 0);
}

#[tokio::test]
async fn share_zero_never_calls_a_tool() {
    let sim = start(fast().build()).await;
    for prompt in [
        "Find the timetable.",
        "Read the notes.",
        "Search for bread.",
    ] {
        let messages = json!([{"role": "user", "content": prompt}]);
        let answer = post(
            sim.addr(),
            "/v1/chat/completions",
            &request(&messages, 4, &json!({"tools": tools()})),
        )
        .await
        .json();
        assert_eq!(answer["choices"][0]["finish_reason"], "length");
        assert!(answer["choices"][0]["message"].get("tool_calls").is_none());
    }
    assert!(sim.ground_truth().iter().all(|t| t.tool_calls == 0));
    assert!(sim.ground_truth().iter().all(|t| t.tools_offered == 2));
}

#[tokio::test]
async fn same_prompt_same_decision_with_or_without_the_cache() {
    let sim = start(fast().tool_call_share(0.5).seed(11).build()).await;
    let mut decisions = Vec::new();
    for n in 0..16 {
        let messages =
            json!([{"role": "user", "content": format!("Question number {n} about rivers.")}]);
        let mut calls = Vec::new();
        // Twice with the cache (the second hits it), once defeated by a salt.
        for extra in [
            json!({"tools": tools()}),
            json!({"tools": tools()}),
            json!({"tools": tools(), "cache_salt": format!("salt-{n}")}),
        ] {
            let answer = post(
                sim.addr(),
                "/v1/chat/completions",
                &request(&messages, 4, &extra),
            )
            .await
            .json();
            calls.push(answer["choices"][0]["message"]["tool_calls"][0]["function"].clone());
        }
        assert_eq!(calls[0], calls[1], "prompt {n}");
        assert_eq!(calls[0], calls[2], "prompt {n}");
        decisions.push(!calls[0].is_null());
    }
    assert!(
        decisions.iter().any(|d| *d) && decisions.iter().any(|d| !*d),
        "a share of one half calls on some prompts, not all: {decisions:?}"
    );
    let truth = sim.ground_truth();
    assert!(truth.iter().skip(1).step_by(3).all(|t| t.cache_hit));
    assert!(truth.iter().skip(2).step_by(3).all(|t| !t.cache_hit));
}

#[tokio::test]
async fn turn_two_hits_the_blocks_turn_one_decoded() {
    let sim = start(fast().build()).await;
    let question = "The harbour lamps were lit one by one as the ships came in from the cold \
                    grey sea, and the market was closing.";
    let turn_1 = json!([{"role": "user", "content": question}]);
    let extra = json!({"stream": true, "stream_options": {"include_usage": true}});
    let first = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&turn_1, 37, &extra),
    )
    .await;
    let first_chunks = first.chunks();
    let reply = crate::streamed_content(&first_chunks);
    assert_eq!(
        cached_tokens(&first_chunks.last().expect("usage")["usage"]),
        0
    );

    let follow_up = "And what did the travellers bring?";
    let turn_2 = json!([
        {"role": "user", "content": question},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": follow_up},
    ]);
    let p1 = sim_chat_tokenize([("user", question)]);
    let r = sim_tokenize(&reply);
    let p2 = sim_chat_tokenize([
        ("user", question),
        ("assistant", reply.as_str()),
        ("user", follow_up),
    ]);
    assert_eq!(r.len(), 37);
    assert!(
        p2.starts_with(&[p1.clone(), r.clone()].concat()),
        "turn 2 opens with turn 1's prompt and reply"
    );
    let expected = expected_hit(&p1, &r, &p2);
    assert!(
        expected > (p1.len() - 1) / BLOCK * BLOCK,
        "the reply's blocks count: {expected}"
    );
    let second = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&turn_2, 5, &json!({})),
    )
    .await
    .json();
    assert_eq!(second["usage"]["prompt_tokens"], p2.len());
    assert_eq!(cached_tokens(&second["usage"]), expected);
    let salted = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&turn_2, 5, &json!({"cache_salt": "another-run"})),
    )
    .await
    .json();
    assert_eq!(cached_tokens(&salted["usage"]), 0);
    let truth = sim.ground_truth();
    assert_eq!(truth[1].cached_tokens as usize, expected);
    assert_eq!(truth[2].cached_tokens, 0);
}

#[tokio::test]
async fn the_turn_after_a_tool_call_hits_the_call_blocks() {
    let sim = start(fast().tool_call_share(1.0).build()).await;
    let question = "Find the timetable of the ships that leave the harbour after the storm \
                    has passed, and the price of bread at the market near the bridge.";
    let turn_1 = json!([{"role": "user", "content": question}]);
    let first = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&turn_1, 50, &json!({"tools": tools()})),
    )
    .await
    .json();
    let call = first["choices"][0]["message"]["tool_calls"][0].clone();
    let name = call["function"]["name"].as_str().expect("name").to_owned();
    let arguments = call["function"]["arguments"]
        .as_str()
        .expect("arguments")
        .to_owned();
    let result = "Ships leave at noon; bread costs two coins.";
    let turn_2 = json!([
        {"role": "user", "content": question},
        {"role": "assistant", "content": null, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": result},
    ]);
    let tools_content = sim_tools_content(&tool_list());
    let p1 = sim_chat_tokenize([("tools", tools_content.as_str()), ("user", question)]);
    // The call as generated: the name's tokens, then the arguments' tokens.
    let r = [sim_tokenize(&name), sim_tokenize(&arguments)].concat();
    assert_eq!(first["usage"]["completion_tokens"], r.len());
    let p2 = sim_chat_tokenize([
        ("tools", tools_content.as_str()),
        ("user", question),
        ("assistant", &format!("{name} {arguments}")),
        ("tool", result),
    ]);
    assert!(p2.starts_with(&[p1.clone(), r.clone()].concat()));
    let expected = expected_hit(&p1, &r, &p2);
    assert!(expected > (p1.len() - 1) / BLOCK * BLOCK, "{expected}");
    let second = post(
        sim.addr(),
        "/v1/chat/completions",
        &request(&turn_2, 50, &json!({"tools": tools()})),
    )
    .await
    .json();
    assert_eq!(second["usage"]["prompt_tokens"], p2.len());
    assert_eq!(cached_tokens(&second["usage"]), expected);
    let truth = sim.ground_truth();
    assert_eq!(truth[1].cached_tokens as usize, expected);
    assert_eq!(truth[1].tool_calls, 1);
}
