//! The sweep against a real `llama-server` (SmolLM2-135M-Instruct, built and cached by
//! `scripts/llama-server.sh`): our figures request by request against the server's own
//! `timings` (and the `measure` path's too), every event timed by the kernel's receive time,
//! a prompt beyond its context left out before anything is sent, and streams that overflow the
//! cache the server's slots share left out as its refusal. Missing, the
//! server fails the test loudly unless `VERNIER_SKIP_LLAMA_TESTS=1`.

use std::sync::{Arc, Mutex};

use vernier_sweep::{SweepObserver, SweepStart, Workload};

use crate::support::{config, journal_values, start_run};

use vernier_test_support::llama_server;

/// An observer that keeps the run's warnings (what the binary prints even when quiet).
#[derive(Debug, Default)]
struct Warnings(Mutex<Vec<String>>);

impl SweepObserver for Warnings {
    fn warn(&self, message: &str) {
        self.0
            .lock()
            .expect("the warnings' lock")
            .push(message.to_owned());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_a_real_llama_server_our_decode_matches_its_own_timings_and_long_prompts_are_left_out()
 {
    let Some(server) = llama_server::start_for(
        "against_a_real_llama_server_our_decode_matches_its_own_timings_and_long_prompts_are_left_out",
        &[
            "-t",
            "2",
            "-c",
            "2048",
            "-np",
            "1",
            "--metrics",
            "--no-warmup",
        ],
    ) else {
        return;
    };
    let port = server.port;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = config(&[Workload::Prose], &[64, 400, 4000], &[200], 2);
    config.warmup = 1;
    let warnings = Arc::new(Warnings::default());
    let start = SweepStart::New {
        config: Box::new(config),
        out: out.path().to_owned(),
    };
    let outcome = start_run(
        &format!("http://127.0.0.1:{port}"),
        start,
        Arc::clone(&warnings) as Arc<dyn SweepObserver>,
    )
    .await
    .expect("the sweep finishes");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outcome.files.run_file).expect("run.json"))
            .expect("JSON");
    let cells = run["cells"].as_array().expect("cells");
    // 4000 + 200 tokens cannot fit a 2048-token context: left out before sending, by name.
    let reason = cells[2]["context_exceeded"].as_str().expect("left out");
    assert!(
        reason.contains("context of 2048 tokens (n_ctx)"),
        "{reason}"
    );
    let warnings = warnings.0.lock().expect("the warnings' lock").clone();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("left out (context_exceeded)")),
        "{warnings:?}"
    );
    let mut compared = 0;
    for line in journal_values(&out.path().join("journal.jsonl")) {
        if line["type"] != "attempt" || line["status"] != "ok" {
            continue;
        }
        let timings = &line["server_timings"];
        let measurement = &line["measurement"];
        // The completion tokens are the server's own, exactly.
        assert_eq!(line["completion_tokens"], timings["predicted_n"], "{line}");
        // Every event was timed by the kernel's receive time (Linux stamps reads).
        if cfg!(target_os = "linux") {
            assert_eq!(measurement["clock"], "kernel_rx", "{line}");
            assert_eq!(line["timeline"]["clock"], "kernel_rx", "{line}");
            // The reads are numbered, so whether the first token shared one is known.
            assert!(
                measurement["first_token_read_shared"].is_boolean(),
                "{line}"
            );
        }
        assert_eq!(
            line["completion_tokens"], 200,
            "ignore_eos forced the length"
        );
        let ours = measurement["decode_tokens_per_s"]
            .as_f64()
            .expect("our decode");
        let theirs = timings["predicted_per_second"]
            .as_f64()
            .expect("the server's decode");
        let ratio = ours / theirs;
        assert!(
            (ratio - 1.0).abs() < 0.03,
            "decode ours {ours:.1} vs the server's {theirs:.1}"
        );
        // TTFT from the first byte sent covers the server's prompt time.
        let ttft = measurement["ttft_ms"].as_f64().expect("ttft");
        let prompt_ms = timings["prompt_ms"].as_f64().expect("prompt_ms");
        assert!(
            ttft >= prompt_ms,
            "TTFT {ttft} ms is shorter than the server's prompt time {prompt_ms} ms"
        );
        compared += 1;
    }
    assert_eq!(
        compared, 6,
        "two cells, one warm-up and two measured requests each"
    );
    let report = std::fs::read_to_string(out.path().join("report.md")).expect("report");
    assert!(report.contains("## The server's own clock"), "{report}");
    measure_against(port).await;
}

