//! What each server says about its context: the longest prompt plus answer it takes, and the
//! error it answers when a request is longer. One place knows every server's names.

use serde_json::Value;

use crate::{ClientError, ModelInfo, ServerIdentity};

/// A server's context length and where it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContextLimit {
    /// Prompt plus completion tokens the server takes.
    pub tokens: u64,
    /// Where it came from: `max_model_len` (vLLM's and `SGLang`'s `/v1/models`), `n_ctx`
    /// (llama.cpp's `/props`, the context of one slot), or `context_length` (`SGLang`'s
    /// server info).
    pub source: &'static str,
}

fn positive(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64).filter(|n| *n > 0)
}

/// The context of `model` on this server, from whatever it offers: `max_model_len` of the
/// model in `/v1/models`, else llama.cpp's `/props` → `default_generation_settings.n_ctx`
/// (the per-slot context, which is what a request gets), else `SGLang`'s `context_length`.
pub fn context_limit(
    models: &[ModelInfo],
    model: &str,
    identity: &ServerIdentity,
) -> Option<ContextLimit> {
    if let Some(tokens) = models
        .iter()
        .find(|m| m.id == model)
        .and_then(|m| m.max_model_len)
        .filter(|n| *n > 0)
    {
        return Some(ContextLimit {
            tokens,
            source: "max_model_len",
        });
    }
    if let Some(props) = &identity.props_json
        && let Some(tokens) = positive(props.pointer("/default_generation_settings/n_ctx"))
            .or_else(|| positive(props.get("n_ctx")))
    {
        return Some(ContextLimit {
            tokens,
            source: "n_ctx",
        });
    }
    identity
        .server_info_json
        .as_ref()
        .and_then(|info| positive(info.get("context_length")))
        .map(|tokens| ContextLimit {
            tokens,
            source: "context_length",
        })
}

/// Phrases servers use when a request does not fit their context: vLLM ("maximum context
/// length is N tokens" for a prompt, `max_tokens=N cannot be greater than max_model_len=M`
/// for an answer budget longer than the whole context, as 0.32 words it), llama.cpp
/// (`exceed_context_size_error`, "exceeds the available context size"), `SGLang` ("is longer
/// than the model's context length"), `OpenAI` (`context_length_exceeded`).
const LENGTH_ERRORS: [&str; 7] = [
    "maximum context length",
    "cannot be greater than max_model_len",
    "exceed_context_size_error",
    "exceeds the available context size",
    "longer than the model's context length",
    "context_length_exceeded",
    "context length exceeded",
];

/// Whether `error` is the server refusing a request for its length, as opposed to a failure:
/// such a request is `context_exceeded`, never a failure of the model or the server.
pub fn is_context_exceeded(error: &ClientError) -> bool {
    match error {
        ClientError::Http {
            status: 400 | 413 | 422,
            body,
            ..
        } => says_context_exceeded(body),
        ClientError::ServerErrorEvent { error, .. } => says_context_exceeded(&error.to_string()),
        _ => false,
    }
}

/// Whether a server's message says a request did not fit its context.
pub fn says_context_exceeded(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    LENGTH_ERRORS.iter().any(|phrase| text.contains(phrase))
}

/// The KV cache a server's concurrent requests share, where the server says enough to know
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SharedCapacity {
    /// Cells (prompt plus generated tokens) that all requests in flight hold together.
    pub tokens: u64,
    /// Requests the server runs at once.
    pub slots: u64,
}

/// The cache `identity`'s server shares among its requests: llama.cpp's `/props` with more
/// than one slot (`total_slots`) gives the per-slot context `default_generation_settings.n_ctx`,
/// and with automatic slots (its default) every slot reads and writes one cache of that size
/// (`kv_unified`). A server whose slots have caches of their own also reports each slot's
/// context there, so a plan that keeps the requests in flight within it is safe either way,
/// only less parallel than it could be on such a server. `None` for other servers (vLLM and
/// `SGLang` queue or preempt a request that does not fit, they do not fail it).
pub fn shared_capacity(identity: &ServerIdentity) -> Option<SharedCapacity> {
    let props = identity.props_json.as_ref()?;
    let slots = positive(props.get("total_slots")).filter(|slots| *slots > 1)?;
    let tokens = positive(props.pointer("/default_generation_settings/n_ctx"))?;
    Some(SharedCapacity { tokens, slots })
}

/// Phrases a server uses when the requests in flight together outgrew a cache they share,
/// each fitting alone: llama.cpp's "Context size has been exceeded." (a decode that found no
/// free cell, sent to every running request as a `500` error event).
const SHARED_CAPACITY_ERRORS: [&str; 1] = ["context size has been exceeded"];

