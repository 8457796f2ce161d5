//! The simulator held to a real vLLM 0.32 (its CPU build, installed by `scripts/vllm.sh`): the
//! same requests go to both over raw HTTP, and what Vernier reads of the answers is compared.
//!
//! What is compared, as facts `"case: item" → what was seen` ([`Observed`]):
//! - the JSON field paths (with their JSON kinds) of every answer: each class of event of a
//!   chat stream asked for the way the sweep asks (`continuous_usage_stats`, `ignore_eos`,
//!   `return_token_ids`, `cache_salt`: the first event, the middle ones, the one with
//!   `finish_reason`, the final usage event), a non-streamed chat, a completions stream,
//!   `/v1/models`, `/version`, `/tokenize` (prompt and messages) and `/health`;
//! - status codes, body shapes, `error.type` and whether `vernier_openai::says_context_exceeded`
//!   reads a length refusal in the message, for a prompt over the context, `max_tokens` over
//!   `max_model_len`, a prompt and `max_tokens` over it together, a wrong model, `n: 0` and
//!   bad JSON;
//! - the `content-type` of every answer;
//! - the `vllm:` metric families in `/metrics` and their `# TYPE`s: every one the simulator
//!   serves must be vLLM's, with its type, and every one Vernier reads that vLLM serves must be
//!   the simulator's; and the `vllm:cache_config_info` labels Vernier reads.
//!
//! vLLM is the independent source: every fact on its side comes from the live server (the
//! recordings in `fixtures/vllm/` show the same, byte for byte). A difference is either fixed
//! in the simulator or listed in [`ALLOWED`] with its reason; an allowance that no longer
//! matches a difference fails the test too. [`differences`] is a pure function, and the
//! planted control proves it sees a field removed from the simulator's own stream.
//!
//! Run: `cargo nextest run -p vernier-sim -E 'test(/vllm::/)'` (nextest's `vllm` group runs the
//! tests one at a time and shares one server with the sweep's vLLM tests).

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use serde_json::{Value, json};
use vernier_sim::SimConfig;
use vernier_test_support::vllm::{Launch, Server};

use crate::client::{RawResponse, request};
use crate::{fast, start};

/// The context both servers are started with (`Launch::tiny`'s `--max-model-len`).
const CONTEXT: u32 = 2048;

/// Differences kept on purpose: (the fact or `metric NAME` that differs, why).
const ALLOWED: &[(&str, &str)] = &[
    (
        "metric vllm:spec_decode_num_drafts_total",
        "vLLM serves its spec_decode counters only with speculative decoding on (the shared \
         launch has none); the simulator always serves them, 0 without drafts. Their type is \
         checked against fixtures/vllm/spec-ngram-metrics.http instead.",
    ),
    (
        "metric vllm:spec_decode_num_draft_tokens_total",
        "as vllm:spec_decode_num_drafts_total",
    ),
    (
        "metric vllm:spec_decode_num_accepted_tokens_total",
        "as vllm:spec_decode_num_drafts_total",
    ),
    (
        "max_tokens over max_model_len: error.param",
        "vLLM 0.32 names `max_tokens` in its own words (\"max_tokens=N cannot be greater than \
         max_model_len=M\"); the simulator keeps earlier vLLM's (\"maximum context length is N \
         tokens. However, you requested ...\"), which the sweep's and hardsuite's \
         context_exceeded tests are built on, and names none (null). Both are length refusals \
         to Vernier (`says_context_exceeded`), with the same status and error.type; Vernier \
         does not read `param`.",
    ),
];

/// The sweep's chat request (crates/vernier-sweep/src/request.rs): usage on every chunk,
/// forced length, token ids and a cache salt.
fn sweep_chat(stream: bool) -> Value {
    let mut body = json!({
        "model": "tiny",
        "messages": [{"role": "user", "content": "Tell me about the harbour at night."}],
        "max_tokens": 8,
        "temperature": 0.0,
        "seed": 7,
        "ignore_eos": true,
        "min_tokens": 8,
        "cache_salt": "vernier-conformance",
        "return_token_ids": true,
    });
    if stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true, "continuous_usage_stats": true});
    }
    body
}

