//! A DCGM exporter on loopback for tests: it serves `fixtures/gpu/dcgm-exporter-h100x2.txt`
//! with both GPUs' energy counters raised at every scrape (GPU 0 by 1 500 mJ, GPU 1 by
//! 1 000 mJ, so 2.5 J between two scrapes), and counts the scrapes it answered.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The exporter's text as recorded.
pub const FIXTURE: &str = include_str!("../../../fixtures/gpu/dcgm-exporter-h100x2.txt");

/// Joules both GPUs together use between two scrapes.
pub const JOULES_PER_SCRAPE: f64 = 2.5;

/// A running exporter: its URL and how many scrapes it answered.
#[derive(Debug)]
pub struct Exporter {
    pub url: String,
    scrapes: Arc<AtomicU64>,
}

impl Exporter {
    /// Scrapes answered so far.
    pub fn scrapes(&self) -> u64 {
        self.scrapes.load(Ordering::SeqCst)
    }
}

/// Starts the exporter on a free loopback port (it lives as long as the test process).
pub fn start() -> Exporter {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}/metrics", listener.local_addr().expect("address"));
    let scrapes = Arc::new(AtomicU64::new(0));
    let served = Arc::clone(&scrapes);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0_u8; 1024];
            let _ = stream.read(&mut request);
            let k = served.fetch_add(1, Ordering::SeqCst) + 1;
            let body = FIXTURE
                .replace(" 81234567890", &format!(" {}", 81_234_567_890 + 1_500 * k))
                .replace(" 79876543210", &format!(" {}", 79_876_543_210 + 1_000 * k));
            let answer = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    Exporter { url, scrapes }
}
