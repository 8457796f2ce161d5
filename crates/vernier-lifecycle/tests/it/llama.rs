//! `ready --launch` and `soak --launch` on a real `llama-server` (SmolLM2-135M-Instruct), built and downloaded by
//! `scripts/llama-server.sh`. Found through `VERNIER_LLAMA_SERVER` and `VERNIER_LLAMA_MODEL`,
//! or else through `scripts/llama-server.sh --check`; missing, the test fails loudly unless
//! `VERNIER_SKIP_LLAMA_TESTS=1`.

use std::path::PathBuf;
use std::time::Duration;

use vernier_lifecycle::{
    DeathKind, QuietObserver, ReadyConfig, ReadyStart, SoakConfig, SoakJournalLine, SoakServer,
    group_alive, run_ready,
};

use crate::support::free_port;

use vernier_test_support::llama_server;

fn config(server: &str, model: &str, port: u16) -> ReadyConfig {
    let mut config = ReadyConfig::default();
    config.base_url = format!("http://127.0.0.1:{port}");
    config.launch = Some(format!(
        "exec '{server}' -m '{model}' --host 127.0.0.1 --port {port} -t 2 -c 2048 --no-warmup"
    ));
    config.reps = 3;
    config.warm_requests = 3;
    config.max_tokens = 16;
    config.ready_timeout_s = 120.0;
    config.stop_grace_s = 10.0;
    config
}

#[tokio::test]
async fn a_real_llama_server_start_records_every_milestone_three_times() {
    let Some((server, model)) =
        llama_server::locate("a_real_llama_server_start_records_every_milestone_three_times")
    else {
        return;
    };
    let folder = tempfile::tempdir().expect("tempdir");
    let out = std::env::var_os("VERNIER_LLAMA_READY_OUT")
        .map_or_else(|| folder.path().join("run"), PathBuf::from);
    let start = ReadyStart::New {
        config: config(&server, &model, free_port()),
        out,
    };
    let outcome = run_ready(start, &["lifecycle".to_owned()], &QuietObserver, None)
        .await
        .expect("ready run");
    let run = &outcome.run;
    assert_eq!(run.launches.len(), 3);
    for rep in &run.launches {
        assert!(
            rep.error.is_none(),
            "repetition {}: {:?}",
            rep.rep,
            rep.error
        );
        assert!(rep.milestones.complete(), "{:?}", rep.milestones);
        assert!(
            !group_alive(rep.pgid),
            "repetition {} left llama-server running",
            rep.rep
        );
        assert!(!rep.stop.left_behind);
        #[expect(
            clippy::print_stderr,
            reason = "the measured milestones belong in the test output"
        )]
        {
            eprintln!(
                "repetition {}: {:?} cold {:?} warm {:?}",
                rep.rep, rep.milestones, rep.cold, rep.warm
            );
        }
    }
    assert_eq!(run.complete_reps, 3);
}

