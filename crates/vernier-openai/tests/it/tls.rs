//! HTTPS against a loopback TLS server holding a self-signed certificate made at test time:
//! a streamed chat completion, `/v1/models`, and the errors of a client that does not trust
//! the certificate.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use vernier_openai::{
    ChatMessage, ChatRequest, ClientBuilder, ClientError, StreamOptions, TimeoutKind, Timeouts,
};

use crate::support::{Handler, SeenRequest, Step, chunked_response, handle, split_writes};

const HTTP1: &[u8] = b"http/1.1";

/// The events of the streamed answer, in order: role, three pieces of content, the finish
/// reason, the usage-only chunk, then `[DONE]`.
const EVENTS: [&str; 7] = [
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"content":", TLS"},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}"#,
    "[DONE]",
];

const MODELS: &str = r#"{"object":"list","data":[{"id":"tiny","object":"model","owned_by":"vernier","max_model_len":2048}]}"#;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A self-signed certificate valid for `localhost` only, and its key.
fn self_signed() -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
            .expect("generate a self-signed certificate");
    (cert.der().clone(), PrivateKeyDer::from(signing_key))
}

fn server_config(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    alpn: &[&[u8]],
) -> Arc<ServerConfig> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("the generated key matches its certificate");
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    Arc::new(config)
}

/// A client configuration trusting exactly `roots` (none: trusting nothing).
fn client_config(roots: &[CertificateDer<'static>], alpn: &[&[u8]]) -> Arc<ClientConfig> {
    let mut store = RootCertStore::empty();
    for root in roots {
        store
            .add(root.clone())
            .expect("the generated certificate is a usable root");
    }
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    Arc::new(config)
}

/// What the TLS server saw: the requests, and per completed handshake the ALPN protocol chosen.
struct Seen {
    requests: UnboundedReceiver<SeenRequest>,
    alpn: UnboundedReceiver<Option<Vec<u8>>>,
}

impl Seen {
    /// The next request the server saw, checked to be `method path`.
    async fn next_request(&mut self, method: &str, path: &str) -> SeenRequest {
        let request = self
            .requests
            .recv()
            .await
            .expect("the server saw the request");
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            (method, path)
        );
        request
    }
}

/// Serves every TLS connection with `handler` until the test ends. Failed handshakes are
/// dropped.
async fn serve_tls(handler: Handler, config: Arc<ServerConfig>) -> (SocketAddr, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let (requests_tx, requests) = unbounded_channel();
    let (alpn_tx, alpn) = unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, handler) = (acceptor.clone(), Arc::clone(&handler));
            let (requests_tx, alpn_tx) = (requests_tx.clone(), alpn_tx.clone());
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(socket).await else {
                    return;
                };
                let _ = alpn_tx.send(stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec));
                let _ = handle(stream, &handler, &requests_tx).await;
            });
        }
    });
    (addr, Seen { requests, alpn })
}

/// Answers the chat stream (split into many small TLS records) and `/v1/models`.
fn openai_handler() -> Handler {
    Arc::new(|request| {
        match request.path.as_str() {
        "/v1/chat/completions" => {
            let sse: Vec<u8> = EVENTS
                .iter()
                .flat_map(|event| format!("data: {event}\n\n").into_bytes())
                .collect();
            // Two HTTP chunks cut mid-event, each written in pieces of up to 40 bytes.
            let (first, second) = sse.split_at(sse.len() / 2);
            let wire = chunked_response("200 OK", "text/event-stream", &[first, second], true);
            split_writes(&wire, 7, 40)
        }
        "/v1/models" => vec![Step::Write(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{MODELS}",
                MODELS.len()
            )
            .into_bytes(),
        )],
        _ => vec![Step::Write(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
        )],
    }
    })
}

/// A TLS server for `localhost` and the certificate a client must trust to reach it.
async fn server(alpn: &[&[u8]]) -> (u16, CertificateDer<'static>, Seen) {
    let (cert, key) = self_signed();
    let (addr, seen) = serve_tls(openai_handler(), server_config(cert.clone(), key, alpn)).await;
    (addr.port(), cert, seen)
}

