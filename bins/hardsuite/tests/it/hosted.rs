//! Hosted endpoints: a server answering 60% of requests `429` with `Retry-After: 1` still gets
//! every task scored, and every wait is journaled at least as long as the server asked.

use hardsuite::CommandOutput;
use vernier_cli::Failure as _;
use vernier_hardsuite::hardsuite_demo_simulator_config;
use vernier_sim::{Faults, Sim};
use vernier_tasks::{OutcomeKind, Suite};

use crate::{arg, json_lines, run_cli, skip_docker_tests};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_60_percent_with_retry_after_leaves_no_task_unscored() {
    if skip_docker_tests() {
        return;
    }
    let suite = Suite::bundled();
    let mut config = hardsuite_demo_simulator_config(&suite).expect("the demo script");
    let mut faults = Faults::default();
    faults.rate_limited = Some((600, 1));
    config.faults = faults;
    let sim = Sim::start(config).await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let url = sim.base_url();
    let output = run_cli(&[
        "hardsuite",
        "run",
        "--base-url",
        &url,
        "--out",
        arg(&out),
        "--quiet",
        "--adaptive-concurrency",
    ])
    .await
    .expect("the rate-limited run finishes (it needs the Docker engine and the grader image)");
    let CommandOutput::Run(outcome) = output else {
        panic!("run gives a run outcome");
    };
    let results = &outcome.results;
    assert_eq!(results.main.total.n_scored, 28, "every task is scored");
    assert_eq!(results.main.total.n_unscored, 0);
    // The scripted plan's score is unchanged by the waits: 22 of 28.
    assert_eq!(results.main.total.n_pass, 22);
    assert!(
        results
            .tasks
            .iter()
            .all(|t| t.samples[0].outcome != OutcomeKind::Infra)
    );
    let waits: Vec<serde_json::Value> = json_lines(&outcome.files.journal)
        .into_iter()
        .filter(|line| line["type"] == "attempt" && !line["wait"].is_null())
        .map(|line| line["wait"].clone())
        .collect();
    assert!(
        waits.len() >= 10,
        "60% of the requests were refused: {} waits",
        waits.len()
    );
    for wait in &waits {
        assert_eq!(wait["cause"], "server_asked", "{wait}");
        let (waited, asked) = (wait["waited_ms"].as_f64(), wait["asked_ms"].as_f64());
        assert!(asked == Some(1000.0) && waited >= asked, "{wait}");
    }
    let summary = results.rate_limit_waits.expect("the waits are summarised");
    assert_eq!(summary.n_waits, waits.len());
    let report = std::fs::read_to_string(&outcome.files.report).expect("report");
    assert!(report.contains("s on rate limits"), "{report}");
    sim.shutdown().await;
}