/// A user message of `words` words (`"hello"`: one token in both tokenizers).
fn chat_of_words(words: usize, max_tokens: u32) -> Value {
    json!({
        "model": "tiny",
        "messages": [{"role": "user", "content": vec!["hello"; words].join(" ")}],
        "max_tokens": max_tokens,
        "ignore_eos": true,
    })
}

/// One answer as it came off the wire.
#[derive(Debug, Clone)]
struct Answer {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
    /// The `data:` payloads of a stream, `[DONE]` included.
    events: Vec<String>,
}

impl From<RawResponse> for Answer {
    fn from(raw: RawResponse) -> Self {
        Self {
            status: raw.status,
            content_type: raw.header("content-type").map(str::to_owned),
            events: raw.data_events().iter().map(|e| e.data.clone()).collect(),
            body: raw.body,
        }
    }
}

/// How an answer is read into facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A JSON body (or an empty one).
    Json,
    /// An SSE stream of chat chunks, read event class by event class.
    ChatStream,
    /// An SSE stream of completions chunks, read likewise.
    CompletionStream,
    /// An error: its body's shape, `error.type` and whether it reads as a length refusal.
    Refusal,
    /// A request over the context that may be answered: its status and, answered, whether
    /// the answer ran to the end of the context.
    MaybeClamped,
}

/// Every answer of one server, by case, and its `/metrics` text.
#[derive(Debug, Clone)]
struct Captured {
    answers: Vec<(&'static str, Kind, Answer)>,
    metrics: Answer,
}

/// Sends every case to the server at `addr`.
async fn capture(addr: SocketAddr) -> Captured {
    let post = |path: &'static str, body: String| async move {
        Answer::from(request(addr, "POST", path, Some(&body)).await)
    };
    let get =
        |path: &'static str| async move { Answer::from(request(addr, "GET", path, None).await) };
    let chat = "/v1/chat/completions";
    let too_long = vec!["x"; 3000].join(" ");
    let mut answers = vec![
        (
            "chat stream",
            Kind::ChatStream,
            post(chat, sweep_chat(true).to_string()).await,
        ),
        (
            "chat",
            Kind::Json,
            post(chat, sweep_chat(false).to_string()).await,
        ),
        (
            "completions stream",
            Kind::CompletionStream,
            post(
                "/v1/completions",
                json!({
                    "model": "tiny", "prompt": "The harbour at night", "max_tokens": 4,
                    "ignore_eos": true, "return_token_ids": true, "stream": true,
                    "stream_options": {"include_usage": true, "continuous_usage_stats": true},
                })
                .to_string(),
            )
            .await,
        ),
        ("models", Kind::Json, get("/v1/models").await),
        ("version", Kind::Json, get("/version").await),
        ("health", Kind::Json, get("/health").await),
        (
            "tokenize prompt",
            Kind::Json,
            post(
                "/tokenize",
                json!({"model": "tiny", "prompt": "Hello, world!"}).to_string(),
            )
            .await,
        ),
        (
            "tokenize messages",
            Kind::Json,
            post(
                "/tokenize",
                json!({
                    "model": "tiny", "add_generation_prompt": true,
                    "messages": [{"role": "user", "content": "Hello"}],
                })
                .to_string(),
            )
            .await,
        ),
    ];
    // The refusals (fixtures/vllm/error-*.request.json).
    let refusals = [
        (
            "prompt over the context",
            json!({"model": "tiny", "messages": [{"role": "user", "content": too_long}], "max_tokens": 8}).to_string(),
        ),
        (
            "max_tokens over max_model_len",
            json!({"model": "tiny", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 5000}).to_string(),
        ),
        (
            "wrong model",
            json!({"model": "no-such-model", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8}).to_string(),
        ),
        (
            "n zero",
            json!({"model": "tiny", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8, "n": 0}).to_string(),
        ),
        ("bad json", r#"{"model":"tiny","#.to_owned()),
    ];
    for (case, body) in refusals {
        answers.push((case, Kind::Refusal, post(chat, body).await));
    }
    // 1900 words: under the context alone in both tokenizers, over it with 200 more.
    answers.push((
        "prompt and max_tokens over the context together",
        Kind::MaybeClamped,
        post(chat, chat_of_words(1900, 200).to_string()).await,
    ));
    // Last, so that every counter has moved.
    let metrics = get("/metrics").await;
    Captured { answers, metrics }
}

/// What Vernier reads of one server's answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Observed {
    /// `"case: item"` → what was seen (a JSON path's kinds, a status, a header, a verdict).
    facts: BTreeMap<String, String>,
    /// Each `vllm:` metric family's `# TYPE`.
    metrics: BTreeMap<String, String>,
}

