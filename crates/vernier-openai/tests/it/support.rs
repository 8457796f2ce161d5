//! A tiny loopback HTTP server that answers with exact bytes, optionally split into writes.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub(crate) struct SeenRequest {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) head: String,
    pub(crate) body: Vec<u8>,
}

/// What the server does for a request.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Write these bytes (then flush).
    Write(Vec<u8>),
    /// Pause.
    Sleep(Duration),
}

pub(crate) type Handler = Arc<dyn Fn(&SeenRequest) -> Vec<Step> + Send + Sync>;

/// Serves every connection with `handler` until the test ends. Each response is followed by
/// a close.
pub(crate) async fn serve(
    handler: Handler,
) -> (
    SocketAddr,
    tokio::sync::mpsc::UnboundedReceiver<SeenRequest>,
) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let (seen_tx, seen_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let handler = Arc::clone(&handler);
            let seen_tx = seen_tx.clone();
            tokio::spawn(async move {
                let _ = handle(socket, &handler, &seen_tx).await;
            });
        }
    });
    (addr, seen_rx)
}

/// Reads one request from `socket`, answers it with the handler's steps, and closes.
pub(crate) async fn handle<S: AsyncRead + AsyncWrite + Unpin>(
    mut socket: S,
    handler: &Handler,
    seen: &tokio::sync::mpsc::UnboundedSender<SeenRequest>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut scratch = [0_u8; 8192];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        let n = socket.read(&mut scratch).await?;
        if n == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&scratch[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let n = socket.read(&mut scratch).await?;
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&scratch[..n]);
    }
    let mut words = head.split_whitespace();
    let request = SeenRequest {
        method: words.next().unwrap_or_default().to_owned(),
        path: words.next().unwrap_or_default().to_owned(),
        head: head.clone(),
        body: buffer[head_end..].to_vec(),
    };
    let steps = handler(&request);
    let _ = seen.send(request);
    for step in steps {
        match step {
            Step::Write(bytes) => {
                socket.write_all(&bytes).await?;
                socket.flush().await?;
            }
            Step::Sleep(duration) => tokio::time::sleep(duration).await,
        }
    }
    socket.shutdown().await
}

/// Splits `bytes` into writes at pseudo-random points (seeded, reproducible), with a short
/// pause between writes so they reach the client as separate reads.
pub(crate) fn split_writes(bytes: &[u8], seed: u64, max_piece: usize) -> Vec<Step> {
    let mut state = seed | 1;
    let mut steps = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let piece = 1 + usize::try_from(state % max_piece as u64).expect("fits");
        let (now, later) = rest.split_at(piece.min(rest.len()));
        steps.push(Step::Write(now.to_vec()));
        steps.push(Step::Sleep(Duration::from_micros(200)));
        rest = later;
    }
    steps
}

/// A chunked-encoding HTTP/1.1 response head plus body chunks, one HTTP chunk per piece.
pub(crate) fn chunked_response(
    status: &str,
    content_type: &str,
    pieces: &[&[u8]],
    terminate: bool,
) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for piece in pieces {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    if terminate {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    out
}

pub(crate) fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/real-transcripts")
}

pub(crate) fn read_fixture(server: &str, name: &str) -> Vec<u8> {
    let path = fixtures_dir().join(server).join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

pub(crate) const SERVERS: [&str; 2] = ["llama-server-b11434", "llama-cpp-python-0.3.36"];

/// Every fixture stem in `server` having a file with `extension`.
pub(crate) fn stems(server: &str, extension: &str) -> Vec<String> {
    let mut stems: Vec<String> = std::fs::read_dir(fixtures_dir().join(server))
        .expect("fixture dir")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(&format!(".{extension}"))
                .map(str::to_owned)
        })
        .collect();
    stems.sort();
    stems
}
