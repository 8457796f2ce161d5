//! The answers the routes build: plain replies, vLLM 0.32's error shape and its refusals,
//! and a request body read as JSON (refused as vLLM's request validation refuses it).

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde::de::DeserializeOwned;

use crate::body::SimBody;
use crate::wire::{ErrorBody, ErrorInfo};

/// A response of the simulator.
pub(crate) type Reply = Response<SimBody>;

pub(crate) fn reply(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<bytes::Bytes>,
) -> Reply {
    let mut response = Response::new(SimBody::full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// `429 Too Many Requests` with `Retry-After`, in `OpenAI`'s error shape.
pub(crate) fn rate_limited(retry_after_s: u64) -> Reply {
    let mut response = error_reply(
        StatusCode::TOO_MANY_REQUESTS,
        "RateLimitError",
        "Rate limit reached for requests; please try again later.",
    );
    if let Ok(value) = HeaderValue::from_str(&retry_after_s.to_string()) {
        response.headers_mut().insert("retry-after", value);
    }
    response
}

pub(crate) fn json_reply(status: StatusCode, body: &impl serde::Serialize) -> Reply {
    reply(
        status,
        "application/json",
        serde_json::to_vec(body).unwrap_or_default(),
    )
}

/// vLLM's error shape, naming no parameter.
pub(crate) fn error_reply(status: StatusCode, kind: &str, message: &str) -> Reply {
    error_reply_for(status, kind, message, None)
}

/// vLLM 0.32's error shape: `{"error": {"message", "type", "param", "code"}}`
/// (fixtures/vllm/error-*.http).
fn error_reply_for(status: StatusCode, kind: &str, message: &str, param: Option<&str>) -> Reply {
    json_reply(
        status,
        &ErrorBody {
            error: ErrorInfo {
                message,
                kind,
                param,
                code: status.as_u16(),
            },
        },
    )
}

/// A refusal of a parameter's value, worded as vLLM 0.32 words it: the message, then
/// `(parameter=NAME, value=VALUE)`, and the parameter in `param`.
fn invalid_parameter(message: &str, parameter: &str, value: impl std::fmt::Display) -> Reply {
    error_reply_for(
        StatusCode::BAD_REQUEST,
        "BadRequestError",
        &format!("{message} (parameter={parameter}, value={value})"),
        Some(parameter),
    )
}

/// A body that is not the request's JSON, refused as vLLM's request validation refuses it:
/// `400`, `"type": "Bad Request"`, pydantic's words and the body location in `param`
/// (fixtures/vllm/error-bad-json.http).
fn validation_error(kind: &str, location: &str, message: &str, detail: &str) -> Reply {
    let quoted = |text: &str| text.replace('\\', "\\\\").replace('\'', "\\'");
    error_reply_for(
        StatusCode::BAD_REQUEST,
        "Bad Request",
        &format!(
            "1 validation error:\n  {{'type': '{kind}', 'loc': '{location}', 'msg': '{}', 'input': '<dict of 0 items>', 'ctx': {{'error': '{}'}}}}",
            quoted(message),
            quoted(detail)
        ),
        Some(location),
    )
}

/// Where `error` stopped in `bytes`, as an offset (Python's `json` counts characters from 0;
/// `serde_json` gives a line and a 1-based column).
fn error_offset(bytes: &[u8], error: &serde_json::Error) -> usize {
    let line_start: usize = bytes
        .split(|b| *b == b'\n')
        .take(error.line().saturating_sub(1))
        .map(|line| line.len() + 1)
        .sum();
    (line_start + error.column()).min(bytes.len())
}

pub(crate) async fn read_json<T: DeserializeOwned>(
    state: &crate::state::State,
    request: Request<Incoming>,
) -> Result<T, Reply> {
    let path = request.uri().path().to_owned();
    let bytes = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => {
            return Err(error_reply(
                StatusCode::BAD_REQUEST,
                "BadRequestError",
                &format!("could not read the request body: {error}"),
            ));
        }
    };
    if let Some(log) = &state.request_log {
        let body = serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(&bytes).into_owned())
        });
        let mut line = serde_json::json!({ "path": path, "body": body }).to_string();
        line.push('\n');
        let mut file = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The log serves tests; a failed write is not the request's failure.
        let _ = std::io::Write::write_all(&mut *file, line.as_bytes());
    }
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|error| {
        validation_error(
            "json_invalid",
            &format!("body.{}", error_offset(&bytes, &error)),
            "JSON decode error",
            &error.to_string(),
        )
    })?;
    serde_json::from_value(value).map_err(|error| {
        let text = error.to_string();
        // serde's "missing field `messages`" is pydantic's "Field required" at body.messages.
        match text
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split_once('`'))
        {
            Some((field, _)) => {
                validation_error("missing", &format!("body.{field}"), "Field required", &text)
            }
            None => validation_error("value_error", "body", "Input is not valid", &text),
        }
    })
}

/// vLLM 0.32's `404` for a model it does not serve, naming the one it does
/// (fixtures/vllm/error-wrong-model.http).
pub(crate) fn unknown_model(model: &str, served: &str) -> Reply {
    error_reply_for(
        StatusCode::NOT_FOUND,
        "NotFoundError",
        &format!("The model `{model}` does not exist. Valid aliases: {served}."),
        Some("model"),
    )
}

/// A prompt longer than the context, refused in vLLM 0.32's words
/// (fixtures/vllm/error-prompt-too-long.http).
pub(crate) fn prompt_over_context(max_model_len: u32, prompt_tokens: u32) -> Reply {
    invalid_parameter(
        &format!(
            "This model's maximum context length is {max_model_len} tokens. However, your prompt contains {prompt_tokens} input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt."
        ),
        "input_tokens",
        prompt_tokens,
    )
}

/// `max_tokens` over the context, refused in the words of earlier vLLM ("you requested N
/// tokens"), which Vernier's `context_exceeded` path is tested with. vLLM 0.32 refuses it too,
/// naming the parameter instead ("`max_tokens=N` cannot be greater than `max_model_len=M`",
/// fixtures/vllm/error-max-tokens-too-large.http): an allowed difference, see
/// tests/it/vllm.rs.
pub(crate) fn max_tokens_over_context(
    max_model_len: u32,
    prompt_tokens: u32,
    max_tokens: u32,
) -> Reply {
    error_reply(
        StatusCode::BAD_REQUEST,
        "BadRequestError",
        &format!(
            "This model's maximum context length is {max_model_len} tokens. However, you requested {} tokens ({prompt_tokens} in the messages, {max_tokens} in the completion). Please reduce the length of the messages or completion.",
            u64::from(prompt_tokens) + u64::from(max_tokens),
        ),
    )
}
