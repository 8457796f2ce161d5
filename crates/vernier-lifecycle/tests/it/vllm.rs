//! `ready --launch`, `watch` and `soak --launch` against a real vLLM (its CPU build, installed
//! and cached by `scripts/vllm.sh`): its start read from its own log (the KV cache in tokens
//! among it), a busy engine told from a hung one, and the death of its engine core recorded as
//! a death. Each test checks that vLLM itself answered.

use std::time::Duration;

use tokio::task::JoinSet;
use vernier_lifecycle::{
    DeathKind, QuietObserver, ReadyConfig, ReadyStart, SoakConfig, SoakJournalLine, SoakServer,
    Verdict, WatchConfig, WatchEvent, group_alive, run_ready, run_watch,
};
use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder};
use vernier_test_support::vllm::{self, Launch, Server};

use crate::support::free_port;

/// The KV cache vLLM's CPU build makes of `VLLM_CPU_KVCACHE_SPACE` GiB for the tiny model,
/// computed from the model's config (not from vLLM): K and V, per layer, per KV head, per
/// head dimension, two bytes each in bf16.
fn tiny_kv_tokens(install: &vllm::Install) -> u64 {
    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(install.tiny.join("config.json")).expect("the tiny config"),
    )
    .expect("JSON");
    let field = |name: &str| config[name].as_u64().expect(name);
    let bytes_per_token =
        2 * field("num_hidden_layers") * field("num_key_value_heads") * field("head_dim") * 2;
    let gib: u64 = install
        .env
        .iter()
        .find(|(name, _)| name == "VLLM_CPU_KVCACHE_SPACE")
        .and_then(|(_, value)| value.parse().ok())
        .expect("VLLM_CPU_KVCACHE_SPACE in vLLM's environment file");
    gib * (1 << 30) / bytes_per_token
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_launches_vllm_and_reads_its_start_and_kv_cache_from_its_log() {
    let install = vllm::locate("vllm ready");
    let port = free_port();
    let mut config = ReadyConfig::default();
    config.base_url = format!("http://127.0.0.1:{port}");
    config.launch = Some(Launch::tiny().shell_command(&install, port));
    config.reps = 1;
    config.warm_requests = 2;
    config.max_tokens = 16;
    config.ready_timeout_s = 300.0;
    config.stop_grace_s = 20.0;
    let folder = tempfile::tempdir().expect("a folder");
    let outcome = run_ready(
        ReadyStart::New {
            config,
            out: folder.path().join("run"),
        },
        &["lifecycle".to_owned()],
        &QuietObserver,
        None,
    )
    .await
    .expect("the ready run");
    let run = &outcome.run;
    let rep = &run.launches[0];
    assert!(rep.error.is_none(), "{:?}; log: {}", rep.error, rep.log);
    assert!(rep.milestones.complete(), "{:?}", rep.milestones);
    assert!(!group_alive(rep.pgid), "vLLM outlived the stop");
    // vLLM answered: /health went 200 only once its log said the application was up.
    let start = &rep.engine_start;
    assert_eq!(start.engine.as_deref(), Some("vllm"), "{start:?}");
    for name in [
        "weights_loading",
        "kv_cache_sized",
        "engine_ready",
        "server_starting",
        "application_ready",
    ] {
        assert!(start.milestone(name).is_some(), "no {name}: {start:?}");
    }
    let seen = |name: &str| start.milestone(name).map_or(f64::NAN, |m| m.seen_s);
    assert!(seen("weights_loading") <= seen("kv_cache_sized"));
    assert!(seen("kv_cache_sized") <= seen("application_ready"));
    let health_ok = rep.milestones.health_ok_s.expect("health");
    assert!(
        seen("application_ready") <= health_ok + 0.25,
        "read at {} s, /health 200 at {health_ok} s",
        seen("application_ready")
    );
    assert!(
        start
            .milestone("engine_ready")
            .and_then(|m| m.stated_s)
            .is_some(),
        "{start:?}"
    );
    // The KV cache in tokens, as the model's config and the cache space predict it.
    let expected = tiny_kv_tokens(&install);
    assert_eq!(start.kv_cache_tokens, Some(expected), "{start:?}");
    assert_eq!(run.kv_cache_tokens, vec![expected]);
    let report = std::fs::read_to_string(&outcome.markdown).expect("the report");
    assert!(
        report.contains(&format!(
            "KV cache: {} tokens",
            vernier_cli::thousands(expected)
        )),
        "{report}"
    );
}

