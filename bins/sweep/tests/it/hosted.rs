//! Hosted endpoints: a server that rate-limits most requests, and an API key that must never
//! reach a file.

use std::time::Duration;

use vernier_sim::{Faults, SimConfig};

use crate::support::{journal_values, read_run_file, run_sweep, start_sim};

fn sim_config(rate_limited: Option<(u32, u64)>) -> SimConfig {
    let mut faults = Faults::default();
    faults.rate_limited = rate_limited;
    SimConfig::builder()
        .decode_step(Duration::from_millis(4))
        .prefill_tokens_per_s(50_000.0)
        .faults(faults)
        .build()
}

const FLAGS: [&str; 10] = [
    "--workload",
    "prose",
    "--prompt-tokens",
    "64",
    "--output-tokens",
    "24",
    "--reps",
    "3",
    "--warmup",
    "0",
];

fn decode_median(run: &serde_json::Value) -> f64 {
    run["cells"][0]["median"]["decode_tokens_per_s"]
        .as_f64()
        .expect("a decode median")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_60_percent_with_retry_after_is_waited_on_and_measured_as_a_clean_one() {
    // 600 of every 1000 generation requests answered 429 with Retry-After: 1.
    let limited = start_sim(sim_config(Some((600, 1)))).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run_sweep(&limited.base_url(), out.path(), &FLAGS)
        .await
        .expect("the rate-limited sweep finishes");
    let run = read_run_file(&outcome);
    assert_eq!(run["complete"], true);
    assert_eq!(run["cells"][0]["n_ok"], 3);
    assert_eq!(run["cells"][0]["n_failed"], 0);
    // Every wait is journaled with its cause, and lasted at least what the server asked for.
    let waits: Vec<serde_json::Value> = journal_values(&outcome.journal)
        .into_iter()
        .filter(|l| l["type"] == "attempt" && !l["wait"].is_null())
        .map(|l| l["wait"].clone())
        .collect();
    assert!(
        !waits.is_empty(),
        "60% of requests are refused: some waits must happen"
    );
    for wait in &waits {
        assert_eq!(wait["cause"], "server_asked", "{wait}");
        let (waited, asked) = (wait["waited_ms"].as_f64(), wait["asked_ms"].as_f64());
        assert!(asked == Some(1000.0) && waited >= asked, "{wait}");
    }
    assert_eq!(
        run["rate_limited"]["n_waits"].as_u64(),
        Some(waits.len() as u64)
    );
    let report = std::fs::read_to_string(&outcome.files.markdown).expect("report");
    assert!(report.contains("s on rate limits"), "{report}");
    limited.shutdown().await;

    // The same sweep against a clean server: the figures agree (waits are outside every
    // measured interval).
    let clean = start_sim(sim_config(None)).await;
    let clean_out = tempfile::tempdir().expect("temporary folder");
    let clean_outcome = run_sweep(&clean.base_url(), clean_out.path(), &FLAGS)
        .await
        .expect("the clean sweep finishes");
    let (throttled, unthrottled) = (
        decode_median(&run),
        decode_median(&read_run_file(&clean_outcome)),
    );
    assert!(
        (throttled - unthrottled).abs() / unthrottled < 0.05,
        "decode {throttled:.1} throttled vs {unthrottled:.1} clean"
    );
    assert!(read_run_file(&clean_outcome)["rate_limited"].is_null());
    clean.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_is_written_to_no_journal_run_file_report_or_message() {
    let sim = start_sim(sim_config(Some((300, 0)))).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let key = "sk-vernier-test-7f3a9c1e5b2d4e6f8a0b";
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args([
            "--base-url",
            &sim.base_url(),
            "--api-key-env",
            "VERNIER_TEST_KEY",
        ])
        .args([
            "--workload",
            "prose",
            "--prompt-tokens",
            "64",
            "--output-tokens",
            "8",
        ])
        .args(["--reps", "2", "--capture", "2", "--out"])
        .arg(out.path())
        .env("VERNIER_TEST_KEY", key)
        .output()
        .expect("run the sweep binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains(key) && !String::from_utf8_lossy(&output.stdout).contains(key));
    let (mut files, mut captures) = (0, 0);
    let mut folders = vec![out.path().to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("an output folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a text file");
            assert!(
                !text.contains(key),
                "the key leaked into {}",
                path.display()
            );
            files += 1;
            captures += usize::from(path.parent().is_some_and(|p| p.ends_with("captures")));
        }
    }
    assert!(
        files >= 5,
        "journal, run file, report, csv and charts: {files}"
    );
    assert!(
        captures >= 2,
        "the captured streams were read too: {captures}"
    );
    sim.shutdown().await;
}

/// A TLS front for `localhost` with a self-signed certificate, relaying plain bytes to
/// `upstream`; returns its port and the certificate in PEM form.
async fn tls_front(upstream: std::net::SocketAddr) -> (u16, String) {
    use std::sync::Arc;
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
            .expect("generate a self-signed certificate");
    let pem = cert.pem();
    let key = rustls::pki_types::PrivateKeyDer::from(signing_key);
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("ring supports the default versions")
    .with_no_client_auth()
    .with_single_cert(vec![cert.der().clone()], key)
    .expect("the key matches");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let port = listener.local_addr().expect("its address").port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    (port, pem)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_signed_https_server_is_measured_with_ca_cert_and_refused_without_it() {
    let sim = start_sim(sim_config(None)).await;
    let (port, pem) = tls_front(sim.addr()).await;
    let folder = tempfile::tempdir().expect("temporary folder");
    let ca = folder.path().join("ca.pem");
    std::fs::write(&ca, pem).expect("write the CA file");
    let url = format!("https://localhost:{port}");
    let sweep = |out: &str, with_ca: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"));
        command
            .args([
                "--base-url",
                &url,
                "--workload",
                "prose",
                "--prompt-tokens",
                "64",
            ])
            .args(["--output-tokens", "8", "--reps", "1", "--quiet", "--out"])
            .arg(folder.path().join(out))
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy");
        if with_ca {
            command.arg("--ca-cert").arg(&ca);
        }
        command.output().expect("run the sweep binary")
    };
    let refused = sweep("without", false);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("TLS handshake with localhost") && stderr.contains("--ca-cert FILE"),
        "{stderr}"
    );
    assert!(
        stderr.to_ascii_lowercase().contains("certificate"),
        "{stderr}"
    );
    let measured = sweep("with", true);
    let stderr = String::from_utf8_lossy(&measured.stderr);
    assert_eq!(measured.status.code(), Some(0), "{stderr}");
    assert!(folder.path().join("with/run.json").exists());
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_max_tokens_is_sent_as_max_completion_tokens_and_the_report_says_so() {
    let mut config = sim_config(None);
    config.refuse_max_tokens = true;
    let sim = start_sim(config).await;
    let out = tempfile::tempdir().expect("temporary folder");
    let outcome = run_sweep(&sim.base_url(), out.path(), &FLAGS)
        .await
        .expect("the sweep switches and finishes");
    let run = read_run_file(&outcome);
    assert_eq!(run["cells"][0]["n_ok"], 3);
    assert_eq!(run["fields_dropped"][0]["field"], "max_tokens");
    let report = std::fs::read_to_string(&outcome.files.markdown).expect("report");
    assert!(
        report.contains("sent as max_completion_tokens instead"),
        "{report}"
    );
    // Output length is still as asked: the simulator honours max_completion_tokens.
    assert_eq!(run["cells"][0]["n_length_mismatch"], 0);
    sim.shutdown().await;
}
