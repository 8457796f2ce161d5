//! Request routing and the endpoint handlers.

use std::sync::Arc;
use std::time::Duration;

use http::header::{CONTENT_TYPE, HeaderValue, SERVER};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::time::Instant;
use vernier_stats::SplitMix64;

use crate::body::{EventStream, SimBody};
use crate::config::MEDIA_TOKENS;
use crate::fault::Fault;
use crate::ground_truth::GroundTruth;
use crate::metrics::add;
use crate::plan::{Generation, render_stream, schedule_steps, token_logprob};
use crate::reply::{
    Reply, error_reply, json_reply, max_tokens_over_context, prompt_over_context, rate_limited,
    read_json, reply, unknown_model,
};
use crate::shape::StreamShape;
use crate::state::{DecodeBlocks, State};
use crate::tokenizer::{looks_like_code, sim_chat_tokenize, sim_tokenize, sim_tools_content};
use crate::usage::response_usage;
use crate::wire::{
    ChatChoice, ChatLogprobs, ChatMessage, ChatRequest, ChatResponse, CompletionChoice,
    CompletionRequest, CompletionResponse, FunctionCall, ResponseMessage, TokenizeRequest,
    ToolCall,
};

/// Completion length when the request names none.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 256;

pub(crate) async fn handle(state: Arc<State>, request: Request<Incoming>) -> Reply {
    let arrival = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let mut response = match (method, path.as_str()) {
        // vLLM 0.32 answers `/health` with an empty body and no content type
        // (fixtures/vllm/health.http).
        (Method::GET, "/health") => {
            let mut response = Response::new(SimBody::full(""));
            *response.status_mut() = StatusCode::OK;
            response
        }
        (Method::GET, "/version") => json_reply(StatusCode::OK, &version(&state)),
        (Method::GET, "/v1/models") => models(&state),
        (Method::GET, "/server_info") => json_reply(StatusCode::OK, &server_info(&state)),
        (Method::GET, "/metrics") => reply(
            StatusCode::OK,
            // prometheus_client 0.22+'s type, as vLLM 0.32 serves it
            // (fixtures/vllm/metrics-idle.http).
            "text/plain; version=1.0.0; charset=utf-8",
            state.counters.snapshot().to_prometheus_with(
                &state.config.model,
                &state.cache_stated(),
                state.kv_usage(),
            ),
        ),
        (Method::POST, "/tokenize") if state.config.tokenize_endpoint => {
            match read_json::<TokenizeRequest>(&state, request).await {
                Ok(body) => tokenize(&state, &body),
                Err(response) => response,
            }
        }
        (Method::POST, "/v1/chat/completions") => {
            match read_json::<ChatRequest>(&state, request).await {
                Ok(body) if state.config.refuse_max_tokens && body.max_tokens.is_some() => {
                    // OpenAI's answer to `max_tokens` for a model that takes only
                    // `max_completion_tokens`.
                    error_reply(
                        StatusCode::BAD_REQUEST,
                        "invalid_request_error",
                        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                    )
                }
                Ok(body)
                    if state.config.refuse_response_format && body.response_format.is_some() =>
                {
                    let kind = body
                        .response_format
                        .as_ref()
                        .and_then(|format| format.get("type"))
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("json_schema");
                    error_reply(
                        StatusCode::BAD_REQUEST,
                        "invalid_request_error",
                        &format!(
                            "Invalid parameter: 'response_format' of type '{kind}' is not supported with this model."
                        ),
                    )
                }
                Ok(body) => generate(state, Prepared::chat(body), arrival).await,
                Err(response) => response,
            }
        }
        (Method::POST, "/v1/completions") => {
            match read_json::<CompletionRequest>(&state, request).await {
                Ok(body) => generate(state, Prepared::completion(body), arrival).await,
                Err(response) => response,
            }
        }
        _ => reply(
            StatusCode::NOT_FOUND,
            "application/json",
            r#"{"detail":"Not Found"}"#,
        ),
    };
    response
        .headers_mut()
        .insert(SERVER, HeaderValue::from_static("vernier-sim"));
    response
}

