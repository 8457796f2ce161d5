//! Hosted endpoints through the binary: an API key named by `--api-key-env` that must never reach
//! a file or a message, and a self-signed HTTPS server trusted with `--ca-cert`.

use crate::support::start_sim;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_is_written_to_no_journal_run_file_report_or_message() {
    let sim = start_sim(vernier_test_support::rate_limited_sim(Some((300, 0)))).await;
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
    let sim = start_sim(vernier_test_support::rate_limited_sim(None)).await;
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