impl Observed {
    fn set(&mut self, key: String, value: impl Into<String>) {
        self.facts.insert(key, value.into());
    }
}

/// The JSON kind of `value`.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every path in `value` (`a.b`, array elements as `a[]`) with the kinds seen there.
fn paths(value: &Value, at: &str, into: &mut BTreeMap<String, BTreeSet<&'static str>>) {
    if !at.is_empty() {
        into.entry(at.to_owned())
            .or_default()
            .insert(kind_of(value));
    }
    let join = |key: &str| {
        if at.is_empty() {
            key.to_owned()
        } else {
            format!("{at}.{key}")
        }
    };
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                paths(inner, &join(key), into);
            }
        }
        Value::Array(items) => {
            for item in items {
                paths(item, &format!("{at}[]"), into);
            }
        }
        _ => {}
    }
}

/// The paths of a group of JSON values: each path's kinds, and whether it is in only some.
fn group_facts(case: &str, values: &[&Value], observed: &mut Observed) {
    let per_value: Vec<BTreeMap<String, BTreeSet<&'static str>>> = values
        .iter()
        .map(|value| {
            let mut found = BTreeMap::new();
            paths(value, "", &mut found);
            found
        })
        .collect();
    let mut all: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for found in &per_value {
        for (path, kinds) in found {
            all.entry(path.clone()).or_default().extend(kinds);
        }
    }
    for (path, kinds) in all {
        let mut seen = kinds.into_iter().collect::<Vec<_>>().join("|");
        if per_value.iter().any(|found| !found.contains_key(&path)) {
            seen.push_str(" (in some events only)");
        }
        observed.set(format!("{case}: {path}"), seen);
    }
}

/// The event class of a stream chunk: `first`, `middle`, `finish` or `final usage`.
fn event_class(index: usize, chunk: &Value) -> &'static str {
    let choices = chunk["choices"].as_array();
    if choices.is_some_and(Vec::is_empty) {
        "final usage event"
    } else if chunk["choices"][0]["finish_reason"].is_string() {
        "event with finish_reason"
    } else if index == 0 {
        "first event"
    } else {
        "middle events"
    }
}

fn stream_facts(case: &str, answer: &Answer, observed: &mut Observed) {
    let done = answer.events.last().map(String::as_str) == Some("[DONE]");
    observed.set(format!("{case}: ends with data: [DONE]"), done.to_string());
    let chunks: Vec<Value> = answer
        .events
        .iter()
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap_or(Value::Null))
        .collect();
    let mut classes: BTreeMap<&'static str, Vec<&Value>> = BTreeMap::new();
    let mut order: Vec<&'static str> = Vec::new();
    for (index, chunk) in chunks.iter().enumerate() {
        let class = event_class(index, chunk);
        if order.last() != Some(&class) {
            order.push(class);
        }
        classes.entry(class).or_default().push(chunk);
    }
    observed.set(format!("{case}: event classes in order"), order.join(", "));
    for (class, values) in classes {
        group_facts(&format!("{case}, {class}"), &values, observed);
    }
}

fn json_body(answer: &Answer) -> Option<Value> {
    serde_json::from_slice(&answer.body).ok()
}