fn request() -> ChatRequest {
    let mut request = ChatRequest::new("tiny", vec![ChatMessage::user("hello")]);
    request.stream_options = Some(StreamOptions::usage(false));
    request
}

fn header<'a>(request: &'a SeenRequest, name: &str) -> Option<&'a str> {
    request.head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[tokio::test]
async fn streams_a_chat_completion_over_tls() {
    let (port, cert, mut seen) = server(&[HTTP1]).await;
    let client = ClientBuilder::new(&format!("https://localhost:{port}/v1"))
        .api_key("sk-test".to_owned())
        .tls_config(client_config(&[cert], &[HTTP1]))
        .build()
        .expect("client");
    assert_eq!(client.base_url(), format!("https://localhost:{port}"));

    let mut stream = client.chat_stream(&request()).await.expect("stream opens");
    assert_eq!(stream.status().as_u16(), 200);
    let mut contents = Vec::new();
    let mut finish_reasons = Vec::new();
    let mut usages = Vec::new();
    let mut last_arrival = stream.request_sent_at();
    while let Some(event) = stream.next_event().await {
        let event = event.expect("event");
        assert!(event.arrived_at >= last_arrival, "arrivals go forward");
        last_arrival = event.arrived_at;
        let choice = event.chunk.choices.first();
        contents.push(choice.and_then(|choice| choice.delta.content.clone()));
        finish_reasons.push(choice.and_then(|choice| choice.finish_reason.clone()));
        usages.push(event.chunk.usage.map(|usage| usage.total_tokens));
    }
    let some = |text: &str| Some(text.to_owned());
    assert_eq!(
        contents,
        [
            some(""),
            some("Hello"),
            some(", TLS"),
            some("!"),
            None,
            None
        ]
    );
    assert_eq!(finish_reasons, [None, None, None, None, some("stop"), None]);
    assert_eq!(usages, [None, None, None, None, None, Some(10)]);
    assert_eq!(stream.events_received(), 6);
    assert!(stream.finished_at().is_some(), "[DONE] ends the stream");

    let answer = stream.accumulated();
    assert_eq!(answer.content(), "Hello, TLS!");
    assert_eq!(answer.role(), Some("assistant"));
    assert_eq!(answer.finish_reason(), Some("stop"));
    assert_eq!(answer.model(), Some("tiny"));
    let usage = answer.usage().expect("the final chunk carries usage");
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (7, 3, 10)
    );

    // The request crossed TLS intact, with the headers an HTTPS server expects.
    let seen_request = seen.next_request("POST", "/v1/chat/completions").await;
    assert_eq!(
        header(&seen_request, "host"),
        Some(format!("localhost:{port}").as_str())
    );
    assert_eq!(
        header(&seen_request, "authorization"),
        Some("Bearer sk-test")
    );
    let body: Value = serde_json::from_slice(&seen_request.body).expect("request body is JSON");
    assert_eq!(body["stream"], Value::Bool(true));
    assert_eq!(body["model"], "tiny");
    assert_eq!(
        seen.alpn.recv().await.expect("handshake seen").as_deref(),
        Some(HTTP1)
    );
}

#[tokio::test]
async fn lists_models_over_tls() {
    let (port, cert, mut seen) = server(&[HTTP1]).await;
    let client = ClientBuilder::new(&format!("https://localhost:{port}"))
        .tls_config(client_config(&[cert], &[HTTP1]))
        .build()
        .expect("client");
    let models = client.models().await.expect("models over TLS");
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].id, "tiny");
    assert_eq!(models[0].max_model_len, Some(2048));
    assert_eq!(models[0].extra["owned_by"], "vernier");
    seen.next_request("GET", "/v1/models").await;
}

