//! `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY`: an `https://` server reached through an HTTP
//! proxy by a `CONNECT` tunnel, the TLS session then running end to end inside it; an
//! `http://` server through an HTTP proxy by requests in absolute form
//! (`GET http://host:port/v1/models HTTP/1.1`, RFC 9112 section 3.2.2). A server on a
//! loopback address is never reached through a proxy named in the environment (as Go's
//! `net/http` does): a proxy between a client and a server on the same machine only adds its
//! own delay to every figure.

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::ClientError;

/// The longest `CONNECT` answer read before giving up on the proxy.
const MAX_CONNECT_RESPONSE: usize = 16 * 1024;

/// An HTTP proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proxy {
    pub(crate) host: String,
    pub(crate) port: u16,
}

fn variable(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|name| std::env::var(name).ok())
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// Whether `no_proxy` (a comma-separated list: `*`, host names, `.domain` or `domain`
/// suffixes, addresses) exempts `host`.
pub(crate) fn exempt(no_proxy: &str, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    no_proxy
        .split(',')
        .map(|entry| entry.trim().to_ascii_lowercase())
        .filter(|entry| !entry.is_empty())
        .any(|entry| {
            if entry == "*" {
                return true;
            }
            let entry = entry.split(':').next().unwrap_or_default();
            let domain = entry.trim_start_matches('.');
            host == domain || host.ends_with(&format!(".{domain}"))
        })
}

/// Parses `http://host:port` (a trailing slash allowed).
pub(crate) fn parse(url: &str) -> Result<Proxy, ClientError> {
    let invalid = |reason: &str| ClientError::InvalidUrl {
        url: crate::url_parts::redact_userinfo(url),
        reason: format!("as a proxy (HTTPS_PROXY, HTTP_PROXY): {reason}"),
    };
    let uri: http::Uri = url
        .parse()
        .map_err(|error: http::uri::InvalidUri| invalid(&error.to_string()))?;
    match uri.scheme_str() {
        Some("http") | None => {}
        Some(_) => {
            return Err(invalid(
                "only an http:// proxy is supported (a tunnel carries an https server's TLS)",
            ));
        }
    }
    let authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
    if authority.as_str().contains('@') {
        return Err(invalid("proxy credentials in the URL are not supported"));
    }
    let port = crate::url_parts::port_of(authority, 80).map_err(invalid)?;
    Ok(Proxy {
        host: authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port,
    })
}

/// Whether `host` is this machine: `localhost` (and names under it) or a loopback address.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let lower = host.to_ascii_lowercase();
    lower == "localhost"
        || lower.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

/// The proxy for `https://host` (`HTTPS_PROXY` or `https_proxy`) or `http://host`
/// (`http_proxy` or `HTTP_PROXY`), from the environment, unless the host is a loopback one or
/// `NO_PROXY` (or `no_proxy`) exempts it.
pub(crate) fn from_environment(host: &str, https: bool) -> Result<Option<Proxy>, ClientError> {
    let names: &[&str] = if https {
        &["HTTPS_PROXY", "https_proxy"]
    } else {
        &["http_proxy", "HTTP_PROXY"]
    };
    let Some(url) = variable(names) else {
        return Ok(None);
    };
    if is_loopback(host)
        || variable(&["NO_PROXY", "no_proxy"]).is_some_and(|list| exempt(&list, host))
    {
        return Ok(None);
    }
    parse(&url).map(Some)
}

/// How a connection through `proxy` to `host:port` is named in errors.
fn address(proxy: &Proxy, host: &str, port: u16) -> String {
    format!("{}:{} (proxy for {host}:{port})", proxy.host, proxy.port)
}

/// A connection to `proxy` itself, for a plain-HTTP server's requests in absolute form.
pub(crate) async fn open(proxy: &Proxy, host: &str, port: u16) -> Result<TcpStream, ClientError> {
    let connect_error = |source| ClientError::Connect {
        address: address(proxy, host, port),
        source,
    };
    let stream = TcpStream::connect((proxy.host.as_str(), proxy.port))
        .await
        .map_err(connect_error)?;
    stream.set_nodelay(true).map_err(connect_error)?;
    Ok(stream)
}

/// Opens a `CONNECT` tunnel through `proxy` to `host:port`.
pub(crate) async fn tunnel(proxy: &Proxy, host: &str, port: u16) -> Result<TcpStream, ClientError> {
    let connect_error = |source| ClientError::Connect {
        address: address(proxy, host, port),
        source,
    };
    let mut stream = open(proxy, host, port).await?;
    let target = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(connect_error)?;
    let mut answer = Vec::new();
    let mut buffer = [0_u8; 1024];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buffer).await.map_err(connect_error)?;
        if n == 0 || answer.len() > MAX_CONNECT_RESPONSE {
            return Err(connect_error(std::io::Error::other(
                "the proxy closed the connection before answering CONNECT",
            )));
        }
        answer.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    let status_line = text.lines().next().unwrap_or_default();
    let ok = status_line
        .split_whitespace()
        .nth(1)
        .is_some_and(|code| code.starts_with('2'));
    if !ok {
        return Err(connect_error(std::io::Error::other(format!(
            "the proxy refused the tunnel: {status_line}"
        ))));
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_proxy_matches_hosts_domains_and_the_wildcard() {
        assert!(exempt("*", "api.example.com"));
        assert!(exempt("localhost, .example.com", "api.example.com"));
        assert!(exempt("example.com", "api.example.com"));
        assert!(exempt("example.com", "EXAMPLE.com"));
        assert!(exempt("10.0.0.1:443", "10.0.0.1"));
        assert!(!exempt("example.com", "badexample.com"));
        assert!(!exempt("", "example.com"));
    }

    #[test]
    fn loopback_hosts_are_told_from_others() {
        for host in [
            "localhost",
            "LOCALHOST",
            "api.localhost",
            "127.0.0.1",
            "127.8.9.1",
            "::1",
            "[::1]",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "10.0.0.1",
            "example.com",
            "localhost.example.com",
            "::2",
            "0.0.0.0",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn proxy_urls_parse_and_refuse_what_is_not_supported() {
        assert_eq!(
            parse("http://127.0.0.1:3128/").expect("a proxy"),
            Proxy {
                host: "127.0.0.1".to_owned(),
                port: 3128
            }
        );
        assert_eq!(parse("http://proxy.internal").expect("a proxy").port, 80);
        assert!(parse("https://proxy:443").is_err());
        assert!(parse("http://user:secret@proxy:3128").is_err());
    }
}
