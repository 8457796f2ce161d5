//! One connection per request: TCP (no Nagle), then over cleartext the request and response
//! in the caller's own task (`h1`), over TLS hyper's HTTP/1 connection; and the instant the
//! request's first byte was written.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::{ClientError, TimeoutKind};

/// Where requests go: scheme, host, port and the path prefix below which `/v1` lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub(crate) https: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) authority: String,
    pub(crate) prefix: String,
}

impl Endpoint {
    pub(crate) fn parse(url: &str) -> Result<Self, ClientError> {
        let invalid = |reason: &str| ClientError::InvalidUrl {
            url: crate::url_parts::redact_userinfo(url),
            reason: reason.to_owned(),
        };
        let uri: http::Uri = url
            .trim()
            .parse()
            .map_err(|error: http::uri::InvalidUri| invalid(&error.to_string()))?;
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            Some(_) => return Err(invalid("the scheme must be http or https")),
            None => return Err(invalid("it has no scheme")),
        };
        let authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
        if authority.as_str().contains('@') {
            return Err(invalid(
                "user information in the URL is not supported; use an API key",
            ));
        }
        if uri.query().is_some() {
            return Err(invalid("a query string is not supported"));
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if host.is_empty() {
            return Err(invalid("it has no host"));
        }
        let port =
            crate::url_parts::port_of(authority, if https { 443 } else { 80 }).map_err(invalid)?;
        let path = uri.path().trim_end_matches('/');
        let prefix = path
            .strip_suffix("/v1")
            .unwrap_or(path)
            .trim_end_matches('/')
            .to_owned();
        Ok(Self {
            https,
            host,
            port,
            authority: authority.as_str().to_owned(),
            prefix,
        })
    }

    /// `<root>/v1/<endpoint>`.
    pub(crate) fn api_path(&self, endpoint: &str) -> String {
        format!("{}/v1/{endpoint}", self.prefix)
    }

    /// `<root>/<endpoint>`.
    pub(crate) fn root_path(&self, endpoint: &str) -> String {
        format!("{}/{endpoint}", self.prefix)
    }

    /// The base URL in canonical form, without `/v1`.
    pub(crate) fn root_url(&self) -> String {
        format!(
            "{}://{}{}",
            if self.https { "https" } else { "http" },
            self.authority,
            self.prefix
        )
    }
}

/// Wraps the connection's I/O and stamps the first successful write.
#[derive(Debug)]
struct StampedIo<T> {
    inner: T,
    first_write: Arc<OnceLock<Instant>>,
}

impl<T> StampedIo<T> {
    fn stamp(&self, before: Option<Instant>, result: &Poll<io::Result<usize>>) {
        if let (Some(before), Poll::Ready(Ok(n))) = (before, result)
            && *n > 0
        {
            let _ = self.first_write.set(before);
        }
    }

    fn before(&self) -> Option<Instant> {
        self.first_write.get().is_none().then(Instant::now)
    }
}

impl<T: Read + Unpin> Read for StampedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for StampedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let before = self.before();
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.stamp(before, &result);
        result
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let before = self.before();
        let result = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.stamp(before, &result);
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The earlier of a phase deadline and the total deadline, with the kind that expires first.
pub(crate) fn earliest(
    phase: Option<(Instant, TimeoutKind)>,
    total: Option<Instant>,
) -> Option<(Instant, TimeoutKind)> {
    match (phase, total) {
        (Some((at, kind)), Some(total)) if at < total => Some((at, kind)),
        (_, Some(total)) => Some((total, TimeoutKind::Total)),
        (phase, None) => phase,
    }
}

/// The deadline `duration` after `start`; none when there is no duration or when the sum is
/// beyond what an [`Instant`] can hold (such a deadline never comes).
pub(crate) fn after(
    start: Instant,
    duration: Option<Duration>,
    kind: TimeoutKind,
) -> Option<(Instant, TimeoutKind)> {
    duration.and_then(|duration| Some((start.checked_add(duration)?, kind)))
}

/// Runs `future` until `deadline`, turning expiry into [`ClientError::Timeout`].
pub(crate) async fn within<F: Future>(
    deadline: Option<(Instant, TimeoutKind)>,
    events_received: usize,
    future: F,
) -> Result<F::Output, ClientError> {
    match deadline {
        None => Ok(future.await),
        Some((at, which)) => tokio::time::timeout_at(at.into(), future)
            .await
            .map_err(|_| ClientError::Timeout {
                which,
                events_received,
            }),
    }
}

/// An open connection ready for one request.
#[derive(Debug)]
pub(crate) enum Connection {
    /// Cleartext: the request is written and the response read by the caller's task.
    Plain(crate::kernel_stamps::StampedTcp),
    /// TLS, through hyper's connection, which a task of its own drives.
    Tls {
        sender: http1::SendRequest<Full<Bytes>>,
        first_write: Arc<OnceLock<Instant>>,
    },
}