#[tokio::test]
async fn an_interrupted_llama_server_start_leaves_no_server() {
    let Some((server, model)) =
        llama_server::locate("an_interrupted_llama_server_start_leaves_no_server")
    else {
        return;
    };
    let folder = tempfile::tempdir().expect("tempdir");
    let start = ReadyStart::New {
        config: config(&server, &model, free_port()),
        out: folder.path().join("run"),
    };
    // Interrupt while the model loads (the port is open, /health not yet 200) or soon after.
    let interrupt = Box::pin(async {
        tokio::time::sleep(Duration::from_millis(120)).await;
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
        !group_alive(rep.pgid),
        "llama-server outlived the interrupt"
    );
}

/// Kills the launched server's process group with SIGKILL three seconds after each of the
/// first `kills` times it became ready; the instants of the kills (ms since the epoch).
async fn kill_after_ready(journal: PathBuf, kills: usize) -> Vec<u64> {
    let mut instants = Vec::new();
    let mut readies_seen = 0;
    while instants.len() < kills {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let Ok(lines) = vernier_lifecycle::read_soak_journal(&journal) else {
            continue;
        };
        let readies = lines
            .iter()
            .filter(|line| matches!(line, SoakJournalLine::Ready { ready: true, .. }))
            .count();
        if readies <= readies_seen {
            continue;
        }
        readies_seen = readies;
        let Some(pgid) = lines.iter().rev().find_map(|line| match line {
            SoakJournalLine::Launched { pgid, .. } => Some(*pgid),
            _ => None,
        }) else {
            continue;
        };
        tokio::time::sleep(Duration::from_secs(3)).await;
        instants.push(vernier_run::unix_ms());
        let killed = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .status()
            .expect("kill");
        assert!(killed.success(), "kill -9 of group {pgid}");
    }
    instants
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_soak_of_a_real_llama_server_records_two_kills_and_relaunches_it_twice() {
    let Some((server, model)) = llama_server::locate(
        "a_soak_of_a_real_llama_server_records_two_kills_and_relaunches_it_twice",
    ) else {
        return;
    };
    let folder = tempfile::tempdir().expect("tempdir");
    let out = folder.path().join("soak");
    let port = free_port();
    let mut config = SoakConfig::default();
    config.base_url = format!("http://127.0.0.1:{port}");
    config.servers = vec![SoakServer::new(
        "llama",
        Some(format!(
            "exec '{server}' -m '{model}' --host 127.0.0.1 --port {port} -t 2 -c 4096 -np 2 --metrics --no-warmup"
        )),
    )];
    config.concurrency = vec![2];
    config.duration_s = 12.0;
    config.max_tokens = 1500;
    config.probe_interval_s = 0.5;
    config.ready_timeout_s = 120.0;
    config.stop_grace_s = 5.0;
    let killer = tokio::spawn(kill_after_ready(out.join("journal.jsonl"), 2));
    let outcome = crate::soak::soak_new(config, &out).await.expect("soak");
    let kills = killer.await.expect("killer");
    let run = &outcome.run;
    assert!(run.gave_up.is_none(), "{:?}", run.gave_up);
    assert_eq!(run.deaths.len(), 2, "{:?}", run.deaths);
    for (death, killed_at) in run.deaths.iter().zip(&kills) {
        assert!(
            matches!(
                death.how,
                DeathKind::Exit {
                    signal: Some(9),
                    ..
                }
            ),
            "{:?}",
            death.how
        );
        // Seen within a few seconds of the kill (the process is looked at every 0.5 s).
        assert!(
            death.unix_ms + 100 >= *killed_at && death.unix_ms <= killed_at + 3000,
            "killed at {killed_at}, death recorded at {}",
            death.unix_ms
        );
        // Both slots taken; on a busy machine a request may still be in its prefill.
        assert_eq!(death.in_flight.len(), 2, "{death:?}");
        assert!(
            death.in_flight.iter().all(|r| r.tokens <= 1500),
            "{death:?}"
        );
        let log = death.log.as_ref().expect("log evidence");
        assert!(!log.tail.is_empty());
        let metrics = death
            .metrics
            .as_ref()
            .expect("a /metrics scrape before the death");
        assert!(metrics.running.is_some_and(|r| r >= 1.0), "{metrics:?}");
        #[expect(
            clippy::print_stderr,
            reason = "the measured deaths belong in the test output"
        )]
        {
            eprintln!(
                "death {} after {:.1} s: in flight {:?}",
                death.number,
                death.since_ready_s,
                death.in_flight.iter().map(|r| r.tokens).collect::<Vec<_>>()
            );
        }
    }
    let lines = vernier_lifecycle::read_soak_journal(&out.join("journal.jsonl")).expect("journal");
    let relaunches = lines
        .iter()
        .filter(
            |line| matches!(line, SoakJournalLine::Launched { reason, .. } if reason == "relaunch"),
        )
        .count();
    assert_eq!(relaunches, 2);
    let arm = &run.arms[0];
    assert!((arm.loaded_s - 12.0).abs() < 1.0, "{}", arm.loaded_s);
    assert!(arm.requests_finished + arm.requests_failed > 0);
}
