//! A silent stream is judged by the server's generation-token counter: moving means busy (keep
//! waiting, up to `busy_wait_cap_s`); still, the server gets a one-token probe: answered means
//! the stream is stuck (abandon it, retry), unanswered means hung (stop, resumable).

use std::time::Duration;

use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder};
use vernier_sim::{Fault, Faults, SimConfig};
use vernier_sweep::{SweepConfig, Workload};

use crate::support::{config, journal_values, object, resume, run, start_sim};

/// A one-cell sweep of two repetitions that checks the server after 0.2 s without an event
/// (the check itself reads the counter twice, 0.2 s apart).
fn small() -> SweepConfig {
    let mut config = config(&[Workload::Prose], &[64], &[32], 2);
    config.warmup = 0;
    config.idle_timeout_s = Some(0.2);
    config
}

/// The first `n` generation requests stall for a minute after their third event.
fn stalling_first(n: usize) -> Faults {
    let mut faults = Faults::default();
    faults.fail_first_n_requests = Some((
        n,
        Fault::StallAfterEvents {
            events: 3,
            ms: 60_000,
        },
    ));
    faults
}

fn infra_errors(lines: &[serde_json::Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "attempt" && l["status"] == "infra")
        .map(|l| {
            l["error"]
                .as_str()
                .expect("an infra attempt has an error")
                .to_owned()
        })
        .collect()
}

/// The run finished both repetitions of its one cell, with exactly one attempt journaled as
/// infra on the way.
fn assert_complete_after_one_infra_attempt(run: &vernier_sweep::RunFile) {
    assert!(run.complete);
    let cell = &run.cells[0];
    assert_eq!(
        (cell.n_reps, cell.n_ok, cell.n_failed),
        (2, 2, 0),
        "{cell:?}"
    );
    assert_eq!(cell.n_infra_attempts, 1, "{cell:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_stream_on_a_server_that_answers_a_probe_is_retried_and_the_run_goes_on() {
    // Only the first request's stream stalls; the server answers everything else at once.
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(2))
            .faults(stalling_first(1))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run(&sim.base_url(), out.path(), small())
        .await
        .expect("a stuck stream does not stop the run");
    assert_complete_after_one_infra_attempt(&outcome.run);
    let errors = infra_errors(&journal_values(&outcome.journal));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("answered a one-token probe: this stream is stuck"),
        "{errors:?}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_engine_with_a_still_counter_and_no_probe_answer_stops_the_run_and_resumes() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(20))
            .build(),
    )
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let journal = out.path().join("journal.jsonl");
    let run = tokio::spawn({
        let url = sim.base_url();
        let out = out.path().to_owned();
        async move { run(&url, &out, small()).await }
    });
    // Once the first stream is under way, the engine hangs: nothing makes progress while
    // /health and /metrics still answer (the seed's three-hour hang).
    tokio::time::timeout(Duration::from_secs(60), async {
        while sim.metrics().num_requests_running == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the first request arrives");
    sim.set_hung(true);
    let error = run
        .await
        .expect("the run task")
        .expect_err("a hung server stops the run");
    let message = error.to_string();
    assert!(
        matches!(
            error,
            vernier_sweep::SweepError::Run(vernier_run::RunError::ServerStopped { .. })
        ),
        "{message}"
    );
    assert!(
        message.contains("probe went unanswered: the server looks hung"),
        "{message}"
    );
    assert!(
        message.contains(&format!("--resume {}", journal.display())),
        "{message}"
    );
    let errors = infra_errors(&journal_values(&journal));
    assert_eq!(errors.len(), 1, "{errors:?}");
    // The engine comes back: resuming redoes the hung request and finishes the cell.
    sim.set_hung(false);
    let outcome = resume(&sim.base_url(), &journal)
        .await
        .expect("the resumed run finishes");
    assert_complete_after_one_infra_attempt(&outcome.run);
    sim.shutdown().await;
}

/// Someone else's long stream keeps the server's generation counter moving.
async fn start_other_stream(base_url: &str) -> tokio::task::JoinHandle<()> {
    let client = ClientBuilder::new(base_url).build().expect("client");
    let mut request = ChatRequest::new(
        "vernier-sim",
        vec![ChatMessage::user("a very long story please")],
    );
    request.max_tokens = Some(20_000);
    // A zero-length stall: harmless, and it keeps this request out of `fail_first_n_requests`.
    request.extra.insert(
        "sim_fault".to_owned(),
        serde_json::json!({"kind": "stall_after_events", "events": 1, "ms": 0}),
    );
    let mut stream = client
        .chat_stream(&request)
        .await
        .expect("the other request starts");
    stream
        .next_event()
        .await
        .expect("an event")
        .expect("not an error");
    // Keep reading, so the server is never held back by a full socket.
    tokio::spawn(async move { while let Some(Ok(_)) = stream.next_event().await {} })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_stream_on_a_busy_server_is_waited_for_then_retried_past_the_cap() {
    // Request 0 is the other stream; the sweep's first request stalls for a minute.
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(2))
            .faults(stalling_first(2))
            .build(),
    )
    .await;
    let other = start_other_stream(&sim.base_url()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let mut config = small();
    config.allow_busy = Some(true);
    config.busy_wait_cap_s = Some(1.0);
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("a busy server is waited for, then the request is retried");
    // The stalled request was not judged hung: the counter moved, so the sweep waited up to the
    // cap, journaled it as infra, retried it, and carried on.
    assert_complete_after_one_infra_attempt(&outcome.run);
    let lines = journal_values(&outcome.journal);
    let errors = infra_errors(&lines);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("busy elsewhere"), "{errors:?}");
    assert!(errors[0].contains("--busy-wait-cap-s"), "{errors:?}");
    let retried = lines
        .iter()
        .find(|l| l["type"] == "attempt" && l["status"] == "ok" && l["rep"] == 0)
        .expect("the first repetition was measured on a retry");
    assert_eq!(retried["attempt"], 1);
    other.abort();
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_stall_on_a_busy_server_is_waited_out_and_measured() {
    let sim = start_sim(
        SimConfig::builder()
            .decode_step(Duration::from_millis(2))
            .build(),
    )
    .await;
    let other = start_other_stream(&sim.base_url()).await;
    let out = tempfile::tempdir().expect("temporary folder");
    // Every sweep request goes silent for 1.5 s, several idle timeouts long: each check finds the
    // counter moving, so the sweep keeps waiting and the request completes.
    let mut config = small();
    config.allow_busy = Some(true);
    config.extra_body = object(serde_json::json!(
        {"sim_fault": {"kind": "stall_after_events", "events": 3, "ms": 1500}}
    ));
    let outcome = run(&sim.base_url(), out.path(), config)
        .await
        .expect("a busy server is waited for");
    let cell = &outcome.run.cells[0];
    assert_eq!(
        (cell.n_ok, cell.n_failed, cell.n_infra_attempts),
        (2, 0, 0),
        "{cell:?}"
    );
    let stalled: Vec<_> = sim
        .ground_truth()
        .into_iter()
        .filter(|t| {
            t.completed && matches!(t.fault, Some(Fault::StallAfterEvents { ms: 1500, .. }))
        })
        .collect();
    assert_eq!(stalled.len(), 2, "both measured requests did stall");
    other.abort();
    sim.shutdown().await;
}
