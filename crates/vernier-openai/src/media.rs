//! What each server answers when it cannot take a request's images, videos or tools: one
//! place knows the words.

use crate::ClientError;

/// Phrases servers use when a request holds media the server or model cannot take:
/// llama.cpp without a projector ("image input is not supported - hint: ... mmproj", a 500),
/// vLLM with a text-only model ("At most 0 image(s) may be provided", "is not a multimodal
/// model") or with fewer images or videos allowed per prompt than a task sends ("At most 1
/// image(s) may be provided in one prompt.", "... in one request." in older versions, its
/// `--limit-mm-per-prompt`), `SGLang` over its `--limit-mm-data-per-request` ("Image count 3
/// exceeds limit 1 per request."), `OpenAI` ("`image_url` is only supported by certain models") and others.
const MEDIA_REFUSALS: [&str; 10] = [
    "image input is not supported",
    "video input is not supported",
    "not a multimodal model",
    "does not support image",
    "does not support video",
    "does not support multimodal",
    "at most 0 image",
    "at most 0 video",
    "may be provided in one",
    "image_url is only supported",
];

/// Whether `text` (an error body) says the server takes no images or videos.
pub fn says_media_unsupported(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let over_sglang_limit = lower.contains("exceeds limit")
        && (lower.contains("image count") || lower.contains("video count"));
    over_sglang_limit || MEDIA_REFUSALS.iter().any(|phrase| lower.contains(phrase))
}

/// Whether `error` is the server refusing a request for its images or videos: such a task is
/// `unsupported`, never a failure of the model, and not worth a retry.
pub fn is_media_unsupported(error: &ClientError) -> bool {
    match error {
        ClientError::Http { status, body, .. } => {
            matches!(status, 400 | 415 | 422 | 500 | 501) && says_media_unsupported(body)
        }
        _ => false,
    }
}

/// Phrases servers use when a request offers tools they parse no calls for: vLLM started
/// without `--enable-auto-tool-choice` and a `--tool-call-parser` (`"auto" tool choice
/// requires --enable-auto-tool-choice and --tool-call-parser to be set`, and the same for a
/// `"required"` or named choice) and llama.cpp without `--jinja` (`tools param requires
/// --jinja flag`).
const TOOL_REFUSALS: [&str; 3] = [
    "tool choice requires --enable-auto-tool-choice",
    "requires --tool-call-parser",
    "tools param requires --jinja",
];

/// Whether `text` (an error body) says the server parses no tool calls.
pub fn says_tools_unsupported(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    TOOL_REFUSALS.iter().any(|phrase| lower.contains(phrase))
}

/// Whether `error` is the server refusing a request because it parses no tool calls: such a
/// task is `unsupported` (the server's setting, not the model's failure), and not retried.
pub fn is_tools_unsupported(error: &ClientError) -> bool {
    match error {
        ClientError::Http { status, body, .. } => {
            matches!(status, 400 | 422 | 500 | 501) && says_tools_unsupported(body)
        }
        _ => false,
    }
}

/// Phrases servers use when they cannot take a request's `response_format`: llama.cpp builds
/// without schema support (`response_format type must be one of "text" or "json_object"`),
/// llama.cpp and vLLM refusing a schema they cannot turn into a grammar (`JSON schema
/// conversion failed`, `The provided JSON schema contains features not supported by
/// xgrammar`), `OpenAI` (`'response_format' of type 'json_schema' is not supported with this
/// model`) and gateways that drop the field (`response_format is not supported`).
const RESPONSE_FORMAT_REFUSALS: [&str; 6] = [
    "response_format type must be one of",
    "json schema conversion failed",
    "features not supported by xgrammar",
    "of type 'json_schema' is not supported",
    "of type 'json_object' is not supported",
    "response_format is not supported",
];

/// Whether `text` (an error body) says the server cannot take the request's `response_format`.
pub fn says_response_format_unsupported(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    RESPONSE_FORMAT_REFUSALS
        .iter()
        .any(|phrase| lower.contains(phrase))
}

/// Whether `error` is the server refusing a request for its `response_format`: such a task is
/// `unsupported` (the server's limit, not the model's failure), and not retried.
pub fn is_response_format_unsupported(error: &ClientError) -> bool {
    match error {
        ClientError::Http { status, body, .. } => {
            matches!(status, 400 | 422 | 500 | 501) && says_response_format_unsupported(body)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_that_cannot_take_a_response_format_are_told_from_other_errors() {
        // ik_llama.cpp before its schema support (its issue 778, the error as reported there).
        let llama = r#"{"error":{"code":500,"message":"response_format type must be one of \"text\" or \"json_object\", but got: json_schema","type":"server_error"}}"#;
        assert!(says_response_format_unsupported(llama));
        let http = |status, body: &str| ClientError::Http {
            status,
            body: body.to_owned(),
            retry_after: None,
        };
        assert!(is_response_format_unsupported(&http(500, llama)));
        assert!(!is_response_format_unsupported(&http(503, llama)));
        assert!(!says_response_format_unsupported(
            r#"{"error":{"message":"max_tokens=5000 cannot be greater than max_model_len=2048."}}"#
        ));
    }

    #[test]
    fn servers_without_a_tool_parser_are_told_from_other_errors() {
        // vLLM 0.32 without a parser (fixtures/vllm/error-tool-choice-auto-without-parser.http).
        let vllm = r#"{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}}"#;
        assert!(says_tools_unsupported(vllm));
        assert!(says_tools_unsupported(
            r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#
        ));
        assert!(!says_tools_unsupported(
            r#"{"error":{"message":"max_tokens=5000 cannot be greater than max_model_len=2048."}}"#
        ));
    }

    #[test]
    fn servers_that_cannot_see_are_told_from_other_errors() {
        // llama.cpp 11434 without --mmproj, answered to an image_url part (recorded here).
        let llama = r#"{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}"#;
        assert!(says_media_unsupported(llama));
        let vllm = r#"{"object":"error","message":"At most 0 image(s) may be provided in one request.","type":"BadRequestError","code":400}"#;
        // vLLM with fewer images allowed per prompt than the task sends, in its current words
        // (vllm/multimodal/processing/context.py, validate_num_items) and its older ones.
        assert!(says_media_unsupported(
            "At most 1 image(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to increase this limit."
        ));
        assert!(says_media_unsupported(
            r#"{"object":"error","message":"At most 1 image(s) may be provided in one request.","type":"BadRequestError","code":400}"#
        ));
        // SGLang over --limit-mm-data-per-request.
        assert!(says_media_unsupported(
            "Image count 3 exceeds limit 1 per request."
        ));
        assert!(!says_media_unsupported(
            "token count 9000 exceeds limit 8192"
        ));
        assert!(says_media_unsupported(vllm));
        let http = |status, body: &str| ClientError::Http {
            status,
            body: body.to_owned(),
            retry_after: None,
        };
        assert!(is_media_unsupported(&http(500, llama)));
        assert!(!is_media_unsupported(&http(503, llama)));
        assert!(!is_media_unsupported(&http(500, "internal error")));
        assert!(!says_media_unsupported(
            "maximum context length is 4096 tokens"
        ));
    }
}