/// What Vernier reads of `captured`: a pure function of the bytes.
fn observe(captured: &Captured) -> Observed {
    let mut observed = Observed::default();
    for (case, kind, answer) in &captured.answers {
        observed.set(format!("{case}: status"), answer.status.to_string());
        observed.set(
            format!("{case}: content-type"),
            answer
                .content_type
                .clone()
                .unwrap_or_else(|| "(none)".to_owned()),
        );
        match kind {
            Kind::ChatStream | Kind::CompletionStream => stream_facts(case, answer, &mut observed),
            Kind::Json | Kind::Refusal => match json_body(answer) {
                Some(body) => {
                    group_facts(case, &[&body], &mut observed);
                    if *kind == Kind::Refusal {
                        let kind = body["error"]["type"].as_str().unwrap_or("(none)");
                        observed.set(format!("{case}: error.type is"), kind);
                        // As `vernier_openai::is_context_exceeded` reads an HTTP refusal: the
                        // phrases anywhere in the body.
                        let text = String::from_utf8_lossy(&answer.body);
                        observed.set(
                            format!("{case}: says_context_exceeded"),
                            vernier_openai::says_context_exceeded(&text).to_string(),
                        );
                    }
                }
                None if answer.body.is_empty() => observed.set(format!("{case}: body"), "empty"),
                None => observed.set(format!("{case}: body"), "not JSON"),
            },
            Kind::MaybeClamped => {
                if let Some(body) = json_body(answer).filter(|_| answer.status == 200) {
                    let usage = &body["usage"];
                    let total = usage["prompt_tokens"].as_u64().unwrap_or(0)
                        + usage["completion_tokens"].as_u64().unwrap_or(0);
                    observed.set(
                        format!("{case}: answer runs to the end of the context"),
                        (total == u64::from(CONTEXT)).to_string(),
                    );
                    observed.set(
                        format!("{case}: finish_reason"),
                        body["choices"][0]["finish_reason"]
                            .as_str()
                            .unwrap_or("(none)"),
                    );
                }
            }
        }
    }
    let metrics = &captured.metrics;
    observed.set("metrics: status".to_owned(), metrics.status.to_string());
    observed.set(
        "metrics: content-type".to_owned(),
        metrics
            .content_type
            .clone()
            .unwrap_or_else(|| "(none)".to_owned()),
    );
    let text = String::from_utf8_lossy(&metrics.body);
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE vllm:")
            && let Some((name, kind)) = rest.split_once(' ')
        {
            observed
                .metrics
                .insert(format!("vllm:{name}"), kind.to_owned());
        }
    }
    // The labels of vllm:cache_config_info that vernier_openai::kv_cache_stated reads.
    if let Some(info) = text
        .lines()
        .find(|l| l.starts_with("vllm:cache_config_info{"))
    {
        for label in [
            "kv_cache_size_tokens",
            "num_gpu_blocks",
            "block_size",
            "cache_dtype",
            "enable_prefix_caching",
        ] {
            observed.set(
                format!("metrics: vllm:cache_config_info label {label}"),
                info.contains(&format!("{label}=\"")).to_string(),
            );
        }
    }
    observed
}

/// The `vllm:` metrics Vernier reads: the load, generation and speculative-decoding names of
/// `vernier_openai::KNOWN_METRICS`, the KV cache use of
/// `crates/vernier-lifecycle/src/soak_evidence.rs` and the cache configuration of
/// `vernier_openai::kv_cache_stated`.
fn metrics_vernier_reads() -> BTreeSet<String> {
    let vllm = &vernier_openai::KNOWN_METRICS[0];
    let mut names: BTreeSet<String> = [vllm.running, vllm.waiting, vllm.generated_tokens]
        .into_iter()
        .chain(vllm.spec_decode.into_iter().flatten())
        .map(str::to_owned)
        .collect();
    names.extend(
        [
            "vllm:kv_cache_usage_perc",
            "vllm:gpu_cache_usage_perc",
            "vllm:cache_config_info",
        ]
        .map(str::to_owned),
    );
    names
}