/// A response body: read in the caller's task (cleartext) or from hyper's connection (TLS).
#[derive(Debug)]
pub(crate) enum Body {
    /// Read from the socket by the caller's task.
    Direct(crate::h1::DirectBody),
    /// Read from hyper; the sender keeps the connection open while the body is read.
    Hyper {
        body: Incoming,
        _sender: http1::SendRequest<Full<Bytes>>,
    },
}

impl Body {
    /// The next piece of body data, `None` at its end (trailers are skipped). Cancel-safe.
    pub(crate) async fn next_data(&mut self) -> Option<Result<Bytes, crate::BoxError>> {
        match self {
            Self::Direct(body) => body
                .next_data()
                .await
                .map_err(|error| Box::new(error) as crate::BoxError)
                .transpose(),
            Self::Hyper { body, .. } => loop {
                match body.frame().await? {
                    Ok(frame) => {
                        if let Ok(data) = frame.into_data() {
                            return Some(Ok(data));
                        }
                    }
                    Err(error) => return Some(Err(Box::new(error))),
                }
            },
        }
    }
}

/// Opens a connection to `endpoint`: over TLS (when https) with hyper's connection driver
/// spawned, else the bare stamped socket. Either way its reads are logged in `rx`.
pub(crate) async fn connect(
    endpoint: &Endpoint,
    tls: Option<&Arc<rustls::ClientConfig>>,
    proxy: Option<&crate::proxy::Proxy>,
    rx: &Arc<crate::kernel_stamps::RxLog>,
) -> Result<Connection, ClientError> {
    let address = format!("{}:{}", endpoint.host, endpoint.port);
    let tcp = if let Some(proxy) = proxy {
        if endpoint.https {
            crate::proxy::tunnel(proxy, &endpoint.host, endpoint.port).await?
        } else {
            crate::proxy::open(proxy, &endpoint.host, endpoint.port).await?
        }
    } else {
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|source| ClientError::Connect {
                address: address.clone(),
                source,
            })?;
        tcp.set_nodelay(true)
            .map_err(|source| ClientError::Connect { address, source })?;
        tcp
    };
    let tcp = crate::kernel_stamps::StampedTcp::new(tcp, Arc::clone(rx));
    if !endpoint.https {
        return Ok(Connection::Plain(tcp));
    }
    let config = tls.ok_or_else(|| ClientError::Tls {
        host: endpoint.host.clone(),
        source: io::Error::other("no TLS configuration was built"),
    })?;
    let server_name =
        rustls::pki_types::ServerName::try_from(endpoint.host.clone()).map_err(|error| {
            ClientError::Tls {
                host: endpoint.host.clone(),
                source: io::Error::new(io::ErrorKind::InvalidInput, error),
            }
        })?;
    let stream = tokio_rustls::TlsConnector::from(Arc::clone(config))
        .connect(server_name, tcp)
        .await
        .map_err(|source| ClientError::Tls {
            host: endpoint.host.clone(),
            source,
        })?;
    let first_write = Arc::new(OnceLock::new());
    let sender = handshake(
        StampedIo {
            inner: TokioIo::new(stream),
            first_write: Arc::clone(&first_write),
        },
        endpoint,
    )
    .await?;
    Ok(Connection::Tls {
        sender,
        first_write,
    })
}

/// Sends one request on `connection` and reads the response head: the instant the request's
/// first byte was written, the status, the headers and the body to read.
pub(crate) async fn exchange(
    connection: Connection,
    method: &http::Method,
    path: &str,
    headers: &[(http::HeaderName, http::HeaderValue)],
    body: Option<Bytes>,
    before_send: Instant,
) -> Result<(Instant, http::StatusCode, http::HeaderMap, Body), ClientError> {
    let what = format!("{method} {path}");
    match connection {
        Connection::Plain(mut tcp) => {
            let exchange = async {
                let sent = crate::h1::write_request(
                    &mut tcp,
                    method.as_str(),
                    path,
                    headers,
                    body.as_deref(),
                )
                .await?;
                let (head, body) = crate::h1::read_head(tcp).await?;
                Ok::<_, crate::h1::H1Error>((sent, head, body))
            };
            let (sent, head, body) = exchange
                .await
                .map_err(|error| error.before_headers(&what))?;
            Ok((sent, head.status, head.headers, Body::Direct(body)))
        }
        Connection::Tls {
            mut sender,
            first_write,
        } => {
            let mut builder = http::Request::builder().method(method.clone()).uri(path);
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            let request = builder
                .body(Full::new(body.unwrap_or_default()))
                .map_err(|error| ClientError::InvalidUrl {
                    url: path.to_owned(),
                    reason: error.to_string(),
                })?;
            let response = sender
                .send_request(request)
                .await
                .map_err(|source| ClientError::Request { what, source })?;
            let (parts, body) = response.into_parts();
            let sent = first_write.get().copied().unwrap_or(before_send);
            Ok((
                sent,
                parts.status,
                parts.headers,
                Body::Hyper {
                    body,
                    _sender: sender,
                },
            ))
        }
    }
}