/// Asserts `result` failed the TLS handshake with `localhost`, naming `problem`.
fn assert_tls_error<T: std::fmt::Debug>(result: Result<T, ClientError>, host: &str, problem: &str) {
    let error = result.expect_err("an untrusted certificate must fail");
    let message = error.to_string();
    match &error {
        ClientError::Tls { host: got, source } => {
            assert_eq!(got, host, "{message}");
            assert!(source.to_string().contains(problem), "{message}");
        }
        other => panic!("expected ClientError::Tls naming {problem:?}, got {other:?}"),
    }
    assert!(
        message.contains(&format!("TLS handshake with {host}")),
        "{message}"
    );
    // The handshake error is the cause, printed by the chain, not repeated in the message.
    assert!(!message.contains(problem), "{message}");
}

#[tokio::test]
async fn untrusted_certificate_fails_with_a_tls_error() {
    let (port, _cert, mut seen) = server(&[HTTP1]).await;
    let url = format!("https://localhost:{port}");

    // The default configuration trusts the public web roots, not a self-signed certificate.
    let default = ClientBuilder::new(&url).build().expect("client");
    assert_tls_error(
        default.models().await,
        "localhost",
        "invalid peer certificate: UnknownIssuer",
    );
    assert_tls_error(
        default.chat_stream(&request()).await,
        "localhost",
        "UnknownIssuer",
    );

    // A configuration trusting nothing fails the same way.
    let nothing = ClientBuilder::new(&url)
        .tls_config(client_config(&[], &[HTTP1]))
        .build()
        .expect("client");
    assert_tls_error(nothing.chat(&request()).await, "localhost", "UnknownIssuer");

    // No request ever reached the server.
    assert!(seen.requests.try_recv().is_err());
}

#[tokio::test]
async fn certificate_for_another_name_fails_with_a_tls_error() {
    let (port, cert, _seen) = server(&[HTTP1]).await;
    // The certificate is trusted but names only localhost.
    let client = ClientBuilder::new(&format!("https://127.0.0.1:{port}"))
        .tls_config(client_config(&[cert], &[HTTP1]))
        .build()
        .expect("client");
    let result = client.models().await;
    assert_tls_error(
        result,
        "127.0.0.1",
        "certificate not valid for name \"127.0.0.1\"",
    );
}

#[tokio::test]
async fn https_to_a_plain_http_server_fails_with_a_tls_error() {
    // Like a real HTTP server, answer the unparsable ClientHello with a 400 and close.
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut scratch = [0_u8; 1024];
        let _ = socket.read(&mut scratch).await;
        let wire = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        let _ = socket.write_all(wire).await;
        let _ = socket.shutdown().await;
    });
    let client = ClientBuilder::new(&format!("https://{addr}"))
        .build()
        .expect("client");
    let error = client.models().await.expect_err("plain HTTP is not TLS");
    assert!(matches!(error, ClientError::Tls { .. }), "{error:?}");
    assert!(error.to_string().contains("use http://"), "{error}");
}

#[tokio::test]
async fn a_silent_server_trips_the_connect_deadline_during_the_handshake() {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    // Accept and hold the socket without ever answering the ClientHello.
    let holder = tokio::spawn(async move {
        let held = listener.accept().await;
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(held);
    });
    let client = ClientBuilder::new(&format!("https://localhost:{}", addr.port()))
        .timeouts(Timeouts::none().connect(Some(Duration::from_millis(300))))
        .build()
        .expect("client");
    let error = client.models().await.expect_err("the handshake never ends");
    assert!(
        matches!(
            error,
            ClientError::Timeout {
                which: TimeoutKind::Connect,
                ..
            }
        ),
        "{error:?}"
    );
    holder.abort();
}

#[tokio::test]
async fn a_caller_config_offering_h2_still_speaks_http1() {
    // A server that prefers h2 picks it whenever the client offers it; this client only
    // speaks HTTP/1.1, so it must not offer h2 even when the caller's configuration does.
    let (port, cert, mut seen) = server(&[b"h2", HTTP1]).await;
    let client = ClientBuilder::new(&format!("https://localhost:{port}"))
        .tls_config(client_config(&[cert], &[b"h2", HTTP1]))
        .build()
        .expect("client");
    let models = client.models().await.expect("models over TLS");
    assert_eq!(models[0].id, "tiny");
    assert_eq!(
        seen.alpn.recv().await.expect("handshake seen").as_deref(),
        Some(HTTP1)
    );
}

