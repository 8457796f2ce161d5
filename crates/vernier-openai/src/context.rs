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
/// length is N tokens"), llama.cpp (`exceed_context_size_error`, "exceeds the available
/// context size"), `SGLang` ("is longer than the model's context length"), `OpenAI`
/// (`context_length_exceeded`).
const LENGTH_ERRORS: [&str; 6] = [
    "maximum context length",
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
}