/// `/version`: the crate's version, `(upgraded)` once [`SimConfig::version_changes_after`]
/// generation requests have come.
///
/// [`SimConfig::version_changes_after`]: crate::SimConfig::version_changes_after
fn version(state: &State) -> serde_json::Value {
    let upgraded = state
        .config
        .version_changes_after
        .is_some_and(|after| state.generation_requests() >= after);
    let suffix = if upgraded { " (upgraded)" } else { "" };
    serde_json::json!({ "version": format!("vernier-sim {}{suffix}", env!("CARGO_PKG_VERSION")) })
}

/// The simulator's settings, where vLLM's `/server_info` states its engine's: what a run
/// records as the server's launch settings, so a changed setting is named between runs.
fn server_info(state: &State) -> serde_json::Value {
    let config = &state.config;
    let tokens_per_event = match &config.tokens_per_event {
        crate::TokensPerEvent::Fixed(n) => n.to_string(),
        other => format!("{other:?}"),
    };
    serde_json::json!({ "simulator_config": {
        "model": config.model,
        "max_model_len": config.max_model_len,
        "prefill_tokens_per_s": config.prefill_tokens_per_s,
        "fixed_overhead_ms": config.fixed_overhead.as_secs_f64() * 1e3,
        "decode_step_ms": config.decode_step.as_secs_f64() * 1e3,
        "tokens_per_event": tokens_per_event,
        "max_num_seqs": config.max_num_seqs,
        "slowdown_per_running_request": config.slowdown_per_running_request,
        "prefix_cache": config.prefix_cache,
    }})
}

fn models(state: &State) -> Reply {
    let mut data = vec![model_card(state, &state.config.model)];
    data.extend(
        state
            .config
            .aliases
            .iter()
            .map(|alias| model_card(state, alias)),
    );
    json_reply(
        StatusCode::OK,
        &serde_json::json!({ "object": "list", "data": data }),
    )
}

/// One entry of `/v1/models`.
fn model_card(state: &State, model: &str) -> serde_json::Value {
    serde_json::json!({
                "id": model,
                "object": "model",
                "created": state.created_unix_s,
                "owned_by": "vernier",
                "root": state.config.model_root.as_deref().unwrap_or(model),
                "parent": null,
                "max_model_len": state.config.max_model_len,
                // vLLM 0.32's permission card (fixtures/vllm/models.http).
                "permission": [{
                    "id": format!("modelperm-{:016x}", state.created_unix_s),
                    "object": "model_permission",
                    "created": state.created_unix_s,
                    "allow_create_engine": false,
                    "allow_sampling": true,
                    "allow_logprobs": true,
                    "allow_search_indices": false,
                    "allow_view": true,
                    "allow_fine_tuning": false,
                    "organization": "*",
                    "group": null,
                    "is_blocking": false,
                }],
    })
}

fn tokenize(state: &State, body: &TokenizeRequest) -> Reply {
    if let Some(model) = &body.model
        && !state.config.serves(model)
    {
        return unknown_model(model, &state.config.model);
    }
    let tokens = match (&body.messages, &body.prompt) {
        (Some(messages), _) => chat_prompt(messages, body.tools.as_deref()).1,
        (None, Some(prompt)) => sim_tokenize(prompt),
        (None, None) => {
            return error_reply(
                StatusCode::BAD_REQUEST,
                "BadRequestError",
                "give either `prompt` or `messages`",
            );
        }
    };
    json_reply(
        StatusCode::OK,
        &serde_json::json!({
            "count": tokens.len(),
            "max_model_len": state.config.max_model_len,
            "tokens": tokens,
            // vLLM 0.32 fills it only with `return_token_strs`
            // (fixtures/vllm/tokenize-prompt.http).
            "token_strs": null,
        }),
    )
}

