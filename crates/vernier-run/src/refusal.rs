//! What a server's refusal of a request says about the command line: a 4xx other than 408 and
//! 429 is the request's own fault (a key, a model, a body), never evidence of the server's
//! health; a key or a model refused points at the flag that sets it.

/// Whether `status` refuses the request itself: every 4xx but 408 (timeout) and 429 (too many
/// requests).
pub const fn is_refusal(status: u16) -> bool {
    status >= 400 && status < 500 && status != 408 && status != 429
}

/// The flag a refusal points at, when it names one: a key (401, 403) or a model (404).
pub const fn refusal_flag(status: u16) -> Option<&'static str> {
    match status {
        401 | 403 => Some("--api-key-env"),
        404 => Some("--model"),
        _ => None,
    }
}

/// What to change for a refusal that names a flag.
pub const fn refusal_hint(status: u16) -> Option<&'static str> {
    match status {
        401 | 403 => Some(
            "the server wants an API key: name its variable with --api-key-env (OPENAI_API_KEY is read when set)",
        ),
        404 => Some("the model or the path is not served there: check --model and --base-url"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_or_a_model_refused_names_its_flag_and_a_busy_server_is_no_refusal() {
        assert!(is_refusal(401) && is_refusal(404) && is_refusal(400));
        assert!(!is_refusal(408) && !is_refusal(429) && !is_refusal(500));
        assert_eq!(refusal_flag(403), Some("--api-key-env"));
        assert_eq!(refusal_flag(404), Some("--model"));
        assert_eq!(refusal_flag(400), None);
        assert!(refusal_hint(401).is_some_and(|hint| hint.contains("--api-key-env")));
        assert_eq!(refusal_hint(413), None);
    }
}