/// Every difference between the two servers that `allowed` does not name: a fact one has and
/// the other lacks or sees otherwise; a metric the simulator serves that vLLM lacks or types
/// otherwise; a metric Vernier reads that vLLM serves and the simulator lacks.
fn raw_differences(vllm: &Observed, sim: &Observed) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let keys: BTreeSet<&String> = vllm.facts.keys().chain(sim.facts.keys()).collect();
    for key in keys {
        let (theirs, ours) = (vllm.facts.get(key), sim.facts.get(key));
        if theirs != ours {
            out.push((
                key.clone(),
                format!(
                    "{key}: vLLM {}, simulator {}",
                    theirs.map_or("absent", String::as_str),
                    ours.map_or("absent", String::as_str)
                ),
            ));
        }
    }
    let read = metrics_vernier_reads();
    let names: BTreeSet<&String> = sim
        .metrics
        .keys()
        .chain(vllm.metrics.keys().filter(|name| read.contains(*name)))
        .collect();
    for name in names {
        let (theirs, ours) = (vllm.metrics.get(name), sim.metrics.get(name));
        if theirs != ours {
            out.push((
                format!("metric {name}"),
                format!(
                    "metric {name}: vLLM {}, simulator {}",
                    theirs.map_or("absent", String::as_str),
                    ours.map_or("absent", String::as_str)
                ),
            ));
        }
    }
    out
}

/// The differences `allowed` does not name, described.
fn differences(vllm: &Observed, sim: &Observed, allowed: &[(&str, &str)]) -> Vec<String> {
    raw_differences(vllm, sim)
        .into_iter()
        .filter(|(key, _)| !allowed.iter().any(|(name, _)| name == key))
        .map(|(_, described)| described)
        .collect()
}

/// The allowances that name no difference any more.
fn unused_allowances<'a>(
    vllm: &Observed,
    sim: &Observed,
    allowed: &[(&'a str, &str)],
) -> Vec<&'a str> {
    let found: BTreeSet<String> = raw_differences(vllm, sim)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    allowed
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !found.contains(*name))
        .collect()
}

/// The simulator configured as the shared vLLM launch: model `tiny`, 2048 tokens of context,
/// prefix caching on.
async fn sim_like_the_launch() -> vernier_sim::SimHandle {
    let config: SimConfig = fast()
        .model("tiny")
        .max_model_len(CONTEXT)
        .prefix_cache(true)
        .build();
    start(config).await
}

/// The launch the sweep's vLLM tests share (crates/vernier-sweep/tests/it/vllm.rs): one
/// server for both.
fn tiny() -> Launch {
    Launch::tiny().args(["--enable-prefix-caching", "--enable-prompt-tokens-details"])
}