/// Whether `error` is the server failing a request because the requests in flight together
/// outgrew the cache they share (not because this one is too long): such a request fits when
/// sent alone.
pub fn is_shared_capacity_exceeded(error: &ClientError) -> bool {
    let text = match error {
        ClientError::Http {
            status: 500, body, ..
        } => body.to_ascii_lowercase(),
        ClientError::ServerErrorEvent { error, .. } => error.to_string().to_ascii_lowercase(),
        _ => return false,
    };
    SHARED_CAPACITY_ERRORS
        .iter()
        .any(|phrase| text.contains(phrase))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LLAMA_PROPS: &str =
        include_str!("../../../fixtures/real-transcripts/llama-server-b11434/props.json");
    const LLAMA_OVERFLOW: &str = include_str!(
        "../../../fixtures/real-transcripts/llama-server-b11434/error-context-overflow-stream.json"
    );

    #[test]
    fn the_context_comes_from_the_model_list_then_props_then_server_info() {
        let model = |max: Option<u64>| ModelInfo {
            id: "m".to_owned(),
            max_model_len: max,
            ..ModelInfo::default()
        };
        let mut identity = ServerIdentity::default();
        assert_eq!(
            context_limit(&[model(Some(32_768))], "m", &identity),
            Some(ContextLimit {
                tokens: 32_768,
                source: "max_model_len"
            })
        );
        // The recorded llama-server b11434 ran with an 8k context.
        identity.props_json = Some(serde_json::from_str(LLAMA_PROPS).expect("props"));
        assert_eq!(
            context_limit(&[model(None)], "m", &identity),
            Some(ContextLimit {
                tokens: 8192,
                source: "n_ctx"
            })
        );
        let sglang = ServerIdentity {
            server_info_json: Some(serde_json::json!({"context_length": 131_072})),
            ..ServerIdentity::default()
        };
        assert_eq!(
            context_limit(&[], "m", &sglang).map(|c| c.tokens),
            Some(131_072)
        );
        assert_eq!(context_limit(&[], "m", &ServerIdentity::default()), None);
    }

    #[test]
    fn length_errors_of_every_server_are_told_from_other_refusals() {
        let http = |body: &str| ClientError::Http {
            status: 400,
            body: body.to_owned(),
            retry_after: None,
        };
        assert!(is_context_exceeded(&http(LLAMA_OVERFLOW)));
        // vLLM's wording (the simulator copies it).
        assert!(is_context_exceeded(&http(
            r#"{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 3000 tokens.","type":"BadRequestError","code":400}"#
        )));
        assert!(is_context_exceeded(&http(
            r#"{"error":{"message":"...","code":"context_length_exceeded"}}"#
        )));
        assert!(!is_context_exceeded(&http(
            r#"{"error":"unknown field cache_salt"}"#
        )));
        assert!(!is_context_exceeded(&ClientError::Http {
            status: 500,
            body: "maximum context length".to_owned(),
            retry_after: None,
        }));
    }

    #[test]
    fn llama_cpp_slots_share_the_context_it_reports() {
        let mut identity = ServerIdentity::default();
        assert_eq!(shared_capacity(&identity), None);
        // The recorded llama-server b11434: four slots, 8k context each.
        identity.props_json = Some(serde_json::from_str(LLAMA_PROPS).expect("props"));
        assert_eq!(
            shared_capacity(&identity),
            Some(SharedCapacity {
                tokens: 8192,
                slots: 4
            })
        );
        // One slot shares nothing.
        identity.props_json = Some(serde_json::json!({
            "total_slots": 1, "default_generation_settings": {"n_ctx": 8192}
        }));
        assert_eq!(shared_capacity(&identity), None);
    }

    #[test]
    fn a_full_shared_cache_is_told_from_a_request_too_long() {
        // llama.cpp b11434, tools/server/server-context.cpp: a decode that finds no free cell
        // sends every running slot this error event.
        let event = ClientError::ServerErrorEvent {
            error: serde_json::json!({
                "code": 500, "message": "Context size has been exceeded.", "type": "server_error"
            }),
            events_received: 3,
        };
        assert!(is_shared_capacity_exceeded(&event));
        assert!(!is_context_exceeded(&event));
        let too_long = ClientError::Http {
            status: 400,
            body: LLAMA_OVERFLOW.to_owned(),
            retry_after: None,
        };
        assert!(!is_shared_capacity_exceeded(&too_long));
        assert!(!is_shared_capacity_exceeded(
            &ClientError::ServerErrorEvent {
                error: serde_json::json!({"code": 500, "message": "Compute error."}),
                events_received: 1,
            }
        ));
    }
}
