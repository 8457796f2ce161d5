//! The client: configuration, requests and the non-streaming endpoints.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, USER_AGENT};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::stream::Opened;
use crate::transport::{Endpoint, after, connect, earliest, read_body, within};
use crate::{
    ChatRequest, ChatResponse, ChatStream, ClientError, CompletionRequest, CompletionResponse,
    CompletionStream, ResponseEnvelope, TimeoutKind, sse::DEFAULT_MAX_LINE_BYTES,
};

/// Cap on an error body kept in [`ClientError::Http`].
const ERROR_BODY_CAP: usize = 64 * 1024;
/// Cap on a non-streamed response body.
const RESPONSE_BODY_CAP: usize = 64 * 1024 * 1024;

/// Deadlines for one request. `None` means no deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// TCP connect plus TLS handshake. Default 10 s.
    pub connect: Option<Duration>,
    /// From the request's first byte to the response headers and the first body bytes; for a
    /// stream, to the first event, so SSE comments (`: ping` keep-alives) sent while the
    /// prompt is prefilled do not end this phase. Default 600 s (a long prompt's prefill can
    /// take minutes).
    pub first_byte: Option<Duration>,
    /// For a stream, the longest gap allowed since the last event (an SSE event with data,
    /// counted from the read that completed it). SSE comments such as `: ping` keep-alives,
    /// empty frames and frames holding only part of an event do not restart it, so a server or
    /// gateway that stalls while sending keep-alives still fails with
    /// [`TimeoutKind::Idle`](crate::TimeoutKind::Idle). For a non-streamed body, the longest
    /// gap between two body frames. Default 120 s.
    pub idle: Option<Duration>,
    /// The whole request. Default none.
    pub total: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Some(Duration::from_secs(10)),
            first_byte: Some(Duration::from_secs(600)),
            idle: Some(Duration::from_secs(120)),
            total: None,
        }
    }
}

impl Timeouts {
    /// The defaults: connect 10 s, first byte 600 s, idle 120 s, no total.
    pub fn new() -> Self {
        Self::default()
    }

    /// No deadlines at all.
    pub fn none() -> Self {
        Self {
            connect: None,
            first_byte: None,
            idle: None,
            total: None,
        }
    }

    /// Sets the connect deadline.
    #[must_use]
    pub fn connect(mut self, deadline: Option<Duration>) -> Self {
        self.connect = deadline;
        self
    }

    /// Sets the first-byte deadline.
    #[must_use]
    pub fn first_byte(mut self, deadline: Option<Duration>) -> Self {
        self.first_byte = deadline;
        self
    }

    /// Sets the idle deadline (see [`Timeouts::idle`]).
    #[must_use]
    pub fn idle(mut self, deadline: Option<Duration>) -> Self {
        self.idle = deadline;
        self
    }

    /// Sets the total deadline.
    #[must_use]
    pub fn total(mut self, deadline: Option<Duration>) -> Self {
        self.total = deadline;
        self
    }
}

#[derive(Debug, Clone)]
enum KeySource {
    None,
    Value(String),
    Env(String),
}

/// Configures a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    base_url: String,
    key: KeySource,
    timeouts: Timeouts,
    user_agent: String,
    max_line_bytes: usize,
    tls: Option<Arc<rustls::ClientConfig>>,
    extra_roots: Vec<(String, Vec<u8>)>,
    proxy: ProxyChoice,
}

/// Whether requests go through an HTTP proxy.
#[derive(Debug, Clone, Default)]
enum ProxyChoice {
    /// From `HTTPS_PROXY` / `https_proxy` for an `https://` server, `http_proxy` /
    /// `HTTP_PROXY` for an `http://` one, unless the server is on a loopback address or
    /// `NO_PROXY` / `no_proxy` names the host.
    #[default]
    FromEnvironment,
    /// Never.
    Off,
    /// Through this `http://host:port` proxy, whatever the environment says.
    Explicit(String),
}

