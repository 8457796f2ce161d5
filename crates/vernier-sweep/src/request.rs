//! What the sweep sends, and how a failed try is classed: the request body for one prompt
//! (fields the server refused left out) and the failure classes that decide retry, drop, skip
//! or stop.

use std::collections::BTreeSet;

use vernier_openai::{ChatMessage, ChatRequest, StreamOptions};

use crate::config::SweepConfig;

/// The request body for one prompt.
pub(crate) fn build_request(
    config: &SweepConfig,
    dropped: &BTreeSet<&'static str>,
    prompt: String,
    nonce: Option<&str>,
    max_tokens: u32,
) -> ChatRequest {
    let mut request = build_full_request(config, prompt, nonce, max_tokens);
    for field in dropped {
        match *field {
            "max_tokens" => {
                request.max_completion_tokens = request.max_tokens.take();
            }
            "continuous_usage_stats" => {
                if request.stream_options.is_some() {
                    request.stream_options = Some(StreamOptions::usage(false));
                }
            }
            other => {
                request.extra.remove(other);
            }
        }
    }
    request
}

/// The request body with every field the configuration asks for.
fn build_full_request(
    config: &SweepConfig,
    prompt: String,
    nonce: Option<&str>,
    max_tokens: u32,
) -> ChatRequest {
    let mut request = ChatRequest::new(config.model.clone(), vec![ChatMessage::user(prompt)]);
    request.max_tokens = Some(u64::from(max_tokens));
    request.temperature = Some(config.temperature);
    request.seed = config.seed.and_then(|seed| i64::try_from(seed).ok());
    request.stream_options = Some(StreamOptions::usage(config.continuous_usage));
    if config.force_length {
        request.extra.insert("ignore_eos".to_owned(), true.into());
        request
            .extra
            .insert("min_tokens".to_owned(), max_tokens.into());
    }
    if let Some(nonce) = nonce {
        if config.cache_salt {
            request.extra.insert("cache_salt".to_owned(), nonce.into());
        }
        if config.cache_prompt_field {
            request
                .extra
                .insert("cache_prompt".to_owned(), false.into());
        }
    }
    if config.token_ids {
        request
            .extra
            .insert("return_token_ids".to_owned(), true.into());
    }
    if config.extra_body.is_empty() {
        return request;
    }
    // Merge through JSON so `--extra-body` may also override the named fields.
    match serde_json::to_value(&request) {
        Ok(serde_json::Value::Object(mut body)) => {
            for (key, value) in &config.extra_body {
                body.insert(key.clone(), value.clone());
            }
            serde_json::from_value(serde_json::Value::Object(body)).unwrap_or(request)
        }
        _ => request,
    }
}

/// Why an attempt did not produce a measurement.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Worth retrying: HTTP 429/5xx, dropped stream, timeout.
    Retryable(String),
    /// Connection refused or reset before any answer: the server may be gone.
    Unreachable(String),
    /// The server will refuse every request like this one.
    Fatal(String),
    /// The stream is silent and the server's generation counter does not move.
    Hung(String),
    /// `429` or `503`: the server says "not now"; waiting is not a failed try.
    RateLimited(String, vernier_openai::ClientError),
    /// The server cannot take a request this long: the cell is `context_exceeded`.
    ContextExceeded(String),
    /// The server refuses a field the sweep can do without (`cache_salt`, `ignore_eos`, ...,
    /// or `max_tokens` where `max_completion_tokens` is wanted): drop it and go on.
    FieldRefused(String, &'static str),
}

impl Failure {
    pub(crate) fn message(&self) -> &str {
        match self {
            Self::Retryable(m)
            | Self::Unreachable(m)
            | Self::Fatal(m)
            | Self::Hung(m)
            | Self::RateLimited(m, _)
            | Self::FieldRefused(m, _)
            | Self::ContextExceeded(m) => m,
        }
    }
}

/// The class of a client error.
pub(crate) fn classify(error: vernier_openai::ClientError) -> Failure {
    let message = vernier_cli::one_line(&error);
    match &error {
        vernier_openai::ClientError::Connect { .. } => Failure::Unreachable(message),
        _ if vernier_openai::is_context_exceeded(&error) => Failure::ContextExceeded(message),
        _ if vernier_openai::is_shared_capacity_exceeded(&error) => {
            Failure::ContextExceeded(format!(
                "{message} (the streams in flight together outgrew the KV cache the server's requests share; each fits alone)"
            ))
        }
        vernier_openai::ClientError::Http {
            status: 400 | 422,
            body,
            ..
        } if vernier_openai::refused_field(body).is_some() => {
            let field = vernier_openai::refused_field(body).unwrap_or("unknown");
            Failure::FieldRefused(message, field)
        }
        vernier_openai::ClientError::Http {
            status: status @ (400 | 401 | 403 | 404 | 405 | 413 | 422),
            ..
        } => Failure::Fatal(match vernier_run::refusal_hint(*status) {
            Some(hint) => format!("{message}; {hint}"),
            None => message,
        }),
        _ if vernier_openai::is_rate_limited(&error) => Failure::RateLimited(message, error),
        _ => Failure::Retryable(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_fields_rate_limits_and_refusals_are_told_apart() {
        let http = |status: u16, body: &str| vernier_openai::ClientError::Http {
            status,
            body: body.to_owned(),
            retry_after: None,
        };
        assert!(matches!(
            classify(http(400, "unknown field: cache_salt")),
            Failure::FieldRefused(_, "cache_salt")
        ));
        assert!(matches!(
            classify(http(503, "overloaded")),
            Failure::RateLimited(..)
        ));
        assert!(matches!(
            classify(http(429, "slow down")),
            Failure::RateLimited(..)
        ));
        assert!(matches!(classify(http(500, "oops")), Failure::Retryable(_)));
        assert!(matches!(classify(http(401, "bad key")), Failure::Fatal(_)));
    }

    #[test]
    fn a_dropped_field_leaves_the_request_and_max_tokens_becomes_max_completion_tokens() {
        let config = SweepConfig::default();
        let all = build_request(&config, &BTreeSet::new(), "p".to_owned(), Some("n"), 16);
        assert!(all.extra.contains_key("cache_salt") && all.extra.contains_key("ignore_eos"));
        let dropped: BTreeSet<&'static str> =
            ["cache_salt", "max_tokens", "continuous_usage_stats"].into();
        let request = build_request(&config, &dropped, "p".to_owned(), Some("n"), 16);
        assert!(!request.extra.contains_key("cache_salt"));
        assert!(request.extra.contains_key("ignore_eos"));
        assert_eq!(
            (request.max_tokens, request.max_completion_tokens),
            (None, Some(16))
        );
        let body = serde_json::to_value(&request).expect("serialises");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert!(
            body["stream_options"]
                .get("continuous_usage_stats")
                .is_none_or(|v| v == false)
        );
    }
}
