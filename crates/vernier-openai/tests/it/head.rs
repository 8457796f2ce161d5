//! The response head's instant is the kernel's receive time of the read that brought it, as
//! every event's is: a client task that gets to the socket late does not make the server's
//! first byte late.

use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use vernier_openai::{ChatMessage, ChatRequest, ClientBuilder};

use crate::support::chunked_response;

const EVENT: &[u8] =
    b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"},\"finish_reason\":null}]}\n\n";

/// How long the client's only thread is kept busy after the head was written.
const LAG: Duration = Duration::from_millis(60);

/// Reads one request (head and `Content-Length` body) from `socket`.
fn read_request(socket: &mut std::net::TcpStream) {
    let mut buffer = Vec::new();
    let mut scratch = [0_u8; 4096];
    loop {
        let n = socket.read(&mut scratch).expect("read the request");
        assert!(n > 0, "the client closed before its request was whole");
        buffer.extend_from_slice(&scratch[..n]);
        let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .map_or(0, |value| value.trim().parse().expect("a length"));
        if buffer.len() >= end + 4 + length {
            return;
        }
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "current_thread")]
async fn a_late_reader_does_not_make_the_first_byte_late() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    let received = Arc::new(AtomicBool::new(false));
    let written = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let server = {
        let (received, written) = (Arc::clone(&received), Arc::clone(&written));
        std::thread::spawn(move || {
            let response = chunked_response(
                "200 OK",
                "text/event-stream",
                &[EVENT, b"data: [DONE]\n\n"],
                true,
            );
            for turn in 0..2 {
                let (mut socket, _) = listener.accept().expect("accept");
                read_request(&mut socket);
                if turn == 1 {
                    received.store(true, Ordering::SeqCst);
                    // The client's thread is being held by now (see below).
                    std::thread::sleep(Duration::from_millis(5));
                }
                let at = Instant::now();
                socket.write_all(&response).expect("write the response");
                if turn == 1 {
                    *written.lock().expect("lock") = Some(at);
                }
            }
        })
    };
    let client = ClientBuilder::new(&format!("http://{address}"))
        .build()
        .expect("client");
    let request = ChatRequest::new("m", vec![ChatMessage::user("hello")]);
    // The first request turns the kernel's receive stamps on (the first socket to ask on a
    // quiet machine may read once without one).
    client
        .chat_stream(&request)
        .await
        .expect("opens")
        .collect()
        .await
        .expect("the warm-up stream");

    // A task that, once the server has the request, holds the runtime's only thread until the
    // head is written and then for LAG more: the client reads the head LAG late.
    let hog = {
        let (received, written) = (Arc::clone(&received), Arc::clone(&written));
        tokio::spawn(async move {
            while !received.load(Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
            while written.lock().expect("lock").is_none() {
                std::thread::yield_now();
            }
            std::thread::sleep(LAG);
        })
    };
    let mut stream = client.chat_stream(&request).await.expect("opens");
    let read_late = Instant::now();
    let first = stream
        .next_event()
        .await
        .expect("an event")
        .expect("the event");
    hog.await.expect("the hog");
    server.join().expect("the server");
    let written = written.lock().expect("lock").expect("the write instant");
    let head = stream.headers_at();
    assert!(
        read_late.duration_since(written) >= LAG,
        "the client read the head late: the test's premise"
    );
    assert!(
        head >= written && head.duration_since(written) < LAG / 3,
        "the head arrived {:?} after it was written, though the client read it {:?} after",
        head.saturating_duration_since(written),
        read_late.duration_since(written),
    );
    assert!(stream.request_sent_at() <= head);
    // The event came in the same read as the head: one instant for both.
    assert!(first.read_seq.is_some(), "a kernel-stamped read");
    assert_eq!(
        first.arrived_at, head,
        "the head and its first event shared one read"
    );
}
