//! `ready --launch` on a real `llama-server` (SmolLM2-135M-Instruct), built and downloaded by
//! `scripts/llama-server.sh`. Found through `VERNIER_LLAMA_SERVER` and `VERNIER_LLAMA_MODEL`,
//! or else through `scripts/llama-server.sh --check`; missing, the test fails loudly unless
//! `VERNIER_SKIP_LLAMA_TESTS=1`.

use std::path::PathBuf;
use std::time::Duration;

use vernier_lifecycle::{QuietObserver, ReadyConfig, ReadyStart, group_alive, run_ready};

use crate::support::free_port;

#[path = "../../../../tests/support/llama_server.rs"]
#[expect(
    dead_code,
    reason = "`ready --launch` starts the server itself: only `locate` is used"
)]
mod llama_server;

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