/// Fails unless vLLM itself answers at `addr`: `/version` names a version and `/v1/models`
/// says vLLM owns the model.
async fn assert_vllm(addr: SocketAddr) {
    let version = Answer::from(request(addr, "GET", "/version", None).await);
    let version = json_body(&version).expect("/version answers JSON");
    assert!(
        version["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("0.")),
        "/version: {version}"
    );
    let models = Answer::from(request(addr, "GET", "/v1/models", None).await);
    let models = json_body(&models).expect("/v1/models answers JSON");
    assert_eq!(models["data"][0]["owned_by"], "vllm", "{models}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_answers_as_vllm_does() {
    let server = Server::shared("vernier-sim conformance", &tiny());
    let vllm_addr = SocketAddr::from(([127, 0, 0, 1], server.port));
    assert_vllm(vllm_addr).await;
    let sim = sim_like_the_launch().await;
    let theirs = observe(&capture(vllm_addr).await);
    let ours = observe(&capture(sim.addr()).await);
    sim.shutdown().await;

    // The cases really ran: vLLM streamed, refused the prompt over its context for its length
    // and served the metrics Vernier reads (so an empty comparison means something).
    assert_eq!(
        theirs
            .facts
            .get("chat stream: event classes in order")
            .map(String::as_str),
        Some("first event, middle events, event with finish_reason, final usage event"),
        "{theirs:#?}"
    );
    assert_eq!(
        theirs
            .facts
            .get("prompt over the context: says_context_exceeded")
            .map(String::as_str),
        Some("true")
    );
    assert_eq!(
        theirs
            .metrics
            .get("vllm:generation_tokens_total")
            .map(String::as_str),
        Some("counter")
    );
    let found = differences(&theirs, &ours, ALLOWED);
    assert!(
        found.is_empty(),
        "the simulator differs from vLLM {} where nothing allows it:\n{}",
        server.base_url(),
        found.join("\n")
    );
    let stale = unused_allowances(&theirs, &ours, ALLOWED);
    assert!(
        stale.is_empty(),
        "allowances that no longer match a difference: {stale:?}"
    );
}

#[test]
fn the_allowed_metrics_have_vllms_type_where_vllm_serves_them() {
    // vLLM with ngram speculative decoding (fixtures/vllm/README.md, "smollm2 + ngram").
    let recording = include_str!("../../../../fixtures/vllm/spec-ngram-metrics.http");
    let sim = SimConfig::builder().build();
    let served = vernier_sim::SimMetrics::default().to_prometheus(&sim.model);
    for (name, _) in ALLOWED
        .iter()
        .filter(|(name, _)| name.starts_with("metric "))
    {
        let name = name.trim_start_matches("metric ");
        let line = format!("# TYPE {name} counter\n");
        assert!(
            recording.contains(&line),
            "{name} is not a counter in the recording"
        );
        assert!(
            served.contains(&line),
            "{name} is not a counter in the simulator's /metrics"
        );
    }
}

/// Removes the field at path `remove` from the first event of `case` that `pick` chooses.
fn plant(captured: &mut Captured, case: &str, pick: impl Fn(&Value) -> bool, remove: &[&str]) {
    let (_, _, answer) = captured
        .answers
        .iter_mut()
        .find(|(name, _, _)| *name == case)
        .expect("the case was captured");
    let event = answer
        .events
        .iter_mut()
        .find(|data| serde_json::from_str(data).is_ok_and(|v: Value| pick(&v)))
        .expect("an event to plant in");
    let mut value: Value = serde_json::from_str(event).expect("the event is JSON");
    let (last, parents) = remove.split_last().expect("a field path");
    let mut at = &mut value;
    for parent in parents {
        at = &mut at[*parent];
    }
    at.as_object_mut()
        .expect("an object holds the field")
        .remove(*last)
        .expect("the field was there");
    *event = value.to_string();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_comparison_finds_a_field_removed_from_the_simulators_stream() {
    let sim = sim_like_the_launch().await;
    let captured = capture(sim.addr()).await;
    sim.shutdown().await;
    let reference = observe(&captured);
    assert!(differences(&reference, &reference, ALLOWED).is_empty());

    // `usage` gone from one middle event (vLLM sends it on every one with
    // continuous_usage_stats: fixtures/vllm/chat-stream-continuous-usage.sse).
    let mut planted = captured.clone();
    let middle = |v: &Value| {
        v["choices"][0]["delta"]["content"].is_string()
            && v["choices"][0]["finish_reason"].is_null()
            && v["choices"][0].get("token_ids").is_some()
    };
    plant(&mut planted, "chat stream", middle, &["usage"]);
    let found = differences(&reference, &observe(&planted), ALLOWED);
    assert!(
        found.iter().any(|d| d.starts_with(
            "chat stream, middle events: usage: vLLM object, simulator object (in some events only)"
        )),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .all(|d| d.starts_with("chat stream, middle events: usage")),
        "only the planted field differs: {found:#?}"
    );

    // `prompt_tokens_details` gone from the final usage event (where vLLM reports cached
    // tokens: fixtures/vllm/chat-stream-continuous-usage.sse).
    let mut planted = captured.clone();
    let final_usage = |v: &Value| v["choices"].as_array().is_some_and(Vec::is_empty);
    plant(
        &mut planted,
        "chat stream",
        final_usage,
        &["usage", "prompt_tokens_details"],
    );
    let found = differences(&reference, &observe(&planted), ALLOWED);
    assert!(
        found.contains(
            &"chat stream, final usage event: usage.prompt_tokens_details: vLLM object, simulator absent"
                .to_owned()
        ),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .all(|d| d.starts_with("chat stream, final usage event: usage.prompt_tokens_details")),
        "only the planted field differs: {found:#?}"
    );

    // A metric Vernier reads gone from the simulator's /metrics.
    let mut planted = captured;
    let text = String::from_utf8_lossy(&planted.metrics.body).replace(
        "# TYPE vllm:num_requests_waiting gauge",
        "# TYPE vllm:num_requests_waiting untyped",
    );
    planted.metrics.body = text.into_bytes();
    let found = differences(&reference, &observe(&planted), ALLOWED);
    assert_eq!(
        found,
        ["metric vllm:num_requests_waiting: vLLM gauge, simulator untyped"],
        "{found:#?}"
    );
}
