//! The sweep and agent sessions against a real vLLM (its CPU build, installed and cached by
//! `scripts/vllm.sh`): the server's own token counts from its streamed usage, prefix caching
//! shown on purpose and defeated by the sweep, speculative decoding's acceptance equal to
//! vLLM's own counters, its refusals classified by their words, and the weights it states.
//!
//! Every test first checks that vLLM answered (`/version` and the run's server kind), so none
//! can pass against the simulator. The figures asserted are counts and relations, never speed.

use std::sync::Arc;

use vernier_openai::{ChatMessage, ChatRequest, Client, ClientBuilder, MetricsSnapshot};
use vernier_sweep::agent::{AgentConfig, AgentLine, AgentStart, Pass, Think, run_agent};
use vernier_sweep::{QuietObserver, RunContext, SweepStart, Workload, sweep_client};
use vernier_test_support::vllm::{Launch, Server};

use crate::support::{config, journal_values, read_run_file, start_run};

/// The tiny model with prefix caching on and its counts in the usage: the launch the tests
/// that read cached tokens share.
fn tiny() -> Launch {
    Launch::tiny().args(["--enable-prefix-caching", "--enable-prompt-tokens-details"])
}

fn client_of(server: &Server) -> Client {
    ClientBuilder::new(&server.base_url())
        .build()
        .expect("a client")
}

/// Fails the test unless vLLM itself answers at `server` (its `/version` names a version and
/// `/v1/models` says it owns the model).
async fn assert_vllm(server: &Server) {
    let client = client_of(server);
    let identity = client.server_identity().await;
    let version = identity
        .version_json
        .as_ref()
        .and_then(|v| v["version"].as_str())
        .map(str::to_owned);
    assert!(
        version.as_deref().is_some_and(|v| v.starts_with("0.")),
        "/version: {version:?}"
    );
    assert_eq!(vernier_openai::ServerKind::Vllm, identity.kind);
    let models = client.models().await.expect("/v1/models");
    assert_eq!(
        models[0].extra.get("owned_by").and_then(|v| v.as_str()),
        Some("vllm")
    );
}

/// A 300-token-ish prompt (more than one 128-token block of vLLM's CPU cache).
fn long_prompt(tag: &str) -> String {
    let words: Vec<String> = (0..260).map(|i| format!("w{}", i * 7 % 101)).collect();
    format!("{tag}: {}", words.join(" "))
}

