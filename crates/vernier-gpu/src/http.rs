//! One blocking HTTP/1.0 GET, enough for a Prometheus exporter on a plain `http://` address.
//!
//! The sampler runs on its own thread; a blocking read there never touches the streams'
//! runtimes, and HTTP/1.0 keeps the exporter from chunking its answer.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::error::GpuError;

/// How long a connect, and the whole exchange after it, may take.
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
        // `[::1]:9400`, `[::1]`, `host:9400`, `host`.
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (host, rest) = bracketed
                .split_once(']')
                .ok_or_else(|| bad("an IPv6 address needs its closing ]"))?;
            match rest.strip_prefix(':') {
                Some(port) => (host, port),
                None if rest.is_empty() => (host, "80"),
                None => return Err(bad("after ] comes :PORT or the path")),
            }
        } else {
            authority.rsplit_once(':').unwrap_or((authority, "80"))
        };
        let port = port
            .parse::<u16>()
            .map_err(|_| bad("the port is not a number from 1 to 65535"))?;
        if host.is_empty() {
            return Err(bad("no host given; write http://HOST:PORT/metrics"));
        }
        Ok(Self {
            host: host.to_owned(),
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
    let addresses: Vec<_> = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|error| fail(format!("cannot resolve {}: {error}", url.host)))?
        .collect();
    // Every address the name resolves to, in turn.
    let mut last_error = format!("{} resolves to no address", url.host);
    let mut connected = None;
    for address in &addresses {
        match TcpStream::connect_timeout(address, TIMEOUT) {
            Ok(stream) => {
                connected = Some(stream);
                break;
            }
            Err(error) => last_error = format!("cannot connect to {address}: {error}"),
        }
    }
    let mut stream = connected.ok_or_else(|| fail(last_error))?;
    let deadline = Instant::now() + TIMEOUT;
    stream
        .set_write_timeout(Some(TIMEOUT))
        .map_err(|error| fail(error.to_string()))?;
    let host = if url.host.contains(':') {
        format!("[{}]", url.host)
    } else {
        url.host.clone()
    };
    let request = format!(
        "GET {} HTTP/1.0\r\nHost: {host}:{}\r\nAccept: text/plain\r\nConnection: close\r\nUser-Agent: vernier-gpu\r\n\r\n",
        url.path, url.port
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|error| fail(format!("cannot send the request: {error}")))?;
    let answer = read_answer(&mut stream, deadline).map_err(fail)?;
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

/// Reads the answer until the server closes, its `Content-Length` is in, or `deadline`
/// passes (an exporter that trickles bytes cannot hold the sampler past it).
fn read_answer(stream: &mut TcpStream, deadline: Instant) -> Result<Vec<u8>, String> {
    let mut answer = Vec::new();
    let mut buffer = [0_u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("no whole answer within {} s", TIMEOUT.as_secs()));
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(|error| error.to_string())?;
        let n = match stream.read(&mut buffer) {
            Ok(n) => n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(format!("reading the answer: {error}")),
        };
        if n == 0 {
            return Ok(answer);
        }
        answer.extend_from_slice(&buffer[..n]);
        if answer.len() as u64 > MAX_BODY {
            return Err(format!("the answer is over {MAX_BODY} bytes"));
        }
        if complete(&answer) {
            return Ok(answer);
        }
    }
}

/// Whether `answer` holds its headers and all the body its `Content-Length` announces.
fn complete(answer: &[u8]) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(body_at)) = response.parse(answer) else {
        return false;
    };
    response
        .headers
        .iter()
        .find(|header| header.name.eq_ignore_ascii_case("content-length"))
        .and_then(|header| std::str::from_utf8(header.value).ok())
        .and_then(|value| value.trim().parse::<usize>().ok())
        .is_some_and(|length| answer.len() >= body_at.saturating_add(length))
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
        let Some(end) = start.checked_add(size).filter(|end| *end <= body.len()) else {
            break;
        };
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[start..end]);
        body = body.get(end + 2..).unwrap_or_default();
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
        let v6 = HttpUrl::parse("http://[::1]/m").expect("IPv6 without a port");
        assert_eq!(
            (v6.host.as_str(), v6.port, v6.path.as_str()),
            ("::1", 80, "/m")
        );
        let https = HttpUrl::parse("https://x/metrics").expect_err("https is refused");
        assert!(https.to_string().contains("only plain http://"));
        assert!(HttpUrl::parse("http://x:port/").is_err());
    }

    #[test]
    fn a_kept_alive_answer_ends_at_its_content_length() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = HttpUrl::parse(&format!(
            "http://{}/metrics",
            listener.local_addr().expect("address")
        ))
        .expect("url");
        std::thread::spawn(move || {
            if let Ok((mut stream, _)) = listener.accept() {
                let mut request = [0_u8; 512];
                let _ = stream.read(&mut request);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
                // The connection stays open well past the reader's deadline.
                std::thread::sleep(Duration::from_secs(5));
            }
        });
        let started = Instant::now();
        assert_eq!(get(&url, "test").expect("the answer"), "hello");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"4\r\nDCGM\r\n3;x=1\r\n_FI\r\n0\r\n\r\n"),
            b"DCGM_FI"
        );
        // A size that would overflow ends the body instead of panicking.
        assert_eq!(dechunk(b"ffffffffffffffff\r\nx\r\n"), b"");
    }
}
