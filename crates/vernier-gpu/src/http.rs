//! One blocking HTTP/1.0 GET, enough for a Prometheus exporter on a plain `http://` address.
//!
//! The sampler runs on its own thread; a blocking read there never touches the streams'
//! runtimes, and HTTP/1.0 keeps the exporter from chunking its answer.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::error::GpuError;

/// How long a connect or a read may take.
const TIMEOUT: Duration = Duration::from_secs(2);
/// The largest answer read (a DCGM exporter on 8 GPUs writes about 100 KiB).
const MAX_BODY: u64 = 16 * 1024 * 1024;

/// A parsed `http://host:port/path` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpUrl {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) path: String,
}

impl HttpUrl {
    pub(crate) fn parse(url: &str) -> Result<Self, GpuError> {
        let bad = |detail: &str| GpuError::BadUrl {
            url: url.to_owned(),
            detail: detail.to_owned(),
        };
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            bad("only plain http:// addresses are read (a DCGM exporter serves http://HOST:9400/metrics)")
        })?;
        let (authority, path) = rest
            .find('/')
            .map_or((rest, "/metrics"), |at| (&rest[..at], &rest[at..]));
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
                let port = port
                    .parse::<u16>()
                    .map_err(|_| bad("the port is not a number from 1 to 65535"))?;
                (host, port)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(bad("no host given; write http://HOST:PORT/metrics"));
        }
        Ok(Self {
            host: host.trim_matches(['[', ']']).to_owned(),
            port,
            path: path.to_owned(),
        })
    }
}

/// GETs `url` and returns its body when the answer is 200.
pub(crate) fn get(url: &HttpUrl, display: &str) -> Result<String, GpuError> {
    let fail = |detail: String| GpuError::Fetch {
        url: display.to_owned(),
        detail,
    };
    let address = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|error| fail(format!("cannot resolve {}: {error}", url.host)))?
        .next()
        .ok_or_else(|| fail(format!("{} resolves to no address", url.host)))?;
    let mut stream = TcpStream::connect_timeout(&address, TIMEOUT)
        .map_err(|error| fail(format!("cannot connect: {error}")))?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
        .map_err(|error| fail(error.to_string()))?;
    let request = format!(
        "GET {} HTTP/1.0\r\nHost: {}:{}\r\nAccept: text/plain\r\nUser-Agent: vernier-gpu\r\n\r\n",
        url.path, url.host, url.port
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|error| fail(format!("cannot send the request: {error}")))?;
    let mut answer = Vec::new();
    stream
        .take(MAX_BODY)
        .read_to_end(&mut answer)
        .map_err(|error| fail(format!("reading the answer: {error}")))?;
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(body_at) = response
        .parse(&answer)
        .map_err(|error| fail(format!("not an HTTP answer: {error}")))?
    else {
        return Err(fail("the answer ended inside its headers".to_owned()));
    };
    let code = response.code.unwrap_or(0);
    if code != 200 {
        return Err(fail(format!("answered {code}")));
    }
    let chunked = response.headers.iter().any(|header| {
        header.name.eq_ignore_ascii_case("transfer-encoding")
            && String::from_utf8_lossy(header.value)
                .to_ascii_lowercase()
                .contains("chunked")
    });
    let body = &answer[body_at..];
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_vec()
    };
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The data of a chunked body (what arrived of it).
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = body.windows(2).position(|pair| pair == b"\r\n") {
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            break;
        };
        let start = line_end + 2;
        if size == 0 || start + size > body.len() {
            break;
        }
        out.extend_from_slice(&body[start..start + size]);
        body = body.get(start + size + 2..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_or_refused_with_the_fix() {
        assert_eq!(
            HttpUrl::parse("http://gpu-node:9400/metrics").ok(),
            Some(HttpUrl {
                host: "gpu-node".to_owned(),
                port: 9400,
                path: "/metrics".to_owned()
            })
        );
        let bare = HttpUrl::parse("http://10.0.0.5:9400").expect("no path");
        assert_eq!(bare.path, "/metrics");
        let v6 = HttpUrl::parse("http://[::1]:9400/m").expect("IPv6");
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 9400));
        let https = HttpUrl::parse("https://x/metrics").expect_err("https is refused");
        assert!(https.to_string().contains("only plain http://"));
        assert!(HttpUrl::parse("http://x:port/").is_err());
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"4\r\nDCGM\r\n3;x=1\r\n_FI\r\n0\r\n\r\n"),
            b"DCGM_FI"
        );
    }
}