/// The `measure` path (`Client::measure_chat`, as the `measure` example calls it) against the
/// same server: 200 tokens, decode within 3% of the server's own, its count exactly.
async fn measure_against(port: u16) {
    use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder, StreamOptions};
    let client = ClientBuilder::new(&format!("http://127.0.0.1:{port}/v1"))
        .build()
        .expect("a client");
    let mut request = ChatRequest::new(
        "smollm2",
        vec![ChatMessage::user("Write about rivers and the sea.")],
    );
    request.max_tokens = Some(200);
    request.stream_options = Some(StreamOptions::usage(false));
    let request = request
        .with_extra("ignore_eos", true)
        .with_extra("cache_prompt", false);
    let (metered, error) = client.measure_chat(&request).await.expect("a stream");
    assert!(error.is_none(), "{error:?}");
    let timings = metered
        .accumulated
        .timings()
        .expect("llama.cpp's timings")
        .clone();
    let measurement = metered.measurement;
    if cfg!(target_os = "linux") {
        assert_eq!(measurement.clock.as_str(), "kernel_rx");
    }
    assert_eq!(Some(measurement.completion_tokens), timings.predicted_n);
    let theirs = timings.predicted_per_second.expect("the server's decode");
    let ours = measurement.decode_tokens_per_s.expect("our decode");
    assert!(
        (ours / theirs - 1.0).abs() < 0.03,
        "measure: decode ours {ours:.1} vs the server's {theirs:.1}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_that_fit_a_real_llama_server_alone_but_not_together_leave_their_cell_out_as_refused()
 {
    let Some((server, model)) = llama_server::locate(
        "streams_that_fit_a_real_llama_server_alone_but_not_together_leave_their_cell_out_as_refused",
    ) else {
        return;
    };
    // Automatic slots (llama-server's default): four slots reading and writing one cache of
    // 2,048 cells. One stream of 1,024 + 64 tokens fits; two hold 2,176 cells at once and
    // both fail mid-stream ("Context size has been exceeded."). /props cannot tell one cache
    // shared by the slots from a cache per slot, so the cell is sent and left out when the
    // server says so, as the server's refusal, never as failed requests.
    let server = llama_server::Server::start(
        &server,
        &model,
        &["-t", "2", "-c", "2048", "--metrics", "--no-warmup"],
    );
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = config(&[Workload::Prose], &[1024], &[64], 1);
    config.concurrency = vec![1, 2];
    config.warmup = 0;
    let warnings = Arc::new(Warnings::default());
    let start = SweepStart::New {
        config: Box::new(config),
        out: out.path().to_owned(),
    };
    let outcome = start_run(
        &format!("http://127.0.0.1:{}", server.port),
        start,
        Arc::clone(&warnings) as Arc<dyn SweepObserver>,
    )
    .await
    .expect("the sweep finishes");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outcome.files.run_file).expect("run.json"))
            .expect("JSON");
    let cells = run["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 2);
    // One stream: measured, with no failure.
    assert!(cells[0]["context_exceeded"].is_null(), "{}", cells[0]);
    assert_eq!(cells[0]["n_ok"], 1, "{}", cells[0]);
    // Two at once: left out, with the server's words and why.
    let reason = cells[1]["context_exceeded"].as_str().expect("left out");
    assert!(
        reason.contains("Context size has been exceeded")
            && reason.contains("outgrew the KV cache the server's requests share"),
        "{reason}"
    );
    assert_eq!(cells[1]["n_ok"], 0, "{}", cells[1]);
    let warnings = warnings.0.lock().expect("the warnings' lock").clone();
    assert!(
        warnings.iter().any(|w| w.contains("each fits alone")),
        "{warnings:?}"
    );
}

/// Agent sessions against the real server: four sessions of six turns on four slots, every
/// turn's cached tokens the server's own count (`prompt_tokens_details.cached_tokens` or
/// `timings.cache_n`), and from turn 2 on each turn reports a hit (its slot kept the
/// conversation so far).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_sessions_against_a_real_llama_server_hit_its_slot_cache_from_turn_two() {
    use vernier_sweep::agent::{
        AgentConfig, AgentLine, AgentStart, CachedSource, Pass, Think, run_agent,
    };
    let Some(server) = llama_server::start_for(
        "agent_sessions_against_a_real_llama_server_hit_its_slot_cache_from_turn_two",
        &[
            "-t",
            "2",
            "-c",
            "8192",
            "-np",
            "4",
            "--jinja",
            "--metrics",
            "--no-warmup",
        ],
    ) else {
        return;
    };
    let out = tempfile::tempdir().expect("temporary folder");
    let config = AgentConfig {
        sessions: 4,
        turns: 6,
        system_tokens: 300,
        tools: 2,
        user_tokens: 30,
        tool_result_tokens: 40,
        max_tokens: 16,
        think: Think::Fixed { seconds: 0.0 },
        ..AgentConfig::default()
    };
    let client =
        vernier_sweep::sweep_client(&format!("http://127.0.0.1:{}", server.port), None, None)
            .expect("client");
    let outcome = run_agent(
        client,
        AgentStart::New {
            config: Box::new(config),
            out: out.path().to_owned(),
        },
        vernier_sweep::RunContext::new(vec!["sweep".to_owned(), "agent".to_owned()]),
        Arc::new(vernier_sweep::QuietObserver),
        None,
    )
    .await
    .expect("the agent run finishes");
    let turns: Vec<_> = vernier_journal::read::<AgentLine>(&outcome.journal)
        .expect("journal")
        .into_values()
        .into_iter()
        .filter_map(|line| match line {
            AgentLine::Turn(turn) => Some(*turn),
            _ => None,
        })
        .collect();
    assert_eq!(turns.len(), 24, "{turns:#?}");
    for turn in &turns {
        assert!(turn.status.answered(), "{turn:#?}");
        assert_eq!(turn.pass, Pass::Cached);
        assert_ne!(
            turn.cached_source,
            CachedSource::None,
            "the server's own count"
        );
        if turn.turn >= 2 {
            let cached = turn.cached_tokens.expect("cached");
            assert!(
                cached > 0,
                "session {} turn {}: no hit ({} prompt tokens)",
                turn.session,
                turn.turn,
                turn.prompt_tokens.unwrap_or(0)
            );
            assert!(cached < turn.prompt_tokens.expect("prompt"));
        }
    }
    let cached = outcome
        .run
        .passes
        .iter()
        .find(|p| p.pass == Pass::Cached)
        .expect("the pass");
    assert!(cached.hit_ratio.is_some_and(|r| r > 0.5), "{cached:#?}");
}