/// Streams `n` long generations from `base_url`, each holding a slot until it ends.
fn hold_slots(base_url: &str, n: usize) -> JoinSet<()> {
    let mut holders = JoinSet::new();
    for i in 0..n {
        let client = ClientBuilder::new(base_url).build().expect("a client");
        holders.spawn(async move {
            let mut request =
                ChatRequest::new("tiny", vec![ChatMessage::user(format!("long answer {i}"))]);
            request.max_tokens = Some(1800);
            request.extra.insert("ignore_eos".to_owned(), true.into());
            if let Ok(mut stream) = client.chat_stream(&request).await {
                while let Some(Ok(_)) = stream.next_event().await {}
            }
        });
    }
    holders
}

/// Holds both slots of a two-slot server with long generations and queues a third, and
/// checks on the way that the metric names Vernier reads exist and move.
async fn hold_three_for_two_slots(client: &vernier_openai::Client, base_url: &str) -> JoinSet<()> {
    let idle = client.metrics().await.expect("/metrics");
    let generated_before = idle
        .sum("vllm:generation_tokens_total")
        .expect("vllm:generation_tokens_total");
    assert_eq!(idle.sum("vllm:kv_cache_usage_perc"), Some(0.0));
    // Three long generations for two slots: two run, one waits.
    let holders = hold_slots(base_url, 3);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let busy = loop {
        let metrics = client.metrics().await.expect("/metrics");
        if metrics.sum("vllm:num_requests_running") == Some(2.0)
            && metrics.sum("vllm:num_requests_waiting") == Some(1.0)
        {
            break metrics;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the long generations never ran"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // The names Vernier reads exist and move: the KV cache in use (a fraction, not a
    // percentage, despite its name) and the generated tokens.
    let usage = busy
        .sum("vllm:kv_cache_usage_perc")
        .expect("vllm:kv_cache_usage_perc");
    assert!(usage > 0.0 && usage <= 1.0, "{usage}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let generated = client
        .metrics()
        .await
        .expect("/metrics")
        .sum("vllm:generation_tokens_total")
        .expect("vllm:generation_tokens_total");
    assert!(
        generated > generated_before,
        "{generated} after {generated_before}"
    );
    holders
}

/// Continues vLLM's engine when dropped, so a failed test leaves no stopped engine behind.
struct Continue<'a>(&'a Server);

impl Drop for Continue<'_> {
    fn drop(&mut self) {
        self.0.signal_named("EngineCore", "CONT");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_tells_a_busy_vllm_from_one_whose_engine_stopped() {
    // Two slots, both held by long generations: the probe queues behind them.
    let server = Server::dedicated("vllm watch", &Launch::tiny().args(["--max-num-seqs", "2"]));
    let client = ClientBuilder::new(&server.base_url())
        .build()
        .expect("a client");
    let identity = client.server_identity().await;
    assert_eq!(identity.kind, vernier_openai::ServerKind::Vllm);
    let _holders = hold_three_for_two_slots(&client, &server.base_url()).await;
    let folder = tempfile::tempdir().expect("a folder");
    let marker = folder.path().join("on-hung.log");
    let mut config = WatchConfig::default();
    config.base_url = server.base_url();
    config.interval_s = 0.5;
    config.probe_timeout_s = 0.6;
    config.settle_s = 0.6;
    config.failures = 2;
    config.grace_s = 60.0;
    config.ready_timeout_s = 5.0;
    config.on_hung = Some(format!("echo hung >> '{}'", marker.display()));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let out = folder.path().join("watch");
    let watch = {
        let out = out.clone();
        tokio::spawn(async move {
            let interrupt = Box::pin(async move {
                let _ = stopped.await;
            });
            run_watch(&config, &out, &QuietObserver, Some(interrupt)).await
        })
    };
    // Busy for a while: the engine generates for the held slots.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let busy_until = vernier_run::unix_ms();
    // Then the engine core stops (SIGSTOP): the API server still answers /health and
    // /metrics, the probe gets no token, and the generation counter stands still.
    assert!(
        server.signal_named("EngineCore", "STOP") > 0,
        "no engine core"
    );
    let resume = Continue(&server);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !marker.exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the stopped engine was never called hung"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(resume);
    let _ = stop.send(());
    let outcome = watch.await.expect("the watch task").expect("the watch run");
    let events = vernier_journal::read::<WatchEvent>(&outcome.journal)
        .expect("the watch journal")
        .into_values();
    let verdicts: Vec<(u64, Verdict)> = events
        .iter()
        .filter_map(|event| match event {
            WatchEvent::Decision {
                unix_ms, verdict, ..
            } => Some((*unix_ms, *verdict)),
            _ => None,
        })
        .collect();
    let before: Vec<Verdict> = verdicts
        .iter()
        .filter(|(at, _)| *at <= busy_until)
        .map(|(_, verdict)| *verdict)
        .collect();
    assert!(before.contains(&Verdict::Busy), "{verdicts:?}");
    assert!(
        !before.contains(&Verdict::Hung),
        "a busy vLLM was called hung: {verdicts:?}"
    );
    assert!(
        verdicts
            .iter()
            .any(|(at, verdict)| *at > busy_until && *verdict == Verdict::Hung),
        "{verdicts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_soak_records_the_death_of_vllms_engine_core_as_a_death() {
    let install = vllm::locate("vllm soak");
    let port = free_port();
    let folder = tempfile::tempdir().expect("a folder");
    let out = folder.path().join("soak");
    let mut config = SoakConfig::default();
    config.base_url = format!("http://127.0.0.1:{port}");
    config.servers = vec![SoakServer::new(
        "vllm",
        Some(Launch::tiny().shell_command(&install, port)),
    )];
    config.concurrency = vec![2];
    config.duration_s = 6.0;
    config.max_tokens = 1500;
    config.probe_interval_s = 0.5;
    config.ready_timeout_s = 300.0;
    config.stop_grace_s = 20.0;
    let journal = out.join("journal.jsonl");
    // Three seconds into the load, SIGKILL the engine core alone (the API server lives on).
    let killer = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let Ok(lines) = vernier_lifecycle::read_soak_journal(&journal) else {
                continue;
            };
            if !lines
                .iter()
                .any(|line| matches!(line, SoakJournalLine::Ready { ready: true, .. }))
            {
                continue;
            }
            let Some(pgid) = lines.iter().find_map(|line| match line {
                SoakJournalLine::Launched { pgid, .. } => Some(*pgid),
                _ => None,
            }) else {
                continue;
            };
            tokio::time::sleep(Duration::from_secs(3)).await;
            let cores = vllm::processes_named(pgid, "EngineCore");
            for pid in &cores {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            return (vernier_run::unix_ms(), cores.len());
        }
    });
    let outcome = crate::soak::soak_new(config, &out).await.expect("the soak");
    let (killed_at, cores) = killer.await.expect("the killer");
    assert_eq!(cores, 1, "one engine core");
    let run = &outcome.run;
    let death = run.deaths.first().unwrap_or_else(|| {
        panic!(
            "the engine's death was not recorded: {:?}",
            run.arms.first()
        )
    });
    // vLLM answers 500 once its engine core is gone, /health 503, then the API server exits
    // with status 0: any of those is the death, seen within seconds of the kill.
    assert!(
        matches!(
            death.how,
            DeathKind::Exit { .. } | DeathKind::Down | DeathKind::Errors { .. } | DeathKind::Reset
        ),
        "{:?}",
        death.how
    );
    assert!(
        death.unix_ms + 500 >= killed_at && death.unix_ms <= killed_at + 10_000,
        "killed at {killed_at}, death at {}",
        death.unix_ms
    );
    // The requests the death cut are the death's, not failures of their own.
    assert_eq!(run.arms[0].request_errors, 0, "{:?}", run.arms[0]);
    assert!(!death.in_flight.is_empty(), "{death:?}");
}
