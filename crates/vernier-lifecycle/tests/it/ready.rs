//! `ready --launch` against the simulator served by a separate process, and `--swap`
//! against a small on-demand proxy in front of two simulators.

use std::time::Duration;

use vernier_lifecycle::{
    QuietObserver, ReadyConfig, ReadyJournalLine, ReadyStart, group_alive, run_ready,
};

use crate::support::{free_port, sim_launch_command};

fn launch_config(port: u16, delay_ms: u64, loading_ms: u64) -> ReadyConfig {
    let mut config = ReadyConfig::default();
    config.base_url = format!("http://127.0.0.1:{port}");
    config.launch = Some(sim_launch_command(port, delay_ms, loading_ms));
    config.reps = 2;
    config.warm_requests = 2;
    config.max_tokens = 8;
    config.ready_timeout_s = 30.0;
    config.stop_grace_s = 5.0;
    config
}

#[tokio::test]
async fn every_milestone_is_recorded_and_no_server_is_left_behind() {
    let folder = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let start = ReadyStart::New {
        config: launch_config(port, 200, 400),
        out: folder.path().join("run"),
    };
    let outcome = run_ready(start, &["lifecycle".to_owned()], &QuietObserver, None)
        .await
        .expect("ready run");
    let run = &outcome.run;
    assert!(!outcome.interrupted);
    assert_eq!(run.complete_reps, 2, "{:#?}", run.launches);
    for rep in &run.launches {
        let m = &rep.milestones;
        assert!(m.complete(), "{m:?}");
        assert_eq!(
            m.health_first_status,
            Some(503),
            "the loading phase was seen"
        );
        let order = [
            m.tcp_accepting_s,
            m.health_first_answer_s,
            m.health_ok_s,
            m.model_listed_s,
            m.first_token_s,
        ];
        assert!(
            order.windows(2).all(|pair| pair[0] <= pair[1]),
            "milestones out of order: {m:?}"
        );
        // The launch waits 200 ms before binding and 400 ms more before answering 200.
        assert!(m.tcp_accepting_s.unwrap_or_default() >= 0.2, "{m:?}");
        assert!(m.health_ok_s.unwrap_or_default() >= 0.6, "{m:?}");
        assert_eq!(m.model.as_deref(), Some("vernier-sim"));
        assert_eq!(rep.warm.len(), 2);
        assert!(rep.cold.as_ref().and_then(|c| c.ttft_ms).is_some());
        assert!(!rep.stop.killed && !rep.stop.left_behind, "{:?}", rep.stop);
        assert!(
            !group_alive(rep.pgid),
            "repetition {} left its server",
            rep.rep
        );
        assert!(std::path::Path::new(&rep.log).exists());
    }
    for name in [
        "tcp_accepting_s",
        "health_ok_s",
        "model_listed_s",
        "first_token_s",
    ] {
        assert_eq!(run.milestones[name].n, 2, "{name}");
    }
    assert!(run.cold_warm.warm_ttft_ms.is_some());
    let report = std::fs::read_to_string(&outcome.markdown).expect("report.md");
    assert!(report.contains("| first_token_s |"), "{report}");
    let run_file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outcome.run_file).expect("run.json"))
            .expect("run.json is JSON");
    assert_eq!(run_file["complete_reps"], 2);
}

#[tokio::test]
async fn an_interrupt_stops_the_launched_server() {
    let folder = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    // Loading for a minute: the interrupt comes first.
    let start = ReadyStart::New {
        config: launch_config(port, 0, 60_000),
        out: folder.path().join("run"),
    };
    let interrupt = Box::pin(async {
        tokio::time::sleep(Duration::from_millis(800)).await;
    });
    let outcome = run_ready(
        start,
        &["lifecycle".to_owned()],
        &QuietObserver,
        Some(interrupt),
    )
    .await
    .expect("ready run");
    assert!(outcome.interrupted);
    let rep = &outcome.run.launches[0];
    assert!(rep.interrupted);
    assert!(
        rep.milestones.tcp_accepting_s.is_some(),
        "{:?}",
        rep.milestones
    );
    assert!(rep.milestones.health_ok_s.is_none());
    assert!(!group_alive(rep.pgid), "the server outlived the interrupt");
    assert_eq!(
        outcome.run.launches.len(),
        1,
        "no repetition after the interrupt"
    );
}

#[tokio::test]
async fn a_server_that_exits_is_a_failed_repetition_with_its_log() {
    let folder = tempfile::tempdir().expect("tempdir");
    let mut config = launch_config(free_port(), 0, 0);
    config.launch = Some("echo 'cannot load model' >&2; exit 3".to_owned());
    config.reps = 1;
    let start = ReadyStart::New {
        config,
        out: folder.path().join("run"),
    };
    let outcome = run_ready(start, &["lifecycle".to_owned()], &QuietObserver, None)
        .await
        .expect("the run itself completes");
    let rep = &outcome.run.launches[0];
    let error = rep.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("exited") && error.contains("rep-1.log"),
        "{error}"
    );
    assert_eq!(outcome.run.complete_reps, 0);
    let log = std::fs::read_to_string(&rep.log).expect("log");
    assert!(log.contains("cannot load model"));
}