impl ClientBuilder {
    /// A builder for the server at `base_url` (with or without a trailing `/v1`).
    pub fn new(base_url: &str) -> Self {
        Self {
            base_url: base_url.to_owned(),
            key: KeySource::None,
            timeouts: Timeouts::default(),
            user_agent: concat!("vernier-openai/", env!("CARGO_PKG_VERSION")).to_owned(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            tls: None,
            extra_roots: Vec::new(),
            proxy: ProxyChoice::FromEnvironment,
        }
    }

    /// Sends `Authorization: Bearer <key>`.
    #[must_use]
    pub fn api_key(mut self, key: String) -> Self {
        self.key = KeySource::Value(key);
        self
    }

    /// Reads the key from environment variable `var` at [`build`](Self::build), which fails
    /// with [`ClientError::MissingApiKey`] naming `var` if it is unset.
    #[must_use]
    pub fn api_key_from_env(mut self, var: &str) -> Self {
        self.key = KeySource::Env(var.to_owned());
        self
    }

    /// Sets the deadlines.
    #[must_use]
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sets the `User-Agent` header.
    #[must_use]
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Sets the SSE line bound (default 4 MiB).
    #[must_use]
    pub fn max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// Uses this TLS configuration instead of the default (ring, webpki roots, HTTP/1.1 ALPN).
    /// The client speaks HTTP/1.1 only, so an ALPN list offering anything else (`h2`) is
    /// narrowed to `http/1.1`.
    #[must_use]
    pub fn tls_config(mut self, config: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
    }

    /// Trusts the CA certificates in `pem` (one or more `BEGIN CERTIFICATE` blocks) beside the
    /// built-in roots, for a self-hosted server with a private CA or a self-signed
    /// certificate. `what` names the source in errors (a file name, say).
    #[must_use]
    pub fn ca_cert_pem(mut self, what: impl Into<String>, pem: Vec<u8>) -> Self {
        self.extra_roots.push((what.into(), pem));
        self
    }

    /// Ignores `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (by default a server that is not on
    /// a loopback address is reached through the proxy the variable for its scheme names,
    /// unless `NO_PROXY` lists it).
    #[must_use]
    pub fn no_proxy(mut self) -> Self {
        self.proxy = ProxyChoice::Off;
        self
    }

    /// Reaches the server through the HTTP proxy at `url` (`http://host:port`), whatever the
    /// environment says, loopback servers too: an `https://` server by a `CONNECT` tunnel, an
    /// `http://` one by requests in absolute form.
    #[must_use]
    pub fn proxy(mut self, url: &str) -> Self {
        self.proxy = ProxyChoice::Explicit(url.to_owned());
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<Client, ClientError> {
        let endpoint = Endpoint::parse(&self.base_url)?;
        let api_key = match self.key {
            KeySource::None => None,
            KeySource::Value(key) => Some(key),
            KeySource::Env(var) => match std::env::var(&var) {
                Err(_) => return Err(ClientError::MissingApiKey { var }),
                Ok(key) if key.trim().is_empty() => return Err(ClientError::EmptyApiKey { var }),
                Ok(key) => Some(key),
            },
        };
        let authorization =
            api_key
                .map(|key| {
                    let mut value = HeaderValue::from_str(&format!("Bearer {}", key.trim()))
                        .map_err(|_| ClientError::InvalidHeader {
                            what: "the API key",
                        })?;
                    value.set_sensitive(true);
                    Ok::<_, ClientError>(value)
                })
                .transpose()?;
        let user_agent =
            HeaderValue::from_str(&self.user_agent).map_err(|_| ClientError::InvalidHeader {
                what: "the user agent",
            })?;
        let tls = match (endpoint.https, self.tls) {
            (_, Some(config)) => Some(http1_only(config)),
            (true, None) => Some(default_tls_config(&endpoint, &self.extra_roots)?),
            (false, None) => None,
        };
        let proxy = match self.proxy {
            ProxyChoice::FromEnvironment => {
                crate::proxy::from_environment(&endpoint.host, endpoint.https)?
            }
            ProxyChoice::Off => None,
            ProxyChoice::Explicit(url) => Some(crate::proxy::parse(&url)?),
        };
        Ok(Client {
            inner: Arc::new(Inner {
                endpoint,
                authorization,
                timeouts: self.timeouts,
                user_agent,
                max_line_bytes: self.max_line_bytes,
                tls,
                proxy,
            }),
        })
    }
}

/// Offering `h2` would let the server choose it and then reject the HTTP/1.1 request.
fn http1_only(config: Arc<rustls::ClientConfig>) -> Arc<rustls::ClientConfig> {
    if config
        .alpn_protocols
        .iter()
        .all(|protocol| protocol == b"http/1.1")
    {
        return config;
    }
    let mut config = Arc::unwrap_or_clone(config);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

fn default_tls_config(
    endpoint: &Endpoint,
    extra_roots: &[(String, Vec<u8>)],
) -> Result<Arc<rustls::ClientConfig>, ClientError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for (what, pem) in extra_roots {
        let mut added = 0;
        for certificate in CertificateDer::pem_slice_iter(pem) {
            let certificate = certificate.map_err(|error| ClientError::CaCertificate {
                what: what.clone(),
                detail: error.to_string(),
            })?;
            roots
                .add(certificate)
                .map_err(|error| ClientError::CaCertificate {
                    what: what.clone(),
                    detail: error.to_string(),
                })?;
            added += 1;
        }
        if added == 0 {
            return Err(ClientError::CaCertificate {
                what: what.clone(),
                detail: "it holds no certificate".to_owned(),
            });
        }
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| ClientError::Tls {
            host: endpoint.host.clone(),
            source: std::io::Error::other(error),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

struct Inner {
    endpoint: Endpoint,
    authorization: Option<HeaderValue>,
    timeouts: Timeouts,
    user_agent: HeaderValue,
    max_line_bytes: usize,
    tls: Option<Arc<rustls::ClientConfig>>,
    proxy: Option<crate::proxy::Proxy>,
}

/// A client for one OpenAI-compatible server. Cheap to clone; every request opens its own
/// connection so that timing is never skewed by a pool.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.endpoint.root_url())
            .field(
                "api_key",
                &self.inner.authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("timeouts", &self.inner.timeouts)
            .finish_non_exhaustive()
    }
}

/// A response whose headers have arrived.
struct Response {
    opened: Opened,
}

impl Client {
    /// The base URL in canonical form (without `/v1`).
    pub fn base_url(&self) -> String {
        self.inner.endpoint.root_url()
    }

    /// The HTTP proxy requests go through (`host:port`), if any.
    pub fn proxy(&self) -> Option<String> {
        self.inner
            .proxy
            .as_ref()
            .map(|proxy| format!("{}:{}", proxy.host, proxy.port))
    }

    /// The configured deadlines.
    pub fn timeouts(&self) -> Timeouts {
        self.inner.timeouts
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        accept: &'static str,
    ) -> Result<Response, ClientError> {
        let start = Instant::now();
        let timeouts = self.inner.timeouts;
        // A total timeout too large for an `Instant` is no deadline at all.
        let total_deadline = timeouts.total.and_then(|total| start.checked_add(total));
        let connect_deadline = earliest(
            after(start, timeouts.connect, TimeoutKind::Connect),
            total_deadline,
        );
        let rx = Arc::new(crate::kernel_stamps::RxLog::default());
        let connection = within(
            connect_deadline,
            0,
            // Boxed: a TLS handshake's state (kilobytes) stays off the caller's future.
            Box::pin(connect(
                &self.inner.endpoint,
                self.inner.tls.as_ref(),
                self.inner.proxy.as_ref(),
                &rx,
            )),
        )
        .await??;
        let invalid_path = |reason: String| ClientError::InvalidUrl {
            url: format!("{}{path}", self.inner.endpoint.root_url()),
            reason,
        };
        path.parse::<http::uri::PathAndQuery>()
            .map_err(|error| invalid_path(error.to_string()))?;
        let authority = self.inner.endpoint.authority.as_str();
        let mut headers: Vec<(http::HeaderName, HeaderValue)> = vec![
            (
                HOST,
                HeaderValue::from_str(authority)
                    .map_err(|error| invalid_path(error.to_string()))?,
            ),
            (USER_AGENT, self.inner.user_agent.clone()),
            (ACCEPT, HeaderValue::from_static(accept)),
        ];
        if let Some(authorization) = &self.inner.authorization {
            headers.push((AUTHORIZATION, authorization.clone()));
        }
        if body.is_some() {
            headers.push((CONTENT_TYPE, HeaderValue::from_static("application/json")));
        }
        // Through a proxy, a plain-HTTP request names the whole URL (absolute form).
        let target = match (&self.inner.proxy, self.inner.endpoint.https) {
            (Some(_), false) => std::borrow::Cow::Owned(format!("http://{authority}{path}")),
            _ => std::borrow::Cow::Borrowed(path),
        };
        let before_send = Instant::now();
        // The first-byte deadline counts from the send; the write is stamped inside.
        let deadline = earliest(
            after(before_send, timeouts.first_byte, TimeoutKind::FirstByte),
            total_deadline,
        );
        let (request_sent_at, status, headers, body) = within(
            deadline,
            0,
            crate::transport::exchange(connection, &method, &target, &headers, body, before_send),
        )
        .await??;
        // The head's instant is the kernel's stamp of the read that completed it, as every
        // event's is, not the moment this task got round to parsing it.
        let head_arrival = crate::stream::Arrival::now(Some(&rx), None);
        Ok(Response {
            opened: Opened {
                status,
                headers,
                body,
                request_sent_at,
                head_arrival,
                first_byte: timeouts.first_byte,
                idle: timeouts.idle,
                total_deadline,
                max_line_bytes: self.inner.max_line_bytes,
                rx: Some(rx),
            },
        })
    }

    async fn read_all(
        &self,
        response: &mut Response,
        cap: usize,
    ) -> Result<(Vec<u8>, bool), ClientError> {
        let opened = &mut response.opened;
        read_body(
            &mut opened.body,
            cap,
            after(
                opened.request_sent_at,
                opened.first_byte,
                TimeoutKind::FirstByte,
            ),
            opened.idle,
            opened.total_deadline,
        )
        .await
    }

    /// Fails with [`ClientError::Http`] (keeping the body) unless the status is a success.
    async fn check_status(&self, response: &mut Response) -> Result<(), ClientError> {
        let status = response.opened.status;
        if status.is_success() {
            return Ok(());
        }
        let retry_after =
            crate::rate_limit::retry_after(&response.opened.headers, SystemTime::now());
        let (body, cut) = self
            .read_all(response, ERROR_BODY_CAP)
            .await
            .unwrap_or_default();
        let mut body = String::from_utf8_lossy(&body).into_owned();
        if cut {
            body.push_str(" [cut at 64 KiB]");
        }
        Err(ClientError::Http {
            status: status.as_u16(),
            body,
            retry_after,
        })
    }

    async fn json_call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
        what: &str,
    ) -> Result<(T, HeaderMap), ClientError> {
        let mut response = self.send(method, path, body, "application/json").await?;
        self.check_status(&mut response).await?;
        let (bytes, _) = self.read_all(&mut response, RESPONSE_BODY_CAP).await?;
        let value = serde_json::from_slice(&bytes)
            .map_err(|error| ClientError::json(what, &bytes, &error, 0))?;
        Ok((value, std::mem::take(&mut response.opened.headers)))
    }

    fn encode<T: Serialize>(value: &T, what: &str) -> Result<Bytes, ClientError> {
        serde_json::to_vec(value)
            .map(Bytes::from)
            .map_err(|error| ClientError::Json {
                what: what.to_owned(),
                offset: 0,
                snippet: String::new(),
                message: error.to_string(),
                events_received: 0,
            })
    }

    /// `POST /v1/<route>` streaming, after checking the status.
    async fn open_stream(&self, route: &str, body: Bytes) -> Result<Opened, ClientError> {
        let path = self.inner.endpoint.api_path(route);
        let mut response = self
            .send(Method::POST, &path, Some(body), "text/event-stream")
            .await?;
        self.check_status(&mut response).await?;
        Ok(response.opened)
    }

    /// `POST /v1/<route>` without streaming, failing on an `error` field in the answer.
    async fn answer<C: DeserializeOwned>(
        &self,
        route: &str,
        body: Bytes,
        what: &str,
    ) -> Result<ResponseEnvelope<C>, ClientError> {
        let path = self.inner.endpoint.api_path(route);
        let (response, _): (ResponseEnvelope<C>, _) = self
            .json_call(Method::POST, &path, Some(body), what)
            .await?;
        if let Some(error) = response.extra.get("error") {
            return Err(ClientError::ServerErrorEvent {
                error: error.clone(),
                events_received: 0,
            });
        }
        Ok(response)
    }

    /// `POST /v1/chat/completions` without streaming (`stream` is sent as false).
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ClientError> {
        let mut request = request.clone();
        request.stream = Some(false);
        request.stream_options = None;
        let body = Self::encode(&request, "chat request")?;
        self.answer("chat/completions", body, "chat response").await
    }

    /// `POST /v1/chat/completions` streaming (`stream` is forced to true).
    pub async fn chat_stream(&self, request: &ChatRequest) -> Result<ChatStream, ClientError> {
        let body = if request.stream == Some(true) {
            Self::encode(request, "chat request")?
        } else {
            let mut request = request.clone();
            request.stream = Some(true);
            Self::encode(&request, "chat request")?
        };
        Ok(ChatStream::new(
            self.open_stream("chat/completions", body).await?,
        ))
    }

    /// `POST /v1/completions` without streaming.
    pub async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, ClientError> {
        let mut request = request.clone();
        request.stream = Some(false);
        request.stream_options = None;
        let body = Self::encode(&request, "completion request")?;
        self.answer("completions", body, "completion response")
            .await
    }

    /// `POST /v1/completions` streaming (`stream` is forced to true).
    pub async fn completion_stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, ClientError> {
        let mut request = request.clone();
        request.stream = Some(true);
        let body = Self::encode(&request, "completion request")?;
        Ok(CompletionStream::new(
            self.open_stream("completions", body).await?,
        ))
    }

    /// `GET <root>/<path>` returning the status, headers and body (capped at 64 MiB), whatever
    /// the status.
    pub async fn get_raw(
        &self,
        path: &str,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>), ClientError> {
        let path = self.inner.endpoint.root_path(path.trim_start_matches('/'));
        let mut response = self.send(Method::GET, &path, None, "*/*").await?;
        let (body, _) = self.read_all(&mut response, RESPONSE_BODY_CAP).await?;
        Ok((
            response.opened.status,
            std::mem::take(&mut response.opened.headers),
            body,
        ))
    }

    /// `GET <root>/<path>` parsed as JSON, failing with [`ClientError::Http`] on a non-success status.
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<(T, HeaderMap), ClientError> {
        let full = self.inner.endpoint.root_path(path.trim_start_matches('/'));
        self.json_call(Method::GET, &full, None, path).await
    }

    /// `POST <root>/<path>` with a JSON body, parsed as JSON.
    pub(crate) async fn post_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, ClientError> {
        let full = self.inner.endpoint.root_path(path.trim_start_matches('/'));
        let body = Self::encode(body, path)?;
        Ok(self
            .json_call(Method::POST, &full, Some(body), path)
            .await?
            .0)
    }

    /// `GET <root>/health`: succeeds when the server answers with a success status.
    pub async fn health(&self) -> Result<(), ClientError> {
        let (status, _, body) = self.get_raw("health").await?;
        if status.is_success() {
            return Ok(());
        }
        Err(ClientError::Http {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
            retry_after: None,
        })
    }
}
