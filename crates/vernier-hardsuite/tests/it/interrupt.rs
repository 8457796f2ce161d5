//! An interrupted run: what was measured is written, and the journal resumes to the end.

use std::sync::Mutex;

use tokio::sync::oneshot;
use vernier_hardsuite::{
    AttemptRecord, RunConfig, RunObserver, RunTarget, SilentObserver, run_suite, run_suite_until,
};

/// Fires the interrupt when the first attempt is done.
struct InterruptAfterFirst(Mutex<Option<oneshot::Sender<()>>>);

impl RunObserver for InterruptAfterFirst {
    fn attempt_done(&self, _done: usize, _planned: usize, _record: &AttemptRecord) {
        if let Some(fire) = self.0.lock().ok().and_then(|mut fire| fire.take()) {
            let _ = fire.send(());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_writes_the_results_and_the_journal_resumes_to_the_end() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let mut config = RunConfig::default();
    config.suite.tasks = Some(vec!["crt".to_owned(), "tool-none".to_owned()]);
    config.samples = Some(4);
    config.concurrency = 1;
    config.skip_self_check = true;
    let (fire, fired) = oneshot::channel();
    let observer = InterruptAfterFirst(Mutex::new(Some(fire)));
    let interrupt = Box::pin(async move {
        let _ = fired.await;
    });
    let outcome = run_suite_until(
        &config,
        &RunTarget::new_run(&out),
        vec!["hardsuite".to_owned()],
        &observer,
        interrupt,
    )
    .await
    .expect("an interrupted run still writes its files");
    assert!(outcome.interrupted);
    let journal = out.join("journal.jsonl");
    let command = outcome
        .resume_command
        .expect("the command that continues it");
    assert!(
        command.starts_with("hardsuite run --resume ") && !command.contains("--base-url"),
        "{command}"
    );
    assert!(outcome.files.results.exists() && outcome.files.report.exists());
    let measured: usize = outcome
        .results
        .tasks
        .iter()
        .map(|task| task.samples.len())
        .sum();
    assert!(
        (1..8).contains(&measured),
        "{measured} of 8 attempts measured"
    );

    let resumed = run_suite(
        &RunConfig::default(),
        &RunTarget::resume(&journal),
        vec!["hardsuite".to_owned()],
        &SilentObserver,
    )
    .await
    .expect("the resumed run");
    assert!(!resumed.interrupted && resumed.resume_command.is_none());
    assert_eq!(resumed.kept_attempts, measured);
    for task in &resumed.results.tasks {
        assert_eq!(task.samples.len(), 4, "{}", task.id);
    }
}
