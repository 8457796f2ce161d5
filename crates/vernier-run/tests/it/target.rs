//! Model resolution and the server's fingerprint against a real simulator over loopback.

use std::path::Path;
use vernier_cli::Failure as _;

use vernier_run::{
    ClientOptions, InProcessSimulator, RunError, build_client, check_same_server, fingerprint,
    resolve_model,
};
use vernier_sim::SimConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_model_rule_for_new_and_resumed_runs() {
    let sim = InProcessSimulator::start(SimConfig::builder().model("served-model").build())
        .await
        .expect("the simulator starts");
    let client = build_client(&ClientOptions::new(sim.base_url())).expect("a client");
    // Nothing wanted: the first model listed.
    let first = resolve_model(&client, None, None).await.expect("resolved");
    assert_eq!(first.id, "served-model");
    assert!(!first.listed.is_empty());
    // A new run takes a listed name it is given.
    let named = resolve_model(&client, Some("served-model"), None)
        .await
        .expect("a new run takes a listed name");
    assert_eq!(named.id, "served-model");
    // A name the server does not list is refused up front (exit 2), naming what it serves;
    // before, `--model gpt-4o` against SmolLM2 titled the report "gpt-4o".
    let error = resolve_model(&client, Some("gpt-4o"), None)
        .await
        .expect_err("an unlisted model is refused");
    assert!(matches!(error, RunError::InvalidArgument { .. }), "{error}");
    assert_eq!(error.exit_code(), 2);
    assert!(error.to_string().contains("--model"), "{error}");
    assert!(error.to_string().contains("served-model"), "{error}");
    // A resumed run whose model the server does not list talks to another server.
    let journal = Path::new("out/journal.jsonl");
    let error = resolve_model(&client, Some("other"), Some(journal))
        .await
        .expect_err("refused");
    assert!(matches!(error, RunError::ServerChanged { .. }), "{error}");
    assert!(error.to_string().contains("served-model"), "{error}");
    // The simulator says it is vLLM; the same server again is the same fingerprint.
    let identity = client.server_identity().await;
    let recorded = fingerprint("served-model", &identity);
    assert_eq!(recorded.kind, "vllm");
    assert!(check_same_server(journal, &recorded, &fingerprint("served-model", &identity)).is_ok());
    sim.shutdown().await;
}

#[test]
fn an_unreadable_ca_file_is_a_refused_flag() {
    let options =
        ClientOptions::new("https://127.0.0.1:9").ca_cert(Some(Path::new("/nonexistent/ca.pem")));
    let error = build_client(&options).expect_err("refused");
    assert!(matches!(error, RunError::InvalidArgument { .. }), "{error}");
    assert_eq!(error.exit_code(), 2);
}

#[test]
fn a_port_out_of_range_is_a_refused_flag_not_port_80() {
    let error = build_client(&ClientOptions::new("http://127.0.0.1:99999")).expect_err("refused");
    assert!(matches!(error, RunError::InvalidArgument { .. }), "{error}");
    assert!(error.to_string().contains("--base-url"), "{error}");
    assert_eq!(error.exit_code(), 2);
}

#[test]
fn a_base_url_that_names_an_endpoint_is_trimmed_with_a_note() {
    let (url, note) = vernier_run::trim_base_url("http://127.0.0.1:8000/v1/chat/completions");
    assert_eq!(url, "http://127.0.0.1:8000/v1");
    assert!(note.is_some_and(|n| n.contains("/chat/completions")));
    let (url, note) = vernier_run::trim_base_url("http://127.0.0.1:8000/v1/");
    assert_eq!(url, "http://127.0.0.1:8000/v1");
    assert!(note.is_none(), "a trailing slash needs no note");
    let (url, note) = vernier_run::trim_base_url("https://api.example.com");
    assert_eq!(url, "https://api.example.com");
    assert!(note.is_none());
}