#[tokio::test]
async fn a_resumed_run_measures_only_the_missing_repetitions() {
    let folder = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let out = folder.path().join("run");
    let start = ReadyStart::New {
        config: launch_config(port, 0, 0),
        out: out.clone(),
    };
    let first = run_ready(start, &["lifecycle".to_owned()], &QuietObserver, None)
        .await
        .expect("ready run");
    // Keep the header and the first repetition, as if the run had been killed during the second.
    let text = std::fs::read_to_string(&first.journal).expect("journal");
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&first.journal, kept.join("\n") + "\n").expect("cut the journal");
    let resumed = run_ready(
        ReadyStart::resume(first.journal.clone()),
        &["lifecycle".to_owned()],
        &QuietObserver,
        None,
    )
    .await
    .expect("resume");
    assert_eq!(resumed.run.complete_reps, 2);
    let lines = vernier_lifecycle::read_journal(&resumed.journal).expect("journal");
    let reps: Vec<u32> = lines
        .iter()
        .filter_map(|line| match line {
            ReadyJournalLine::Launch(rep) => Some(rep.rep),
            _ => None,
        })
        .collect();
    assert_eq!(reps, vec![1, 2]);
    assert!(
        lines
            .iter()
            .any(|line| matches!(line, ReadyJournalLine::Resumed { .. }))
    );
}

#[tokio::test]
async fn a_new_run_refuses_an_existing_journal() {
    let folder = tempfile::tempdir().expect("tempdir");
    std::fs::write(folder.path().join("journal.jsonl"), "{}\n").expect("write");
    let start = ReadyStart::New {
        config: launch_config(free_port(), 0, 0),
        out: folder.path().to_owned(),
    };
    let error = run_ready(start, &[], &QuietObserver, None)
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("--resume"), "{error}");
}

/// A llama-swap-like proxy: the model named in a request's body is "loaded" (a 300 ms pause)
/// when it is not the one loaded already, then the request goes to that model's simulator.
pub(crate) async fn start_swap_proxy(
    backends: Vec<(String, std::net::SocketAddr)>,
) -> std::net::SocketAddr {
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let loaded = Arc::new(tokio::sync::Mutex::new(None::<String>));
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let backends = backends.clone();
            let loaded = Arc::clone(&loaded);
            tokio::spawn(async move {
                // Read the head and the body (Content-Length) in full.
                let mut request = Vec::new();
                let mut buffer = [0_u8; 8192];
                let body_start = loop {
                    let Ok(n) = client.read(&mut buffer).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buffer[..n]);
                    if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                let head = String::from_utf8_lossy(&request[..body_start]).to_lowercase();
                let length = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .and_then(|value| value.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                while request.len() < body_start + length {
                    let Ok(n) = client.read(&mut buffer).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buffer[..n]);
                }
                let model = serde_json::from_slice::<serde_json::Value>(&request[body_start..])
                    .ok()
                    .and_then(|body| body["model"].as_str().map(str::to_owned));
                let backend = {
                    let mut loaded = loaded.lock().await;
                    let wanted = model
                        .or_else(|| loaded.clone())
                        .unwrap_or_else(|| backends[0].0.clone());
                    if loaded.as_deref() != Some(wanted.as_str()) {
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        *loaded = Some(wanted.clone());
                    }
                    backends
                        .iter()
                        .find(|(name, _)| *name == wanted)
                        .map(|(_, addr)| *addr)
                };
                let Some(backend) = backend else { return };
                let Ok(mut upstream) = tokio::net::TcpStream::connect(backend).await else {
                    return;
                };
                if upstream.write_all(&request).await.is_err() {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn swaps_are_measured_in_both_directions() {
    use vernier_sim::{Sim, SimConfig};
    let mut backends = Vec::new();
    let mut sims = Vec::new();
    for name in ["alpha", "beta"] {
        let sim = Sim::start(
            SimConfig::builder()
                .model(name)
                .decode_step(Duration::from_millis(2))
                .build(),
        )
        .await
        .expect("simulator");
        backends.push((name.to_owned(), sim.addr()));
        sims.push(sim);
    }
    let proxy = start_swap_proxy(backends).await;
    let folder = tempfile::tempdir().expect("tempdir");
    let mut config = ReadyConfig::default();
    config.base_url = format!("http://{proxy}");
    config.swap = vec!["alpha".to_owned(), "beta".to_owned()];
    config.reps = 2;
    config.max_tokens = 4;
    let outcome = run_ready(
        ReadyStart::New {
            config,
            out: folder.path().join("swap"),
        },
        &[],
        &QuietObserver,
        None,
    )
    .await
    .expect("swap run");
    let requests = &outcome.run.swap_requests;
    let order: Vec<(Option<&str>, &str)> = requests
        .iter()
        .map(|r| (r.from.as_deref(), r.to.as_str()))
        .collect();
    // Repetitions alternate the order, so each direction is measured.
    assert_eq!(
        order,
        vec![
            (None, "alpha"),
            (Some("alpha"), "beta"),
            (Some("beta"), "beta"),
            (Some("beta"), "alpha"),
        ]
    );
    let cost = |from: &str, to: &str| {
        outcome
            .run
            .swaps
            .iter()
            .find(|s| s.from == from && s.to == to)
            .and_then(|s| s.time_to_first_token_s.as_ref())
            .map(|d| d.median)
    };
    // Each switch includes the proxy's 300 ms load.
    assert!(
        cost("alpha", "beta").is_some_and(|s| s >= 0.3),
        "{:?}",
        outcome.run.swaps
    );
    assert!(
        cost("beta", "alpha").is_some_and(|s| s >= 0.3),
        "{:?}",
        outcome.run.swaps
    );
    assert!(cost("beta", "beta").is_some());
    let report = std::fs::read_to_string(&outcome.markdown).expect("report");
    assert!(report.contains("| alpha | beta |"), "{report}");
}