/// A TLS front for `localhost` with a self-signed certificate, relaying to `upstream`; its
/// port and the certificate in PEM form.
async fn tls_front(upstream: std::net::SocketAddr) -> (u16, String) {
    use std::sync::Arc;
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("a certificate");
    let pem = cert.pem();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("ring supports the default versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::from(signing_key),
    )
    .expect("the key matches");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let (Ok(mut tls), Ok(mut plain)) = (
                    acceptor.accept(socket).await,
                    tokio::net::TcpStream::connect(upstream).await,
                ) {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                }
            });
        }
    });
    (port, pem)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_signed_https_server_works_with_ca_cert_and_the_key_reaches_no_file() {
    let suite = Suite::bundled();
    let sim = Sim::start(hardsuite_demo_simulator_config(&suite).expect("the demo script"))
        .await
        .expect("the simulator starts");
    let (port, pem) = tls_front(sim.addr()).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, pem).expect("write the CA");
    let url = format!("https://localhost:{port}");
    let key = "sk-vernier-hardsuite-0f1e2d3c4b5a69788796";
    let run = |out: &str, with_ca: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_hardsuite"));
        command
            .args([
                "run",
                "--base-url",
                &url,
                "--tasks",
                "crt,tool-none",
                "--quiet",
            ])
            .args(["--api-key-env", "VERNIER_TEST_KEY", "--out"])
            .arg(dir.path().join(out))
            .env("VERNIER_TEST_KEY", key)
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy");
        if with_ca {
            command.arg("--ca-cert").arg(&ca);
        }
        command.output().expect("run hardsuite")
    };
    let refused = run("without", false);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("--ca-cert FILE") && stderr.contains("localhost"),
        "{stderr}"
    );
    let done = run("with", true);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains(key) && !String::from_utf8_lossy(&done.stdout).contains(key));
    let mut files = 0;
    for folder in ["with", "without"] {
        let Ok(entries) = std::fs::read_dir(dir.path().join(folder)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("an entry").path();
            if let Ok(text) = std::fs::read_to_string(&path) {
                assert!(
                    !text.contains(key),
                    "the key leaked into {}",
                    path.display()
                );
                files += 1;
            }
        }
    }
    assert!(files >= 3, "journal, results and report: {files}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_refusing_max_tokens_gets_the_budget_as_max_completion_tokens() {
    let suite = Suite::bundled();
    let mut config = hardsuite_demo_simulator_config(&suite).expect("the demo script");
    config.refuse_max_tokens = true;
    let sim = Sim::start(config).await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let url = sim.base_url();
    let output = run_cli(&[
        "hardsuite",
        "run",
        "--base-url",
        &url,
        "--out",
        arg(&out),
        "--quiet",
        "--tasks",
        "crt,collatz,tool-none",
    ])
    .await
    .expect("the run switches to max_completion_tokens and finishes");
    let CommandOutput::Run(outcome) = output else {
        panic!("run gives a run outcome");
    };
    assert_eq!(outcome.results.main.total.n_scored, 3);
    assert_eq!(outcome.results.main.total.n_unscored, 0);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_500_to_everything_is_a_stopped_run_not_a_score_of_zero() {
    let suite = Suite::bundled();
    let mut config = hardsuite_demo_simulator_config(&suite).expect("the demo script");
    let mut faults = Faults::default();
    faults.http_status = Some((500, "{\"error\":\"boom\"}".to_owned()));
    config.faults = faults;
    let sim = Sim::start(config).await.expect("the simulator starts");
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("out");
    let url = sim.base_url();
    // The math tasks only: no grader needed, every request answered 500.
    let error = run_cli(&[
        "hardsuite",
        "run",
        "--base-url",
        &url,
        "--out",
        arg(&out),
        "--quiet",
        "--tasks",
        "domino-tiling,last-digits",
        "--max-tries",
        "2",
    ])
    .await
    .expect_err("a run that scored nothing is not a result");
    // Before: "total 0/0" and exit 0.
    assert_eq!(error.exit_code(), 4, "{error}");
    let text = vernier_cli::cause_chain(&error);
    assert!(
        text.contains("2 of 2 samples failed on infrastructure"),
        "{text}"
    );
    assert!(text.contains("--resume"), "the resume command: {text}");
    assert!(
        out.join("results.json").exists(),
        "what was measured is on disk"
    );
    sim.shutdown().await;
    // Resumed against a healthy server (on another port): each attempt's next try is numbered
    // after the two on file, not from 1 again.
    let healthy = Sim::start(hardsuite_demo_simulator_config(&suite).expect("the demo script"))
        .await
        .expect("the simulator starts");
    let journal = out.join("journal.jsonl");
    let resumed = run_cli(&[
        "hardsuite",
        "run",
        "--quiet",
        "--resume",
        arg(&journal),
        "--base-url",
        &healthy.base_url(),
    ])
    .await;
    healthy.shutdown().await;
    resumed.expect("the resumed run finishes");
    for task in ["domino-tiling", "last-digits"] {
        let tries: Vec<u64> = crate::json_lines(&journal)
            .iter()
            .filter(|line| line["type"] == "attempt" && line["task_id"] == task)
            .filter_map(|line| line["try_number"].as_u64())
            .collect();
        // Two tries before the resume; after it, numbered on (the demo script drops some
        // first tries on purpose, so one or two more).
        let expected: Vec<u64> = (1..=tries.len() as u64).collect();
        assert!(tries.len() > 2, "{task}: {tries:?}");
        assert_eq!(tries, expected, "{task}");
    }
}