async fn cached_tokens_of(client: &Client, model: &str, prompt: &str) -> u64 {
    let mut request = ChatRequest::new(model, vec![ChatMessage::user(prompt)]);
    request.max_tokens = Some(1);
    let response = client.chat(&request).await.expect("a chat answer");
    response
        .usage
        .and_then(|usage| usage.cached_tokens())
        .expect("vLLM states cached_tokens with --enable-prompt-tokens-details")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_reads_vllms_own_token_counts_defeats_its_cache_and_calls_the_run_valid() {
    let server = Server::shared("vllm sweep", &tiny());
    assert_vllm(&server).await;
    let client = client_of(&server);
    // The cache is on: the same prompt again is served from it (whole 128-token blocks). The
    // prompt opens with this run's instant, so a server shared with an earlier run has not
    // seen it.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let prompt = long_prompt(&format!("cache check {now} {}", std::process::id()));
    assert_eq!(cached_tokens_of(&client, "tiny", &prompt).await, 0);
    let hit = cached_tokens_of(&client, "tiny", &prompt).await;
    assert!(hit >= 128 && hit % 128 == 0, "second time: {hit} cached");

    let out = tempfile::tempdir().expect("a folder");
    let mut config = config(&[Workload::Prose], &[64, 400], &[48], 2);
    config.warmup = 1;
    let start = SweepStart::New {
        config: Box::new(config),
        out: out.path().to_owned(),
    };
    let outcome = start_run(&server.base_url(), start, Arc::new(QuietObserver))
        .await
        .expect("the sweep finishes");
    let run = read_run_file(&outcome);
    assert_eq!(run["environment"]["server"]["kind"], "vllm");
    // Valid, unless the machine running the test lagged (the client's own lag, which a
    // shared two-core machine under a vLLM engine can reach): no other reason.
    let reasons: Vec<&str> = run["validity"]["reasons"]
        .as_array()
        .map(|reasons| reasons.iter().filter_map(|r| r["code"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        reasons.iter().all(|code| *code == "client_lag"),
        "{}",
        run["validity"]
    );
    assert_ne!(run["validity"]["verdict"], "invalid", "{}", run["validity"]);
    // The KV cache vLLM states in /metrics is recorded with the run.
    let kv = &run["environment"]["server"]["kv_cache"];
    assert_eq!(kv["block_size"], 128, "{kv}");
    assert_eq!(kv["prefix_caching"], true, "{kv}");
    assert!(kv["tokens"].as_u64().is_some_and(|t| t > 0), "{kv}");
    let mut measured = 0;
    for line in journal_values(&out.path().join("journal.jsonl")) {
        if line["type"] != "attempt" || line["phase"] != "measured" {
            continue;
        }
        assert_eq!(line["status"], "ok", "{line}");
        let measurement = &line["measurement"];
        // vLLM's token ids count the tokens, and its continuous and final usage agree.
        assert_eq!(measurement["token_source"], "token_ids", "{line}");
        let checks = measurement["cross_checks"]
            .as_array()
            .expect("cross checks");
        for source in ["continuous_usage", "final_usage"] {
            let check = checks
                .iter()
                .find(|c| c["source_b"] == source)
                .unwrap_or_else(|| panic!("no {source} cross-check: {line}"));
            assert_eq!(check["agrees"], true, "{check}");
            assert_eq!(check["tokens_b"], 48, "{check}");
        }
        assert_eq!(line["completion_tokens"], 48, "{line}");
        // Without speculative decoding vLLM sends one token per event, unless its output
        // stream falls behind the engine (a loaded two-core machine): then an event may carry
        // two. Never fewer than one, and the count is the tokens', not the events'.
        let per_event = measurement["tokens_per_event"]
            .as_f64()
            .expect("tokens per event");
        assert!((1.0..1.25).contains(&per_event), "{line}");
        assert!(
            measurement["n_token_events"]
                .as_u64()
                .is_some_and(|events| events <= 48),
            "{line}"
        );
        // The nonce and cache_salt leave nothing for the cache.
        assert_eq!(line["cached_prompt_tokens"], 0, "{line}");
        assert!(
            measurement["prefill_tokens_per_s"]
                .as_f64()
                .is_some_and(|r| r > 0.0)
        );
        assert!(
            measurement["decode_tokens_per_s"]
                .as_f64()
                .is_some_and(|r| r > 0.0)
        );
        measured += 1;
    }
    assert_eq!(measured, 4, "two cells of two repetitions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_sessions_on_vllm_without_a_tool_parser_read_its_cached_tokens_from_turn_two() {
    let server = Server::shared("vllm agent", &tiny());
    assert_vllm(&server).await;
    let out = tempfile::tempdir().expect("a folder");
    let config = AgentConfig {
        sessions: 2,
        turns: 3,
        system_tokens: 400,
        tools: 3,
        user_tokens: 40,
        tool_result_tokens: 60,
        max_tokens: 16,
        think: Think::Fixed { seconds: 0.0 },
        baseline_no_cache: true,
        ..AgentConfig::default()
    };
    let client = sweep_client(&server.base_url(), None, None).expect("client");
    let context = RunContext::new(vec!["sweep".to_owned(), "agent".to_owned()]);
    let outcome = run_agent(
        client,
        AgentStart::New {
            config: Box::new(config),
            out: out.path().to_owned(),
        },
        context,
        Arc::new(QuietObserver),
        None,
    )
    .await
    .expect("the agent run works on a vLLM with no tool parser");
    // vLLM without --tool-call-parser refuses tool_choice "auto" (fixtures/vllm/
    // error-tool-choice-auto-without-parser.http): the run offered the tools with "none".
    assert_eq!(outcome.run.tool_choice.as_deref(), Some("none"));
    assert_eq!(outcome.run.environment.server.kind, "vllm");
    let text = std::fs::read_to_string(&outcome.journal).expect("the journal");
    let mut turns = Vec::new();
    for line in text.lines() {
        if let Ok(AgentLine::Turn(turn)) = serde_json::from_str::<AgentLine>(line) {
            turns.push(*turn);
        }
    }
    assert_eq!(turns.len(), 12, "two passes of two 3-turn sessions");
    for turn in &turns {
        assert!(turn.status.answered(), "{turn:?}");
        let cached = turn.cached_tokens.expect("vLLM states cached tokens");
        let prompt = turn.prompt_tokens.expect("vLLM states prompt tokens");
        assert!(cached <= prompt, "{turn:?}");
        assert_eq!(
            cached % 128,
            0,
            "vLLM's CPU cache hits whole blocks: {turn:?}"
        );
        match turn.pass {
            Pass::Baseline => assert_eq!(cached, 0, "defeated: {turn:?}"),
            Pass::Cached if turn.turn >= 2 => {
                assert!(
                    cached >= 128,
                    "turn {} served nothing from the cache: {turn:?}",
                    turn.turn
                );
            }
            _ => {}
        }
    }
}

/// The spec-decode counters' values in a scrape.
fn spec_counters(snapshot: &MetricsSnapshot) -> [f64; 3] {
    [
        "vllm:spec_decode_num_drafts_total",
        "vllm:spec_decode_num_draft_tokens_total",
        "vllm:spec_decode_num_accepted_tokens_total",
    ]
    .map(|name| {
        snapshot
            .sum(name)
            .unwrap_or_else(|| panic!("vLLM with a speculative config exposes {name}"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speculative_decodings_acceptance_is_vllms_own_counters_ratio_and_tokens_are_counted() {
    let launch = Launch::tiny()
        .args([
            "--speculative-config",
            r#"{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}"#,
        ])
        .env("VLLM_SERVER_DEV_MODE", "1");
    let server = Server::shared("vllm spec", &launch);
    assert_vllm(&server).await;
    let client = client_of(&server);
    let before = spec_counters(&client.metrics().await.expect("/metrics"));
    let out = tempfile::tempdir().expect("a folder");
    // No warm-up: every generating request of the run is a measured one of this one cell.
    let mut config = config(&[Workload::Code], &[400], &[96], 3);
    config.warmup = 0;
    let start = SweepStart::New {
        config: Box::new(config),
        out: out.path().to_owned(),
    };
    let outcome = start_run(&server.base_url(), start, Arc::new(QuietObserver))
        .await
        .expect("the sweep finishes");
    let after = spec_counters(&client.metrics().await.expect("/metrics"));
    let delta: Vec<f64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
    let run = read_run_file(&outcome);
    let cell = &run["cells"][0];
    let spec = &cell["spec_decode"];
    assert_eq!(
        spec["drafts"].as_f64(),
        Some(delta[0]),
        "{spec} vs {delta:?}"
    );
    assert_eq!(spec["draft_tokens"].as_f64(), Some(delta[1]), "{spec}");
    assert_eq!(spec["accepted_tokens"].as_f64(), Some(delta[2]), "{spec}");
    assert!(delta[1] > 0.0, "the proposer drafted nothing: {delta:?}");
    let rate = spec["acceptance_rate"].as_f64().expect("a rate");
    assert!(
        (rate - delta[2] / delta[1]).abs() < 1e-12,
        "{rate} vs {delta:?}"
    );
    // Tokens, not events: each request's count is the server's, whatever the events held.
    for line in journal_values(&out.path().join("journal.jsonl")) {
        if line["type"] == "attempt" {
            assert_eq!(line["completion_tokens"], 96, "{line}");
            let events = line["measurement"]["n_token_events"]
                .as_u64()
                .expect("events");
            assert!(events <= 96, "{line}");
        }
    }
    // With accepted drafts, some events carried several tokens.
    if delta[2] > 0.0 {
        assert!(
            cell["median"]["tokens_per_event"]
                .as_f64()
                .is_some_and(|t| t > 1.0),
            "{}",
            cell["median"]
        );
    }
    // In its development mode vLLM states its whole configuration: kept as the launch flags.
    let weights = &run["environment"]["model"]["weights"];
    let flags = weights["launch_flags"]["vllm_config"]
        .as_str()
        .unwrap_or_else(|| panic!("no /server_info in the weights record: {weights}"));
    assert!(
        flags.contains("speculative_config=SpeculativeConfig(method='ngram'"),
        "{flags}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vllms_refusals_are_classified_by_its_own_words() {
    let server = Server::shared("vllm refusals", &tiny());
    assert_vllm(&server).await;
    let client = client_of(&server);
    // A prompt over --max-model-len: vLLM's 400 reads as context_exceeded.
    let words: Vec<String> = (0..2600).map(|i| format!("x{i}")).collect();
    let mut request = ChatRequest::new("tiny", vec![ChatMessage::user(words.join(" "))]);
    request.max_tokens = Some(8);
    let error = client.chat(&request).await.expect_err("too long");
    assert!(vernier_openai::is_context_exceeded(&error), "{error}");
    // max_tokens beyond the context: vLLM names the parameter, and the message says so.
    let mut request = ChatRequest::new("tiny", vec![ChatMessage::user("hello")]);
    request.max_tokens = Some(5000);
    let error = client.chat(&request).await.expect_err("over the context");
    let text = error.to_string();
    assert!(
        text.contains("max_tokens=5000 cannot be greater than max_model_len=2048"),
        "{text}"
    );
    // An answer budget longer than the whole context is a length refusal too.
    assert!(vernier_openai::is_context_exceeded(&error), "{text}");
    // A wrong model is refused before anything is measured, naming the one served.
    let out = tempfile::tempdir().expect("a folder");
    let mut wrong = config(&[Workload::Prose], &[64], &[8], 1);
    wrong.model = "no-such-model".to_owned();
    let start = SweepStart::New {
        config: Box::new(wrong),
        out: out.path().join("run"),
    };
    let error = start_run(&server.base_url(), start, Arc::new(QuietObserver))
        .await
        .expect_err("refused");
    let text = error.to_string();
    assert!(
        text.contains("no-such-model") && text.contains("tiny"),
        "{text}"
    );
    assert!(!out.path().join("run").join("journal.jsonl").exists());
    // A cell over the context is left out by name before sending, with vLLM's stated length.
    let mut cells = config(&[Workload::Prose], &[64, 4000], &[8], 1);
    cells.warmup = 0;
    let start = SweepStart::New {
        config: Box::new(cells),
        out: out.path().join("cells"),
    };
    let outcome = start_run(&server.base_url(), start, Arc::new(QuietObserver))
        .await
        .expect("the sweep finishes");
    let run = read_run_file(&outcome);
    let reason = run["cells"][1]["context_exceeded"]
        .as_str()
        .expect("left out");
    assert!(reason.contains("2048 tokens (max_model_len)"), "{reason}");
    // The weights record: vLLM's /v1/models root is the folder it loaded.
    let weights = &run["environment"]["model"]["weights"];
    let install = vernier_test_support::vllm::locate("vllm refusals");
    assert_eq!(
        weights["loaded_from"].as_str(),
        Some(install.tiny.to_string_lossy().as_ref()),
        "{weights}"
    );
    assert_eq!(weights["stated_by"], "/v1/models root");
}