async fn handshake<T>(
    io: StampedIo<T>,
    endpoint: &Endpoint,
) -> Result<http1::SendRequest<Full<Bytes>>, ClientError>
where
    T: Read + Write + Unpin + Send + 'static,
{
    // One flat buffer for head and body: the request leaves in a single write.
    let (sender, connection) = http1::Builder::new()
        .writev(false)
        .handshake(io)
        .await
        .map_err(|source| ClientError::Request {
            what: format!("HTTP handshake with {}", endpoint.authority),
            source,
        })?;
    tokio::spawn(async move {
        // The error, if any, reaches the caller through the response or its body.
        let _ = connection.await;
    });
    Ok(sender)
}

/// Reads a whole body, up to `cap` bytes (the rest is dropped), under first-byte, idle and
/// total deadlines. Returns the bytes and whether the body was cut.
pub(crate) async fn read_body(
    body: &mut Body,
    cap: usize,
    first_byte: Option<(Instant, TimeoutKind)>,
    idle: Option<Duration>,
    total: Option<Instant>,
) -> Result<(Vec<u8>, bool), ClientError> {
    let mut bytes = Vec::new();
    let mut deadline = earliest(first_byte, total);
    loop {
        let Some(data) = within(deadline, 0, body.next_data()).await? else {
            return Ok((bytes, false));
        };
        let data = data.map_err(|error| ClientError::StreamDropped {
            events_received: 0,
            source: Some(error),
        })?;
        let room = cap - bytes.len();
        if data.len() >= room {
            bytes.extend_from_slice(&data[..room]);
            return Ok((bytes, data.len() > room));
        }
        bytes.extend_from_slice(&data);
        deadline = earliest(after(Instant::now(), idle, TimeoutKind::Idle), total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_with_or_without_v1() {
        for url in [
            "http://127.0.0.1:8000",
            "http://127.0.0.1:8000/",
            "http://127.0.0.1:8000/v1",
            "http://127.0.0.1:8000/v1/",
        ] {
            let endpoint = Endpoint::parse(url).expect("valid");
            assert_eq!(endpoint.api_path("models"), "/v1/models", "{url}");
            assert_eq!(endpoint.root_path("metrics"), "/metrics", "{url}");
            assert_eq!(endpoint.port, 8000);
        }
        let endpoint = Endpoint::parse("https://api.example.com/proxy/v1").expect("valid");
        assert_eq!((endpoint.port, endpoint.https), (443, true));
        assert_eq!(
            endpoint.api_path("chat/completions"),
            "/proxy/v1/chat/completions"
        );
        assert_eq!(endpoint.root_url(), "https://api.example.com/proxy");
        let endpoint = Endpoint::parse("http://[::1]:9/").expect("valid");
        assert_eq!(endpoint.host, "::1");
    }

    #[test]
    fn ports_are_read_or_defaulted_and_never_wrapped() {
        let port = |url: &str| Endpoint::parse(url).map(|endpoint| endpoint.port).ok();
        assert_eq!(port("http://127.0.0.1:8000"), Some(8000));
        assert_eq!(port("http://127.0.0.1"), Some(80));
        assert_eq!(port("https://host/v1"), Some(443));
        assert_eq!(port("http://[::1]:9000/v1"), Some(9000));
        assert_eq!(port("http://[::1]/v1"), Some(80));
        // 99999 used to be read as no port at all, and so as port 80.
        assert_eq!(port("http://127.0.0.1:99999"), None);
    }

    #[test]
    fn a_key_in_a_refused_url_is_never_printed() {
        let Err(error) = Endpoint::parse("https://user:sk-secret@api.example/v1") else {
            panic!("user information is refused");
        };
        let text = error.to_string();
        assert!(
            !text.contains("sk-secret") && !text.contains("user:"),
            "{text}"
        );
        assert!(text.contains("https://***@api.example/v1"), "{text}");
        assert_eq!(
            crate::url_parts::redact_userinfo("http://127.0.0.1:8000/v1"),
            "http://127.0.0.1:8000/v1"
        );
    }

    #[test]
    fn bad_urls_are_refused() {
        for url in [
            "127.0.0.1:8000",
            "ftp://host",
            "http://host/?a=b",
            "not a url",
            "http://127.0.0.1:99999",
            "http://127.0.0.1:0",
            "https://[::1]:70000/v1",
        ] {
            assert!(
                matches!(Endpoint::parse(url), Err(ClientError::InvalidUrl { .. })),
                "{url}"
            );
        }
    }

    #[test]
    fn earliest_deadline_names_its_kind() {
        let now = Instant::now();
        let phase = Some((now + Duration::from_secs(1), TimeoutKind::Idle));
        assert_eq!(earliest(phase, Some(now + Duration::from_secs(2))), phase);
        assert_eq!(
            earliest(phase, Some(now)).map(|(_, kind)| kind),
            Some(TimeoutKind::Total)
        );
        assert_eq!(earliest(None, None), None);
    }
}