/// The `(role, text)` of each message as the template renders it (offered tools first, as a
/// `tools` pseudo-message; an assistant message's tool calls after its content) and the
/// prompt tokens they make.
fn chat_prompt(
    messages: &[ChatMessage],
    tools: Option<&[serde_json::Value]>,
) -> (Vec<(String, String)>, Vec<u32>) {
    let tools_message = tools
        .filter(|tools| !tools.is_empty())
        .map(|tools| ("tools".to_owned(), sim_tools_content(tools)));
    let texts: Vec<(String, String)> = tools_message
        .into_iter()
        .chain(messages.iter().map(|m| (m.role.clone(), m.prompt_text())))
        .collect();
    let tokens = sim_chat_tokenize(texts.iter().map(|(r, c)| (r.as_str(), c.as_str())));
    (texts, tokens)
}

/// A chat or completions request reduced to what generation needs.
#[derive(Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one independent request option, as on the wire"
)]
struct Prepared {
    chat: bool,
    model: String,
    prompt_tokens: Vec<u32>,
    /// The text scripts match against (last user message, or the prompt).
    match_text: String,
    is_code: bool,
    stream: bool,
    include_usage: bool,
    continuous_usage: bool,
    return_token_ids: bool,
    logprobs: bool,
    max_tokens: u32,
    cache_salt: Option<String>,
    sim_fault: Option<Fault>,
    /// Image and video parts in the messages.
    n_media: usize,
    /// Video parts among them.
    n_videos: usize,
    /// Tools offered (the `tools` array's length).
    tools_offered: u32,
    /// The name of the first offered tool, the one a drawn tool call calls.
    first_tool: Option<String>,
    /// `ignore_eos`: the reply runs to `max_tokens`.
    ignore_eos: bool,
    /// Choices asked for (`n`), if given.
    n: Option<i64>,
}

impl Prepared {
    fn chat(request: ChatRequest) -> Self {
        let tools = request.tools.unwrap_or_default();
        let (texts, mut prompt_tokens) = chat_prompt(&request.messages, Some(&tools));
        let first_tool = tools.iter().find_map(|tool| {
            let function = tool.get("function").unwrap_or(tool);
            Some(function.get("name")?.as_str()?.to_owned())
        });
        let n_media: usize = request.messages.iter().map(ChatMessage::n_media).sum();
        let n_videos: usize = request.messages.iter().map(ChatMessage::n_videos).sum();
        // Each image or video costs a fixed number of prompt tokens, as a projector's do.
        prompt_tokens.extend(std::iter::repeat_n(0, n_media * MEDIA_TOKENS as usize));
        let match_text = texts
            .iter()
            .rev()
            .find(|(role, _)| role == "user")
            .map(|(_, content)| content.clone())
            .unwrap_or_default();
        let options = request.stream_options.unwrap_or_default();
        let include_usage = options.include_usage.unwrap_or(false);
        Self {
            chat: true,
            model: request.model,
            prompt_tokens,
            is_code: looks_like_code(&match_text),
            match_text,
            stream: request.stream.unwrap_or(false),
            include_usage,
            continuous_usage: include_usage && options.continuous_usage_stats.unwrap_or(false),
            return_token_ids: request.return_token_ids.unwrap_or(false),
            logprobs: request.logprobs.unwrap_or(false),
            max_tokens: request
                .max_completion_tokens
                .or(request.max_tokens)
                .unwrap_or(DEFAULT_MAX_TOKENS),
            cache_salt: request.cache_salt,
            sim_fault: request.sim_fault,
            n_media,
            n_videos,
            tools_offered: u32::try_from(tools.len()).unwrap_or(u32::MAX),
            first_tool,
            ignore_eos: request.ignore_eos.unwrap_or(false),
            n: request.n,
        }
    }