/// A self-signed certificate for `localhost` in PEM form, with its DER and key.
fn self_signed_pem() -> (CertificateDer<'static>, PrivateKeyDer<'static>, Vec<u8>) {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
            .expect("generate a self-signed certificate");
    let pem = cert.pem().into_bytes();
    (cert.der().clone(), PrivateKeyDer::from(signing_key), pem)
}

/// A TLS server for `localhost` and the PEM of the certificate a client must trust.
async fn pem_server() -> (u16, Vec<u8>, Seen) {
    let (cert, key, pem) = self_signed_pem();
    let (addr, seen) = serve_tls(openai_handler(), server_config(cert, key, &[HTTP1])).await;
    (addr.port(), pem, seen)
}

#[tokio::test]
async fn a_private_ca_added_with_ca_cert_pem_is_trusted_beside_the_built_in_roots() {
    let (port, pem, mut seen) = pem_server().await;
    let url = format!("https://localhost:{port}");
    // Without the CA: the handshake fails and the message names the certificate and the fix.
    let untrusting = ClientBuilder::new(&url).no_proxy().build().expect("client");
    let error = untrusting
        .models()
        .await
        .expect_err("an unknown issuer is refused");
    let chain = {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    };
    assert!(
        matches!(error, ClientError::Tls { ref host, .. } if host == "localhost"),
        "{chain}"
    );
    assert!(chain.contains("--ca-cert FILE"), "{chain}");
    assert!(
        chain.to_ascii_lowercase().contains("certificate"),
        "{chain}"
    );
    // With the CA in PEM form: the same server answers.
    let trusting = ClientBuilder::new(&url)
        .no_proxy()
        .ca_cert_pem("test CA", pem)
        .build()
        .expect("client");
    let models = trusting.models().await.expect("the private CA is trusted");
    assert_eq!(models[0].id, "tiny");
    seen.next_request("GET", "/v1/models").await;
    // Something that is not a certificate is refused when the client is built.
    let error = ClientBuilder::new(&url)
        .ca_cert_pem("notes.txt", b"not a certificate".to_vec())
        .build()
        .expect_err("no certificate in the file");
    assert!(error.to_string().contains("notes.txt"), "{error}");
}

/// A minimal HTTP proxy: answers one `CONNECT host:port` with 200 and relays bytes both ways.
async fn connect_proxy() -> (u16, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let port = listener.local_addr().expect("local addr").port();
    let (seen_tx, seen) = unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let seen_tx = seen_tx.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0_u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let target = head
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                let _ = seen_tx.send(head.lines().next().unwrap_or_default().to_owned());
                let port = target.rsplit(':').next().unwrap_or_default().to_owned();
                let Ok(mut upstream) =
                    tokio::net::TcpStream::connect(format!("127.0.0.1:{port}")).await
                else {
                    return;
                };
                if client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .is_err()
                {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (port, seen)
}

#[tokio::test]
async fn an_https_server_is_reached_through_a_connect_proxy() {
    let (port, pem, _seen) = pem_server().await;
    let (proxy_port, mut tunnels) = connect_proxy().await;
    let client = ClientBuilder::new(&format!("https://localhost:{port}"))
        .proxy(&format!("http://127.0.0.1:{proxy_port}"))
        .ca_cert_pem("test CA", pem)
        .build()
        .expect("client");
    let models = client.models().await.expect("through the tunnel");
    assert_eq!(models[0].id, "tiny");
    assert_eq!(
        tunnels.recv().await.expect("the proxy saw a tunnel"),
        format!("CONNECT localhost:{port} HTTP/1.1")
    );
    // A proxy that is not listening is a connect error naming the proxy.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let error = ClientBuilder::new(&format!("https://localhost:{port}"))
        .proxy(&format!("http://127.0.0.1:{closed}"))
        .build()
        .expect("client")
        .models()
        .await
        .expect_err("no proxy listens");
    assert!(error.to_string().contains("proxy for localhost"), "{error}");
}
