//! The run configuration is plain data: serialisable, with defaults for every field.

use vernier_hardsuite::{RunConfig, RunTarget, SamplingPreset};

#[test]
fn run_config_round_trips_and_fills_in_defaults() {
    let empty: RunConfig = serde_json::from_str("{}").expect("every field has a default");
    assert_eq!(empty, RunConfig::default());
    assert_eq!(
        (
            empty.concurrency,
            empty.max_tries,
            empty.request_timeout_secs,
            empty.idle_timeout_secs
        ),
        (3, 3, 3600, 300)
    );
    let mut config = RunConfig::default();
    config.base_url = Some("http://127.0.0.1:8000".to_owned());
    config.samples = Some(3);
    config.preset = Some(SamplingPreset::QwenThinking);
    config.extra_body =
        Some(serde_json::json!({"chat_template_kwargs": {"enable_thinking": true}}));
    let text = serde_json::to_string(&config).expect("serialises");
    assert!(text.contains(r#""preset":"qwen-thinking""#), "{text}");
    let back: RunConfig = serde_json::from_str(&text).expect("deserialises");
    assert_eq!(back, config);
    let target = RunTarget::resume("out/journal.jsonl");
    let back: RunTarget =
        serde_json::from_str(&serde_json::to_string(&target).expect("serialises")).expect("reads");
    assert_eq!(back, target);
}