    fn completion(request: CompletionRequest) -> Self {
        let prompt = request.prompt.joined();
        let options = request.stream_options.unwrap_or_default();
        let include_usage = options.include_usage.unwrap_or(false);
        Self {
            chat: false,
            model: request.model,
            prompt_tokens: sim_tokenize(&prompt),
            is_code: looks_like_code(&prompt),
            match_text: prompt,
            stream: request.stream.unwrap_or(false),
            include_usage,
            continuous_usage: include_usage && options.continuous_usage_stats.unwrap_or(false),
            return_token_ids: request.return_token_ids.unwrap_or(false),
            logprobs: request.logprobs.is_some(),
            max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            cache_salt: request.cache_salt,
            sim_fault: request.sim_fault,
            n_media: 0,
            n_videos: 0,
            tools_offered: 0,
            first_tool: None,
            ignore_eos: true,
            n: request.n,
        }
    }
}

/// llama.cpp's words when the running requests outgrow the KV cache its slots share.
const SHARED_KV_EXCEEDED: &str = "Context size has been exceeded.";

#[expect(
    clippy::too_many_lines,
    reason = "one linear story: checks, faults, slot, prefill, then stream or answer"
)]
async fn generate(state: Arc<State>, request: Prepared, arrival: Instant) -> Reply {
    let config = &state.config;
    if !config.serves(&request.model) {
        return unknown_model(&request.model, &config.model);
    }
    if let Some(n) = request.n.filter(|n| *n < 1) {
        // vLLM 0.32's sampling-parameter check (fixtures/vllm/error-n-zero.http).
        return error_reply(
            StatusCode::BAD_REQUEST,
            "BadRequestError",
            &format!("n must be at least 1, got {n}."),
        );
    }
    if request.n_media > 0 {
        // A request with a video is refused for its video.
        let (kind, plural) = if request.n_videos > 0 {
            ("video", "video(s)")
        } else {
            ("image", "image(s)")
        };
        match config.media {
            crate::config::MediaInput::RefuseLikeLlamaCpp => {
                return reply(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "application/json",
                    format!(
                        r#"{{"error":{{"code":500,"message":"{kind} input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}}}"#
                    ),
                );
            }
            crate::config::MediaInput::RefuseLikeVllm => {
                return error_reply(
                    StatusCode::BAD_REQUEST,
                    "BadRequestError",
                    &format!("At most 0 {plural} may be provided in one request."),
                );
            }
            _ => {}
        }
    }
    let prompt_tokens = u32::try_from(request.prompt_tokens.len()).unwrap_or(u32::MAX);
    if prompt_tokens > config.max_model_len {
        return prompt_over_context(config.max_model_len, prompt_tokens);
    }
    if request.max_tokens > config.max_model_len {
        return max_tokens_over_context(config.max_model_len, prompt_tokens, request.max_tokens);
    }
    // A prompt and `max_tokens` that fit apart but not together: vLLM 0.32 takes the request
    // and generates up to the end of the context
    // (fixtures/vllm/max-tokens-clamped-to-context.http).
    let mut request = request;
    request.max_tokens = request.max_tokens.min(config.max_model_len - prompt_tokens);
    let earlier_requests = state.count_generation_request();
    let sequence = state.next_sequence();
    if let Some((per_mille, retry_after_s)) = config.faults.rate_limited {
        // Its own draw, so the answers of the requests let through stay as without the fault.
        let mut draw = SplitMix64::new(config.seed ^ sequence ^ 0x7261_7465_6c69_6d69);
        if draw.next_u64() % 1000 < u64::from(per_mille) {
            return rate_limited(retry_after_s);
        }
    }
    let mut rng = SplitMix64::new(config.seed ^ sequence.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let id = format!(
        "{}-{:016x}",
        if request.chat { "chatcmpl" } else { "cmpl" },
        rng.next_u64()
    );
    let script_rule = config
        .script
        .as_ref()
        .and_then(|script| script.match_index(&request.match_text));
    let rule_reply = script_rule.and_then(|index| {
        let reply = &config.script.as_ref()?.rules().get(index)?.reply;
        let earlier_matches = state.count_script_match(index);
        Some((reply, earlier_matches))
    });
    let mut fault = request
        .sim_fault
        .clone()
        .or_else(|| {
            let (reply, earlier_matches) = rule_reply?;
            let (attempts, fault) = reply.fault_first_attempts.as_ref()?;
            (earlier_matches < *attempts).then(|| fault.clone())
        })
        .or_else(|| {
            let (n, fault) = config.faults.fail_first_n_requests.as_ref()?;
            (earlier_requests < *n).then(|| fault.clone())
        })
        .or_else(|| config.faults.standing_fault());
    let mut record = GroundTruth {
        request_id: id.clone(),
        endpoint: if request.chat { "chat" } else { "completions" }.to_owned(),
        prompt_tokens,
        cached_tokens: 0,
        completion_tokens: 0,
        reasoning_tokens: 0,
        tokens_per_event: Vec::new(),
        event_offsets_ns: Vec::new(),
        first_token_event_ns: None,
        true_decode_tokens_per_s: None,
        prefill_ms: 0.0,
        queue_ms: 0.0,
        cache_hit: false,
        cache_salt: request.cache_salt.clone(),
        finish_reason: String::new(),
        stream: request.stream,
        fault: fault.clone(),
        completed: true,
        script_rule,
        arrival_unix_ns: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.saturating_sub(arrival.elapsed()).as_nanos()).unwrap_or(0)
            }),
        tools_offered: request.tools_offered,
        tool_calls: 0,
    };
    if let Some(Fault::HttpStatus { status, body }) = &fault {
        state.ground_truth.push(record);
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return match body {
            Some(body) => reply(status, "application/json", body.clone()),
            None => error_reply(
                status,
                status.canonical_reason().unwrap_or("Error"),
                "simulated failure (sim_fault http_status)",
            ),
        };
    }

    let mut guard = state.acquire_slot().await;
    if !guard.hold_kv(u64::from(prompt_tokens) + u64::from(request.max_tokens)) {
        // As llama-server does when a decode finds no free cell in the cache its slots share.
        fault = Some(Fault::ErrorEventAfterEvents {
            events: 2,
            message: SHARED_KV_EXCEEDED.to_owned(),
        });
        record.fault.clone_from(&fault);
    }
    let scheduled = Instant::now();
    record.queue_ms = scheduled.duration_since(arrival).as_secs_f64() * 1e3;
    add(&state.counters.prompt_tokens, u64::from(prompt_tokens));
    let cached = state.prefix_lookup(&request.prompt_tokens, request.cache_salt.as_deref());
    let prefill = config.fixed_overhead
        + Duration::from_secs_f64(f64::from(prompt_tokens - cached) / config.prefill_tokens_per_s);
    record.cached_tokens = cached;
    record.cache_hit = cached > 0;
    record.prefill_ms = prefill.as_secs_f64() * 1e3;

    let recalled = rule_reply.and_then(|(reply, _)| {
        let recall = reply.recall.as_ref()?;
        let content = crate::recall::recall_answer(&request.match_text, prompt_tokens, recall)?;
        let mut answered = reply.clone();
        answered.content = content;
        Some(answered)
    });
    // No rule answers: a turn that offers tools may call the first one.
    let drawn_call = request.first_tool.as_deref().and_then(|tool| {
        if rule_reply.is_some() {
            return None;
        }
        crate::tools::drawn_tool_call(
            &request.prompt_tokens,
            config.seed,
            config.tool_call_share,
            tool,
        )
    });
    let in_flight = state
        .counters
        .running
        .load(std::sync::atomic::Ordering::Relaxed)
        + state
            .counters
            .waiting
            .load(std::sync::atomic::Ordering::Relaxed);
    let degraded = rule_reply.and_then(|(reply, _)| {
        let limit = config.degrade_above_in_flight?;
        (in_flight > u64::from(limit))
            .then_some(reply.degraded.as_deref())
            .flatten()
    });
    let generation = match (degraded.or(recalled.as_ref()), rule_reply, &drawn_call) {
        (Some(answered), _, _) => Generation::scripted(&mut rng, answered),
        (None, Some((reply, _)), _) => Generation::scripted(&mut rng, reply),
        (None, None, Some(call)) => Generation::scripted(&mut rng, call),
        (None, None, None) => {
            let mut generation = Generation::generated(
                &mut rng,
                natural_length(config, &request),
                if request.chat {
                    config.reasoning_tokens
                } else {
                    0
                },
                request.is_code,
            );
            if natural_length(config, &request) < request.max_tokens {
                "stop".clone_into(&mut generation.finish_reason);
            }
            generation
        }
    };
    let steps = schedule_steps(
        &generation,
        &config.tokens_per_event,
        config.first_step_tokens,
        request.is_code,
        &mut rng,
    );
    record.completion_tokens = generation.completion_tokens(&steps);
    record.reasoning_tokens = generation.reasoning_tokens();
    record.finish_reason.clone_from(&generation.finish_reason);
    record.tool_calls = u32::try_from(generation.tool_calls.len()).unwrap_or(u32::MAX);
    // Cached once the request has finished, if its generation runs to the end.
    let runs_to_the_end = !matches!(
        fault,
        Some(Fault::DropAfterEvents { .. } | Fault::ErrorEventAfterEvents { .. })
    );
    let decode_blocks = (config.prefix_cache && runs_to_the_end).then(|| {
        DecodeBlocks::new(
            &request.prompt_tokens,
            &generation.cache_ids(),
            request.cache_salt.clone(),
        )
    });
    let first_token_deadline = scheduled + prefill;
    let shape = StreamShape {
        id: &id,
        model: &config.model,
        created: state.created_unix_s,
        chat: request.chat,
        include_usage: request.include_usage,
        continuous_usage: request.continuous_usage,
        return_token_ids: request.return_token_ids,
        logprobs: request.logprobs,
        prompt_tokens,
        cached_tokens: cached,
        created_cache_tokens: created_cache_tokens(config, prompt_tokens, cached),
        media_tokens: (
            u32::try_from(request.n_media - request.n_videos).unwrap_or(0) * MEDIA_TOKENS,
            u32::try_from(request.n_videos).unwrap_or(0) * MEDIA_TOKENS,
        ),
        prompt_token_ids: &request.prompt_tokens,
        reasoning_details: request.chat
            && (config.reasoning_tokens > 0 || generation.reasoning_tokens() > 0),
        fingerprint: &fingerprint(),
    };

    if request.stream {
        let plan = render_stream(&shape, &generation, &steps, fault.as_ref());
        let stream = EventStream::new(plan, guard, arrival, first_token_deadline, record)
            .cache_on_completion(decode_blocks);
        let mut response = Response::new(SimBody::Stream(Box::new(stream)));
        let headers = response.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream; charset=utf-8"),
        );
        headers.insert("cache-control", HeaderValue::from_static("no-cache"));
        return response;
    }

    // Not streamed: run the engine steps on the same schedule, then answer at once.
    let mut deadline = first_token_deadline;
    for (index, step) in steps.iter().enumerate() {
        if index > 0 {
            deadline += state.current_step();
        }
        tokio::time::sleep_until(deadline).await;
        deadline += state.wait_while_hung().await;
        state.counters.count_step(step.tokens(), step.spec);
        record.push_event(arrival, Instant::now(), step.tokens());
    }
    match &fault {
        Some(Fault::StallAfterEvents { ms, .. }) => {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
        }
        Some(Fault::ErrorEventAfterEvents { message, .. }) => {
            record.completed = false;
            state.ground_truth.push(record);
            return reply(
                StatusCode::INTERNAL_SERVER_ERROR,
                "application/json",
                serde_json::json!({
                    "error": {"code": 500, "message": message, "type": "server_error"}
                })
                .to_string(),
            );
        }
        Some(Fault::DropAfterEvents { .. }) => {
            record.completed = false;
            state.ground_truth.push(record);
            drop(guard);
            let mut response = Response::new(SimBody::Abort);
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            return response;
        }
        _ => {}
    }
    if let Some(blocks) = &decode_blocks {
        state.cache_decode_blocks(blocks);
    }
    let final_usage = response_usage(&shape, record.completion_tokens, record.reasoning_tokens);
    let all_ids: Vec<u32> = steps.iter().flat_map(|s| s.ids.iter().copied()).collect();
    let body = if request.chat {
        let content = generation.content_text();
        let reasoning = generation.reasoning_text();
        let tool_calls: Vec<ToolCall> = generation
            .tool_calls
            .iter()
            .map(|call| ToolCall {
                id: call.id.clone(),
                kind: "function",
                function: FunctionCall {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                },
            })
            .collect();
        let logprobs = request.logprobs.then(|| ChatLogprobs {
            content: steps
                .iter()
                .filter(|s| !matches!(s.kind, crate::plan::StepKind::ToolHeader { .. }))
                .flat_map(|s| s.ids.iter().zip(&s.texts))
                .map(|(id, token)| token_logprob(*id, token))
                .collect(),
        });
        serde_json::to_vec(&ChatResponse {
            id: &id,
            object: "chat.completion",
            created: state.created_unix_s,
            model: &config.model,
            choices: vec![ChatChoice {
                index: 0,
                message: ResponseMessage {
                    role: "assistant",
                    content: (!content.is_empty() || tool_calls.is_empty()).then_some(content),
                    refusal: None,
                    annotations: None,
                    audio: None,
                    function_call: None,
                    reasoning: None,
                    reasoning_content: (!reasoning.is_empty()).then_some(reasoning),
                    tool_calls,
                },
                logprobs,
                finish_reason: generation.finish_reason.clone(),
                stop_reason: None,
                token_ids: request.return_token_ids.then_some(all_ids),
                routed_experts: None,
            }],
            service_tier: None,
            system_fingerprint: shape.fingerprint,
            usage: final_usage,
            prompt_logprobs: None,
            prompt_token_ids: request.return_token_ids.then_some(&request.prompt_tokens),
            prompt_text: None,
            kv_transfer_params: None,
            ec_transfer_params: None,
            metrics: None,
        })
    } else {
        let text = generation.content_text();
        serde_json::to_vec(&CompletionResponse {
            id: &id,
            object: "text_completion",
            created: state.created_unix_s,
            model: &config.model,
            choices: vec![CompletionChoice {
                index: 0,
                text: &text,
                logprobs: None,
                finish_reason: Some(&generation.finish_reason),
                stop_reason: None,
                prompt_token_ids: request.return_token_ids.then_some(&request.prompt_tokens),
                token_ids: request.return_token_ids.then_some(all_ids),
            }],
            system_fingerprint: shape.fingerprint,
            usage: final_usage,
        })
    };
    state.ground_truth.push(record);
    drop(guard);
    let mut body = body.unwrap_or_default();
    if let Some(Fault::MalformedJsonAfterEvents { .. }) = &fault {
        body.truncate(body.len() / 2);
    }
    reply(StatusCode::OK, "application/json", body)
}

