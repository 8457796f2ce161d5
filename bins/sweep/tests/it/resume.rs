//! `--resume` and the flags typed beside it: `--resume JOURNAL` alone takes the configuration and
//! the server's address from the journal, a changed configuration flag is refused, and
//! `--base-url` (a server back at another address) is accepted. What a resumed run measures is
//! tested in `vernier-sweep`.

use crate::support::{journal_values, run_sweep, start_sim};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_journal_alone_continues_the_journals_run_at_its_address_and_a_changed_flag_is_refused()
 {
    let sim = start_sim(vernier_test_support::quick_sim_at(
        "127.0.0.1:0".parse().expect("address"),
        5,
    ))
    .await;
    let base_url = sim.base_url();
    let out = tempfile::tempdir().expect("temporary folder");
    let journal = out.path().join("journal.jsonl");
    let flags = [
        "--workload",
        "prose,code",
        "--prompt-tokens",
        "100,300",
        "--output-tokens",
        "40",
        "--reps",
        "3",
        "--concurrency",
        "1,2",
    ];
    // What a resumed run measures (a server killed mid-run, every cell completed once) is the
    // engine's, tested in vernier-sweep; here, what `--resume` alone takes from the journal.
    run_sweep(&base_url, out.path(), &flags)
        .await
        .expect("the first run finishes");
    // `--resume JOURNAL` alone: the configuration comes from the journal, and so does the
    // server's address.
    let journal_text = journal.display().to_string();
    let resumed_alone = sweep::Cli::parse_from(["sweep", "--resume", &journal_text, "--quiet"]);
    let outcome = sweep::run(resumed_alone, vec!["sweep".to_owned()])
        .await
        .expect("the resumed run finishes");
    assert!(outcome.run.complete);
    assert_eq!(outcome.run.cells.len(), 8);
    for cell in &outcome.run.cells {
        assert_eq!(cell.n_reps, 3, "{cell:?}");
    }
    let lines = journal_values(&journal);
    assert_eq!(lines.iter().filter(|l| l["type"] == "resumed").count(), 1);
    // A resumed run must use the same configuration.
    let mut changed = flags.to_vec();
    let reps_value = changed.len() - 3;
    changed[reps_value] = "4";
    changed.extend_from_slice(&["--resume", &journal_text]);
    let error = run_sweep(&base_url, out.path(), &changed)
        .await
        .expect_err("a changed configuration is refused");
    assert!(
        error
            .to_string()
            .contains("--reps 4 (the journal's run: 3)"),
        "{error}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_url_typed_beside_resume_is_accepted_and_the_new_address_recorded() {
    let sim = start_sim(vernier_test_support::quick_sim_at(
        "127.0.0.1:0".parse().expect("address"),
        5,
    ))
    .await;
    let out = tempfile::tempdir().expect("temporary folder");
    let journal = out.path().join("journal.jsonl");
    let flags = [
        "--workload",
        "prose",
        "--prompt-tokens",
        "80",
        "--output-tokens",
        "16",
        "--reps",
        "2",
    ];
    run_sweep(&sim.base_url(), out.path(), &flags)
        .await
        .expect("the first run finishes");
    sim.shutdown().await;
    let journal_text = journal.display().to_string();
    // The same model at a new address: an operational change, recorded.
    let moved = start_sim(vernier_test_support::quick_sim_at(
        "127.0.0.1:0".parse().expect("address"),
        5,
    ))
    .await;
    let outcome = run_sweep(&moved.base_url(), out.path(), &["--resume", &journal_text])
        .await
        .expect("the same server at a new address resumes");
    assert!(outcome.run.complete);
    let lines = journal_values(&journal);
    let resumed: Vec<_> = lines.iter().filter(|l| l["type"] == "resumed").collect();
    assert_eq!(resumed.len(), 1);
    assert_eq!(
        resumed[0]["environment"]["server"]["base_url"].as_str(),
        Some(moved.base_url().as_str())
    );
    moved.shutdown().await;
}
