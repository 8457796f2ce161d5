//! A resumed `ready` run against another server is refused, as in every engine: with
//! `--launch` when its first repetition reaches its first token (the launched process group
//! stopped first), with `--swap` before the first swap.

use std::path::Path;
use std::time::Duration;
use vernier_cli::Failure as _;

use vernier_lifecycle::{
    LifecycleError, QuietObserver, ReadyConfig, ReadyJournalLine, ReadyStart, ResumeFlags,
    group_alive, read_journal, run_ready,
};
use vernier_run::RunError;
use vernier_sim::{Sim, SimConfig, SimHandle};

use crate::ready::start_swap_proxy;
use crate::support::{free_port, sim_launch_command};

async fn sim(model: &str) -> SimHandle {
    Sim::start(
        SimConfig::builder()
            .model(model)
            .decode_step(Duration::from_millis(1))
            .build(),
    )
    .await
    .expect("simulator")
}

/// Keeps the journal's first `n` lines, as if the run had been killed after them.
fn cut_journal(journal: &Path, n: usize) {
    let text = std::fs::read_to_string(journal).expect("journal");
    let kept: Vec<&str> = text.lines().take(n).collect();
    std::fs::write(journal, kept.join("\n") + "\n").expect("cut the journal");
}

fn resumed_against(journal: &Path, base_url: &str) -> ReadyStart {
    let mut given = ReadyConfig::default();
    base_url.clone_into(&mut given.base_url);
    ReadyStart::Resume {
        journal: journal.to_owned(),
        flags: ResumeFlags::new(given, ["--base-url"]),
    }
}

#[tokio::test]
async fn a_resumed_launch_against_another_model_is_refused_and_its_launch_stopped() {
    let folder = tempfile::tempdir().expect("tempdir");
    let pid_file = folder.path().join("launched.pid");
    let model_file = folder.path().join("model");
    std::fs::write(&model_file, "a").expect("model file");
    // The launched simulator serves the model the file names when it starts (so the resume
    // below launches model "b"); its leader writes its pid, so the test sees it was stopped.
    let port = free_port();
    let base_url = format!("http://127.0.0.1:{port}");
    let mut config = ReadyConfig::default();
    config.base_url.clone_from(&base_url);
    config.launch = Some(format!(
        "echo $$ > '{}'; VERNIER_LIFECYCLE_SIM_MODEL=$(cat '{}') {}",
        pid_file.display(),
        model_file.display(),
        sim_launch_command(port, 0, 0)
    ));
    config.reps = 2;
    config.warm_requests = 1;
    config.max_tokens = 4;
    config.ready_timeout_s = 10.0;
    config.stop_grace_s = 2.0;
    let first = run_ready(
        ReadyStart::New {
            config,
            out: folder.path().join("run"),
        },
        &["lifecycle".to_owned()],
        &QuietObserver,
        None,
    )
    .await
    .expect("ready run");
    assert_eq!(first.run.complete_reps, 2, "{:#?}", first.run.launches);
    let servers: Vec<Option<&str>> = first
        .run
        .launches
        .iter()
        .map(|rep| rep.server.as_ref().map(|server| server.model.as_str()))
        .collect();
    assert_eq!(
        servers,
        vec![Some("a"), None],
        "recorded once, at the first first token"
    );
    cut_journal(&first.journal, 2);

    let error = run_ready(
        {
            std::fs::write(&model_file, "b").expect("model file");
            resumed_against(&first.journal, &base_url)
        },
        &["lifecycle".to_owned()],
        &QuietObserver,
        None,
    )
    .await
    .expect_err("another server");
    let LifecycleError::Run(RunError::ServerChanged { differences, .. }) = &error else {
        panic!("not a changed server: {error}");
    };
    assert!(
        differences.contains(r#"model: journal "a", now "b""#),
        "{differences}"
    );
    assert_eq!(error.exit_code(), 1);
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("the resumed repetition launched")
        .trim()
        .parse()
        .expect("a pid");
    assert!(
        !group_alive(pid),
        "the launched process group outlived the refusal"
    );
    let lines = read_journal(&first.journal).expect("journal");
    let reps = lines
        .iter()
        .filter(|line| matches!(line, ReadyJournalLine::Launch(_)))
        .count();
    assert_eq!(
        reps, 1,
        "nothing measured on the other server is journalled"
    );
}

#[tokio::test]
async fn a_resumed_swap_run_against_another_proxy_is_refused_before_the_first_swap() {
    let mut sims = Vec::new();
    let mut proxies = Vec::new();
    for names in [["alpha", "beta"], ["gamma", "delta"]] {
        let mut backends = Vec::new();
        for name in names {
            let sim = sim(name).await;
            backends.push((name.to_owned(), sim.addr()));
            sims.push(sim);
        }
        proxies.push(format!("http://{}", start_swap_proxy(backends).await));
    }
    let folder = tempfile::tempdir().expect("tempdir");
    let mut config = ReadyConfig::default();
    config.base_url.clone_from(&proxies[0]);
    config.swap = vec!["alpha".to_owned(), "beta".to_owned()];
    config.reps = 2;
    config.max_tokens = 4;
    let first = run_ready(
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
    let recorded = first.run.swap_requests[0]
        .server
        .as_ref()
        .expect("recorded");
    assert_eq!(recorded.model, "alpha");
    // The header and the first repetition's two requests.
    cut_journal(&first.journal, 3);

    let error = run_ready(
        resumed_against(&first.journal, &proxies[1]),
        &[],
        &QuietObserver,
        None,
    )
    .await
    .expect_err("another proxy");
    assert!(
        matches!(error, LifecycleError::Run(RunError::ServerChanged { .. })),
        "{error}"
    );
    let swaps = read_journal(&first.journal)
        .expect("journal")
        .iter()
        .filter(|line| matches!(line, ReadyJournalLine::Swap(_)))
        .count();
    assert_eq!(swaps, 2, "no swap was measured on the other proxy");
}