/// The simulator's `system_fingerprint` (vLLM's reads `vllm-VERSION-HASH`).
fn fingerprint() -> String {
    format!("vernier-sim-{}", env!("CARGO_PKG_VERSION"))
}

/// Prompt tokens a request writes to the prefix cache: its full blocks less those it found
/// there (vLLM's `created_cache_tokens`: a cold 271-token prompt in 128-token blocks creates
/// 256, its repeat 0; fixtures/vllm/prefix-cache-*.http).
fn created_cache_tokens(config: &crate::config::SimConfig, prompt_tokens: u32, cached: u32) -> u32 {
    if !config.prefix_cache {
        return 0;
    }
    let block = u32::try_from(crate::state::BLOCK_SIZE).unwrap_or(u32::MAX);
    (prompt_tokens / block * block).saturating_sub(cached)
}

/// How long a generated reply runs: to `max_tokens`, or (a chat turn that does not force its
/// length, on a simulator with [`SimConfig::reply_tokens`]) to the reply's own end when that
/// comes first.
fn natural_length(config: &crate::config::SimConfig, request: &Prepared) -> u32 {
    match config.reply_tokens {
        Some(own) if request.chat && !request.ignore_eos => own.max(1).min(request.max_tokens),
        _ => request.max_tokens,
    }
}
